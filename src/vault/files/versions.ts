/**
 * The history layer's numbers (docs/versions.md, "Sequence numbers"): who writes, whether a path
 * keeps history, the memo of version records this vault sealed or checked, the floor a restore sets
 * under a path's next number, and the kept versions' newest number as the store lists it.
 */
import type { UserCodec } from '../../crypto/user-codec.js';
import { newestKeptSeq } from '../../crypto/verified-read.js';
import { versionsPrefixOf } from '../../store/layout.js';
import type { ObjectInfo, ObjectStore, StoredObject } from '../../store/port.js';
import { LruMap } from '../../util/lru.js';
import { MEMORY_ROOT } from '../paths.js';
import { olderVersionsKeptError, openVersionRecord, VERSION_METADATA, type VersionActor } from '../version-record.js';
import type { UserObjects } from './objects.js';

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
export const MEMO_LIMIT = 10_000;

/** A memo for VersionWriting.knownRecords (one per vault; bounded like every memo here). */
export function versionRecordMemo(): LruMap<string, KnownRecord> {
  return new LruMap(MEMO_LIMIT);
}

/** Writes of an instance made without saying: the host's, history off (tests, tools below the vault). */
export const HOST_WRITES: VersionWriting = { actor: 'host', keepHistory: false };

/** memvault's bookkeeping (rename journals) has no history: it is not the user's memory. */
export const RESERVED_PREFIX = `${MEMORY_ROOT}/.memvault/`;

/** The memo's key of a stored version: its object key and ETag. */
const recordMemoKey = (key: string, etag: string): string => `${key}\n${etag}`;

/** The numbers of one user's versions, as this vault knows them. */
export class VersionRecords {
  /** Records of the versions this vault read or wrote, by object key and ETag (an edit's If-Match names one). */
  private readonly knownRecords: LruMap<string, KnownRecord>;
  /** Lowest sequence numbers the next version of a path may take (a restore knows the newest kept version). */
  private readonly seqFloor = new Map<string, number>();

  constructor(
    private readonly store: ObjectStore,
    private readonly codec: UserCodec,
    private readonly objects: UserObjects,
    readonly writing: VersionWriting,
  ) {
    this.knownRecords = writing.knownRecords ?? versionRecordMemo();
  }

  /** Whether writes of `path` are kept in the history (history on, and not memvault's bookkeeping). */
  keepsHistory(path: string): boolean {
    return this.writing.keepHistory && !path.startsWith(RESERVED_PREFIX);
  }

  /** The history holds versions of `path` up to `seq`: this instance's next version of it is numbered above. */
  noteNewestVersion(path: string, seq: number): void {
    this.seqFloor.set(path, Math.max(seq, this.seqFloor.get(path) ?? 0));
  }

  /** The floor under the next version of `path`, if a restore set one. */
  floorOf(path: string): number | undefined {
    return this.seqFloor.get(path);
  }

  /** The number of the stored version (key, etag) when this vault has sealed or checked its record. */
  knownSeq(key: string, etag: string): number | undefined {
    return this.knownRecords.get(recordMemoKey(key, etag))?.seq;
  }

  /** Remember the record this vault sealed for the version (key, etag). */
  remember(key: string, etag: string, record: KnownRecord): void {
    this.knownRecords.set(recordMemoKey(key, etag), record);
  }

  /**
   * The number the object's version record gives, checked (INTEGRITY when it does not open or does
   * not match the body), or undefined when it carries none. Opened once per vault: a record already
   * checked, met again on the same version, is taken from the memo.
   */
  checkedSeq(path: string, key: string, object: StoredObject): number | undefined {
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
  async newestVersionInfo(key: string): Promise<ObjectInfo | undefined> {
    return (await this.store.list(versionsPrefixOf(this.codec.uid, key), { maxKeys: 1 })).objects[0];
  }

  /** The newest sequence number under the file's versions, or null when it has none. */
  newestVersionSeq(key: string): Promise<number | null> {
    return newestKeptSeq(this.store, this.codec.uid, key);
  }

  /**
   * The number of the stored version `etag` at `key`, from its record (one GET), or undefined when
   * another version is there, none, or one whose record does not open (a fence must still take a
   * damaged or put-back file out of use). A store error fails the fence before it goes out.
   */
  async recordedSeqOf(path: string, key: string, etag: string): Promise<number | undefined> {
    const object = await this.store.get(key);
    return object !== null && object.etag === etag ? await this.noteRecordOf(path, key, object) : undefined;
  }

  /**
   * The object's checked record number, memoized; undefined when it has none or it does not open.
   * A key version the codec has not seen (another instance re-keyed the user) is loaded first, as a
   * read does: else the record would not open and the tombstone would be numbered by the clock.
   */
  async noteRecordOf(path: string, key: string, object: StoredObject): Promise<number | undefined> {
    await this.objects.loadKeyFor(object);
    try {
      return this.checkedSeq(path, key, object);
    } catch {
      return undefined;
    }
  }

  /** The number of the file's version `etag` when no memo has it (one GET): it must still be the current one. */
  async currentSeq(path: string, key: string, etag: string): Promise<number> {
    const object = await this.store.get(key);
    if (object && object.etag === etag) await this.objects.loadKeyFor(object); // its record may be sealed under a key version not seen yet
    const seq = object && object.etag === etag ? this.checkedSeq(path, key, object) : undefined;
    if (seq === undefined) throw olderVersionsKeptError(path, undefined);
    return seq;
  }
}
