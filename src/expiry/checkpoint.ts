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
 */
import { MemvaultError } from '../errors.js';
import { PreconditionFailedError, type ObjectStore } from '../store/port.js';

export { SWEEP_STATE_KEY } from '../store/layout.js';
import { SWEEP_STATE_KEY } from '../store/layout.js';
/** A state object is a few hundred bytes; anything much larger is not ours. */
const MAX_STATE_BYTES = 16 * 1024;

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
  if (!isState(parsed)) throw new MemvaultError('CONFIG', `expire: the sweep checkpoint ${SWEEP_STATE_KEY} is not valid; delete it to start a new pass`);
  return { state: parsed, etag: object.etag };
}

/**
 * Replace the state written at `etag` (undefined: create it). Returns the new ETag, or undefined
 * when another run changed it first.
 */
export async function writeSweepState(store: ObjectStore, state: SweepState, etag: string | undefined): Promise<string | undefined> {
  const body = new TextEncoder().encode(JSON.stringify(state));
  try {
    const out = await store.put(SWEEP_STATE_KEY, body, etag === undefined ? { ifNoneMatch: '*' } : { ifMatch: etag });
    return out.etag;
  } catch (error) {
    if (error instanceof PreconditionFailedError) return undefined;
    throw error;
  }
}
