/**
 * A write of one user's file, through every layer: the key (keys.ts), the TTL tag (expiry.ts), the
 * conditional PUT (objects.ts), the name rule checked after it landed (name-rule.ts) and, with
 * history on, the version kept after it (version-writes.ts), numbered by versions.ts.
 */
import type { UserCodec } from '../../crypto/user-codec.js';
import { countBytesWritten } from '../../store/accounting.js';
import { PreconditionFailedError, type ObjectStore } from '../../store/port.js';
import type { WriteResult } from '../user-files.js';
import type { TreeFiles, TreeWriteCondition } from '../tree-files.js';
import { bodyHashOf, clockSeq, nextSeq, sealVersionRecord, VERSION_METADATA } from '../version-record.js';
import { dropPrepared } from './capabilities.js';
import type { Expiry } from './expiry.js';
import type { UserKeys } from './keys.js';
import { takeBackOnConflict, tryAgainAfterRival } from './name-rule.js';
import { ORIGIN_METADATA, type UserObjects } from './objects.js';
import type { VersionKeeper } from './version-writes.js';
import { RESERVED_PREFIX, type VersionRecords } from './versions.js';

/** The layers a write goes through (StoreUserFiles holds one of each). */
export interface WriteLayers {
  /** The files the name rule looks at (the StoreUserFiles itself). */
  files: TreeFiles;
  store: ObjectStore;
  codec: UserCodec;
  keys: UserKeys;
  expiry: Expiry;
  objects: UserObjects;
  records: VersionRecords;
  versions: VersionKeeper;
}

export async function writeFile(
  layers: WriteLayers,
  path: string,
  data: Uint8Array,
  condition: TreeWriteCondition,
): Promise<WriteResult> {
  const { files, store, codec, keys, expiry, objects, records, versions } = layers;
  const key = keys.keyOf(path);
  const body = codec.seal(path, data);
  await expiry.beforeWrite();
  const tags = expiry.writeTags;
  const history = records.keepsHistory(path);
  // Every write of a user's file carries its version record, history on or off (docs/versions.md,
  // "Mixed settings"): a file an instance with history off wrote is then read as a current version
  // newer than the history by an instance with it on, never as a put-back stripped of its record.
  const recorded = !path.startsWith(RESERVED_PREFIX);
  const known = condition.ifMatch !== undefined ? records.knownSeq(key, condition.ifMatch) : undefined;
  const floor = records.floorOf(path);
  const numbered = !recorded ? 0 : known !== undefined ? nextSeq(known) : clockSeq();
  const seq = floor !== undefined && numbered <= floor ? nextSeq(floor) : numbered;
  const actor = records.writing.actor;
  const fields: Record<string, string> = {
    ...(condition.origin !== undefined ? { [ORIGIN_METADATA]: condition.origin } : {}),
    ...(recorded
      ? {
          [VERSION_METADATA]: sealVersionRecord(codec, path, {
            seq,
            actor,
            time: Date.now(),
            bodyHash: bodyHashOf(body),
          }),
        }
      : {}),
  };
  const metadata = Object.keys(fields).length > 0 ? fields : undefined;
  const put = (conditions: { ifMatch?: string; ifNoneMatch?: '*' }) =>
    store.put(key, body, { ...conditions, ...(tags ? { tags } : {}), ...(metadata ? { metadata } : {}) });
  const once = async (): Promise<{ result: { etag: string }; created: boolean; replaced?: number | null }> => {
    if (condition.ifMatch !== undefined) {
      return {
        result: await put({
          ifMatch: condition.ifMatch,
          ...(condition.ifNoneMatch ? { ifNoneMatch: '*' as const } : {}),
        }),
        created: false,
      };
    }
    if (condition.ifNoneMatch)
      return { result: await objects.createReplacingAbsent(key, put), created: true, replaced: null };
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
    return objects.replaceExisting(key, put);
  };
  // The version's bytes are known before the write: where the store can prepare a create (the file
  // store's temp file, written and fsync'd), that part goes beside the write; the version is still
  // published only after the write landed (keepVersion). Used by the first attempt only.
  let prepared = history
    ? versions.prepareVersion({ versionKey: versions.keyOf(key, seq), body, metadata: metadata! })
    : undefined;
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
      checked ? takeBackOnConflict(files, store, path, key, result.etag) : Promise.resolve(null),
      history
        ? versions.keepVersion(path, key, seq, body, metadata!, result.etag, known === undefined, preparedNow)
        : Promise.resolve('kept' as const),
      history && known === undefined ? records.newestVersionSeq(key) : Promise.resolve(null),
    ]);
    // A version that found its number taken has put the newest kept version back already: that
    // is what happened to the file, whatever the check says (it is rare for a create: a clash of
    // two writers' clock numbers, or a put-back met).
    if (kept.status === 'rejected' && (check.status === 'rejected' || !check.value?.takenBack)) throw kept.reason;
    if (check.status === 'rejected') throw check.reason;
    const conflict = check.value;
    if (conflict?.takenBack && history)
      await versions.dropOwnVersion(key, seq, result.etag, metadata![VERSION_METADATA]!);
    if (!conflict) {
      countBytesWritten(data.byteLength);
      const listed = newest.status === 'fulfilled' ? newest.value : null;
      // Its number taken by another writer's clock: numbered again above it (and what was listed).
      const taken = kept.status === 'fulfilled' && kept.value === 'taken';
      const above = taken ? Math.max(listed ?? seq, seq) : listed !== null && listed > seq ? listed : undefined;
      const final = (above !== undefined
        ? await versions.renumber(path, key, body, fields, tags, result.etag, above)
        : null) ?? {
        etag: result.etag,
        seq,
        sealed: metadata?.[VERSION_METADATA],
      };
      if (recorded && final.sealed !== undefined)
        records.remember(key, final.etag, { seq: final.seq, sealed: final.sealed });
      return replaced === undefined ? { etag: final.etag } : { etag: final.etag, replaced };
    }
    await tryAgainAfterRival(files, path, attempt, conflict.conflict);
  }
}
