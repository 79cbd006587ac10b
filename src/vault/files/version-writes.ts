/**
 * The history layer's writes (docs/versions.md): every version a write makes is kept under v/ after
 * the write landed, a fence's tombstone after the fence; a version whose number is taken finds a
 * put-back (the newest kept version is put back and the write refused) or a clock clash (numbered
 * again); a write taken back takes its version with it.
 */
import type { UserCodec } from '../../crypto/user-codec.js';
import { MemvaultError } from '../../errors.js';
import { MARKER_BODY, markerMetadata } from '../../store/fence.js';
import {
  DELETE_BATCH_KEYS as DELETE_BATCH,
  HISTORY_TAG_KEY,
  HISTORY_TAG_VALUE,
  parseVersionKey,
  versionKeyOf,
  versionsPrefixOf,
} from '../../store/layout.js';
import { listAll, PreconditionFailedError, type ObjectStore, type PreparedCreate } from '../../store/port.js';
import { LruMap } from '../../util/lru.js';
import { meterHistory, type HistoryTarget, type HistoryUsage } from '../history-usage.js';
import {
  bodyHashOf,
  nextSeq,
  olderVersionsKeptError,
  sealVersionRecord,
  staleVersionError,
  VERSION_METADATA,
  type VersionEnd,
} from '../version-record.js';
import { prepareCreateOf } from './capabilities.js';
import type { Expiry } from './expiry.js';
import { MEMO_LIMIT, type VersionRecords } from './versions.js';

/**
 * The tag every kept version carries (never a TTL class tag: a version's age is the history's
 * retention, not the file's idle time), for the S3 lifecycle rule of the CDK construct.
 */
const VERSION_TAGS = { [HISTORY_TAG_KEY]: HISTORY_TAG_VALUE };

/** A version of the history about to be kept: its key, bytes and sealed record. */
export interface KeptVersion {
  versionKey: string;
  body: Uint8Array;
  metadata: Record<string, string>;
}

/**
 * A write that met a put-back and put the newest kept version back in place of itself (keepVersion):
 * the put-back's error, same code and text, and the one failure of a write whose steps stay where a
 * write is one transaction (inOneTransaction's `keep`: the repair makes the file whole again). Any
 * other error, INTEGRITY or not, rolls the write back.
 */
export class PutBackRepairedError extends MemvaultError {
  constructor(path: string) {
    const error = staleVersionError(path);
    super(error.code, error.message);
  }
}

export class VersionKeeper {
  /** Version keys this instance wrote, by the ETag of the file version they keep (to take one back with it). */
  private readonly ownVersions = new LruMap<string, string>(MEMO_LIMIT);

  constructor(
    private readonly store: ObjectStore,
    private readonly codec: UserCodec,
    private readonly expiry: Expiry,
    readonly records: VersionRecords,
  ) {}

  /** The version key of `key`'s version `seq`. */
  keyOf(key: string, seq: number): string {
    return versionKeyOf(this.codec.uid, key, seq);
  }

  /**
   * A version that records the end of a file (a delete, a move): no content. Create-only: a number
   * taken already means the history holds a version at or past it, which ends the fenced one as well.
   * Made before the fence (its time and, where prepared, its LastModified fall within the command, as
   * a write's version's do).
   */
  tombstoneOf(path: string, key: string, end: VersionEnd, seq: number): KeptVersion {
    const body = new Uint8Array(0);
    const metadata = {
      [VERSION_METADATA]: sealVersionRecord(this.codec, path, {
        seq,
        actor: this.records.writing.actor,
        time: Date.now(),
        bodyHash: bodyHashOf(body),
        end,
      }),
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
  prepareVersion(version: KeptVersion): Promise<PreparedCreate> | undefined {
    return prepareCreateOf(this.store, version.versionKey, version.body, {
      metadata: version.metadata,
      tags: VERSION_TAGS,
    });
  }

  /** Publish a kept version: its prepared create committed, or a create-only PUT when none was prepared. */
  async publishVersion(version: KeptVersion, prepared?: Promise<PreparedCreate>): Promise<void> {
    const ready = prepared ? await prepared.catch(() => undefined) : undefined;
    if (ready) await ready.commit();
    else await this.putVersion(version.versionKey, version.body, version.metadata);
  }

  /**
   * Keep the version just written (create-only: a version key is written once). For an edit, its
   * number taken already means the version this write replaced was not the newest (someone put an
   * older one back and this write edited that): the newest kept version is put back in place of this
   * write, and the command fails with the integrity error (PutBackRepairedError once that is done;
   * the plain one when it could not be, and a transaction then takes the write back). A write
   * numbered by the clock replaced no version it read: its number taken is another writer's clock
   * that gave the same number (another process), a race and no put-back, answered 'taken' (the
   * write numbers itself again). Any other failure leaves the file written and the version missing
   * from the history (reads accept a current version newer than the history).
   */
  async keepVersion(
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
    const repaired = await this.putBackNewest(key, etag).catch(() => false);
    throw repaired ? new PutBackRepairedError(path) : staleVersionError(path);
  }

  /**
   * Replace the version `etag` at `key` by the newest kept version (its object as it is kept, or a
   * marker for a tombstone); false when there is none to put back.
   */
  private async putBackNewest(key: string, etag: string): Promise<boolean> {
    const listed = await this.records.newestVersionInfo(key);
    const newest = listed ? await this.store.get(listed.key) : null;
    if (!newest) return false;
    if (newest.body.byteLength === 0) {
      await this.store.put(key, MARKER_BODY, { ifMatch: etag, metadata: markerMetadata('deleted', 'history') });
      return true;
    }
    const tags = this.expiry.writeTags;
    await this.store.put(key, newest.body, { ifMatch: etag, metadata: newest.metadata, ...(tags ? { tags } : {}) });
    return true;
  }

  /**
   * Number the version this write just landed (`etag`) again, one past `newest`: the same body put
   * back `If-Match` itself with a new record, and that version kept. Null when it could not (an edit
   * landed meanwhile, whose writer saw the file: it stays as it is; or the store failed), leaving the
   * write as it landed.
   */
  async renumber(
    path: string,
    key: string,
    body: Uint8Array,
    fields: Record<string, string>,
    tags: Record<string, string> | undefined,
    etag: string,
    newest: number,
  ): Promise<{ etag: string; seq: number; sealed: string } | null> {
    const seq = nextSeq(newest);
    const sealed = sealVersionRecord(this.codec, path, {
      seq,
      actor: this.records.writing.actor,
      time: Date.now(),
      bodyHash: bodyHashOf(body),
    });
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
   * The kept version of this instance's write `etag`, deleted with the write a name check took back.
   * When its PUT's outcome is unknown (an error, a lost answer), the version key is looked at and
   * deleted only if it holds this write's own record (another writer could hold the same number).
   * Tried twice; a version left behind is a version of content the model wrote, which the
   * retention drops in time.
   */
  async dropOwnVersion(key: string, seq: number, etag: string, sealed: string): Promise<void> {
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
   * Taking back a version this instance wrote (a refused rename's copy) takes its kept version too:
   * the command failed, so its history record goes with it.
   */
  async dropOwnVersionOf(etag: string): Promise<void> {
    const own = this.ownVersions.get(etag);
    if (own === undefined) return;
    this.ownVersions.delete(etag);
    await this.store.delete(own).catch(() => undefined);
  }

  /**
   * Every kept version of the file older than the version `etag` (one LIST per 1,000 versions, one
   * batch DELETE per 1,000), deleted for good. By number, not by place in the listing: the version
   * `etag` may be missing from the history (its version PUT failed, or its answer was lost and the
   * edit found it landed), and a newer one another instance wrote since (an edit, a tombstone)
   * stays. What a read compares with is then the newest kept version or, with none left, nothing
   * (a current version newer than the history is read as it is).
   */
  async dropVersionsBefore(path: string, key: string, etag: string): Promise<void> {
    const seq = this.records.knownSeq(key, etag) ?? (await this.records.currentSeq(path, key, etag));
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

  /** What the user's kept versions hold, pruned down to `pruneTo` when given; null with history off. */
  historyUsage(pruneTo?: HistoryTarget): Promise<HistoryUsage | null> {
    return this.records.writing.keepHistory ? meterHistory(this.store, this.codec, pruneTo) : Promise.resolve(null);
  }
}
