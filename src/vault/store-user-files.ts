/**
 * TreeFiles (tree-files.ts) over an ObjectStore, as a stack of layers each in its own file under src/vault/files/:
 *
 *   keys.ts            paths to store keys through the codec, within the key limit; listed keys back to paths
 *   capabilities.ts    the store's optional capabilities, each with its fallback (io/fs style)
 *   expiry.ts          the idle-expiry policy: what is expired, touches, TTL tags
 *   objects.ts         conditional I/O: live files vs markers, create-only and replace-exactly writes
 *   name-rule.ts       the file-or-directory name rule a create applies after it landed
 *   versions.ts        the history's numbers: records memo, sequence floors, newest kept version
 *   version-writes.ts  the history's writes: kept versions, tombstones, renumbering, put-back
 *
 * This class composes them into the TreeFiles operations: reads (with freshness), fences, writes.
 */
import { countBytesRead } from '../store/accounting.js';
import { markerOf } from '../store/fence.js';
import {
  listPages,
  PreconditionFailedError,
  type ObjectInfo,
  type ObjectStore,
  type StoredObject,
} from '../store/port.js';
import { DELETE_BATCH_KEYS as DELETE_BATCH } from '../store/layout.js';
import type { UserCodec } from '../crypto/user-codec.js';
import { lookAgainWhileStale } from '../crypto/verified-read.js';
import { MEMORY_ROOT } from './paths.js';
import type { HistoryTarget, HistoryUsage } from './history-usage.js';
import type { ListedFile, ReadOptions, WriteResult } from './user-files.js';
import type {
  FenceMarker,
  FencedFile,
  PathState,
  StatOptions,
  TreeFiles,
  TreeFileVersion,
  TreeWriteCondition,
} from './tree-files.js';
import { listedUsage, type FilesUsage } from './tree-files.js';
import { checkCurrentFresh, clockSeq, nextSeq } from './version-record.js';
import { deleteVersion, dropPrepared, fenceVersion, inOneTransaction, transactionOf } from './files/capabilities.js';
import { Expiry, type FileAccessPolicy } from './files/expiry.js';
import { UserKeys, type UnreadableObjectListener } from './files/keys.js';
import { ORIGIN_METADATA, UserObjects } from './files/objects.js';
import { PutBackRepairedError, VersionKeeper } from './files/version-writes.js';
import { HOST_WRITES, VersionRecords, type VersionWriting } from './files/versions.js';
import { writeFile } from './files/write.js';

export type { FileAccessPolicy, TouchableObject } from './files/expiry.js';
export type { UnreadableObjectListener, UnreadableReason } from './files/keys.js';
export { versionRecordMemo, type KnownRecord, type VersionWriting } from './files/versions.js';

/** What a GET found at a file's key (StoreUserFiles.examine). */
type Examined =
  null | { marker: FenceMarker } | { opened: { object: StoredObject; data: Uint8Array; seq: number | undefined } };

/**
 * A write that met a put-back and put the newest kept version back (VersionKeeper.keepVersion): that
 * repair stays. Only its own error says so: any other, INTEGRITY included, rolls the write back.
 */
const isPutBack = (error: unknown): boolean => error instanceof PutBackRepairedError;

/** TreeFiles over an ObjectStore: the codec decides keys and bytes, the layers the S3-style semantics. */
export class StoreUserFiles implements TreeFiles {
  private readonly keys: UserKeys;
  private readonly expiry: Expiry;
  private readonly objects: UserObjects;
  private readonly records: VersionRecords;
  private readonly versions: VersionKeeper;
  /** The store's transactions, where it has them: a write or a fence is then one commit. */
  private readonly transaction: ReturnType<typeof transactionOf>;

  constructor(
    private readonly store: ObjectStore,
    private readonly codec: UserCodec,
    access?: FileAccessPolicy,
    onUnreadable?: UnreadableObjectListener,
    writing: VersionWriting = HOST_WRITES,
  ) {
    this.keys = new UserKeys(store, codec, onUnreadable);
    this.expiry = new Expiry(access);
    this.objects = new UserObjects(store, codec, this.expiry);
    this.records = new VersionRecords(store, codec, this.objects, writing);
    this.versions = new VersionKeeper(store, codec, this.expiry, this.records);
    this.transaction = transactionOf(store);
  }

  /** The history holds versions of `path` up to `seq`: this instance's next version of it is numbered above. */
  noteNewestVersion(path: string, seq: number): void {
    this.records.noteNewestVersion(path, seq);
  }

  get uid(): string {
    return this.codec.uid;
  }

  async read(path: string, options?: ReadOptions): Promise<TreeFileVersion | null> {
    return (await this.inspect(path, options))?.file ?? null;
  }

  async inspect(path: string, options: ReadOptions = {}): Promise<PathState> {
    const key = this.keys.existingKeyOf(path);
    if (key === null) return null;
    // Freshness (docs/versions.md): the newest version the history holds, listed beside the GET.
    const checked = this.records.keepsHistory(path) && options.freshness !== 'write';
    const [object, newest] = await Promise.all([
      this.store.get(key),
      checked ? this.records.newestVersionSeq(key) : Promise.resolve(null),
    ]);
    let seen = { found: await this.examine(path, key, object), newest };
    // Side by side, the two can meet another instance's write or delete half-way (the GET before it,
    // the LIST after its version or tombstone): a mismatch is looked at again in the safe order
    // (LIST, then GET), and only an object that stays older than its history is a put-back.
    if (checked) {
      const again = async () => {
        const newer = await this.records.newestVersionSeq(key);
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
    const touched = await this.expiry.afterRead(key, current);
    const origin = current.metadata[ORIGIN_METADATA];
    const { etag, lastModified } = touched ?? current;
    return { file: { data, etag, lastModified, ...(origin !== undefined ? { origin } : {}) } };
  }

  /** What a GET found at a file's key: no file, a fence marker, or a file opened with its checked record number. */
  private async examine(path: string, key: string, object: StoredObject | null): Promise<Examined> {
    if (!object) return null;
    const marker = markerOf(object.metadata);
    if (marker) return { marker: { ...marker, etag: object.etag } };
    if (this.expiry.isExpired(object.lastModified)) return null;
    // An empty object where files are never empty (sealed): a marker whose metadata was lost (a
    // touch by copy, before touches were conditional, that raced its fence restated the file's
    // metadata); no file is there.
    if (object.body.byteLength === 0 && this.objects.zeroBytesIsMarker())
      return { marker: { reason: 'unknown', op: '', etag: object.etag } };
    await this.objects.loadKeyFor(object);
    const data = this.codec.open(path, object.body);
    // With history off nothing is checked against the record, so it is not opened (about 15 µs of
    // CPU a read): an edit then numbers its version by the clock instead of one past this one. A
    // version this vault already knows is not opened again (VersionWriting.knownRecords).
    const seq = this.records.keepsHistory(path) ? this.records.checkedSeq(path, key, object) : undefined;
    return { opened: { object, data, seq } };
  }

  async fence(path: string, ifMatch: string, reason: 'moved' | 'deleted', op: string): Promise<FencedFile> {
    const transaction = this.transaction;
    if (!transaction) return this.fenceNow(path, ifMatch, reason, op);
    // In one transaction with its tombstone: settled once that commits.
    await transaction(async () => (await this.fenceNow(path, ifMatch, reason, op)).settled);
    return { settled: Promise.resolve() };
  }

  private async fenceNow(path: string, ifMatch: string, reason: 'moved' | 'deleted', op: string): Promise<FencedFile> {
    const key = this.keys.existingKeyOf(path);
    if (key === null) throw new PreconditionFailedError(path); // no file can be there
    // The tombstone is numbered one past the version it ends, not by the clock: a create of the same
    // name that took its clock number before this fence and lands after it must stay above the
    // tombstone, or reads would refuse it as a put-back (docs/versions.md, "Sequence numbers"). The
    // number is known when this vault read the version (the memo); else it is looked up (one GET)
    // before the fence. A version without a readable record falls back to a clock number taken
    // before the fence goes out.
    const history = this.records.keepsHistory(path);
    const ended = history
      ? (this.records.knownSeq(key, ifMatch) ?? (await this.records.recordedSeqOf(path, key, ifMatch)))
      : undefined;
    const tombstone = history
      ? this.versions.tombstoneOf(path, key, reason, ended !== undefined ? nextSeq(ended) : clockSeq())
      : undefined;
    // The tombstone's bytes are known before the fence: where the store can prepare a create, that
    // part goes beside the fence, and the tombstone is still published only after it (below).
    const prepared = tombstone && this.versions.prepareVersion(tombstone);
    let cleanUp: Promise<void>;
    try {
      ({ cleanUp } = await fenceVersion(this.store, key, ifMatch, reason, op));
    } catch (error) {
      await dropPrepared(prepared); // no work of a failed fence outlives it
      throw error;
    }
    // The fence is the moment the file ends: its tombstone follows it (docs/versions.md), never
    // before it (a tombstone of a file still there would make reads refuse it), and goes out beside
    // the marker's clean-up. The content is in the history already (every version is written there
    // as it is made).
    const recorded = tombstone
      ? this.versions.publishVersion(tombstone, prepared).catch(() => undefined)
      : Promise.resolve();
    return { settled: Promise.all([cleanUp, recorded]).then(() => undefined) };
  }

  write(path: string, data: Uint8Array, condition: TreeWriteCondition = {}): Promise<WriteResult> {
    return inOneTransaction(this.transaction, () => this.writeNow(path, data, condition), isPutBack);
  }

  private writeNow(path: string, data: Uint8Array, condition: TreeWriteCondition): Promise<WriteResult> {
    return writeFile(
      {
        files: this,
        store: this.store,
        codec: this.codec,
        keys: this.keys,
        expiry: this.expiry,
        objects: this.objects,
        records: this.records,
        versions: this.versions,
      },
      path,
      data,
      condition,
    );
  }

  async stat(
    path: string,
    options: StatOptions = {},
  ): Promise<{ size: number; etag: string; lastModified: Date } | null> {
    if (path === MEMORY_ROOT) return null;
    const key = this.keys.existingKeyOf(path);
    if (key === null) return null;
    // For a fence, with history on: a GET in place of the HEAD, whose record numbers the tombstone.
    let head: ObjectInfo | null;
    if (options.forFence === true && this.records.keepsHistory(path)) {
      const object = await this.store.get(key);
      if (object) await this.records.noteRecordOf(path, key, object);
      head = object;
    } else head = await this.store.head(key);
    if (!head || !(await this.objects.isLiveObject(head))) return null;
    return { size: this.codec.plaintextSize(head.size), etag: head.etag, lastModified: head.lastModified };
  }

  /** One LIST of at most one key. */
  async isDirectory(path: string): Promise<boolean> {
    if (path === MEMORY_ROOT) return true;
    const prefix = this.codec.prefixFor(path);
    if (!this.keys.fitsKeyLimit(prefix)) return false; // no key can lie below it: no request needed
    const page = await this.store.list(prefix, { maxKeys: 1 });
    const first = page.objects[0];
    if (!first) return false;
    if (await this.isListable(first)) return true;
    // Only expired, unreadable objects or fence markers so far: a directory exists while one live file lies below it.
    for await (const object of this.listAfter(prefix, first.key)) if (await this.isListable(object)) return true;
    return false;
  }

  private async *listAfter(prefix: string, startAfter: string): AsyncGenerator<ObjectInfo> {
    let page = await this.store.list(prefix, { startAfter });
    yield* page.objects;
    while (page.continuationToken) {
      page = await this.store.list(prefix, { continuationToken: page.continuationToken });
      yield* page.objects;
    }
  }

  /** A live object whose name opens under the user's key (what listings show and directories consist of). */
  private async isListable(object: ObjectInfo): Promise<boolean> {
    return (await this.objects.isLiveObject(object)) && this.keys.listedPath(object.key) !== null;
  }

  async *listFiles(dir: string): AsyncIterable<ListedFile> {
    const prefix = this.codec.prefixFor(dir);
    if (!this.keys.fitsKeyLimit(prefix)) return;
    // Page by page, with no await per object where its size tells whether it is live: a quota
    // refresh lists every file of the user.
    for await (const objects of listPages(this.store, prefix)) {
      for (const object of objects) {
        if (!(this.objects.isLiveBySize(object) ?? (await this.objects.isLiveByRequest(object)))) continue;
        const path = this.keys.listedPath(object.key);
        if (path === null) continue;
        yield {
          path,
          size: this.codec.plaintextSize(object.size),
          lastModified: object.lastModified,
          etag: object.etag,
        };
      }
    }
  }

  /** The user's files counted and their plaintext summed (the quota's usage): summed by the store where it can, else listed. */
  async usage(): Promise<FilesUsage> {
    const prefix = this.codec.prefixFor(MEMORY_ROOT);
    if (!this.keys.fitsKeyLimit(prefix)) return { files: 0, bytes: 0 };
    return (await this.objects.summedUsage(prefix)) ?? listedUsage(this);
  }

  assertStorable(path: string): void {
    this.keys.keyOf(path);
  }

  async remove(path: string, condition: { ifMatch?: string } = {}): Promise<void> {
    const key = this.keys.existingKeyOf(path);
    if (key === null) return; // nothing can be there
    if (condition.ifMatch !== undefined) await deleteVersion(this.store, key, condition.ifMatch);
    else await this.store.delete(key);
    // Taking back a version this instance wrote (a refused rename's copy) takes its kept version too.
    if (condition.ifMatch !== undefined) await this.versions.dropOwnVersionOf(condition.ifMatch);
  }

  /** With history on: every kept version of the file older than its version `etag`, deleted for good (VersionKeeper). */
  async dropVersionsBefore(path: string, etag: string): Promise<void> {
    if (!this.records.keepsHistory(path)) return;
    const key = this.keys.existingKeyOf(path);
    if (key === null) return;
    await this.versions.dropVersionsBefore(path, key, etag);
  }

  historyUsage(pruneTo?: HistoryTarget): Promise<HistoryUsage | null> {
    return this.versions.historyUsage(pruneTo);
  }

  async removeMany(paths: string[]): Promise<{ failed: string[] }> {
    const failed: string[] = [];
    for (let i = 0; i < paths.length; i += DELETE_BATCH) {
      const batch = paths.slice(i, i + DELETE_BATCH);
      const byKey = new Map<string, string>();
      for (const p of batch) {
        const key = this.keys.existingKeyOf(p);
        if (key !== null) byKey.set(key, p);
      }
      const result = await this.store.deleteMany([...byKey.keys()]);
      for (const key of result.failed) failed.push(byKey.get(key) ?? key);
    }
    return { failed };
  }
}
