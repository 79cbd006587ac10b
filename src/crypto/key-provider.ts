/**
 * Key providers wrap and unwrap 32-byte secrets (per-user data keys and the deployment secret).
 * A wrapped secret is stored as a key record (JSON, see docs/format.md) that names the provider
 * kind and key id it was wrapped with, so that start-up can tell a wrong master key from a damaged
 * record, and rotation can tell a re-wrapped record from one still waiting.
 */
import { MemvaultError } from '../errors.js';
import { fromBase64Strict, fromBase64UrlStrict, toBase64, toBase64Url, utf8, strictUtf8 } from './bytes.js';
import { computeRecordMac, DEPLOYMENT_ID_PATTERN, FORMAT_VERSION, RECORD_MAC_BYTES, type RecordMacFields } from './format.js';

export interface WrapContext {
  /** The deployment the secret belongs to (bound into the wrap: another deployment's record does not open). */
  deploymentId: string;
  /** The pseudonymous uid the secret belongs to ('_deployment' for the deployment secret). */
  uid: string;
  /** Version of the secret under this uid (bound into the wrap, so records cannot be re-labelled). */
  keyVersion: number;
}

export interface GeneratedDataKey {
  plaintext: Uint8Array;
  wrapped: Uint8Array;
}

export interface KeyProvider {
  readonly kind: 'local' | 'kms';
  /** For `local`, a key check value of the master key; for `kms`, the configured KMS key id. */
  readonly keyId: string;
  wrap(dataKey: Uint8Array, context: WrapContext): Promise<Uint8Array>;
  /** Throws MemvaultError('KEY_UNAVAILABLE' or 'INTEGRITY') when the secret cannot be recovered. */
  unwrap(wrapped: Uint8Array, context: WrapContext): Promise<Uint8Array>;
  /** A fresh secret and its wrapped form in one call (KMS GenerateDataKey). */
  generateDataKey?(context: WrapContext): Promise<GeneratedDataKey>;
  /** Wipe key material held by the provider. */
  close?(): void;
}

export interface KeyRecord {
  format: number;
  /** Deployment id (docs/format.md): the same in every record of one deployment. */
  deployment: string;
  kind: 'local' | 'kms';
  keyId: string;
  keyVersion: number;
  wrapped: Uint8Array;
  /** MAC over every other field and the record's uid, keyed from the deployment secret. */
  mac: Uint8Array;
}

/** The record's fields under its MAC (the uid is the record's place, not a field). */
export function recordMacFields(record: Omit<KeyRecord, 'format' | 'mac'>, uid: string): RecordMacFields {
  return { deploymentId: record.deployment, uid, kind: record.kind, keyId: record.keyId, keyVersion: record.keyVersion, wrapped: record.wrapped };
}

/** A record, MACed for `uid` under `macKey` (format 2; the field order is pinned by the test vector). */
export function sealKeyRecord(record: Omit<KeyRecord, 'format' | 'mac'>, uid: string, macKey: Uint8Array): KeyRecord {
  return { format: FORMAT_VERSION, ...record, mac: computeRecordMac(macKey, recordMacFields(record, uid)) };
}

export function encodeKeyRecord(record: KeyRecord): Uint8Array {
  return utf8(
    JSON.stringify({
      format: FORMAT_VERSION,
      deployment: record.deployment,
      kind: record.kind,
      keyId: record.keyId,
      keyVersion: record.keyVersion,
      wrapped: toBase64(record.wrapped),
      mac: toBase64Url(record.mac),
    }),
  );
}

/** Storage format 1 predates authenticated records; it had no production stores and is not read. */
export const OLD_FORMAT_MESSAGE =
  'This store was written by an earlier memvault (storage format 1, before authenticated key records); this version reads format 2 only (docs/format.md). Nothing was changed.';

export const DAMAGED_KEY_RECORD_MESSAGE = 'Error: A stored key record is damaged and cannot be read.';

export function decodeKeyRecord(bytes: Uint8Array): KeyRecord {
  const damaged = () => new MemvaultError('INTEGRITY', DAMAGED_KEY_RECORD_MESSAGE);
  let parsed: unknown;
  try {
    parsed = JSON.parse(strictUtf8(bytes));
  } catch {
    throw damaged();
  }
  if (typeof parsed !== 'object' || parsed === null) throw damaged();
  const r = parsed as Record<string, unknown>;
  if (r.format === 1) throw new MemvaultError('CONFIG', OLD_FORMAT_MESSAGE);
  if (r.format !== FORMAT_VERSION) throw damaged();
  if (typeof r.deployment !== 'string' || !DEPLOYMENT_ID_PATTERN.test(r.deployment)) throw damaged();
  if (r.kind !== 'local' && r.kind !== 'kms') throw damaged();
  if (typeof r.keyId !== 'string' || r.keyId.length === 0) throw damaged();
  if (typeof r.keyVersion !== 'number' || !Number.isInteger(r.keyVersion) || r.keyVersion < 1 || r.keyVersion > 0xffffffff) throw damaged();
  if (typeof r.wrapped !== 'string') throw damaged();
  const wrapped = fromBase64Strict(r.wrapped);
  if (!wrapped || wrapped.byteLength === 0) throw damaged();
  const mac = typeof r.mac === 'string' ? fromBase64UrlStrict(r.mac) : null;
  if (!mac || mac.byteLength !== RECORD_MAC_BYTES) throw damaged();
  const known = new Set(['format', 'deployment', 'kind', 'keyId', 'keyVersion', 'wrapped', 'mac']);
  if (Object.keys(r).some((k) => !known.has(k))) throw damaged();
  return { format: r.format, deployment: r.deployment, kind: r.kind, keyId: r.keyId, keyVersion: r.keyVersion, wrapped, mac };
}

/**
 * The provider that can open a record: the one with the record's key id; failing that, for KMS,
 * any KMS provider (an alias and an ARN can name the same key, and KMS finds the key from the
 * ciphertext). A local master key is only ever tried when its key check value matches.
 */
export function selectUnwrapProvider(record: KeyRecord, providers: readonly KeyProvider[]): KeyProvider | null {
  return (
    providers.find((p) => p.kind === record.kind && p.keyId === record.keyId) ??
    (record.kind === 'kms' ? providers.find((p) => p.kind === 'kms') : undefined) ??
    null
  );
}

export function describeKey(kind: 'local' | 'kms', keyId: string): string {
  return kind === 'local' ? `local master key ${keyId}` : `AWS KMS key ${keyId}`;
}
