/**
 * The history checker's shared vocabulary (test/s3/history-checker.test.ts): the path space, the
 * operations a worker runs, the log records it appends, and a seeded random generator.
 *
 * Paths: /memories/d{0..DIRS-1}/f{0..FILES-1}.md. Every file starts with an id line (`id:<unique>`)
 * written by the create that made it, and gains one unique token line (`t:<unique>`) per insert, so
 * a file's identity and its acknowledged edits can be traced through renames in the final state.
 */
export const DIRS = 3;
export const FILES = 8;
export const USER = 'history-user';
/** The sweeps judge a file idle after this long without a write (their `now` runs ahead of the clock). */
export const SWEEP_IDLE_MS = 25_000;
export const TTL_DAYS = 1;
/**
 * The workers' vaults see time as the sweeps do (a file idle SWEEP_IDLE_MS is expired to them too),
 * and a read touches a file idle this long: reads that touch race every other writer.
 */
export const TOUCH_INTERVAL_MS = 4_000;
/** The workers' `limits.resumeAfterMs`: a directory rename paused (SIGSTOP) longer is taken over. */
export const RESUME_AFTER_MS = 2_000;
/** How far back a restore goes: to a moment up to this long before it starts. */
export const RESTORE_BACK_MS = 3_000;

/** The clock of the workers' expiry: a day ahead, less the idle time (a file idle that long is expired to them). */
export const sweepClock = (): Date => new Date(Date.now() + TTL_DAYS * 86_400_000 - SWEEP_IDLE_MS);
/** The sweeps' grace: they delete a file idle SWEEP_IDLE_MS (their clock runs this much further ahead), and an orphaned version only once it is this old. */
export const SWEEP_GRACE_MS = 5_000;
export const sweeperClock = (): Date => new Date(sweepClock().getTime() + SWEEP_GRACE_MS);

export type Op =
  | { kind: 'insert'; path: string; token: string }
  | { kind: 'create'; path: string; id: string }
  | { kind: 'view'; path: string }
  | { kind: 'rename'; from: string; to: string }
  | { kind: 'delete'; path: string }
  | { kind: 'sweep' }
  | { kind: 'rekey' }
  /** The whole user as of `asOf` (set by the worker when it starts the restore: `back` ms before). */
  | { kind: 'restore'; back: number; asOf?: number };

/** One line of a worker's log: `start` before the op is sent, `end` once it answered. */
export type LogRecord =
  | { type: 'start'; proc: string; seq: number; op: Op; at: number }
  | { type: 'end'; proc: string; seq: number; at: number; ok: boolean; code?: string; content?: string };

/** The checker's seeded generator (mulberry32). */
export { seededRandom as rng } from '../random.js';

export const dirPath = (d: number): string => `/memories/d${d}`;
export const filePath = (d: number, f: number): string => `${dirPath(d)}/f${f}.md`;

/**
 * The next operation of a worker: mostly inserts, then directory renames, views, creates, deletes,
 * sweeps, re-keys and restores. Few directories and many renames: inserts race renames of their
 * directory most of the time.
 */
export function nextOp(random: () => number, proc: string, n: number): Op {
  const pick = (k: number): number => Math.floor(random() * k);
  const r = random();
  const file = filePath(pick(DIRS), pick(FILES));
  if (r < 0.62) return { kind: 'insert', path: file, token: `t:${proc}:${n}` };
  if (r < 0.72) return { kind: 'view', path: file };
  if (r < 0.78) return { kind: 'create', path: file, id: `id:${proc}:${n}` };
  if (r < 0.96) {
    const from = pick(DIRS);
    let to = pick(DIRS - 1);
    if (to >= from) to += 1;
    return { kind: 'rename', from: dirPath(from), to: dirPath(to) };
  }
  if (r < 0.978) return { kind: 'delete', path: file };
  if (r < 0.988) return { kind: 'delete', path: dirPath(pick(DIRS)) };
  if (r < 0.995) return { kind: 'sweep' };
  if (r < 0.998) return { kind: 'rekey' };
  return { kind: 'restore', back: Math.floor(random() * RESTORE_BACK_MS) };
}
