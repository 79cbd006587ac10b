/**
 * readVersion (docs/versions.md): the content of one kept version of a file, for a person or an
 * operator comparing versions (the memory page's diff). Opened and audited as history is
 * (./history.ts), as a `history` record counting the version read; the read is the one verified
 * read of kept versions (src/crypto/verified-read.ts). Its arguments are checked here, before anything is read.
 */
import { validateUserId } from '../crypto/user-id.js';
import { readKeptVersion } from '../crypto/verified-read.js';
import { canonicalizePath } from '../pipeline/path-guard.js';
import { versionKeyOf } from '../store/layout.js';
import { checkActor, checkNumber, checkOptions, ifGiven, invalidArgument } from '../util/validate.js';
import { versionInfoOf, type HistoryContext, type VersionInfo } from '../vault/history.js';
import { MEMORY_ROOT } from '../vault/paths.js';
import { actorOf } from './audited.js';
import type { LifecycleContext } from './context.js';
import { withHistory } from './history.js';
import type { LifecycleOptions } from './types.js';

/** One kept version: what history lists of it, and its content (empty for a tombstone). */
export interface VersionContent extends VersionInfo {
  data: Uint8Array;
}

/** readVersion(userId, path, seq, options): a user, a path below /memories (canonicalised), a positive integer. */
export function checkReadVersionArgs(userId: unknown, path: unknown, seq: unknown, options: unknown): string {
  validateUserId(userId);
  if (typeof path !== 'string') throw invalidArgument('readVersion: path', 'a path below /memories', path);
  const canonical = canonicalizePath(path);
  if (canonical === MEMORY_ROOT) throw invalidArgument('readVersion: path', 'a file below /memories', path);
  checkNumber('readVersion: seq', seq, { integer: true, min: 1 });
  const given = checkOptions('readVersion options', options, ['actor']);
  ifGiven(given['actor'], (actor) => checkActor('readVersion: actor', actor));
  return canonical;
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

/** `path` is canonical (checkReadVersionArgs). Null when no such version is kept (never was, dropped, expired). */
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
