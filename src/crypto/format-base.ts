/**
 * What every byte format of format.ts shares: the format version, the sizes, the labels that keep
 * each keyed derivation apart (domain separation), the keyed hash and the integrity error.
 */
import { MemvaultError } from '../errors.js';
import { utf8 } from './bytes.js';
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
export const LABEL_CONTENT_KEY = 'memvault/v1/content-key';
export const LABEL_NAME_KEY = 'memvault/v1/name-key';
export const LABEL_NAME_SIV_KEY = 'memvault/v1/name-siv-key';
export const LABEL_COMMITMENT = 'memvault/v1/key-commitment';
export const LABEL_WRAP_KEY = 'memvault/v1/wrap-key';
export const LABEL_KEY_CHECK = 'memvault/v1/key-check';
export const LABEL_UID = 'memvault/v1/uid\u0000';
// Introduced with format 2 (labels name the version that introduced them; older labels kept their value).
export const LABEL_RECORD_MAC_KEY = 'memvault/v2/record-mac-key';
export const LABEL_RECORD_MAC = 'memvault/v2/key-record';
export const LABEL_DEPLOYMENT_CHECK = 'memvault/v2/deployment-check';
export const LABEL_AUDIT_PATH = 'memvault/v1/audit-path\u0000';
/** The per-user audit pseudonym key (src/audit/pseudonyms.ts): gone with the data key on erasure. */
export const LABEL_AUDIT_PSEUDONYM_KEY = 'memvault/v1/audit-pseudonym-key';

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
