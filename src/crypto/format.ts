/**
 * The byte formats of docs/format.md, as pure functions of explicit keys and nonces (the test
 * vector in docs/format.md is checked against these). Everything here is synchronous and needs
 * `await loadSodium()` to have run once in the process.
 *
 * Content object:  version(1) | keyVersion(u32be) | commitment(32) | nonce(24) | ciphertext | tag(16)
 * Name segment:    base64url( siv(16) | XChaCha20(segment) ), nonce = siv | 0^8
 * Local wrap:      version(1) | nonce(24) | ciphertext(32) | tag(16)
 * Record MAC:      BLAKE2b-32(record MAC key, lp(label) | lp(deployment) | lp(uid) | lp(kind) | lp(keyId) | u32be(keyVersion) | lp(wrapped)
 *                  [ | u32be(readFrom) | u32be(n) | n x (u32be(version) | lp(wrapped)) ]   (versioned records, keyVersion > 1)
 */
import { createHmac } from 'node:crypto';
import { MemvaultError } from '../errors.js';
import {
  concatBytes,
  constantTimeEqual,
  fromBase64UrlStrict,
  lengthPrefixed,
  readU32be,
  strictUtf8,
  toBase64Url,
  u32be,
  utf8,
  withLengthPrefixedTexts,
} from './bytes.js';
import { readySodium } from './sodium.js';

/**
 * Version 2 binds the deployment id into every associated data and KMS context and authenticates
 * key records with a MAC keyed from the deployment secret. Version 1 objects are not read (there
 * were no production stores).
 */
export const FORMAT_VERSION = 2;
/** Random bytes of a deployment id (16 -> 22 base64url characters). */
export const DEPLOYMENT_ID_BYTES = 16;
export const DEPLOYMENT_ID_PATTERN = /^[A-Za-z0-9_-]{22}$/;
export const RECORD_MAC_BYTES = 32;
export const KEY_BYTES = 32;
export const NONCE_BYTES = 24;
export const TAG_BYTES = 16;
export const COMMITMENT_BYTES = 32;
export const SIV_BYTES = 16;
/** version + key version + commitment + nonce. */
export const CONTENT_HEADER_BYTES = 1 + 4 + COMMITMENT_BYTES + NONCE_BYTES;
/** Stored size minus plaintext size of every content object. */
export const CONTENT_OVERHEAD = CONTENT_HEADER_BYTES + TAG_BYTES;
export const LOCAL_WRAP_BYTES = 1 + NONCE_BYTES + KEY_BYTES + TAG_BYTES;
/** Bytes of the keyed hash kept in a uid (24 bytes -> 32 base64url characters). */
export const UID_HASH_BYTES = 24;
export const UID_PATTERN = /^[A-Za-z0-9_-]{32}$/;

// Labels for BLAKE2b-keyed derivations. Each derived value has its own label, so no two uses of
// one key ever hash the same message (domain separation).
const LABEL_CONTENT_KEY = 'memvault/v1/content-key';
const LABEL_NAME_KEY = 'memvault/v1/name-key';
const LABEL_NAME_SIV_KEY = 'memvault/v1/name-siv-key';
const LABEL_COMMITMENT = 'memvault/v1/key-commitment';
const LABEL_WRAP_KEY = 'memvault/v1/wrap-key';
const LABEL_KEY_CHECK = 'memvault/v1/key-check';
const LABEL_UID = 'memvault/v1/uid\u0000';
// Introduced with format 2 (labels name the version that introduced them; older labels kept their value).
const LABEL_RECORD_MAC_KEY = 'memvault/v2/record-mac-key';
const LABEL_RECORD_MAC = 'memvault/v2/key-record';
const LABEL_DEPLOYMENT_CHECK = 'memvault/v2/deployment-check';
export const LABEL_AUDIT_PATH = 'memvault/v1/audit-path\u0000';
/** The per-user audit pseudonym key (src/audit/pseudonyms.ts): gone with the data key on erasure. */
const LABEL_AUDIT_PSEUDONYM_KEY = 'memvault/v1/audit-pseudonym-key';

/** The text shown when stored bytes do not open. It names no path, user or key on purpose. */
export const INTEGRITY_MESSAGE =
  'Error: A stored memory file could not be decrypted: it was damaged, moved from another path or user, or sealed with a different key. Nothing was read.';

export function integrityError(): MemvaultError {
  return new MemvaultError('INTEGRITY', INTEGRITY_MESSAGE);
}

/** Keyed BLAKE2b of a label: a PRF output bound to `key` and the label. */
export function keyedHash(key: Uint8Array, label: string | Uint8Array, length = 32): Uint8Array {
  return readySodium().crypto_generichash(length, typeof label === 'string' ? utf8(label) : label, key);
}

/** Subkeys of one user's data key. Wipe with `wipeUserKeys` when done. */
export interface UserKeys {
  keyVersion: number;
  contentKey: Uint8Array;
  nameKey: Uint8Array;
  nameSivKey: Uint8Array;
  /** Key commitment: a collision-resistant hash of the data key, stored in every content header. */
  commitment: Uint8Array;
  /** Keys the user's audit uid and path ids (src/audit/pseudonyms.ts), so erasing the data key unlinks them. */
  auditPseudonymKey: Uint8Array;
}

/**
 * The subkeys of one version of a user's data key. Content keys come from that version's secret;
 * name keys and the audit pseudonym key from `nameRoot`, the secret of the user's FIRST version
 * (docs/encryption.md, "Re-keying"): a re-key re-seals content in place and never moves an object or
 * changes an audit pseudonym. For version 1 the two are the same secret.
 */
export function deriveUserKeys(dataKey: Uint8Array, keyVersion: number, nameRoot: Uint8Array = dataKey): UserKeys {
  if (dataKey.byteLength !== KEY_BYTES || nameRoot.byteLength !== KEY_BYTES)
    throw new MemvaultError('KEY_UNAVAILABLE', 'A data key has the wrong length.');
  return {
    keyVersion,
    contentKey: keyedHash(dataKey, LABEL_CONTENT_KEY),
    nameKey: keyedHash(nameRoot, LABEL_NAME_KEY),
    nameSivKey: keyedHash(nameRoot, LABEL_NAME_SIV_KEY),
    commitment: keyedHash(dataKey, LABEL_COMMITMENT, COMMITMENT_BYTES),
    auditPseudonymKey: keyedHash(nameRoot, LABEL_AUDIT_PSEUDONYM_KEY),
  };
}

export function wipeUserKeys(keys: UserKeys): void {
  const sodium = readySodium();
  sodium.memzero(keys.contentKey);
  sodium.memzero(keys.nameKey);
  sodium.memzero(keys.nameSivKey);
  sodium.memzero(keys.commitment);
  sodium.memzero(keys.auditPseudonymKey);
}

/**
 * All the content keys a user's record allows, by key version, and the current one (new content).
 * Every entry's name keys derive from the name root (version 1), so they are the same in all.
 */
export interface UserKeyring {
  readonly current: UserKeys;
  readonly byVersion: ReadonlyMap<number, UserKeys>;
}

/**
 * The keyring of unwrapped secrets: `contentVersions` are the versions content may carry
 * (readFrom..current); `secrets` must hold each of them and version 1 (the name root).
 */
export function deriveKeyring(
  secrets: ReadonlyMap<number, Uint8Array>,
  current: number,
  contentVersions: readonly number[],
): UserKeyring {
  const root = secrets.get(1);
  if (!root || !contentVersions.includes(current))
    throw new MemvaultError('KEY_UNAVAILABLE', 'A key record lacks a key version it needs.');
  const byVersion = new Map<number, UserKeys>();
  for (const version of contentVersions) {
    const secret = secrets.get(version);
    if (!secret) throw new MemvaultError('KEY_UNAVAILABLE', 'A key record lacks a key version it needs.');
    byVersion.set(version, deriveUserKeys(secret, version, root));
  }
  return { current: byVersion.get(current)!, byVersion };
}

export function wipeKeyring(keyring: UserKeyring): void {
  for (const keys of keyring.byVersion.values()) wipeUserKeys(keys);
}

// ---------------------------------------------------------------------------------------------
// Content

function contentAssociatedData(header: Uint8Array, deploymentId: string, uid: string, path: string): Uint8Array {
  // The header minus the nonce (the AEAD takes the nonce itself), then deployment, uid and path.
  return withLengthPrefixedTexts(header.subarray(0, 1 + 4 + COMMITMENT_BYTES), deploymentId, uid, path);
}

export function sealContentWithNonce(
  keys: UserKeys,
  deploymentId: string,
  uid: string,
  path: string,
  plaintext: Uint8Array,
  nonce: Uint8Array,
): Uint8Array {
  if (nonce.byteLength !== NONCE_BYTES) throw new Error('nonce must be 24 bytes');
  const header = concatBytes(Uint8Array.of(FORMAT_VERSION), u32be(keys.keyVersion), keys.commitment, nonce);
  const sealed = readySodium().crypto_aead_xchacha20poly1305_ietf_encrypt(
    plaintext,
    contentAssociatedData(header, deploymentId, uid, path),
    null,
    nonce,
    keys.contentKey,
  );
  return concatBytes(header, sealed);
}

/** Key version recorded in a content header, or null when the bytes are too short to be one. */
export function contentKeyVersion(stored: Uint8Array): number | null {
  return stored.byteLength >= CONTENT_OVERHEAD ? readU32be(stored, 1) : null;
}

export function openContent(
  keys: UserKeys,
  deploymentId: string,
  uid: string,
  path: string,
  stored: Uint8Array,
): Uint8Array {
  if (stored.byteLength < CONTENT_OVERHEAD || stored[0] !== FORMAT_VERSION) throw integrityError();
  if (readU32be(stored, 1) !== keys.keyVersion) throw integrityError();
  // Key commitment first: Poly1305 alone would let a crafted ciphertext open under two keys.
  if (!constantTimeEqual(stored.subarray(5, 5 + COMMITMENT_BYTES), keys.commitment)) throw integrityError();
  const header = stored.subarray(0, CONTENT_HEADER_BYTES);
  const nonce = stored.subarray(5 + COMMITMENT_BYTES, CONTENT_HEADER_BYTES);
  try {
    return readySodium().crypto_aead_xchacha20poly1305_ietf_decrypt(
      null,
      stored.subarray(CONTENT_HEADER_BYTES),
      contentAssociatedData(header, deploymentId, uid, path),
      nonce,
      keys.contentKey,
    );
  } catch {
    throw integrityError();
  }
}

// ---------------------------------------------------------------------------------------------
// Names

function segmentSiv(keys: UserKeys, parent: string, segment: Uint8Array): Uint8Array {
  // The parent directory's canonical path is hashed in, so one name in two directories gets two
  // different ciphertexts (the operator cannot see that two directories hold a same-named file).
  return keyedHash(keys.nameSivKey, concatBytes(lengthPrefixed(utf8(parent)), segment), SIV_BYTES);
}

function xchacha20Xor(key: Uint8Array, siv: Uint8Array, data: Uint8Array): Uint8Array {
  // The standard libsodium build has no bare XChaCha20 stream; the AEAD's detached ciphertext is
  // exactly that stream XOR the data (its MAC is dropped: the SIV authenticates the name).
  const nonce = concatBytes(siv, new Uint8Array(NONCE_BYTES - SIV_BYTES));
  return readySodium().crypto_aead_xchacha20poly1305_ietf_encrypt_detached(data, null, null, nonce, key).ciphertext;
}

/** Deterministic (SIV) encryption of one path segment below `parent`, base64url without padding. */
export function encryptSegment(keys: UserKeys, parent: string, segment: string): string {
  const plain = utf8(segment);
  const siv = segmentSiv(keys, parent, plain);
  return toBase64Url(concatBytes(siv, xchacha20Xor(keys.nameKey, siv, plain)));
}

/** Inverse of encryptSegment; throws the INTEGRITY error unless the SIV checks. */
export function decryptSegment(keys: UserKeys, parent: string, encoded: string): string {
  const bytes = fromBase64UrlStrict(encoded);
  if (!bytes || bytes.byteLength <= SIV_BYTES) throw integrityError();
  const siv = bytes.subarray(0, SIV_BYTES);
  const plain = xchacha20Xor(keys.nameKey, siv, bytes.subarray(SIV_BYTES));
  if (!constantTimeEqual(segmentSiv(keys, parent, plain), siv)) throw integrityError();
  try {
    return strictUtf8(plain);
  } catch {
    throw integrityError();
  }
}

/** Length in characters of an encrypted segment of `segmentBytes` UTF-8 bytes. */
export function encryptedSegmentLength(segmentBytes: number): number {
  return Math.ceil(((SIV_BYTES + segmentBytes) * 4) / 3);
}

// ---------------------------------------------------------------------------------------------
// Pseudonymous user ids

/** uid = base64url(HMAC-SHA256(deploymentSecret, label | userId)[0..24]): 32 characters. */
export function computeUid(deploymentSecret: Uint8Array, userId: string): string {
  const mac = createHmac('sha256', deploymentSecret).update(LABEL_UID).update(userId, 'utf8').digest();
  return mac.subarray(0, UID_HASH_BYTES).toString('base64url');
}

/** Pseudonymous path id for audit records: HMAC-SHA256(deployment secret, label || uid || 0 || path), 16 bytes, base64url. */
export function computePathId(deploymentSecret: Uint8Array, uid: string, path: string): string {
  const mac = createHmac('sha256', deploymentSecret)
    .update(LABEL_AUDIT_PATH)
    .update(`${uid}\u0000${path}`, 'utf8')
    .digest();
  return mac.subarray(0, 16).toString('base64url');
}

/**
 * The audit MAC key (docs/audit.md): derived from the deployment secret, so only a process that
 * can unwrap k/_deployment with the master key (or KMS) holds it, and key rotation (which
 * re-wraps the secret, never replaces it) keeps old audit records verifiable.
 */
export function computeAuditMacKey(deploymentSecret: Uint8Array): Uint8Array {
  return new Uint8Array(createHmac('sha256', deploymentSecret).update('memvault/v1/audit-mac-key').digest());
}

// ---------------------------------------------------------------------------------------------
// Local master-key wrapping

export interface LocalMasterKeys {
  wrapKey: Uint8Array;
  /** Key check value: identifies the master key without revealing it (`local-` + base64url). */
  keyId: string;
}

export function deriveLocalMasterKeys(masterKey: Uint8Array): LocalMasterKeys {
  return {
    wrapKey: keyedHash(masterKey, LABEL_WRAP_KEY),
    keyId: `local-${toBase64Url(keyedHash(masterKey, LABEL_KEY_CHECK, 16).subarray(0, 12))}`,
  };
}

function wrapAssociatedData(deploymentId: string, uid: string, keyVersion: number): Uint8Array {
  return concatBytes(
    Uint8Array.of(FORMAT_VERSION),
    u32be(keyVersion),
    lengthPrefixed(utf8(deploymentId)),
    lengthPrefixed(utf8(uid)),
  );
}

export function localWrapWithNonce(
  wrapKey: Uint8Array,
  dataKey: Uint8Array,
  deploymentId: string,
  uid: string,
  keyVersion: number,
  nonce: Uint8Array,
): Uint8Array {
  const sealed = readySodium().crypto_aead_xchacha20poly1305_ietf_encrypt(
    dataKey,
    wrapAssociatedData(deploymentId, uid, keyVersion),
    null,
    nonce,
    wrapKey,
  );
  return concatBytes(Uint8Array.of(FORMAT_VERSION), nonce, sealed);
}

/** Returns null when the wrapped key does not open (wrong master key, other user, damage). */
export function localUnwrap(
  wrapKey: Uint8Array,
  wrapped: Uint8Array,
  deploymentId: string,
  uid: string,
  keyVersion: number,
): Uint8Array | null {
  if (wrapped.byteLength !== LOCAL_WRAP_BYTES || wrapped[0] !== FORMAT_VERSION) return null;
  try {
    return readySodium().crypto_aead_xchacha20poly1305_ietf_decrypt(
      null,
      wrapped.subarray(1 + NONCE_BYTES),
      wrapAssociatedData(deploymentId, uid, keyVersion),
      wrapped.subarray(1, 1 + NONCE_BYTES),
      wrapKey,
    );
  } catch {
    return null;
  }
}

// ---------------------------------------------------------------------------------------------
// Key-record authentication (format 2)

/** What a record MAC covers: every field of a key record but the MAC itself. */
export interface RecordMacFields {
  deploymentId: string;
  /** The uid of the record ('_deployment' for the deployment record). */
  uid: string;
  kind: string;
  keyId: string;
  keyVersion: number;
  wrapped: Uint8Array;
  /** Versioned records only (keyVersion > 1): the oldest key version content may still carry. */
  readFrom?: number;
  /** Versioned records only: the older versions the record keeps, ascending (version 1 always: the name root). */
  older?: readonly { keyVersion: number; wrapped: Uint8Array }[];
}

/**
 * The key that authenticates key records: derived from the deployment secret, which only a holder
 * of the master key (or kms:Decrypt) can recover. Someone who can write the bucket and call
 * kms:Encrypt can wrap a key of their own, but cannot MAC the record that carries it.
 */
export function deriveRecordMacKey(deploymentSecret: Uint8Array): Uint8Array {
  return keyedHash(deploymentSecret, LABEL_RECORD_MAC_KEY);
}

export function computeRecordMac(macKey: Uint8Array, fields: RecordMacFields): Uint8Array {
  const message = concatBytes(
    lengthPrefixed(utf8(LABEL_RECORD_MAC)),
    lengthPrefixed(utf8(fields.deploymentId)),
    lengthPrefixed(utf8(fields.uid)),
    lengthPrefixed(utf8(fields.kind)),
    lengthPrefixed(utf8(fields.keyId)),
    u32be(fields.keyVersion),
    lengthPrefixed(fields.wrapped),
    // A single-version record's message ends here (its MAC is unchanged by versioning); a versioned
    // record continues, so every older wrapped secret and the read-from version are covered too.
    ...(fields.older !== undefined
      ? [
          u32be(fields.readFrom ?? 0),
          u32be(fields.older.length),
          ...fields.older.map((o) => concatBytes(u32be(o.keyVersion), lengthPrefixed(o.wrapped))),
        ]
      : []),
  );
  return keyedHash(macKey, message, RECORD_MAC_BYTES);
}

export function verifyRecordMac(macKey: Uint8Array, fields: RecordMacFields, mac: Uint8Array): boolean {
  return constantTimeEqual(computeRecordMac(macKey, fields), mac);
}

/**
 * The deployment fingerprint `{deployment id}.{check}`: a commitment to the deployment secret that
 * a host can pin (encryption.deploymentFingerprint / MEMVAULT_DEPLOYMENT_FINGERPRINT). A replaced
 * deployment record has another secret, so it cannot have this fingerprint. It is a one-way hash:
 * safe for logs.
 */
export function computeDeploymentFingerprint(deploymentSecret: Uint8Array, deploymentId: string): string {
  const check = keyedHash(
    deploymentSecret,
    concatBytes(lengthPrefixed(utf8(LABEL_DEPLOYMENT_CHECK)), lengthPrefixed(utf8(deploymentId))),
    16,
  );
  return `${deploymentId}.${toBase64Url(check)}`;
}
