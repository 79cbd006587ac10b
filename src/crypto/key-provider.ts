/**
 * Key providers wrap and unwrap 32-byte secrets (per-user data keys and the deployment secret).
 * A wrapped secret is stored as a key record (JSON, see docs/format.md) that names the provider
 * kind and key id it was wrapped with, so that start-up can tell a wrong master key from a damaged
 * record, and rotation can tell a re-wrapped record from one still waiting.
 */
import { MemvaultError } from '../errors.js';
import { fromBase64Strict, fromBase64UrlStrict, toBase64, toBase64Url, utf8, strictUtf8 } from './bytes.js';
import {
  computeRecordMac,
  DEPLOYMENT_ID_PATTERN,
  FORMAT_VERSION,
  RECORD_MAC_BYTES,
  type RecordMacFields,
} from './format.js';

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
  /** The current version: new content is sealed under it. */
  keyVersion: number;
  /** The current version's wrapped secret. */
  wrapped: Uint8Array;
  /**
   * Versioned records (keyVersion > 1, after a re-key; src/crypto/rekey.ts): the oldest key version
   * content may still carry. Content headers naming a version below it, or above keyVersion, are refused.
   */
  readFrom?: number;
  /**
   * Versioned records: the older secrets the record keeps, ascending, wrapped like `wrapped` (same
   * kind and key id, each with its own version in the wrap context). Version 1 is always kept (it
   * is the name root: names and audit pseudonyms derive from it), and so is every version from
   * `readFrom` up; nothing else.
   */
  older?: OlderKeyVersion[];
  /** MAC over every other field and the record's uid, keyed from the deployment secret. */
  mac: Uint8Array;
}

export interface OlderKeyVersion {
  keyVersion: number;
  wrapped: Uint8Array;
}

/** The first key version of every user: the one their names and audit pseudonyms derive from. */
export const NAME_ROOT_KEY_VERSION = 1;

/** The record's fields under its MAC (the uid is the record's place, not a field). */
export function recordMacFields(record: Omit<KeyRecord, 'format' | 'mac'>, uid: string): RecordMacFields {
  return {
    deploymentId: record.deployment,
    uid,
    kind: record.kind,
    keyId: record.keyId,
    keyVersion: record.keyVersion,
    wrapped: record.wrapped,
    ...(record.older !== undefined ? { readFrom: record.readFrom ?? 0, older: record.older } : {}),
  };
}

/** Every wrapped secret of a record, by version (the current one last). */
export function recordVersions(record: Pick<KeyRecord, 'keyVersion' | 'wrapped' | 'older'>): OlderKeyVersion[] {
  return [...(record.older ?? []), { keyVersion: record.keyVersion, wrapped: record.wrapped }];
}

/** The key versions content may carry under this record, oldest first. */
export function contentVersionsOf(record: Pick<KeyRecord, 'keyVersion' | 'readFrom'>): number[] {
  const from = record.readFrom ?? record.keyVersion;
  return Array.from({ length: record.keyVersion - from + 1 }, (_, i) => from + i);
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
      ...(record.older !== undefined
        ? {
            readFrom: record.readFrom,
            older: record.older.map((o) => ({ keyVersion: o.keyVersion, wrapped: toBase64(o.wrapped) })),
          }
        : {}),
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
  if (
    typeof r.keyVersion !== 'number' ||
    !Number.isInteger(r.keyVersion) ||
    r.keyVersion < 1 ||
    r.keyVersion > 0xffffffff
  )
    throw damaged();
  if (typeof r.wrapped !== 'string') throw damaged();
  const wrapped = fromBase64Strict(r.wrapped);
  if (!wrapped || wrapped.byteLength === 0) throw damaged();
  const mac = typeof r.mac === 'string' ? fromBase64UrlStrict(r.mac) : null;
  if (!mac || mac.byteLength !== RECORD_MAC_BYTES) throw damaged();
  const keyVersion = r.keyVersion;
  const versioned = keyVersion > NAME_ROOT_KEY_VERSION;
  const known = new Set([
    'format',
    'deployment',
    'kind',
    'keyId',
    'keyVersion',
    'wrapped',
    'mac',
    ...(versioned ? ['readFrom', 'older'] : []),
  ]);
  if (Object.keys(r).some((k) => !known.has(k))) throw damaged();
  const record: KeyRecord = {
    format: r.format,
    deployment: r.deployment,
    kind: r.kind,
    keyId: r.keyId,
    keyVersion: r.keyVersion,
    wrapped,
    mac,
  };
  if (!versioned) return record;
  // A versioned record keeps exactly: version 1 (the name root) and every version from readFrom up.
  const readFrom = r.readFrom;
  if (typeof readFrom !== 'number' || !Number.isInteger(readFrom) || readFrom < 1 || readFrom > r.keyVersion)
    throw damaged();
  if (!Array.isArray(r.older)) throw damaged();
  const older: OlderKeyVersion[] = [];
  for (const entry of r.older as unknown[]) {
    if (typeof entry !== 'object' || entry === null) throw damaged();
    const e = entry as Record<string, unknown>;
    if (Object.keys(e).some((k) => k !== 'keyVersion' && k !== 'wrapped')) throw damaged();
    if (typeof e.keyVersion !== 'number' || !Number.isInteger(e.keyVersion) || typeof e.wrapped !== 'string')
      throw damaged();
    const bytes = fromBase64Strict(e.wrapped);
    if (!bytes || bytes.byteLength === 0) throw damaged();
    older.push({ keyVersion: e.keyVersion, wrapped: bytes });
  }
  const expected = [
    NAME_ROOT_KEY_VERSION,
    ...contentVersionsOf({ keyVersion, readFrom }).filter((v) => v > NAME_ROOT_KEY_VERSION && v < keyVersion),
  ];
  if (older.length !== expected.length || older.some((o, i) => o.keyVersion !== expected[i])) throw damaged();
  return { ...record, readFrom, older };
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
