/**
 * readVersion (docs/versions.md): the content of one kept version of a file, for a person or an
 * operator comparing versions (the memory page's diff). Opened and audited as history is
 * (./history.ts), as a `history` record counting the version read; the read is the one verified
 * read of kept versions (src/crypto/verified-read.ts). Its arguments are checked by the entry
 * (src/entry/arguments.ts), before anything is read.
 */
import { readKeptVersion } from '../crypto/verified-read.js';
import { versionKeyOf } from '../store/layout.js';
import { versionInfoOf, type HistoryContext, type VersionInfo } from '../vault/history.js';
import { actorOf } from './audited.js';
import type { LifecycleContext } from './context.js';
import { withHistory } from './history.js';
import type { LifecycleOptions } from './types.js';

/** One kept version: what history lists of it, and its content (empty for a tombstone). */
export interface VersionContent extends VersionInfo {
  data: Uint8Array;
}

async function readOne(h: HistoryContext, path: string, seq: number): Promise<VersionContent | null> {
  const opened = await readKeptVersion(
    h.store,
    h.codec,
    path,
    versionKeyOf(h.codec.uid, h.codec.keyFor(path), seq),
    seq,
  );
  if (!opened) return null;
  const { record, data } = opened;
  return { ...versionInfoOf(path, record, data), data };
}

/** `path` is canonical (src/entry/arguments.ts checkReadVersionArgs). Null when no such version is kept (never was, dropped, expired). */
export function readVersion(ctx: LifecycleContext) {
  return async (
    userId: string,
    path: string,
    seq: number,
    options?: LifecycleOptions,
  ): Promise<VersionContent | null> =>
    withHistory(
      ctx,
      userId,
      { type: 'history', ...actorOf(options) },
      (h) => readOne(h, path, seq),
      (version) => ({ versionsRead: version ? 1 : 0 }),
    );
}
