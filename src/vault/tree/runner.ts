/**
 * Who runs a directory rename, and whether that runner is still there. A journal names its runner
 * (one per vault instance) and the process it lives in (host, pid, and the pid's start time from
 * /proc where there is one). On the same host a dead process is an OS-level fact, known at once;
 * elsewhere (another host sharing an S3 bucket) only silence tells: the journal's beat counter seen
 * unchanged for `limits.resumeAfterMs` by the observer's own monotonic clock, never the store's
 * whole-second timestamps against a clock of another machine.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { LruMap } from '../../util/lru.js';
import type { VaultLocks } from '../locks.js';
import type { TreeEnv } from './env.js';

/** The process a journal's runner lives in. */
export interface RunnerProcess {
  host: string;
  pid: number;
  /** The pid's start time (clock ticks since boot, /proc/<pid>/stat), where the OS tells it: a reused pid has another. */
  start?: string;
}

/**
 * The runner of a journal: one per vault instance (its tree lock), which runs one tree operation of
 * a user at a time, so a journal of its own is never live beside it: it was left by a failure.
 */
const runners = new WeakMap<object, string>();
export function runnerOf(env: TreeEnv): string {
  let runner = runners.get(env.locks);
  if (runner === undefined) runners.set(env.locks, (runner = randomBytes(16).toString('hex')));
  return runner;
}

/** The start time of a process as /proc tells it, or undefined (no such process, no /proc). */
function startTimeOf(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Field 22 (starttime); the name in field 2 may hold spaces and parentheses, so count after its last ')'.
    const start = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
    return start !== undefined && /^\d+$/.test(start) ? start : undefined;
  } catch {
    return undefined;
  }
}

let own: RunnerProcess | undefined;
export function thisProcess(): RunnerProcess {
  if (own === undefined) {
    const start = startTimeOf(process.pid);
    own = { host: hostname(), pid: process.pid, ...(start !== undefined ? { start } : {}) };
  }
  return own;
}

/**
 * Whether the process is known to be gone: on this host, its pid is free or now belongs to a
 * process started at another time (a restarted container is pid 1 again). Anything not known
 * (another host, no start time to compare) is not gone: the caller waits for silence instead.
 */
export function processIsGone(runner: RunnerProcess | undefined): boolean {
  const me = thisProcess();
  if (runner === undefined || runner.host !== me.host) return false;
  if (runner.pid === me.pid) return runner.start !== undefined && me.start !== undefined && runner.start !== me.start;
  try {
    process.kill(runner.pid, 0);
  } catch (error) {
    // EPERM: a process of someone else holds the pid now (compared by start time below).
    if ((error as NodeJS.ErrnoException).code !== 'EPERM') return true;
  }
  if (runner.start === undefined) return false;
  const now = startTimeOf(runner.pid);
  return now !== undefined && now !== runner.start;
}

/** Journals watched per vault instance: when each was first seen with its current beat. */
const sightings = new WeakMap<VaultLocks, LruMap<string, { beat: string; since: number }>>();
const SIGHTINGS_LIMIT = 10_000;

/**
 * Whether the journal at `key` has been silent for `idleMs`: its beat (`beat`, which changes with
 * every heartbeat and every claim) seen unchanged that long by this instance's monotonic clock.
 * The first sighting of a beat starts the wait.
 */
export function silentFor(env: TreeEnv, key: string, beat: string, idleMs: number): boolean {
  if (idleMs <= 0) return true;
  let seen = sightings.get(env.locks);
  if (seen === undefined) sightings.set(env.locks, (seen = new LruMap(SIGHTINGS_LIMIT)));
  const now = performance.now();
  const earlier = seen.get(key);
  if (earlier === undefined || earlier.beat !== beat) {
    seen.set(key, { beat, since: now });
    return false;
  }
  return now - earlier.since >= idleMs;
}
