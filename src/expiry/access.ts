/**
 * The vault side of idle expiry: one `ExpiryService` per vault, one `FileAccessPolicy` per user and
 * command (src/vault/store-user-files.ts calls it).
 *
 * - Touch on access: a read of a file whose LastModified is at least `touchIntervalMs` old copies the
 *   object onto itself (`copy(key, key, { metadata })`: S3 CopyObject with the metadata replaced by
 *   the same metadata), which moves LastModified and so restarts both the lifecycle rule's age and
 *   the sweeper's idle clock. The copy goes through the store, so the command's request accounting
 *   counts it (COPY). Encrypted bodies bind their path, not their time, so the copy stays valid.
 * - At most one touch per file per interval: a touched object is fresh for a whole interval, and
 *   within one process concurrent reads of the same stale file share one copy.
 * - Writes carry the `memvault-ttl-class` tag; a user of a non-default class gets a marker object
 *   (see layout.ts) before their first write in this process.
 */
import { MemvaultError } from '../errors.js';
import { listAll, PreconditionFailedError, type ObjectStore } from '../store/port.js';
import type { FileAccessPolicy } from '../vault/store-user-files.js';
import { checkTouchInterval, DEFAULT_TOUCH_INTERVAL_MS, resolveTtl, TTL_CLASS_TAG_KEY, ttlDaysOf, type ExpiryOptions, type ResolvedTtl } from './config.js';
import { LruMap } from '../util/lru.js';
import { isHidden } from './decide.js';
import { classMarkerKey, classMarkerPrefix, parseUserKey, userPrefixOf } from './layout.js';

/** Bounded memories (per process): recently touched keys and users whose class marker is known good. */
const MAX_REMEMBERED_TOUCHES = 50_000;
const MAX_REMEMBERED_USERS = 10_000;

export class ExpiryService {
  readonly ttl: ResolvedTtl;
  readonly touchIntervalMs: number;
  private readonly now: () => Date;
  private readonly touches = new Map<string, Promise<void>>();
  private readonly lastTouch = new LruMap<string, number>(MAX_REMEMBERED_TOUCHES);
  private readonly markersChecked = new LruMap<string, string>(MAX_REMEMBERED_USERS);

  constructor(
    private readonly store: ObjectStore,
    private readonly options: ExpiryOptions,
  ) {
    this.ttl = resolveTtl(options);
    this.touchIntervalMs = checkTouchInterval(this.ttl, options.touchIntervalMs ?? DEFAULT_TOUCH_INTERVAL_MS);
    this.now = options.now ?? (() => new Date());
  }

  /** The policy for one user's files during one command. */
  async forUser(userId: string, codec: { uid: string; filesPrefix: string }): Promise<FileAccessPolicy> {
    const requested = this.options.classOf ? await this.options.classOf(userId) : undefined;
    const className = requested ?? this.ttl.defaultClass;
    const ttlDays = ttlDaysOf(this.ttl, className);
    if (ttlDays === undefined) throw new MemvaultError('CONFIG', 'expiry: classOf returned a TTL class that is not configured');
    const userPrefix = userPrefixOf(codec.filesPrefix);
    const recordClass = this.options.classOf !== undefined && userPrefix !== undefined;
    return {
      writeTags: { [TTL_CLASS_TAG_KEY]: className },
      isExpired: (lastModified) => isHidden(lastModified, ttlDays, this.now()),
      afterRead: (key, object) => this.touch(key, object.lastModified, object.metadata),
      beforeWrite: async () => {
        if (recordClass) await this.recordClass(userPrefix, className);
      },
    };
  }

  /**
   * What a host-side rewrite of a stored user's files (re-keying, src/crypto/rekey.ts) must respect
   * when only the uid is known: the class recorded by the user's markers (none: the default class;
   * several, during a class change: the longest TTL, as the sweeper decides), its tag for the writes,
   * and whether a file is expired (then it is left for the sweeper, never resurrected).
   */
  async forStoredUser(filesPrefix: string): Promise<{ writeTags: Record<string, string>; isExpired(lastModified: Date): boolean }> {
    const userPrefix = userPrefixOf(filesPrefix);
    let className = this.ttl.defaultClass;
    let ttlDays = ttlDaysOf(this.ttl, className);
    if (userPrefix !== undefined) {
      for await (const object of listAll(this.store, classMarkerPrefix(userPrefix))) {
        const parsed = parseUserKey(object.key);
        if (parsed.kind !== 'class') continue;
        const days = ttlDaysOf(this.ttl, parsed.className);
        if (days === undefined) throw new MemvaultError('CONFIG', 'expiry: a stored user has a TTL class that is not configured; nothing was rewritten');
        if (ttlDays === undefined || days > ttlDays || className === this.ttl.defaultClass) [className, ttlDays] = [parsed.className, days];
      }
    }
    const days = ttlDays ?? 0;
    return { writeTags: { [TTL_CLASS_TAG_KEY]: className }, isExpired: (lastModified) => isHidden(lastModified, days, this.now()) };
  }

  private async touch(key: string, lastModified: Date, metadata: Record<string, string>): Promise<void> {
    const now = this.now().getTime();
    if (now - lastModified.getTime() < this.touchIntervalMs) return;
    if (now - (this.lastTouch.peek(key) ?? -Infinity) < this.touchIntervalMs) return;
    const pending = this.touches.get(key);
    if (pending) return pending;
    const touch = (async () => {
      try {
        await this.store.copy(key, key, { metadata });
        this.lastTouch.set(key, now);
      } catch (error) {
        // The read succeeded; a failed touch only means the file ages from its previous touch.
        this.options.onTouchError?.(error);
      } finally {
        this.touches.delete(key);
      }
    })();
    this.touches.set(key, touch);
    return touch;
  }

  /**
   * Make `u/{uid}/c/` hold exactly the user's class (nothing for the default class). The new marker
   * is written before the old one is removed, so a sweep in between sees both and takes the longer
   * TTL; it is written before the user's file, so the sweeper never meets a file of a longer-lived
   * class without its marker. One LIST per user per process (then remembered).
   */
  private async recordClass(userPrefix: string, className: string): Promise<void> {
    if (this.markersChecked.get(userPrefix) === className) return;
    const present: string[] = [];
    for await (const object of listAll(this.store, classMarkerPrefix(userPrefix))) {
      const parsed = parseUserKey(object.key);
      if (parsed.kind === 'class') present.push(parsed.className);
    }
    const wanted = className === this.ttl.defaultClass ? [] : [className];
    for (const name of wanted) {
      if (present.includes(name)) continue;
      try {
        await this.store.put(classMarkerKey(userPrefix, name), new Uint8Array(0), { ifNoneMatch: '*' });
      } catch (error) {
        if (!(error instanceof PreconditionFailedError)) throw error;
      }
    }
    const stale = present.filter((name) => !wanted.includes(name)).map((name) => classMarkerKey(userPrefix, name));
    if (stale.length > 0) await this.store.deleteMany(stale);
    this.markersChecked.set(userPrefix, className);
  }
}

export function createExpiryService(store: ObjectStore, options: ExpiryOptions): ExpiryService {
  return new ExpiryService(store, options);
}
