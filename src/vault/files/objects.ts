/**
 * Conditional I/O on one user's objects, above the key mapping: what a stored object is to the user
 * (a live file, or absent: expired, a fence marker, a reaping marker about to be deleted), and the
 * create-only and replace-exactly writes that never overwrite a live file they did not see.
 */
import type { UserCodec } from '../../crypto/user-codec.js';
import { markerOf, REAPING_BODY_BYTES, REAPING_WAIT_MS } from '../../store/fence.js';
import { PreconditionFailedError, type ObjectInfo, type ObjectStore, type StoredObject } from '../../store/port.js';
import { writeRetried } from '../../telemetry/signals.js';
import { setTimeout as sleep } from 'node:timers/promises';
import { MEMORY_ROOT } from '../paths.js';
import type { FilesUsage } from '../tree-files.js';
import type { Expiry } from './expiry.js';

/** The sizes a marker has (a fence's 0 bytes, a reaping marker's body): the listing's filter and the summary's alike. */
const MARKER_SIZES: readonly number[] = [0, REAPING_BODY_BYTES];

/** Object metadata field carrying WriteCondition.origin (an opaque random id: no name, user or content). */
export const ORIGIN_METADATA = 'origin';
/** Attempts to replace an expired object that still occupies a path a create-only write targets. */
const EXPIRED_REPLACE_TRIES = 3;
/** A create's first pause for a reaping marker's DELETE (doubling, at most 400 ms; REAPING_WAIT_MS in all). */
const REAPING_PAUSE_MS = 25;
/** Attempts of an overwrite that keeps losing to other writers of the same file (then CONFLICT). */
const OVERWRITE_TRIES = 10;

/** A PUT of a file's bytes under the conditions given. */
export type ConditionalPut = (c: { ifMatch?: string; ifNoneMatch?: '*' }) => Promise<{ etag: string }>;

export class UserObjects {
  constructor(
    private readonly store: ObjectStore,
    private readonly codec: UserCodec,
    private readonly expiry: Expiry,
  ) {}

  private emptySealsToBytes: boolean | undefined;

  /**
   * Whether a stored object of 0 bytes can only be a fence marker: true when this codec seals even
   * an empty file into some bytes (every encrypted codec), so listings skip markers without a
   * request. A plain store keeps an empty file as 0 bytes: there a 0-byte object is looked at (one
   * GET) to tell an empty file from a marker.
   */
  zeroBytesIsMarker(): boolean {
    this.emptySealsToBytes ??= this.codec.seal(`${MEMORY_ROOT}/.memvault/probe`, new Uint8Array(0)).byteLength > 0;
    return this.emptySealsToBytes;
  }

  /** Whether a listed object is a file the user has (not expired, not a fence or reaping marker). */
  async isLiveObject(object: ObjectInfo): Promise<boolean> {
    return this.isLiveBySize(object) ?? this.isLiveByRequest(object);
  }

  /**
   * isLiveObject without a request, or undefined where only a GET can tell (a plain store's 0-byte
   * object, or one of a reaping marker's size, then isLiveByRequest): listings of many objects take
   * this path and await nothing for the others.
   */
  isLiveBySize(object: ObjectInfo): boolean | undefined {
    if (this.expiry.isExpired(object.lastModified)) return false;
    if (!MARKER_SIZES.includes(object.size)) return true;
    // A sealed file is longer than a reaping marker too: the size tells, without a request.
    if (this.zeroBytesIsMarker()) return false;
    return undefined;
  }

  /**
   * The live files under `prefix` counted and their plaintext summed by the store itself, where it
   * sums in place (ObjectStore.summarize) and the filter isLiveBySize applies fits in its options:
   * markers told by their size (an encrypted codec), expiry in one instant, one seal overhead. Else
   * null: the caller lists. Every live object counts, one whose name does not open included (a
   * listing skips it and reports it to the operator: it still takes room until removed).
   */
  async summedUsage(prefix: string): Promise<FilesUsage | null> {
    const liveAfter = this.expiry.liveAfter();
    const overhead = this.codec.sealOverhead;
    if (!this.store.summarize || liveAfter === undefined || overhead === undefined || !this.zeroBytesIsMarker())
      return null;
    const { objects, bytes } = await this.store.summarize(prefix, {
      exceptSizes: MARKER_SIZES,
      overhead,
      ...(liveAfter ? { modifiedAfter: liveAfter } : {}),
    });
    return { files: objects, bytes };
  }

  /** What isLiveBySize cannot tell: whether the object at the key is a file or a marker (one GET). */
  async isLiveByRequest(object: ObjectInfo): Promise<boolean> {
    const current = await this.store.get(object.key);
    return current !== null && markerOf(current.metadata) === null;
  }

  /** Whether an object met at a key is a reaping marker (about to be deleted by its reaper). */
  async isReapingMarker(object: ObjectInfo): Promise<boolean> {
    if (object.size !== REAPING_BODY_BYTES) return false;
    if (this.zeroBytesIsMarker()) return true;
    const current = await this.store.get(object.key);
    return current !== null && markerOf(current.metadata)?.reason === 'reaping';
  }

  /** Load the key version the object names when the codec lacks it (another instance re-keyed the user): its content and record are sealed under it. */
  async loadKeyFor(object: StoredObject): Promise<void> {
    const reloading = this.codec.ensureKeyFor?.(object.body);
    if (reloading) await reloading;
  }

  /**
   * Create-only while an object that is absent for the user may still sit at the key (an expired
   * file not yet swept, or a fence marker whose clean-up has not run or was cut short): replace
   * exactly that version (If-Match its ETag), never a live file. One HEAD more when the create
   * meets anything.
   */
  async createReplacingAbsent(key: string, put: ConditionalPut): Promise<{ etag: string }> {
    let waits = 0;
    let reapingSince: number | undefined;
    for (let attempt = 1; ; attempt++) {
      if (attempt > 1) writeRetried('expired_replace');
      try {
        return await put({ ifNoneMatch: '*' });
      } catch (error) {
        if (!(error instanceof PreconditionFailedError) || attempt >= EXPIRED_REPLACE_TRIES + waits) throw error;
      }
      const existing = await this.store.head(key);
      if (existing && (await this.isReapingMarker(existing))) {
        // Its reaper's unconditional DELETE may be on its way (src/store/fence.ts): a file written
        // over it now could be deleted by it. Wait for the key to be free, then create If-None-Match;
        // after REAPING_WAIT_MS the reaper can no longer send it, and the marker is replaced.
        reapingSince ??= performance.now();
        if (performance.now() - reapingSince < REAPING_WAIT_MS) {
          await sleep(Math.min(REAPING_PAUSE_MS * 2 ** waits, 400));
          waits += 1;
          continue;
        }
      }
      if (existing && (await this.isLiveObject(existing))) throw new PreconditionFailedError(key);
      if (!existing) continue;
      try {
        return await put({ ifMatch: existing.etag });
      } catch (error) {
        // Swept, cleaned up or rewritten in between: look again.
        if (!(error instanceof PreconditionFailedError) || attempt >= EXPIRED_REPLACE_TRIES) throw error;
      }
    }
  }

  /**
   * An unconditional write whose create-only PUT met an object: replace exactly the object seen
   * (`If-Match`), waiting out a reaping marker as a create does (only stores whose DELETE condition
   * is not atomic have them). `created`: no file was there (a marker or an expired object), so the
   * name is new; `replaced`: the size of the live file replaced.
   */
  async replaceExisting(
    key: string,
    put: ConditionalPut,
  ): Promise<{ result: { etag: string }; created: boolean; replaced: number | null }> {
    let reapingSince: number | undefined;
    for (let attempt = 1, waits = 0; ; attempt++) {
      const existing = await this.store.head(key);
      try {
        if (!existing) return { result: await put({ ifNoneMatch: '*' }), created: true, replaced: null };
        if (await this.isReapingMarker(existing)) {
          reapingSince ??= performance.now();
          if (performance.now() - reapingSince < REAPING_WAIT_MS) {
            await sleep(Math.min(REAPING_PAUSE_MS * 2 ** waits++, 400));
            attempt -= 1; // waiting is not a lost race
            continue;
          }
        }
        const created = !(await this.isLiveObject(existing));
        return {
          result: await put({ ifMatch: existing.etag }),
          created,
          replaced: created ? null : this.codec.plaintextSize(existing.size),
        };
      } catch (error) {
        // Written, cleaned up or swept in between: look again.
        if (!(error instanceof PreconditionFailedError) || attempt >= OVERWRITE_TRIES) throw error;
        writeRetried('overwrite');
      }
    }
  }
}
