/**
 * The idle-expiry layer of StoreUserFiles: what an access policy (src/expiry/access.ts) asks of the
 * files, and the one place that asks it. Without a policy nothing expires, reads touch nothing and
 * writes carry no TTL tag.
 */
import { inStoreTransaction } from './capabilities.js';

/** What a read saw of a stored file: a touch writes exactly these bytes back, `If-Match` this ETag. */
export interface TouchableObject {
  body: Uint8Array;
  etag: string;
  lastModified: Date;
  metadata: Record<string, string>;
}

/**
 * Optional idle-expiry behaviour (implemented in src/expiry/access.ts): a file idle past its TTL is
 * absent (reads, stats and listings skip it, so a read never resurrects what the sweeper is about to
 * delete), a read of a live file may touch it (the bytes read, written back `If-Match` their ETag)
 * to restart its lifecycle age, and every write carries the TTL-class tag.
 */
export interface FileAccessPolicy {
  isExpired(lastModified: Date): boolean;
  /** The latest LastModified isExpired calls expired now (expired exactly when at or before it): a summary's filter. */
  newestExpired?(): Date;
  /**
   * After a read of a live file; best effort (never throws). A touch rewrites the object, so it
   * answers the version it wrote (the read then hands out that ETag), or nothing when it wrote none.
   */
  afterRead(key: string, object: TouchableObject): Promise<{ etag: string; lastModified: Date } | undefined>;
  /** Before every write (records the user's TTL class once). */
  beforeWrite(): Promise<void>;
  readonly writeTags: Record<string, string>;
}

/** A policy's answers, or those of no policy. */
export class Expiry {
  constructor(private readonly access?: FileAccessPolicy) {}

  /** Whether an object last written at `lastModified` is idle past its TTL (absent for the user). */
  isExpired(lastModified: Date): boolean {
    return this.access?.isExpired(lastModified) ?? false;
  }

  /**
   * Files last modified after this instant are not expired: null when nothing expires, undefined when
   * the policy cannot put it in one instant (only isExpired, object by object, can tell).
   */
  liveAfter(): Date | null | undefined {
    return this.access ? this.access.newestExpired?.() : null;
  }

  /**
   * Touch a live file just read; the version the touch wrote, if any. Not inside a store transaction
   * (a directory's rename or delete, a write's steps): the command rewrites or removes the file
   * anyway, and the touch could join one another command started, which waits for the transaction.
   */
  afterRead(key: string, object: TouchableObject): Promise<{ etag: string; lastModified: Date } | undefined> {
    if (!this.access || inStoreTransaction()) return Promise.resolve(undefined);
    return this.access.afterRead(key, object);
  }

  /** Before a write of a user's file. */
  async beforeWrite(): Promise<void> {
    await this.access?.beforeWrite();
  }

  /** The TTL-class tags every write of a user's file carries, or undefined without a policy. */
  get writeTags(): Record<string, string> | undefined {
    return this.access?.writeTags;
  }
}
