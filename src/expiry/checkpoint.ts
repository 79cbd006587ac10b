/**
 * Where a sweep that runs in bounded slices (the Lambda sweeper: 15 minutes at most per run) keeps
 * its place: one small JSON object, `s/sweep-state.json`, beside `u/` and `k/` in the swept store.
 *
 * - `resumeAfter`: the key the unfinished pass continues after (see SweepOptions.onCheckpoint). It is
 *   an object key of this same store (keyed hashes and encrypted names, no plaintext) and never
 *   leaves the store: logs carry only whether a pass was resumed.
 * - `leaseUntil`: a run holds the pass until then (its own deadline), so a second run started
 *   meanwhile (an overlapping schedule, a retry) steps aside instead of sweeping the same keys.
 *   Every update is conditional on the ETag read, so of two runs that read the same state only one
 *   takes the lease. Two sweeps at once would still be safe (deletes are conditional), only wasteful.
 *
 * The state is believed only as far as a run could have written it (`repairSweepState`): a lease
 * longer than a run can last, a resume point outside the users' keys, or a date in the future was
 * not written by a sweep. Such a field is dropped, the run sweeps as if it were absent and then
 * fails, so that the alarm fires. A well-formed resume point can still skip the keys before it for
 * one pass (the next pass starts from the first key): the state carries no MAC, since the sweeper
 * holds no key.
 */
import { MemvaultError } from '../errors.js';
import { PreconditionFailedError, type ObjectStore } from '../store/port.js';

export { SWEEP_STATE_KEY } from '../store/layout.js';
import { MAX_STORE_KEY_BYTES, SWEEP_STATE_KEY, USERS_PREFIX } from '../store/layout.js';
/** A state object is a few hundred bytes; anything much larger is not ours. */
const MAX_STATE_BYTES = 16 * 1024;
/** The longest one run holds the pass: a Lambda invocation lasts 15 minutes at most. */
export const MAX_RUN_MS = 15 * 60_000;
/** How far apart the clocks of two runs (or of a run and the store) are allowed to be. */
export const CLOCK_SKEW_MS = 60_000;

export interface SweepState {
  v: 1;
  /** Set while a pass is unfinished: continue after this key. */
  resumeAfter?: string;
  /** When the current (or last) pass began. */
  passStartedAt?: string;
  /** Runs the current pass has taken so far (1 for a pass one run finished). */
  runs: number;
  /** A run is sweeping until this instant. */
  leaseUntil?: string;
  /** When the last pass that reached the end of the listing finished. */
  lastCompletedAt?: string;
}

export interface StoredSweepState {
  state: SweepState | undefined;
  /** ETag of the state object read (undefined: there was none). */
  etag: string | undefined;
}

function isState(value: unknown): value is SweepState {
  if (typeof value !== 'object' || value === null) return false;
  const v = value as Record<string, unknown>;
  const optionalString = (k: string): boolean => v[k] === undefined || typeof v[k] === 'string';
  return (
    v.v === 1 &&
    typeof v.runs === 'number' &&
    optionalString('resumeAfter') &&
    optionalString('passStartedAt') &&
    optionalString('leaseUntil') &&
    optionalString('lastCompletedAt')
  );
}

export async function readSweepState(store: ObjectStore): Promise<StoredSweepState> {
  const object = await store.get(SWEEP_STATE_KEY);
  if (!object) return { state: undefined, etag: undefined };
  let parsed: unknown;
  try {
    if (object.body.byteLength > MAX_STATE_BYTES) throw new Error('too large');
    parsed = JSON.parse(new TextDecoder().decode(object.body));
  } catch {
    parsed = undefined;
  }
  // Fail closed: an unreadable checkpoint is not silently replaced by a fresh pass over its head.
  if (!isState(parsed))
    throw new MemvaultError(
      'CONFIG',
      `expire: the sweep checkpoint ${SWEEP_STATE_KEY} is not valid; delete it to start a new pass`,
    );
  return { state: parsed, etag: object.etag };
}

/**
 * Replace the state written at `etag` (undefined: create it). Returns the new ETag, or undefined
 * when another run changed it first.
 */
export async function writeSweepState(
  store: ObjectStore,
  state: SweepState,
  etag: string | undefined,
): Promise<string | undefined> {
  const body = new TextEncoder().encode(JSON.stringify(state));
  try {
    const out = await store.put(SWEEP_STATE_KEY, body, etag === undefined ? { ifNoneMatch: '*' } : { ifMatch: etag });
    return out.etag;
  } catch (error) {
    if (error instanceof PreconditionFailedError) return undefined;
    throw error;
  }
}

/** What a run would not have written into the state: a lease, a resume point or a date. */
export type SweepStateRepair = 'lease' | 'resume-point' | 'dates';

/**
 * The state as a sweep could have written it at `now`: a lease ending later than one run can last
 * from now, a resume point that is no key under `u/`, or a pass or completion time in the future
 * (which would keep the sweep from ever looking overdue) is dropped and named in `repaired`.
 */
export function repairSweepState(state: SweepState, now: Date): { state: SweepState; repaired: SweepStateRepair[] } {
  const repaired: SweepStateRepair[] = [];
  const out: SweepState = { ...state };
  const latest = now.getTime() + CLOCK_SKEW_MS;
  if (out.leaseUntil !== undefined) {
    const until = Date.parse(out.leaseUntil);
    if (!Number.isFinite(until) || until > latest + MAX_RUN_MS) {
      delete out.leaseUntil;
      repaired.push('lease');
    }
  }
  if (out.resumeAfter !== undefined) {
    const key = out.resumeAfter;
    if (!key.startsWith(USERS_PREFIX) || new TextEncoder().encode(key).byteLength > MAX_STORE_KEY_BYTES) {
      delete out.resumeAfter;
      delete out.passStartedAt;
      repaired.push('resume-point');
    }
  }
  const future = (value: string | undefined): boolean => value !== undefined && !(Date.parse(value) <= latest);
  if (future(out.passStartedAt) || future(out.lastCompletedAt)) {
    if (future(out.passStartedAt)) delete out.passStartedAt;
    if (future(out.lastCompletedAt)) delete out.lastCompletedAt;
    repaired.push('dates');
  }
  return { state: out, repaired };
}

/**
 * Whether the sweep is overdue at `now`: its last finished pass (or, before the first one, the pass
 * under way) began or ended longer ago than `overdueAfterMs`. A sweep that keeps being skipped, or
 * whose passes never finish, is so reported instead of looking idle.
 */
export function isSweepOverdue(state: SweepState | undefined, now: Date, overdueAfterMs: number): boolean {
  const since = state?.lastCompletedAt ?? state?.passStartedAt;
  if (since === undefined) return false;
  return now.getTime() - Date.parse(since) > overdueAfterMs;
}
