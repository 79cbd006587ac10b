/**
 * One user's encrypted codec (src/crypto/user-codec.ts): path <-> store key through encrypted name
 * segments (SIV, memoized per cached key), and content sealed and opened under the user's keyring.
 * The provider (codec.ts) hands these out; nothing else constructs one.
 */
import { MemvaultError } from '../errors.js';
import type { UserCodec } from './user-codec.js';
import {
  CONTENT_OVERHEAD,
  contentKeyVersion,
  decryptSegment,
  encryptSegment,
  integrityError,
  NONCE_BYTES,
  openContent,
  sealContentWithNonce,
  type UserKeyring,
  type UserKeys,
} from './format.js';
import { randomNonce } from './bytes.js';
import type { CachedKeys } from './key-cache.js';
import { userFilesPrefix } from './layout.js';
import { LruMap } from '../util/lru.js';

export const MEMORIES_ROOT = '/memories';

function invalidCanonicalPath(): MemvaultError {
  // Only reachable through a caller bug: the path guard hands the vault canonical paths.
  return new MemvaultError('INVALID_PATH', 'Error: The path is not a canonical path below /memories.');
}

/** Segments of a canonical path below /memories ('/memories' itself has none). */
function segmentsOf(path: string): string[] {
  if (path === MEMORIES_ROOT) return [];
  if (!path.startsWith(`${MEMORIES_ROOT}/`)) throw invalidCanonicalPath();
  const segments = path.slice(MEMORIES_ROOT.length + 1).split('/');
  if (segments.some((s) => s.length === 0 || s === '.' || s === '..')) throw invalidCanonicalPath();
  return segments;
}

/**
 * Memo of encrypted <-> plain segments per cached user key: files in one directory share their
 * leading segments, so a listing decrypts each directory name once instead of once per file.
 * It lives exactly as long as the key entry it hangs off (WeakMap), and is bounded by the one LRU rule.
 */
interface NameMemo {
  encrypted: LruMap<string, string>;
  decrypted: LruMap<string, string>;
  /** UserCodec.memoScope: one object per key entry, for memos above the codec (never the keys themselves). */
  scope: object;
}
const NAME_MEMO_LIMIT = 4096;
/** User ids whose uid the provider remembers. */
const nameMemos = new WeakMap<CachedKeys, NameMemo>();

function memoOf(cached: CachedKeys): NameMemo {
  let memo = nameMemos.get(cached);
  if (!memo) {
    memo = { encrypted: new LruMap(NAME_MEMO_LIMIT), decrypted: new LruMap(NAME_MEMO_LIMIT), scope: {} };
    nameMemos.set(cached, memo);
  }
  return memo;
}

export class EncryptedUserCodec implements UserCodec {
  readonly filesPrefix: string;
  private readonly memo: NameMemo;

  /**
   * The re-read of the key record for an unknown key version (at most once per codec): the running
   * one, shared by every read of the command that meets one (a directory rename reads several files
   * at once: a second read must wait for it, not open with the stale record), then `true`.
   */
  private reread: Promise<void> | true | undefined;

  constructor(
    readonly uid: string,
    private readonly deploymentId: string,
    private cached: CachedKeys,
    private readonly maxKeyBytes: number,
    private readonly reload: () => Promise<CachedKeys>,
  ) {
    this.filesPrefix = userFilesPrefix(uid);
    // Names derive from the name root, the same in every version: the memo survives a reload.
    this.memo = memoOf(cached);
  }

  private get keyring(): UserKeyring {
    if (this.cached.wiped) {
      throw new MemvaultError(
        'KEY_UNAVAILABLE',
        'Error: The memory key was released while this command ran; please try again.',
      );
    }
    return this.cached.keys;
  }

  /** The current version's keys (names, and new content). */
  private get keys(): UserKeys {
    return this.keyring.current;
  }

  /**
   * Another instance re-keyed this user (src/crypto/rekey.ts) after this process cached the key
   * record: stored bytes name a key version the cached record does not hold. Re-read the record
   * once (then new writes use the new version too); a version it does not hold either is refused
   * by open() as INTEGRITY.
   */
  ensureKeyFor(stored: Uint8Array): Promise<void> | undefined {
    const version = contentKeyVersion(stored);
    if (version === null || this.reread === true || this.keyring.byVersion.has(version)) return undefined;
    this.reread ??= this.reload().then((cached) => {
      this.cached = cached;
      this.reread = true;
    });
    return this.reread;
  }

  private encryptedSegments(path: string): string {
    const keys = this.keys;
    let parent = MEMORIES_ROOT;
    const out: string[] = [];
    for (const segment of segmentsOf(path)) {
      // The length prefix keeps (parent, segment) pairs apart whatever characters they hold.
      const memoKey = `${parent.length}:${parent}${segment}`;
      let encrypted = this.memo.encrypted.get(memoKey);
      if (encrypted === undefined) {
        encrypted = encryptSegment(keys, parent, segment);
        this.memo.encrypted.set(memoKey, encrypted);
      }
      out.push(encrypted);
      parent = `${parent}/${segment}`;
    }
    return out.join('/');
  }

  keyFor(path: string): string {
    if (path === MEMORIES_ROOT) throw invalidCanonicalPath();
    const key = this.filesPrefix + this.encryptedSegments(path);
    if (Buffer.byteLength(key, 'utf8') > this.maxKeyBytes) {
      throw new MemvaultError(
        'INVALID_PATH',
        `Error: The path ${path} is too long to store. Encrypted names are about a third longer than the names themselves, and the store limits a key to ${this.maxKeyBytes} bytes; use shorter names or fewer directory levels.`,
      );
    }
    return key;
  }

  prefixFor(dir: string): string {
    const encrypted = this.encryptedSegments(dir);
    return encrypted.length === 0 ? this.filesPrefix : `${this.filesPrefix}${encrypted}/`;
  }

  pathFor(key: string): string {
    if (!key.startsWith(this.filesPrefix))
      throw new MemvaultError('INTEGRITY', 'Error: A stored object does not belong to this user.');
    const keys = this.keys;
    let path = MEMORIES_ROOT;
    // At least one segment is opened (splitting '' gives one, and an empty one does not open), so
    // what is returned is never /memories itself.
    for (const encoded of key.slice(this.filesPrefix.length).split('/')) {
      const memoKey = `${path.length}:${path}${encoded}`;
      let segment = this.memo.decrypted.get(memoKey);
      if (segment === undefined) {
        segment = decryptSegment(keys, path, encoded);
        this.memo.decrypted.set(memoKey, segment);
      }
      path = `${path}/${segment}`;
    }
    return path;
  }

  seal(path: string, plaintext: Uint8Array): Uint8Array {
    segmentsOf(path);
    const nonce = randomNonce(NONCE_BYTES);
    return sealContentWithNonce(this.keys, this.deploymentId, this.uid, path, plaintext, nonce);
  }

  open(path: string, stored: Uint8Array): Uint8Array {
    // The header names the version; only that version's keys are tried (a header whose version
    // disagrees with the key that sealed it fails the commitment check inside openContent).
    const version = contentKeyVersion(stored);
    const keys = version === null ? undefined : this.keyring.byVersion.get(version);
    if (!keys) throw integrityError();
    return openContent(keys, this.deploymentId, this.uid, path, stored);
  }

  plaintextSize(storedSize: number): number {
    return Math.max(0, storedSize - CONTENT_OVERHEAD);
  }

  readonly sealOverhead = CONTENT_OVERHEAD;

  auditPseudonymKey(): Uint8Array {
    return new Uint8Array(this.keys.auditPseudonymKey);
  }

  get memoScope(): object {
    void this.keyring; // a wiped key's codec refuses (KEY_UNAVAILABLE), and so do memos hung off it
    return this.memo.scope;
  }
}
