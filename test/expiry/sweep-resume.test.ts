/**
 * A sweep in slices: shouldStop ends it cleanly, onCheckpoint names where to go on, and a sweep
 * started after that key (startAfter) finishes the pass with exactly the deletions of one full run,
 * including inside a user whose TTL class marker lies behind the resume point.
 */
import { describe, expect, it } from 'vitest';
import { sweep, type SweepSummary } from '../../src/expiry/sweep.js';
import { MemoryStore } from '../../src/store/memory.js';
import { ManualClock } from './helpers.js';
import { encode } from '../kit/text.js';

const HOUR = 3600 * 1000;

/** users u00..u{n}: each with `files` files, every other one idle for 40 days, the rest fresh. */
async function populate(
  store: MemoryStore,
  clock: ManualClock,
  users: number,
  files: number,
  pro: string[] = [],
): Promise<void> {
  for (let u = 0; u < users; u++) {
    const uid = `u${String(u).padStart(2, '0')}`;
    if (pro.includes(uid)) await store.put(`u/${uid}/c/pro`, new Uint8Array(0));
    for (let f = 0; f < files; f += 2) await store.put(`u/${uid}/f/${String(f).padStart(4, '0')}`, encode('old'));
  }
  clock.advanceDays(40);
  for (let u = 0; u < users; u++) {
    const uid = `u${String(u).padStart(2, '0')}`;
    for (let f = 1; f < files; f += 2) await store.put(`u/${uid}/f/${String(f).padStart(4, '0')}`, encode('new'));
  }
  clock.advanceMs(2 * HOUR);
}

interface Slices {
  runs: SweepSummary[];
  checkpoints: string[];
}

/** Sweep in runs that each stop after `perRun` objects, resuming from the last checkpoint. */
async function sweepInSlices(
  store: MemoryStore,
  clock: ManualClock,
  perRun: number,
  classes: Record<string, number> = {},
): Promise<Slices> {
  const runs: SweepSummary[] = [];
  const checkpoints: string[] = [];
  let resumeAfter: string | undefined;
  for (let i = 0; i < 1000; i++) {
    let seen = 0;
    let last: string | undefined;
    const summary = await sweep({
      store,
      ttl: { ttlDays: 30, classes },
      now: clock.now,
      pageSize: 7,
      ...(resumeAfter !== undefined ? { startAfter: resumeAfter } : {}),
      shouldStop: () => ++seen >= perRun,
      onCheckpoint: (key) => {
        last = key;
        checkpoints.push(key);
      },
    });
    runs.push(summary);
    if (summary.complete) return { runs, checkpoints };
    expect(last).toBeDefined();
    resumeAfter = last;
  }
  throw new Error('the sweep never completed');
}

describe('sweep in slices (checkpoint and resume)', () => {
  it('deletes across resumed runs exactly what one full run deletes, each file once', async () => {
    const clockA = new ManualClock();
    const whole = new MemoryStore(clockA.now);
    await populate(whole, clockA, 6, 10);
    const clockB = new ManualClock();
    const sliced = new MemoryStore(clockB.now);
    await populate(sliced, clockB, 6, 10);

    const full = await sweep({ store: whole, ttl: { ttlDays: 30 }, now: clockA.now });
    const { runs } = await sweepInSlices(sliced, clockB, 13);

    expect(full).toMatchObject({ scanned: 60, expired: 30, kept: 30, complete: true, resumed: false });
    expect(runs.length).toBeGreaterThan(3);
    expect(runs.slice(0, -1).every((r) => !r.complete)).toBe(true);
    expect(runs.slice(1).every((r) => r.resumed)).toBe(true);
    const total = (field: 'scanned' | 'expired' | 'kept' | 'errors') => runs.reduce((n, r) => n + r[field], 0);
    // No file is looked at twice, none is skipped.
    expect({
      scanned: total('scanned'),
      expired: total('expired'),
      kept: total('kept'),
      errors: total('errors'),
    }).toEqual({
      scanned: 60,
      expired: 30,
      kept: 30,
      errors: 0,
    });
    expect(sliced.keys().sort()).toEqual(whole.keys().sort());
  });

  it('a stopped run has finished everything up to its checkpoint and nothing after it', async () => {
    const clock = new ManualClock();
    const store = new MemoryStore(clock.now);
    await populate(store, clock, 4, 10);
    const before = store.keys().sort();
    let seen = 0;
    let checkpoint: string | undefined;
    const summary = await sweep({
      store,
      ttl: { ttlDays: 30 },
      now: clock.now,
      shouldStop: () => ++seen >= 17,
      onCheckpoint: (k) => (checkpoint = k),
    });
    expect(summary.complete).toBe(false);
    expect(checkpoint).toBe(before[16]);
    const after = new Set(store.keys());
    for (const key of before) {
      const old = Number(key.slice(-4)) % 2 === 0;
      // Idle files up to the checkpoint are gone; everything after it is untouched.
      expect(after.has(key), key).toBe(key <= checkpoint! ? !old : true);
    }
  });

  it('resuming inside a user of a longer TTL class re-reads their class marker and keeps their files', async () => {
    const clock = new ManualClock();
    const store = new MemoryStore(clock.now);
    await populate(store, clock, 3, 20, ['u01']);
    // Stop inside u01's files: the marker u/u01/c/pro lies behind the resume point.
    const order = store.keys().sort();
    const stopAt = order.indexOf('u/u01/f/0005');
    let seen = 0;
    let checkpoint: string | undefined;
    const first = await sweep({
      store,
      ttl: { ttlDays: 30, classes: { pro: 90 } },
      now: clock.now,
      shouldStop: () => ++seen > stopAt,
      onCheckpoint: (k) => (checkpoint = k),
    });
    expect(first.complete).toBe(false);
    expect(checkpoint).toBe('u/u01/f/0005');
    const second = await sweep({
      store,
      ttl: { ttlDays: 30, classes: { pro: 90 } },
      now: clock.now,
      startAfter: checkpoint!,
    });
    expect(second).toMatchObject({ complete: true, resumed: true, errors: 0 });
    // Every pro file survived (40 idle days < 90); u00's and u02's idle files went.
    for (let f = 0; f < 20; f++) expect(store.keys()).toContain(`u/u01/f/${String(f).padStart(4, '0')}`);
    expect(store.keys().filter((k) => k.startsWith('u/u02/f/'))).toHaveLength(10);
    expect(first.expired + second.expired).toBe(20);
  });

  it('checkpoints every checkpointEvery files through a long run of kept files', async () => {
    const clock = new ManualClock();
    const store = new MemoryStore(clock.now);
    for (let f = 0; f < 2500; f++) await store.put(`u/a/f/${String(f).padStart(5, '0')}`, encode('x'));
    const checkpoints: string[] = [];
    const summary = await sweep({
      store,
      ttl: { ttlDays: 30 },
      now: clock.now,
      checkpointEvery: 1000,
      onCheckpoint: (k) => checkpoints.push(k),
    });
    expect(summary).toMatchObject({ scanned: 2500, kept: 2500, complete: true });
    expect(checkpoints).toEqual(['u/a/f/00999', 'u/a/f/01999']);
  });

  it('checkpoints after each deleted batch, at the last key of the batch', async () => {
    const clock = new ManualClock();
    const store = new MemoryStore(clock.now);
    for (let f = 0; f < 1500; f++) await store.put(`u/a/f/${String(f).padStart(5, '0')}`, encode('x'));
    clock.advanceDays(31);
    const checkpoints: string[] = [];
    const summary = await sweep({
      store,
      ttl: { ttlDays: 30 },
      now: clock.now,
      onCheckpoint: (k) => checkpoints.push(k),
    });
    expect(summary).toMatchObject({ scanned: 1500, expired: 1500, complete: true });
    // The store deleter takes 1,000 per batch; the rest is flushed at the end of a complete pass (no checkpoint needed).
    expect(checkpoints).toEqual(['u/a/f/00999']);
    expect(store.keys()).toEqual([]);
  });

  it('deletes the pending files before a periodic checkpoint, so the checkpoint never skips an undeleted file', async () => {
    const clock = new ManualClock();
    const store = new MemoryStore(clock.now);
    // One idle file in every ten: the batch would not fill before the checkpoint.
    for (let f = 0; f < 100; f++) if (f % 10 === 0) await store.put(`u/a/f/${String(f).padStart(3, '0')}`, encode('x'));
    clock.advanceDays(31);
    for (let f = 0; f < 100; f++) if (f % 10 !== 0) await store.put(`u/a/f/${String(f).padStart(3, '0')}`, encode('x'));
    const seenAtCheckpoint: { key: string; idleLeftBefore: number }[] = [];
    await sweep({
      store,
      ttl: { ttlDays: 30 },
      now: clock.now,
      checkpointEvery: 25,
      onCheckpoint: (key) =>
        seenAtCheckpoint.push({
          key,
          idleLeftBefore: store.keys().filter((k) => k <= key && Number(k.slice(-3)) % 10 === 0).length,
        }),
    });
    expect(seenAtCheckpoint.map((c) => c.key)).toEqual(['u/a/f/024', 'u/a/f/049', 'u/a/f/074', 'u/a/f/099']);
    expect(seenAtCheckpoint.every((c) => c.idleLeftBefore === 0)).toBe(true);
  });
});
