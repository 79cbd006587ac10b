import { MemvaultError } from '../errors.js';
import { countBytesRead, countBytesWritten } from '../store/accounting.js';
import { listAll, PreconditionFailedError, type ObjectInfo, type ObjectStore, type PreparedCreate, type StoredObject } from '../store/port.js';
import type { UserCodec } from '../crypto/user-codec.js';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileNameConflict, NameConflictError, type NameConflict } from './names.js';
import { listingSkipped, writeRetried } from '../telemetry/signals.js';
import { MEMORY_ROOT } from './paths.js';
import type {
  FenceMarker,
  FencedFile,
  FileVersion,
  ListedFile,
  PathState,
  ReadOptions,
  StatOptions,
  UserFiles,
  WriteCondition,
  WriteResult,
} from './user-files.js';
import { MARKER_BODY, markerMetadata, markerOf, reap, REAPING_BODY_BYTES, REAPING_WAIT_MS } from '../store/fence.js';
import { meterHistory, type HistoryTarget, type HistoryUsage } from './history-usage.js';
import { LruMap } from '../util/lru.js';

import {
  DELETE_BATCH_KEYS as DELETE_BATCH,
  MAX_STORE_KEY_BYTES,
  HISTORY_TAG_KEY,
  HISTORY_TAG_VALUE,
  parseVersionKey,
  VERSION_KEY_EXTRA_BYTES,
  versionKeyOf,
  versionsPrefixOf,
} from '../store/layout.js';
import { lookAgainWhileStale, newestKeptSeq } from '../crypto/verified-read.js';
import {
  bodyHashOf,
  checkCurrentFresh,
  clockSeq,
  nextSeq,
  openVersionRecord,
  sealVersionRecord,
  olderVersionsKeptError,
  staleVersionError,
  VERSION_METADATA,
  type VersionActor,
  type VersionEnd,
} from './version-record.js';
/** S3's key limit (store/layout.ts), for stores that state none of their own. */
const DEFAULT_MAX_KEY_BYTES = MAX_STORE_KEY_BYTES;
/** Tries of a create whose rival took itself back too (names.ts), and the longest pause before the next. */
const NAME_CONFLICT_TRIES = 3;
const NAME_CONFLICT_PAUSE_MS = 40;
/** Object metadata field carrying WriteCondition.origin (an opaque random id: no name, user or content). */
const ORIGIN_METADATA = 'origin';
/** Attempts to replace an expired object that still occupies a path a create-only write targets. */
const EXPIRED_REPLACE_TRIES = 3;
/** A create's first pause for a reaping marker's DELETE (doubling, at most 400 ms; REAPING_WAIT_MS in all). */
const REAPING_PAUSE_MS = 25;
/** Attempts of an overwrite that keeps losing to other writers of the same file (then CONFLICT). */
const OVERWRITE_TRIES = 10;

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
  /**
   * After a read of a live file; best effort (never throws). A touch rewrites the object, so it
   * answers the version it wrote (the read then hands out that ETag), or nothing when it wrote none.
   */
  afterRead(key: string, object: TouchableObject): Promise<{ etag: string; lastModified: Date } | undefined>;
  /** Before every write (records the user's TTL class once). */
  beforeWrite(): Promise<void>;
  readonly writeTags: Record<string, string>;
}

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

/**
 * Who writes through this instance (the version record every write carries names it) and, with
 * history on (docs/versions.md), that every version written is also kept under v/.
 */
export interface VersionWriting {
  actor: VersionActor;
  keepHistory: boolean;
  /**
   * Stored versions whose records this vault sealed or opened and checked (`versionRecordMemo()`),
   * shared by the vault's commands: a read that meets one again (same key, ETag and sealed record)
   * takes its number from here instead of opening the record again (a libsodium open and a SHA-256
   * of the body, about 15 µs of CPU a read). A put-back of a known version still carries its old
   * number, and a record that is not the one checked (stripped, swapped) is opened and refused.
   */
  knownRecords?: LruMap<string, KnownRecord>;
}

/** A version record checked once: its number, and the sealed text it was checked as. */
export interface KnownRecord {
  seq: number;
  sealed: string;
}

/** Entries of each memo of version numbers and version keys. */
const MEMO_LIMIT = 10_000;

/** A memo for VersionWriting.knownRecords (one per vault; bounded like every memo here). */
export function versionRecordMemo(): LruMap<string, KnownRecord> {
  return new LruMap(MEMO_LIMIT);
}

/** The memo's key of a stored version: its object key and ETag. */
const recordMemoKey = (key: string, etag: string): string => `${key}\n${etag}`;

/** What a GET found at a file's key (StoreUserFiles.examine). */
type Examined = null | { marker: FenceMarker } | { opened: { object: StoredObject; data: Uint8Array; seq: number | undefined } };

/** Writes of an instance made without saying: the host's, history off (tests, tools below the vault). */
const HOST_WRITES: VersionWriting = { actor: 'host', keepHistory: false };

/**
 * The tag every kept version carries (never a TTL class tag: a version's age is the history's
 * retention, not the file's idle time), for the S3 lifecycle rule of the CDK construct.
 */
const VERSION_TAGS = { [HISTORY_TAG_KEY]: HISTORY_TAG_VALUE };

/** memvault's bookkeeping (rename journals) has no history: it is not the user's memory. */
const RESERVED_PREFIX = `${MEMORY_ROOT}/.memvault/`;

/** A version of the history about to be kept: its key, bytes and sealed record. */
interface KeptVersion {
  versionKey: string;
  body: Uint8Array;
  metadata: Record<string, string>;
}

/** Drop a prepared version that will not be published, before the command answers (best effort: a crash leaves a temp file a listing removes). */
async function dropPrepared(prepared: Promise<PreparedCreate> | undefined): Promise<void> {
  await prepared
    ?.then(
      (p) => p.discard(),
      () => undefined,
    )
    .catch(() => undefined);
}

/** UserFiles over an ObjectStore: the codec decides keys and bytes, this class the S3-style semantics. */
export class StoreUserFiles implements UserFiles {
  constructor(
    private readonly store: ObjectStore,
    private readonly codec: UserCodec,
    private readonly access?: FileAccessPolicy,
    private readonly onUnreadable?: UnreadableObjectListener,
    private readonly writing: VersionWriting = HOST_WRITES,
  ) {
    this.knownRecords = writing.knownRecords ?? versionRecordMemo();
  }

  /** Records of the versions this vault read or wrote, by object key and ETag (an edit's If-Match names one). */
  private readonly knownRecords: LruMap<string, KnownRecord>;
  /** Version keys this instance wrote, by the ETag of the file version they keep (to take one back with it). */
  private readonly ownVersions = new LruMap<string, string>(MEMO_LIMIT);

  /** Lowest sequence numbers the next version of a path may take (a restore knows the newest kept version). */
  private readonly seqFloor = new Map<string, number>();

  /** The history holds versions of `path` up to `seq`: this instance's next version of it is numbered above. */
  noteNewestVersion(path: string, seq: number): void {
    this.seqFloor.set(path, Math.max(seq, this.seqFloor.get(path) ?? 0));
  }

  private keepsHistory(path: string): boolean {
    return this.writing.keepHistory && !path.startsWith(RESERVED_PREFIX);
  }

  get uid(): string {
    return this.codec.uid;
  }

  async read(path: string, options?: ReadOptions): Promise<FileVersion | null> {
    return (await this.inspect(path, options))?.file ?? null;
  }

  async inspect(path: string, options: ReadOptions = {}): Promise<PathState> {
    const key = this.existingKeyOf(path);
    if (key === null) return null;
    // Freshness (docs/versions.md): the newest version the history holds, listed beside the GET.
    const checked = this.keepsHistory(path) && options.freshness !== 'write';
    const [object, newest] = await Promise.all([this.store.get(key), checked ? this.newestVersionSeq(key) : Promise.resolve(null)]);
    let seen = { found: await this.examine(path, key, object), newest };
    // Side by side, the two can meet another instance's write or delete half-way (the GET before it,
    // the LIST after its version or tombstone): a mismatch is looked at again in the safe order
    // (LIST, then GET), and only an object that stays older than its history is a put-back.
    if (checked) {
      const again = async () => {
        const newer = await this.newestVersionSeq(key);
        return { found: await this.examine(path, key, await this.store.get(key)), newest: newer };
      };
      seen = await lookAgainWhileStale(seen, again, ({ found, newest: n }) =>
        found && 'opened' in found ? { etag: found.opened.object.etag, seq: found.opened.seq, newest: n } : null,
      );
    }
    const found = seen.found;
    if (!found || 'marker' in found) return found;
    const { object: current, data, seq } = found.opened;
    // A current version older than the newest one kept, or one without a record where the history
    // holds any, was put back by someone else: refused, never served as current.
    checkCurrentFresh(path, seq, seen.newest);
    countBytesRead(data.byteLength);
    const touched = await this.access?.afterRead(key, current);
    const origin = current.metadata[ORIGIN_METADATA];
    const { etag, lastModified } = touched ?? current;
    return { file: { data, etag, lastModified, ...(origin !== undefined ? { origin } : {}) } };
  }

  /** What a GET found at a file's key: no file, a fence marker, or a file opened with its checked record number. */
  private async examine(path: string, key: string, object: StoredObject | null): Promise<Examined> {
    if (!object) return null;
    const marker = markerOf(object.metadata);
    if (marker) return { marker: { ...marker, etag: object.etag } };
    if (this.access?.isExpired(object.lastModified)) return null;
    // An empty object where files are never empty (sealed): a marker whose metadata was lost (a
    // touch by copy, before touches were conditional, that raced its fence restated the file's
    // metadata); no file is there.
    if (object.body.byteLength === 0 && this.zeroBytesIsMarker()) return { marker: { reason: 'unknown', op: '', etag: object.etag } };
    await this.loadKeyFor(object);
    const data = this.codec.open(path, object.body);
    // With history off nothing is checked against the record, so it is not opened (about 15 µs of
    // CPU a read): an edit then numbers its version by the clock instead of one past this one. A
    // version this vault already knows is not opened again (VersionWriting.knownRecords).
    const seq = this.keepsHistory(path) ? this.checkedSeq(path, key, object) : undefined;
    return { opened: { object, data, seq } };
  }

  /** Load the key version the object names when the codec lacks it (another instance re-keyed the user): its content and record are sealed under it. */
  private async loadKeyFor(object: StoredObject): Promise<void> {
    const reloading = this.codec.ensureKeyFor?.(object.body);
    if (reloading) await reloading;
  }

  async fence(path: string, ifMatch: string, reason: 'moved' | 'deleted', op: string): Promise<FencedFile> {
    const key = this.existingKeyOf(path);
    if (key === null) throw new PreconditionFailedError(path); // no file can be there
    // The tombstone is numbered one past the version it ends, not by the clock: a create of the same
    // name that took its clock number before this fence and lands after it must stay above the
    // tombstone, or reads would refuse it as a put-back (docs/versions.md, "Sequence numbers"). The
    // number is known when this vault read the version (the memo); else it is looked up (one GET)
    // before the fence. A version without a readable record falls back to a clock number taken
    // before the fence goes out.
    const history = this.keepsHistory(path);
    const ended = history ? (this.knownSeq(key, ifMatch) ?? (await this.recordedSeqOf(path, key, ifMatch))) : undefined;
    const tombstone = history ? this.tombstoneOf(path, key, reason, ended !== undefined ? nextSeq(ended) : clockSeq()) : undefined;
    // The tombstone's bytes are known before the fence: where the store can prepare a create, that
    // part goes beside the fence, and the tombstone is still published only after it (below).
    const prepared = tombstone && this.prepareVersion(tombstone);
    let cleanUp: Promise<void> = Promise.resolve();
    try {
      if (this.store.deleteExactly) {
        // A store that decides a conditional delete itself, with an answer that cannot be lost: the
        // delete is the fence (one durable step), and there is no marker to clean up.
        await this.store.deleteExactly(key, ifMatch);
      } else {
        const { etag } = await this.store.put(key, MARKER_BODY, { ifMatch, metadata: markerMetadata(reason, op) });
        // Best effort: the marker already took the file out of use, and one left behind is no file to
        // anyone (a create replaces it, the sweeper removes it once idle past the TTL).
        cleanUp = this.deleteVersion(key, etag).catch(() => undefined);
      }
    } catch (error) {
      await dropPrepared(prepared); // no work of a failed fence outlives it
      throw error;
    }
    // The fence is the moment the file ends: its tombstone follows it (docs/versions.md), never
    // before it (a tombstone of a file still there would make reads refuse it), and goes out beside
    // the marker's clean-up. The content is in the history already (every version is written there
    // as it is made).
    const recorded = tombstone ? this.publishVersion(tombstone, prepared).catch(() => undefined) : Promise.resolve();
    return { settled: Promise.all([cleanUp, recorded]).then(() => undefined) };
  }

  /** The number of the stored version (key, etag) when this vault has sealed or checked its record. */
  private knownSeq(key: string, etag: string): number | undefined {
    return this.knownRecords.get(recordMemoKey(key, etag))?.seq;
  }

  /**
   * The number the object's version record gives, checked (INTEGRITY when it does not open or does
   * not match the body), or undefined when it carries none. Opened once per vault: a record already
   * checked, met again on the same version, is taken from the memo.
   */
  private checkedSeq(path: string, key: string, object: StoredObject): number | undefined {
    const sealed = object.metadata[VERSION_METADATA];
    if (sealed === undefined) return undefined;
    const memoKey = recordMemoKey(key, object.etag);
    const known = this.knownRecords.get(memoKey);
    if (known?.sealed === sealed) return known.seq;
    const seq = openVersionRecord(this.codec, path, object.metadata, object.body)!.seq;
    this.knownRecords.set(memoKey, { seq, sealed });
    return seq;
  }

  /** The newest of the file's kept versions (one LIST of one key: version keys sort newest first), or undefined when it has none. */
  private async newestVersionInfo(key: string): Promise<ObjectInfo | undefined> {
    return (await this.store.list(versionsPrefixOf(this.codec.uid, key), { maxKeys: 1 })).objects[0];
  }

  /** The newest sequence number under the file's versions, or null when it has none. */
  private newestVersionSeq(key: string): Promise<number | null> {
    return newestKeptSeq(this.store, this.codec.uid, key);
  }

  /**
   * The number of the stored version `etag` at `key`, from its record (one GET), or undefined when
   * another version is there, none, or one whose record does not open (a fence must still take a
   * damaged or put-back file out of use). A store error fails the fence before it goes out.
   */
  private async recordedSeqOf(path: string, key: string, etag: string): Promise<number | undefined> {
    const object = await this.store.get(key);
    return object !== null && object.etag === etag ? await this.noteRecordOf(path, key, object) : undefined;
  }

  /**
   * The object's checked record number, memoized; undefined when it has none or it does not open.
   * A key version the codec has not seen (another instance re-keyed the user) is loaded first, as a
   * read does: else the record would not open and the tombstone would be numbered by the clock.
   */
  private async noteRecordOf(path: string, key: string, object: StoredObject): Promise<number | undefined> {
    await this.loadKeyFor(object);
    try {
      return this.checkedSeq(path, key, object);
    } catch {
      return undefined;
    }
  }

  /**
   * A version that records the end of a file (a delete, a move): no content. Create-only: a number
   * taken already means the history holds a version at or past it, which ends the fenced one as well.
   * Made before the fence (its time and, where prepared, its LastModified fall within the command, as
   * a write's version's do).
   */
  private tombstoneOf(path: string, key: string, end: VersionEnd, seq: number): KeptVersion {
    const body = new Uint8Array(0);
    const metadata = {
      [VERSION_METADATA]: sealVersionRecord(this.codec, path, { seq, actor: this.writing.actor, time: Date.now(), bodyHash: bodyHashOf(body), end }),
    };
    return { versionKey: versionKeyOf(this.codec.uid, key, seq), body, metadata };
  }

  /** Write a kept version: create-only (a version key is written once), tagged for the lifecycle rule. */
  private async putVersion(versionKey: string, body: Uint8Array, metadata: Record<string, string>): Promise<void> {
    await this.store.put(versionKey, body, { ifNoneMatch: '*', metadata, tags: VERSION_TAGS });
  }

  /**
   * A kept version's create prepared where the store offers it (the file store writes and fsyncs its
   * temp file now, beside the step the version must follow), else undefined. Published by
   * publishVersion or dropped by dropPrepared; a failed preparation falls back to a plain PUT.
   */
  private prepareVersion(version: KeptVersion): Promise<PreparedCreate> | undefined {
    const prepared = this.store.prepareCreate?.(version.versionKey, version.body, { metadata: version.metadata, tags: VERSION_TAGS });
    prepared?.catch(() => undefined); // awaited by publishVersion or dropPrepared
    return prepared;
  }

  /** Publish a kept version: its prepared create committed, or a create-only PUT when none was prepared. */
  private async publishVersion(version: KeptVersion, prepared?: Promise<PreparedCreate>): Promise<void> {
    const ready = prepared ? await prepared.catch(() => undefined) : undefined;
    if (ready) await ready.commit();
    else await this.putVersion(version.versionKey, version.body, version.metadata);
  }

  /**
   * Keep the version just written (create-only: a version key is written once). For an edit, its
   * number taken already means the version this write replaced was not the newest (someone put an
   * older one back and this write edited that): the newest kept version is put back in place of this
   * write, and the command fails with the integrity error. A write numbered by the clock replaced no
   * version it read: its number taken is another writer's clock that gave the same number (another
   * process), a race and no put-back, answered 'taken' (the write numbers itself again). Any other
   * failure leaves the file written and the version missing from the history (reads accept a
   * current version newer than the history).
   */
  private async keepVersion(
    path: string,
    key: string,
    seq: number,
    body: Uint8Array,
    metadata: Record<string, string>,
    etag: string,
    numberedByClock: boolean,
    prepared?: Promise<PreparedCreate>,
  ): Promise<'kept' | 'taken'> {
    const versionKey = versionKeyOf(this.codec.uid, key, seq);
    try {
      await this.publishVersion({ versionKey, body, metadata }, prepared);
      this.ownVersions.set(etag, versionKey);
      return 'kept';
    } catch (error) {
      if (!(error instanceof PreconditionFailedError)) return 'kept';
    }
    const there = await this.store.get(versionKey).catch(() => null);
    if (there && there.metadata[VERSION_METADATA] === metadata[VERSION_METADATA]) {
      this.ownVersions.set(etag, versionKey); // our own write, whose answer was lost
      return 'kept';
    }
    if (numberedByClock) return 'taken';
    await this.putBackNewest(key, etag).catch(() => undefined);
    throw staleVersionError(path);
  }

  /** Replace the version `etag` at `key` by the newest kept version (its object as it is kept, or a marker for a tombstone). */
  private async putBackNewest(key: string, etag: string): Promise<void> {
    const listed = await this.newestVersionInfo(key);
    const newest = listed ? await this.store.get(listed.key) : null;
    if (!newest) return;
    if (newest.body.byteLength === 0) {
      await this.store.put(key, MARKER_BODY, { ifMatch: etag, metadata: markerMetadata('deleted', 'history') });
      return;
    }
    const tags = this.access?.writeTags;
    await this.store.put(key, newest.body, { ifMatch: etag, metadata: newest.metadata, ...(tags ? { tags } : {}) });
  }

  /**
   * Whether a stored object of 0 bytes can only be a fence marker: true when this codec seals even
   * an empty file into some bytes (every encrypted codec), so listings skip markers without a
   * request. A plain store keeps an empty file as 0 bytes: there a 0-byte object is looked at (one
   * GET) to tell an empty file from a marker.
   */
  private zeroBytesIsMarker(): boolean {
    this.emptySealsToBytes ??= this.codec.seal(`${MEMORY_ROOT}/.memvault/probe`, new Uint8Array(0)).byteLength > 0;
    return this.emptySealsToBytes;
  }

  private emptySealsToBytes: boolean | undefined;

  /** Whether a listed object is a file the user has (not expired, not a fence or reaping marker). */
  private async isLiveObject(object: ObjectInfo): Promise<boolean> {
    if (this.access?.isExpired(object.lastModified)) return false;
    if (object.size !== 0 && object.size !== REAPING_BODY_BYTES) return true;
    // A sealed file is longer than a reaping marker too: the size tells, without a request.
    if (this.zeroBytesIsMarker()) return false;
    const current = await this.store.get(object.key);
    return current !== null && markerOf(current.metadata) === null;
  }

  /** Whether an object met at a key is a reaping marker (about to be deleted by its reaper). */
  private async isReapingMarker(object: ObjectInfo): Promise<boolean> {
    if (object.size !== REAPING_BODY_BYTES) return false;
    if (this.zeroBytesIsMarker()) return true;
    const current = await this.store.get(object.key);
    return current !== null && markerOf(current.metadata)?.reason === 'reaping';
  }

  async write(path: string, data: Uint8Array, condition: WriteCondition = {}): Promise<WriteResult> {
    const key = this.keyOf(path);
    const body = this.codec.seal(path, data);
    await this.access?.beforeWrite();
    const tags = this.access?.writeTags;
    const history = this.keepsHistory(path);
    // Every write of a user's file carries its version record, history on or off (docs/versions.md,
    // "Mixed settings"): a file an instance with history off wrote is then read as a current version
    // newer than the history by an instance with it on, never as a put-back stripped of its record.
    const recorded = !path.startsWith(RESERVED_PREFIX);
    const known = condition.ifMatch !== undefined ? this.knownSeq(key, condition.ifMatch) : undefined;
    const floor = this.seqFloor.get(path);
    const numbered = !recorded ? 0 : known !== undefined ? nextSeq(known) : clockSeq();
    const seq = floor !== undefined && numbered <= floor ? nextSeq(floor) : numbered;
    const actor = this.writing.actor;
    const fields: Record<string, string> = {
      ...(condition.origin !== undefined ? { [ORIGIN_METADATA]: condition.origin } : {}),
      ...(recorded ? { [VERSION_METADATA]: sealVersionRecord(this.codec, path, { seq, actor, time: Date.now(), bodyHash: bodyHashOf(body) }) } : {}),
    };
    const metadata = Object.keys(fields).length > 0 ? fields : undefined;
    const put = (conditions: { ifMatch?: string; ifNoneMatch?: '*' }) =>
      this.store.put(key, body, { ...conditions, ...(tags ? { tags } : {}), ...(metadata ? { metadata } : {}) });
    const once = async (): Promise<{ result: { etag: string }; created: boolean; replaced?: number | null }> => {
      if (condition.ifMatch !== undefined) {
        return { result: await put({ ifMatch: condition.ifMatch, ...(condition.ifNoneMatch ? { ifNoneMatch: '*' as const } : {}) }), created: false };
      }
      if (condition.ifNoneMatch) return { result: await this.createReplacingAbsent(key, put), created: true, replaced: null };
      // An unconditional write either creates a name (then it is checked like a create) or replaces
      // a file that is already there (a name that is a file already: nothing to check). Trying the
      // create first tells the two apart without a HEAD; a rolled-back create never costs an
      // overwritten version.
      try {
        return { result: await put({ ifNoneMatch: '*' }), created: true, replaced: null };
      } catch (error) {
        if (!(error instanceof PreconditionFailedError)) throw error;
      }
      // Something is there: look (one HEAD) and replace exactly what was seen. The HEAD tells a
      // live file (whose size the quota settles with) from a marker or an expired object (the name
      // is then new, and checked), and on a store whose DELETE condition is not atomic it finds a
      // reaping marker whose DELETE may be on its way (src/store/fence.ts), which is waited out.
      return this.replaceExisting(key, put);
    };
    // The version's bytes are known before the write: where the store can prepare a create (the file
    // store's temp file, written and fsync'd), that part goes beside the write; the version is still
    // published only after the write landed (keepVersion). Used by the first attempt only.
    let prepared = history ? this.prepareVersion({ versionKey: versionKeyOf(this.codec.uid, key, seq), body, metadata: metadata! }) : undefined;
    for (let attempt = 1; ; attempt++) {
      const preparedNow = prepared;
      prepared = undefined;
      let landed: Awaited<ReturnType<typeof once>>;
      try {
        landed = await once();
      } catch (error) {
        await dropPrepared(preparedNow); // no work of a failed write outlives it
        throw error;
      }
      const { result, created, replaced } = landed;
      const checked = created && !condition.deferNameCheck;
      // The name check and the version's write need no answer from each other, so they go out
      // together (the version only ever follows the write it keeps: the history is never ahead of
      // the file). A create the check takes back takes its version back with it.
      // A write numbered by the clock (it replaced no version this vault knew: a create, an
      // overwrite, a copy) may land below a number kept meanwhile: a tombstone or a version of a file
      // that another instance made and ended at this name while this write was under way. The history's
      // newest number, listed beside the two, tells (docs/versions.md, "Sequence numbers").
      const [check, kept, newest] = await Promise.allSettled([
        checked ? this.takeBackOnConflict(path, key, result.etag) : Promise.resolve(null),
        history ? this.keepVersion(path, key, seq, body, metadata!, result.etag, known === undefined, preparedNow) : Promise.resolve('kept' as const),
        history && known === undefined ? this.newestVersionSeq(key) : Promise.resolve(null),
      ]);
      // A version that found its number taken has put the newest kept version back already: that
      // is what happened to the file, whatever the check says (it is rare for a create: a clash of
      // two writers' clock numbers, or a put-back met).
      if (kept.status === 'rejected' && (check.status === 'rejected' || !check.value?.takenBack)) throw kept.reason;
      if (check.status === 'rejected') throw check.reason;
      const conflict = check.value;
      if (conflict?.takenBack && history) await this.dropOwnVersion(key, seq, result.etag, metadata![VERSION_METADATA]!);
      if (!conflict) {
        countBytesWritten(data.byteLength);
        const listed = newest.status === 'fulfilled' ? newest.value : null;
        // Its number taken by another writer's clock: numbered again above it (and what was listed).
        const taken = kept.status === 'fulfilled' && kept.value === 'taken';
        const above = taken ? Math.max(listed ?? seq, seq) : listed !== null && listed > seq ? listed : undefined;
        const final = (above !== undefined ? await this.renumber(path, key, body, fields, tags, result.etag, above) : null) ?? {
          etag: result.etag,
          seq,
          sealed: metadata?.[VERSION_METADATA],
        };
        if (recorded && final.sealed !== undefined) this.knownRecords.set(recordMemoKey(key, final.etag), { seq: final.seq, sealed: final.sealed });
        return replaced === undefined ? { etag: final.etag } : { etag: final.etag, replaced };
      }
      // Two rivals that saw each other have both taken themselves back. After a random pause, the
      // first to look again finds the way clear and tries once more; a rival still there has won.
      if (attempt >= NAME_CONFLICT_TRIES) throw new NameConflictError(conflict.conflict);
      await sleep(Math.random() * NAME_CONFLICT_PAUSE_MS * attempt);
      const still = await fileNameConflict(this, path);
      if (still) throw new NameConflictError(still);
    }
  }

  /**
   * Number the version this write just landed (`etag`) again, one past `newest`: the same body put
   * back `If-Match` itself with a new record, and that version kept. Null when it could not (an edit
   * landed meanwhile, whose writer saw the file: it stays as it is; or the store failed), leaving the
   * write as it landed.
   */
  private async renumber(
    path: string,
    key: string,
    body: Uint8Array,
    fields: Record<string, string>,
    tags: Record<string, string> | undefined,
    etag: string,
    newest: number,
  ): Promise<{ etag: string; seq: number; sealed: string } | null> {
    const seq = nextSeq(newest);
    const sealed = sealVersionRecord(this.codec, path, { seq, actor: this.writing.actor, time: Date.now(), bodyHash: bodyHashOf(body) });
    const metadata = { ...fields, [VERSION_METADATA]: sealed };
    try {
      const result = await this.store.put(key, body, { ifMatch: etag, metadata, ...(tags ? { tags } : {}) });
      const versionKey = versionKeyOf(this.codec.uid, key, seq);
      await this.putVersion(versionKey, body, metadata).then(
        () => this.ownVersions.set(result.etag, versionKey),
        () => undefined, // a version missing from the history: reads accept a current version newer than it
      );
      return { etag: result.etag, seq, sealed };
    } catch {
      return null;
    }
  }

  /**
   * Write, then check (src/vault/names.ts): a created name that a rival made a directory (or put
   * below a file) is taken back, only as we wrote it (If-Match: an edit made meanwhile by someone
   * who saw it stays). Returns the conflict, or null when the name is ours.
   */
  private async takeBackOnConflict(path: string, key: string, etag: string): Promise<{ conflict: NameConflict; takenBack: boolean } | null> {
    const conflict = await fileNameConflict(this, path);
    if (!conflict) return null;
    // Only the version written here: where a DELETE's condition is not atomic (RGW 16 ignores it)
    // it is reaped (a conditional PUT first), so an edit another instance made of the briefly
    // visible file makes the take-back fail and the edited file stays (and so does its version).
    const takenBack = await this.deleteVersion(key, etag).then(
      () => true,
      () => false,
    );
    return { conflict, takenBack };
  }

  /**
   * The kept version of this instance's write `etag`, deleted with the write a name check took back.
   * When its PUT's outcome is unknown (an error, a lost answer), the version key is looked at and
   * deleted only if it holds this write's own record (another writer could hold the same number).
   * Tried twice; a version left behind is a version of content the model wrote, which the
   * retention drops in time.
   */
  private async dropOwnVersion(key: string, seq: number, etag: string, sealed: string): Promise<void> {
    const versionKey = versionKeyOf(this.codec.uid, key, seq);
    for (let attempt = 1; attempt <= 2; attempt++) {
      try {
        if (this.ownVersions.get(etag) !== versionKey) {
          const object = await this.store.get(versionKey);
          if (object === null || object.metadata[VERSION_METADATA] !== sealed) return;
        }
        await this.store.delete(versionKey);
        this.ownVersions.delete(etag);
        return;
      } catch {
        // try once more
      }
    }
  }

  /**
   * Create-only while an object that is absent for the user may still sit at the key (an expired
   * file not yet swept, or a fence marker whose clean-up has not run or was cut short): replace
   * exactly that version (If-Match its ETag), never a live file. One HEAD more when the create
   * meets anything.
   */
  private async createReplacingAbsent(key: string, put: (c: { ifMatch?: string; ifNoneMatch?: '*' }) => Promise<{ etag: string }>): Promise<{ etag: string }> {
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
  private async replaceExisting(
    key: string,
    put: (c: { ifMatch?: string; ifNoneMatch?: '*' }) => Promise<{ etag: string }>,
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
        return { result: await put({ ifMatch: existing.etag }), created, replaced: created ? null : this.codec.plaintextSize(existing.size) };
      } catch (error) {
        // Written, cleaned up or swept in between: look again.
        if (!(error instanceof PreconditionFailedError) || attempt >= OVERWRITE_TRIES) throw error;
        writeRetried('overwrite');
      }
    }
  }

  async stat(path: string, options: StatOptions = {}): Promise<{ size: number; etag: string; lastModified: Date } | null> {
    if (path === MEMORY_ROOT) return null;
    const key = this.existingKeyOf(path);
    if (key === null) return null;
    // For a fence, with history on: a GET in place of the HEAD, whose record numbers the tombstone.
    let head: ObjectInfo | null;
    if (options.forFence === true && this.keepsHistory(path)) {
      const object = await this.store.get(key);
      if (object) await this.noteRecordOf(path, key, object);
      head = object;
    } else head = await this.store.head(key);
    if (!head || !(await this.isLiveObject(head))) return null;
    return { size: this.codec.plaintextSize(head.size), etag: head.etag, lastModified: head.lastModified };
  }

  /** One LIST of at most one key. */
  async isDirectory(path: string): Promise<boolean> {
    if (path === MEMORY_ROOT) return true;
    const prefix = this.codec.prefixFor(path);
    if (!this.fitsKeyLimit(prefix)) return false; // no key can lie below it: no request needed
    const page = await this.store.list(prefix, { maxKeys: 1 });
    const first = page.objects[0];
    if (!first) return false;
    if (await this.isListable(first)) return true;
    // Only expired, unreadable objects or fence markers so far: a directory exists while one live file lies below it.
    for await (const object of this.listAfter(prefix, first.key)) if (await this.isListable(object)) return true;
    return false;
  }

  /** A live object whose name opens under the user's key (what listings show and directories consist of). */
  private async isListable(object: ObjectInfo): Promise<boolean> {
    return (await this.isLiveObject(object)) && this.listedPath(object.key) !== null;
  }

  /**
   * The canonical path of a listed key, or null for an object that is not one of the user's files
   * (counted, and reported to the operator). Skipping it keeps one planted object from failing every
   * listing of its directory; a direct read of it still fails with the integrity error.
   */
  private listedPath(key: string): string | null {
    const rest = key.slice(this.codec.filesPrefix.length);
    if (!key.startsWith(this.codec.filesPrefix) || rest.length === 0 || rest.endsWith('/') || rest.startsWith('/') || rest.includes('//')) {
      return this.skipped(key, 'folder_marker');
    }
    let path: string;
    try {
      path = this.codec.pathFor(key);
    } catch (error) {
      // INTEGRITY from the encrypted codec; a URIError from the plain codec's unescaping.
      if ((error instanceof MemvaultError && error.code === 'INTEGRITY') || error instanceof URIError) return this.skipped(key, 'not_decryptable');
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

  private async *listAfter(prefix: string, startAfter: string): AsyncGenerator<ObjectInfo> {
    let page = await this.store.list(prefix, { startAfter });
    yield* page.objects;
    while (page.continuationToken) {
      page = await this.store.list(prefix, { continuationToken: page.continuationToken });
      yield* page.objects;
    }
  }

  async *listFiles(dir: string): AsyncIterable<ListedFile> {
    const prefix = this.codec.prefixFor(dir);
    if (!this.fitsKeyLimit(prefix)) return;
    for await (const object of listAll(this.store, prefix)) {
      if (!(await this.isLiveObject(object))) continue;
      const path = this.listedPath(object.key);
      if (path === null) continue;
      yield { path, size: this.codec.plaintextSize(object.size), lastModified: object.lastModified, etag: object.etag };
    }
  }

  assertStorable(path: string): void {
    this.keyOf(path);
  }

  /**
   * The store key of a path, refused with a clear error when over the store's key limit (the
   * encrypted codec says so itself; the plain codec's escaping can triple a name's bytes).
   */
  private fitsKeyLimit(key: string): boolean {
    return Buffer.byteLength(key, 'utf8') <= (this.store.maxKeyBytes ?? DEFAULT_MAX_KEY_BYTES);
  }

  /**
   * The key of a file that may exist, or null when the path is past the key limit: no file can be
   * there, so reads find nothing (without a request) and only writes say "too long to store".
   */
  private existingKeyOf(path: string): string | null {
    if (path === MEMORY_ROOT) return this.codec.keyFor(path); // the codec's own error
    // prefixFor is the key and a '/', computed without the codec's length check.
    const key = this.codec.prefixFor(path).slice(0, -1);
    return this.fitsKeyLimit(key) ? key : null;
  }

  private keyOf(path: string): string {
    const key = this.codec.keyFor(path);
    // The file's version keys (a few bytes longer) must fit too, history on or off: a path's depth
    // does not change with the setting, and a file written with it off can be kept once it is on.
    const extra = VERSION_KEY_EXTRA_BYTES;
    if (!this.fitsKeyLimit(key + 'x'.repeat(extra))) {
      const limit = (this.store.maxKeyBytes ?? DEFAULT_MAX_KEY_BYTES) - extra;
      throw new MemvaultError(
        'INVALID_PATH',
        `Error: The path ${path} is too long to store: the store limits a key to ${limit} bytes; use shorter names or fewer directory levels.`,
      );
    }
    return key;
  }

  async remove(path: string, condition: { ifMatch?: string } = {}): Promise<void> {
    const key = this.existingKeyOf(path);
    if (key === null) return; // nothing can be there
    if (condition.ifMatch !== undefined) await this.deleteVersion(key, condition.ifMatch);
    else await this.store.delete(key);
    // Taking back a version this instance wrote (a refused rename's copy) takes its kept version too:
    // the command failed, so its history record goes with it.
    const own = condition.ifMatch !== undefined ? this.ownVersions.get(condition.ifMatch) : undefined;
    if (own !== undefined) {
      this.ownVersions.delete(condition.ifMatch!);
      await this.store.delete(own).catch(() => undefined);
    }
  }

  /** Delete exactly the version `etag` of `key`: a conditional DELETE where the store decides it atomically, else reaped. */
  private async deleteVersion(key: string, etag: string): Promise<void> {
    if (this.store.atomicConditionalDelete === true) await this.store.delete(key, { ifMatch: etag });
    else await this.reap(key, etag);
  }

  /**
   * Delete exactly the version `etag` of `key` on a store whose DELETE condition is not atomic
   * (src/store/fence.ts): replace it `If-Match` by a reaping marker of its own ETag, then delete
   * that. A write that landed first makes the PUT fail (PreconditionFailedError, as a conditional
   * delete would; a missing key is no error); one that comes later meets the reaping marker, which
   * a create waits out (createReplacingAbsent) and an edit cannot match. One PUT instead of the HEAD.
   */
  private async reap(key: string, etag: string): Promise<void> {
    try {
      await reap(
        {
          replaceIfMatch: async (body, ifMatch, metadata) => void (await this.store.put(key, body, { ifMatch, metadata })),
          deleteUnconditionally: () => this.store.delete(key),
        },
        etag,
      );
    } catch (error) {
      if (error instanceof PreconditionFailedError && (await this.store.head(key)) === null) return;
      throw error;
    }
  }

  /**
   * Every kept version of the file older than the version `etag` (one LIST per 1,000 versions, one
   * batch DELETE per 1,000), deleted for good. By number, not by place in the listing: the version
   * `etag` may be missing from the history (its version PUT failed, or its answer was lost and the
   * edit found it landed), and a newer one another instance wrote since (an edit, a tombstone)
   * stays. What a read compares with is then the newest kept version or, with none left, nothing
   * (a current version newer than the history is read as it is).
   */
  async dropVersionsBefore(path: string, etag: string): Promise<void> {
    if (!this.keepsHistory(path)) return;
    const key = this.existingKeyOf(path);
    if (key === null) return;
    const seq = this.knownSeq(key, etag) ?? (await this.currentSeq(path, key, etag));
    const older: string[] = [];
    for await (const object of listAll(this.store, versionsPrefixOf(this.codec.uid, key))) {
      const version = parseVersionKey(this.codec.uid, object.key);
      if (version !== null && version.seq < seq) older.push(object.key);
    }
    let failed = 0;
    for (let i = 0; i < older.length; i += DELETE_BATCH) {
      failed += (await this.store.deleteMany(older.slice(i, i + DELETE_BATCH))).failed.length;
    }
    if (failed > 0) throw olderVersionsKeptError(path, failed);
  }

  /** The number of the file's version `etag` when no memo has it (one GET): it must still be the current one. */
  private async currentSeq(path: string, key: string, etag: string): Promise<number> {
    const object = await this.store.get(key);
    if (object && object.etag === etag) await this.loadKeyFor(object); // its record may be sealed under a key version not seen yet
    const seq = object && object.etag === etag ? this.checkedSeq(path, key, object) : undefined;
    if (seq === undefined) throw olderVersionsKeptError(path, undefined);
    return seq;
  }

  historyUsage(pruneTo?: HistoryTarget): Promise<HistoryUsage | null> {
    return this.writing.keepHistory ? meterHistory(this.store, this.codec, pruneTo) : Promise.resolve(null);
  }

  async removeMany(paths: string[]): Promise<{ failed: string[] }> {
    const failed: string[] = [];
    for (let i = 0; i < paths.length; i += DELETE_BATCH) {
      const batch = paths.slice(i, i + DELETE_BATCH);
      const byKey = new Map<string, string>();
      for (const p of batch) {
        const key = this.existingKeyOf(p);
        if (key !== null) byKey.set(key, p);
      }
      const result = await this.store.deleteMany([...byKey.keys()]);
      for (const key of result.failed) failed.push(byKey.get(key) ?? key);
    }
    return { failed };
  }
}
