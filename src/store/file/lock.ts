import { randomBytes } from 'node:crypto';
import { link, open, readFile, stat, unlink, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { MemvaultError } from '../../errors.js';
import { errnoOf } from '../../util/errno.js';

/**
 * Per-key locks for the file store, in two layers:
 * - an in-process queue, so that calls on one key from one process wait their turn on a promise
 *   instead of spinning on the lock file;
 * - a lock file next to the object, published with link() (which, like O_EXCL, fails if the file
 *   exists), which also excludes other processes. It records the owner's host, pid and start time.
 *   A lock whose owner pid is dead (same host) or that is older than `staleMs` is broken, under a
 *   second O_EXCL "breaker" file so that two breakers can never both remove a lock (the second would
 *   otherwise delete a fresh lock taken after the first).
 */

export interface LockOptions {
  /** A lock older than this is broken even if its owner seems alive (pid reuse, a hung owner). */
  staleMs: number;
  /** Give up waiting for a lock after this long (STORE_UNAVAILABLE 'ELOCKED'). */
  timeoutMs: number;
}

interface LockRecord {
  host: string;
  pid: number;
  /** Random per process: tells this process from an earlier one that had the same pid (containers restart as pid 1). */
  instance: string;
  time: number;
  token: string;
}

interface ProcessLockState {
  instance: string;
  queues: Map<string, Promise<void>>;
}

// Shared through a global symbol so that two copies of this module in one process (a bundle and the
// sources, a test runner's isolation) still queue together and recognise each other's locks as live.
const STATE_KEY = Symbol.for('memvault.file-store.lock-state');
const registry = globalThis as unknown as Record<symbol, ProcessLockState | undefined>;
const state: ProcessLockState = (registry[STATE_KEY] ??= {
  instance: randomBytes(8).toString('hex'),
  queues: new Map(),
});
const queues = state.queues;
const PROCESS_INSTANCE = state.instance;

/** Run `fn` after every earlier call with the same `id` in this process has settled. */
export async function inProcessQueue<T>(id: string, fn: () => Promise<T>): Promise<T> {
  const previous = queues.get(id) ?? Promise.resolve();
  let done!: () => void;
  const current = new Promise<void>((resolve) => (done = resolve));
  const tail = previous.then(() => current);
  queues.set(id, tail);
  await previous;
  try {
    return await fn();
  } finally {
    done();
    // Forget the key once nobody queues behind us, so the map does not grow with every key ever used.
    if (queues.get(id) === tail) queues.delete(id);
  }
}

/** The codes a file system without hard links answers link() with (the lock and create-only writes fall back on them). */
export const NO_HARD_LINKS = ['EPERM', 'ENOTSUP', 'ENOSYS', 'EOPNOTSUPP'];

export function pidIsAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    // EPERM: the process exists but belongs to someone else.
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function parseRecord(text: string): LockRecord | null {
  try {
    const value = JSON.parse(text) as Partial<LockRecord>;
    if (
      typeof value.host === 'string' &&
      typeof value.pid === 'number' &&
      typeof value.instance === 'string' &&
      typeof value.time === 'number' &&
      typeof value.token === 'string'
    ) {
      return value as LockRecord;
    }
  } catch {
    // An owner that died between creating the file and writing it leaves it empty: judged by mtime.
  }
  return null;
}

async function readLock(path: string): Promise<{ text: string; record: LockRecord | null; mtimeMs: number } | null> {
  try {
    const [text, info] = await Promise.all([readFile(path, 'utf8'), stat(path)]);
    return { text, record: parseRecord(text), mtimeMs: info.mtimeMs };
  } catch (e) {
    if (errnoOf(e) === 'ENOENT') return null;
    throw e;
  }
}

function isStale(lock: { record: LockRecord | null; mtimeMs: number }, staleMs: number): boolean {
  const now = Date.now();
  if (!lock.record) return now - lock.mtimeMs > staleMs;
  if (lock.record.host === hostname()) {
    if (lock.record.pid === process.pid) {
      // Our pid: either this very process (a lock it holds is never stale) or a predecessor that died.
      if (lock.record.instance !== PROCESS_INSTANCE) return true;
    } else if (!pidIsAlive(lock.record.pid)) {
      return true;
    }
  }
  return now - lock.record.time > staleMs;
}

async function tryUnlink(path: string): Promise<void> {
  try {
    await unlink(path);
  } catch (e) {
    if (errnoOf(e) !== 'ENOENT') throw e;
  }
}

/** Remove `lockPath` if it still holds exactly `staleText`; returns whether anything was done. */
async function breakStaleLock(
  lockPath: string,
  breakerPath: string,
  staleText: string,
  staleMs: number,
): Promise<void> {
  let breaker;
  try {
    breaker = await open(breakerPath, 'wx', 0o600);
  } catch (e) {
    if (errnoOf(e) !== 'EEXIST') throw e;
    // Another breaker is at work; if it died mid-way its file would block breaking forever.
    const info = await stat(breakerPath).catch(() => null);
    if (info && Date.now() - info.mtimeMs > staleMs) await tryUnlink(breakerPath);
    return;
  }
  try {
    await breaker.close();
    const again = await readLock(lockPath);
    if (again && again.text === staleText) await tryUnlink(lockPath);
  } finally {
    await tryUnlink(breakerPath);
  }
}

/**
 * Take the lock file at `lockPath`. The owner record is first written to `stagingPath` (a temp file
 * in the same directory) and published with link(), which fails if the lock exists: so a lock file
 * never exists without its record, and an owner killed at any moment leaves a lock that can be judged
 * (an O_EXCL file written after creation could be left empty). `ensureDir` recreates the directory
 * when it is missing (a concurrent delete may prune it until our staged file is in it).
 * Returns the release function.
 */
export async function acquireFileLock(
  lockPath: string,
  breakerPath: string,
  stagingPath: string,
  ensureDir: () => Promise<void>,
  options: LockOptions,
): Promise<() => Promise<void>> {
  const record: LockRecord = {
    host: hostname(),
    pid: process.pid,
    instance: PROCESS_INSTANCE,
    time: Date.now(),
    token: randomBytes(12).toString('hex'),
  };
  const deadline = Date.now() + options.timeoutMs;
  let text = '';
  let staged = false;
  const stage = async (): Promise<void> => {
    record.time = Date.now();
    text = JSON.stringify(record);
    for (let attempt = 0; ; attempt += 1) {
      try {
        await writeFile(stagingPath, text, { mode: 0o600 });
        staged = true;
        return;
      } catch (e) {
        if ((errnoOf(e) !== 'ENOENT' && errnoOf(e) !== 'ENOTDIR') || attempt >= 100) throw e;
        await ensureDir();
      }
    }
  };
  const release = async (): Promise<void> => {
    // Nobody breaks a lock of a live owner younger than staleMs, so a quick release just removes it.
    // Past that, the lock may have been broken and taken by someone else: remove it only if ours.
    if (Date.now() - record.time < options.staleMs / 2) {
      await tryUnlink(lockPath);
      return;
    }
    const current = await readLock(lockPath);
    if (current?.record?.token === record.token) await tryUnlink(lockPath);
  };
  let waits = 0;
  let taken = false;
  try {
    for (;;) {
      // A record staged long ago would make a lock we take now look old to others: restage it.
      if (!staged || Date.now() - record.time > options.staleMs / 4) await stage();
      try {
        await link(stagingPath, lockPath);
        taken = true;
        // The staged record goes while the lock is held, off the holder's path; the release waits for it.
        const unstaged = tryUnlink(stagingPath).catch(() => undefined);
        return async () => {
          await unstaged;
          await release();
        };
      } catch (e) {
        const code = errnoOf(e);
        if (code === 'ENOENT') {
          staged = false;
          continue;
        }
        if (code !== 'EEXIST') {
          if (!NO_HARD_LINKS.includes(code ?? '')) throw e;
          if (await createExclusive(lockPath, text)) return release;
        }
      }
      const held = await readLock(lockPath);
      if (held === null) continue;
      if (isStale(held, options.staleMs)) {
        await breakStaleLock(lockPath, breakerPath, held.text, options.staleMs);
        continue;
      }
      if (Date.now() >= deadline) throw new MemvaultError('STORE_UNAVAILABLE', 'the local store failed: ELOCKED');
      // Exponential backoff with jitter, 1 ms up to ~64 ms: short critical sections, few contenders.
      const base = Math.min(64, 2 ** Math.min(waits, 6));
      waits += 1;
      await sleep(base * (0.5 + Math.random()));
    }
  } finally {
    if (!taken) await tryUnlink(stagingPath).catch(() => undefined);
  }
}

/**
 * Fallback for file systems without hard links: O_EXCL create, then write the record. An owner
 * killed in between leaves an empty lock, which is judged by its age alone.
 */
async function createExclusive(lockPath: string, text: string): Promise<boolean> {
  let handle;
  try {
    handle = await open(lockPath, 'wx', 0o600);
  } catch (e) {
    if (errnoOf(e) === 'EEXIST') return false;
    throw e;
  }
  try {
    await handle.writeFile(text);
  } catch (e) {
    await handle.close().catch(() => undefined);
    await tryUnlink(lockPath);
    throw e;
  }
  await handle.close();
  return true;
}
