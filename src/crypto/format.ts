/**
 * The byte formats of docs/format.md, as pure functions of explicit keys and nonces (the test
 * vector in docs/format.md is checked against these). Everything here is synchronous and needs
 * `await loadSodium()` to have run once in the process. The shared constants and labels are in
 * format-base.ts, the key formats (local wrap, record MAC, fingerprint) in format-keys.ts.
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
import {
  COMMITMENT_BYTES,
  CONTENT_HEADER_BYTES,
  CONTENT_OVERHEAD,
  FORMAT_VERSION,
  KEY_BYTES,
  LABEL_AUDIT_PATH,
  LABEL_AUDIT_PSEUDONYM_KEY,
  LABEL_COMMITMENT,
  LABEL_CONTENT_KEY,
  LABEL_NAME_KEY,
  LABEL_NAME_SIV_KEY,
  LABEL_UID,
  NONCE_BYTES,
  SIV_BYTES,
  UID_HASH_BYTES,
  integrityError,
  keyedHash,
} from './format-base.js';

export {
  FORMAT_VERSION,
  DEPLOYMENT_ID_BYTES,
  DEPLOYMENT_ID_PATTERN,
  RECORD_MAC_BYTES,
  KEY_BYTES,
  NONCE_BYTES,
  TAG_BYTES,
  COMMITMENT_BYTES,
  SIV_BYTES,
  CONTENT_HEADER_BYTES,
  CONTENT_OVERHEAD,
  LOCAL_WRAP_BYTES,
  UID_HASH_BYTES,
  UID_PATTERN,
  LABEL_AUDIT_PATH,
  INTEGRITY_MESSAGE,
  integrityError,
  keyedHash,
} from './format-base.js';
export {
  deriveLocalMasterKeys,
  localWrapWithNonce,
  localUnwrap,
  deriveRecordMacKey,
  computeRecordMac,
  verifyRecordMac,
  computeDeploymentFingerprint,
  type LocalMasterKeys,
  type RecordMacFields,
} from './format-keys.js';

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
