/**
 * The storage layout and its limits: the one place each prefix, key and bound is spelled. Below
 * every layer that names objects (vault, crypto, expiry, audit, the CLI), so each imports it; the CDK
 * construct (infra/lib/memvault-storage.ts) cannot import src/ and keeps a copy that
 * test/infra/layout.test.ts holds equal to this one. docs/format.md describes the layout.
 *
 *   k/_deployment        the deployment record
 *   k/{uid}              one user's wrapped data key
 *   u/{uid}/c/{class}    the user's TTL class marker (expiry)
 *   u/{uid}/f/{names}    the user's files
 *   s/sweep-state.json   the sweeper's checkpoint
 *   audit/{instance}/... sealed audit segments
 */
export const KEYS_PREFIX = 'k/';
/** Prefix of every user's objects. */
export const USERS_PREFIX = 'u/';
export const DEPLOYMENT_RECORD_KEY = `${KEYS_PREFIX}_deployment`;
/** Prefix of the sweeper's own objects. */
export const SWEEP_STATE_PREFIX = 's/';
export const SWEEP_STATE_KEY = `${SWEEP_STATE_PREFIX}sweep-state.json`;
/** Key prefix of sealed audit segments (inside the audit store's own prefix). */
export const AUDIT_KEY_PREFIX = 'audit/';

/** Prefix of everything stored for one user (files and anything the vault keeps beside them). */
export function userPrefix(uid: string): string {
  return `${USERS_PREFIX}${uid}/`;
}

/** Prefix of one user's files. */
export function userFilesPrefix(uid: string): string {
  return `${userPrefix(uid)}f/`;
}

/** The longest object key S3 accepts, in UTF-8 bytes (the file store keeps to it too). */
export const MAX_STORE_KEY_BYTES = 1024;
/** Keys per batch delete: S3's DeleteObjects limit, and the page size of a listing. */
export const DELETE_BATCH_KEYS = 1000;
/** The longest user id the host may pass, in UTF-16 code units. */
export const MAX_USER_ID_LENGTH = 256;
