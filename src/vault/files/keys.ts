/**
 * The bottom of StoreUserFiles: how a user's canonical paths map to store keys through the codec,
 * within the store's key limit, and how a listed key maps back to a path (or is passed over, and
 * reported, when it is not one of the user's files).
 */
import { MemvaultError } from '../../errors.js';
import type { UserCodec } from '../../crypto/user-codec.js';
import { MAX_STORE_KEY_BYTES, VERSION_KEY_EXTRA_BYTES } from '../../store/layout.js';
import type { ObjectStore } from '../../store/port.js';
import { listingSkipped } from '../../telemetry/signals.js';
import { MEMORY_ROOT } from '../paths.js';
import { maxKeyBytesOf } from './capabilities.js';

/** S3's key limit (store/layout.ts), for stores that state none of their own. */
export const DEFAULT_MAX_KEY_BYTES = MAX_STORE_KEY_BYTES;

/**
 * Why a listing passed over an object under the user's prefix: a key ending in '/' (or with an empty
 * segment, as an S3 console "folder" leaves), or a name that does not open under the user's key (an
 * object copied from another user, garbage written by someone with bucket access).
 */
export type UnreadableReason = 'folder_marker' | 'not_decryptable';

/**
 * Told of every object a listing skipped (for the operator's log). `key` is the raw store key: the
 * receiver must not log it as it is (an S3-console folder name is plaintext chosen by whoever made it).
 */
export type UnreadableObjectListener = (object: { uid: string; key: string; reason: UnreadableReason }) => void;

/** Paths to keys and keys to paths, for one user's codec over one store. */
export class UserKeys {
  constructor(
    private readonly store: ObjectStore,
    private readonly codec: UserCodec,
    private readonly onUnreadable?: UnreadableObjectListener,
  ) {}

  /** Whether a key fits the store's key limit. */
  fitsKeyLimit(key: string): boolean {
    return Buffer.byteLength(key, 'utf8') <= maxKeyBytesOf(this.store);
  }

  /**
   * The key of a file that may exist, or null when the path is past the key limit: no file can be
   * there, so reads find nothing (without a request) and only writes say "too long to store".
   */
  existingKeyOf(path: string): string | null {
    if (path === MEMORY_ROOT) return this.codec.keyFor(path); // the codec's own error
    // prefixFor is the key and a '/', computed without the codec's length check.
    const key = this.codec.prefixFor(path).slice(0, -1);
    return this.fitsKeyLimit(key) ? key : null;
  }

  /**
   * The store key of a path, refused with a clear error when over the store's key limit (the
   * encrypted codec says so itself; the plain codec's escaping can triple a name's bytes).
   */
  keyOf(path: string): string {
    const key = this.codec.keyFor(path);
    // The file's version keys (a few bytes longer) must fit too, history on or off: a path's depth
    // does not change with the setting, and a file written with it off can be kept once it is on.
    const extra = VERSION_KEY_EXTRA_BYTES;
    if (!this.fitsKeyLimit(key + 'x'.repeat(extra))) {
      const limit = maxKeyBytesOf(this.store) - extra;
      throw new MemvaultError(
        'INVALID_PATH',
        `Error: The path ${path} is too long to store: the store limits a key to ${limit} bytes; use shorter names or fewer directory levels.`,
      );
    }
    return key;
  }

  /**
   * The canonical path of a listed key, or null for an object that is not one of the user's files
   * (counted, and reported to the operator). Skipping it keeps one planted object from failing every
   * listing of its directory; a direct read of it still fails with the integrity error.
   */
  listedPath(key: string): string | null {
    const rest = key.slice(this.codec.filesPrefix.length);
    if (
      !key.startsWith(this.codec.filesPrefix) ||
      rest.length === 0 ||
      rest.endsWith('/') ||
      rest.startsWith('/') ||
      rest.includes('//')
    ) {
      return this.skipped(key, 'folder_marker');
    }
    let path: string;
    try {
      path = this.codec.pathFor(key);
    } catch (error) {
      // INTEGRITY from the encrypted codec; a URIError from the plain codec's unescaping.
      if ((error instanceof MemvaultError && error.code === 'INTEGRITY') || error instanceof URIError)
        return this.skipped(key, 'not_decryptable');
      throw error;
    }
    // The plain codec unescapes whatever it finds: a name that is not canonical is not a file of ours.
    if (
      !path.startsWith(`${MEMORY_ROOT}/`) ||
      path
        .slice(MEMORY_ROOT.length + 1)
        .split('/')
        .some((s) => s === '' || s === '.' || s === '..')
    ) {
      return this.skipped(key, 'not_decryptable');
    }
    return path;
  }

  private skipped(key: string, reason: UnreadableReason): null {
    listingSkipped(reason);
    try {
      this.onUnreadable?.({ uid: this.codec.uid, key, reason });
    } catch {
      // A failing log hook must not turn a skipped object back into a failed listing.
    }
    return null;
  }
}
