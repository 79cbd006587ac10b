/**
 * The vault side of idle expiry: one `ExpiryService` per vault, one `FileAccessPolicy` per user and
 * command (src/vault/store-user-files.ts calls it).
 *
 * - Touch on access: a read of a file whose LastModified is at least `touchIntervalMs` old writes
 *   the bytes it read back in place, `If-Match` the ETag it read, with the metadata it read and the
 *   user's TTL-class tag in the same PUT. That moves LastModified and so restarts both the lifecycle
 *   rule's age and the sweeper's idle clock. The condition is the touch's linearisation point against
 *   every other writer of the file (an edit, a fence, the sweeper): a touch never writes over a
 *   version it did not read, so an edit that lands first wins whole and the touch learns it lost
 *   (412, dropped). A copy onto itself could not promise that: RGW 16 ignores CopyObject's
 *   conditions, copies whatever is current under the metadata the read saw (a newer body under an
 *   older version record: unreadable), and restates tags in a second request. Encrypted bodies bind
 *   their path, not their time, so the bytes stay valid. The PUT is counted in the command's
 *   requests.
 * - At most one touch per file per interval: a touched object is fresh for a whole interval, and
 *   within one process concurrent reads of the same stale file share one touch.
 * - Writes carry the `memvault-ttl-class` tag; a user of a non-default class gets a marker object
 *   (see layout.ts) before their first write in this process.
 */
import { MemvaultError } from '../errors.js';
import { listAll, PreconditionFailedError, type ObjectStore } from '../store/port.js';
import type { FileAccessPolicy, TouchableObject } from '../vault/store-user-files.js';
import {
  checkTouchInterval,
  classOfMarkers,
  resolveTtl,
  TTL_CLASS_TAG_KEY,
  ttlDaysOf,
  type ExpiryOptions,
  type ResolvedTtl,
} from './config.js';
import { LruMap } from '../util/lru.js';
import { isHidden, newestHidden } from './decide.js';
import { classMarkerKey, classMarkerPrefix, parseUserKey, userPrefixOf } from './layout.js';

/** Bounded memories (per process): recently touched keys and users whose class marker is known good. */
const MAX_REMEMBERED_TOUCHES = 50_000;
const MAX_REMEMBERED_USERS = 10_000;

export class ExpiryService {
  readonly ttl: ResolvedTtl;
  readonly touchIntervalMs: number;
  private readonly now: () => Date;
  /** Touches in flight, by key and the ETag they are conditioned on: reads of one version share one. */
  private readonly touches = new Map<string, Promise<{ etag: string; lastModified: Date } | undefined>>();
  private readonly lastTouch = new LruMap<string, number>(MAX_REMEMBERED_TOUCHES);
  private readonly markersChecked = new LruMap<string, string>(MAX_REMEMBERED_USERS);

  constructor(
    private readonly store: ObjectStore,
    private readonly options: ExpiryOptions,
  ) {
    this.ttl = resolveTtl(options);
    this.touchIntervalMs = checkTouchInterval(this.ttl, options.touchIntervalMs);
    this.now = options.now ?? (() => new Date());
  }

  /** The policy for one user's files during one command. */
  async forUser(userId: string, codec: { uid: string; filesPrefix: string }): Promise<FileAccessPolicy> {
    const requested = this.options.classOf ? await this.options.classOf(userId) : undefined;
    const className = requested ?? this.ttl.defaultClass;
    const ttlDays = ttlDaysOf(this.ttl, className);
    if (ttlDays === undefined)
      throw new MemvaultError('CONFIG', 'expiry: classOf returned a TTL class that is not configured');
    const userPrefix = userPrefixOf(codec.filesPrefix);
    const recordClass = this.options.classOf !== undefined && userPrefix !== undefined;
    return {
      writeTags: { [TTL_CLASS_TAG_KEY]: className },
      isExpired: (lastModified) => isHidden(lastModified, ttlDays, this.now()),
      newestExpired: () => newestHidden(ttlDays, this.now()),
      // A touch is a write as well (it restarts the idle clock under the class's tag): the class is
      // recorded before it, so that a user whose class changed and who only reads is swept by it.
      afterRead: (key, object) =>
        this.touch(key, object, { [TTL_CLASS_TAG_KEY]: className }, () =>
          recordClass ? this.recordClass(userPrefix, className) : Promise.resolve(),
        ),
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
  async forStoredUser(
    filesPrefix: string,
  ): Promise<{ writeTags: Record<string, string>; isExpired(lastModified: Date): boolean; newestExpired(): Date }> {
    const userPrefix = userPrefixOf(filesPrefix);
    const classes: string[] = [];
    if (userPrefix !== undefined)
      for await (const object of listAll(this.store, classMarkerPrefix(userPrefix))) {
        const parsed = parseUserKey(object.key);
        if (parsed.kind === 'class') classes.push(parsed.className);
      }
    const decided = classOfMarkers(this.ttl, classes);
    if (decided === undefined)
      throw new MemvaultError(
        'CONFIG',
        'expiry: a stored user has a TTL class that is not configured; nothing was rewritten',
      );
    const { className, ttlDays: days } = decided;
    return {
      writeTags: { [TTL_CLASS_TAG_KEY]: className },
      isExpired: (lastModified) => isHidden(lastModified, days, this.now()),
      newestExpired: () => newestHidden(days, this.now()),
    };
  }

  private async touch(
    key: string,
    object: TouchableObject,
    tags: Record<string, string>,
    beforePut: () => Promise<void>,
  ): Promise<{ etag: string; lastModified: Date } | undefined> {
    const now = this.now().getTime();
    if (now - object.lastModified.getTime() < this.touchIntervalMs) return undefined;
    if (now - (this.lastTouch.peek(key) ?? -Infinity) < this.touchIntervalMs) return undefined;
    const flight = `${key} ${object.etag}`;
    const pending = this.touches.get(flight);
    if (pending) return pending;
    const touch = (async () => {
      try {
        await beforePut();
        const { etag } = await this.store.put(key, object.body, {
          ifMatch: object.etag,
          metadata: object.metadata,
          tags,
        });
        this.lastTouch.set(key, now);
        return { etag, lastModified: new Date(now) };
      } catch (error) {
        // Another writer's version is there now (it won: nothing to do), or the touch failed: the
        // read still stands; the file only ages from its previous write.
        if (!(error instanceof PreconditionFailedError)) this.options.onTouchError?.(error);
        return undefined;
      } finally {
        this.touches.delete(flight);
      }
    })();
    this.touches.set(flight, touch);
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
