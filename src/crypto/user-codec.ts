/**
 * The codec seam (defined here, below the vault, so that layers import downward only).
 * How one user's files look in the object store. The vault asks a `UserCodec` for every key and
 * every body; the plain codec (tests, benchmarks) keeps names and bytes readable, the encrypted
 * codec (src/crypto) hides both. Implementations must be pure functions of their key material so
 * that two processes agree on every key.
 */
export interface UserCodec {
  /** Pseudonymous user id (a keyed hash of the user id); safe for logs and audit records. */
  readonly uid: string;
  /** Prefix of every object of this user's files, ending with '/'. */
  readonly filesPrefix: string;
  /** Store key of a canonical path below /memories (never /memories itself). */
  keyFor(path: string): string;
  /** Store-key prefix of everything below a canonical directory path, ending with '/'. */
  prefixFor(dir: string): string;
  /** Canonical path of a store key under `filesPrefix`. Throws MemvaultError('INTEGRITY') on a foreign key. */
  pathFor(key: string): string;
  /** Bytes to store for a file's plaintext at `path`. */
  seal(path: string, plaintext: Uint8Array): Uint8Array;
  /** Plaintext of stored bytes read from `path`. Throws MemvaultError('INTEGRITY') if they do not open. */
  open(path: string, stored: Uint8Array): Uint8Array;
  /**
   * Call before `open` with the same bytes: when they name a key version this codec does not hold
   * (another instance re-keyed the user since this one cached the key record), it re-reads the
   * record once, and returns the promise of that, to every call that meets such a version while the
   * re-read runs (a command's concurrent reads all wait for it); otherwise it returns undefined (no
   * await, no extra turn of the event loop on the common path). Absent for codecs without key
   * versions (plain).
   */
  ensureKeyFor?(stored: Uint8Array): Promise<void> | undefined;
  /** Plaintext size of a stored object of `storedSize` bytes (listings show plaintext sizes). */
  plaintextSize(storedSize: number): number;
  /**
   * What sealing adds to every file's bytes, where that is one figure (plaintextSize(n) is then
   * n minus it, never below 0): a store's sum of stored sizes gives the plaintext total with it.
   */
  readonly sealOverhead?: number;
  /**
   * A copy of the key of this user's audit pseudonyms (32 bytes; src/audit/pseudonyms.ts), derived
   * from the user's own data key so that erasing the key makes the user's audit records unlinkable.
   * Absent for codecs without user keys (plain): their audit pseudonyms stay `uid` and `pathId`.
   */
  auditPseudonymKey?(): Uint8Array;
  /**
   * One object per key entry of this process's key cache: the same for every codec made from that
   * entry, and a new one for codecs made after the key is loaded afresh (after an eviction, or an
   * erasure that made a new key). Memos of values derived from the key hang off it weakly (the audit
   * pseudonyms), so they go with the entry; once the key is wiped, reading it throws
   * KEY_UNAVAILABLE like every use of the key. Absent: nothing may be memoised.
   */
  readonly memoScope?: object;
}

export interface CodecProvider {
  /** A short description for start-up logs: 'plain', 'local-master-key', 'kms'. */
  readonly mode: string;
  /**
   * A pseudonymous id of one user's path, for audit records and logs: a keyed hash, stable for the
   * deployment, so an operator who knows a path can find its records without records naming it.
   */
  pathId(uid: string, path: string): string;
  /** The codec of one user; may read or create the user's wrapped data key on first use. */
  forUser(userId: string): Promise<UserCodec>;
  /**
   * The codec of a user known only by the store uid a listing shows (the sweeper's finishing of
   * stopped renames); never creates a user. Absent: such a user cannot be opened by uid.
   */
  forUid?(uid: string): Promise<UserCodec>;
  /** The deployment's audit MAC key (32 bytes), when the codec has a deployment secret (encrypted stores). */
  auditMacKey?(): Uint8Array;
  /** Wipe cached key material. */
  close(): Promise<void>;
}
