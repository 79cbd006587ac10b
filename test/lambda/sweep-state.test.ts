/**
 * The sweeper believes its checkpoint only as far as a run could have written it: a lease past any run's time limit, a resume point outside the users' keys or a date in the
 * future is dropped, the run sweeps without it and then fails (the alarm); a sweep with no finished
 * pass for longer than MEMVAULT_SWEEP_OVERDUE_HOURS says so in every run's line and fails, skipped
 * runs included.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import {
  readSweepState,
  repairSweepState,
  writeSweepState,
  MAX_RUN_MS,
  type SweepState,
} from '../../src/expiry/checkpoint.js';
import { DAY_MS } from '../../src/expiry/config.js';
import { createSweeperHandler } from '../../src/lambda/handler.js';
import { FileStore } from '../../src/store/file.js';
import { listAll } from '../../src/store/port.js';
import { unlimited } from './helpers.js';

const root = mkdtempSync(join(tmpdir(), 'memvault-sweep-state-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const USERS = ['u01', 'u02', 'u03'];

/** A store with two files per user idle 40 days (expired at 30) and one idle 10 days. */
async function fixture(name: string, state?: SweepState): Promise<{ dir: string; env: Record<string, string> }> {
  const dir = join(root, name);
  let t = Date.now() - 40 * DAY_MS;
  const store = await FileStore.open(dir, { now: () => new Date(t), durable: false });
  const body = new TextEncoder().encode('x');
  for (const uid of USERS) for (const f of ['a', 'b']) await store.put(`u/${uid}/f/${f}`, body);
  t = Date.now() - 10 * DAY_MS;
  for (const uid of USERS) await store.put(`u/${uid}/f/young`, body);
  if (state) await writeSweepState(store, state, undefined);
  await store.close();
  return { dir, env: { MEMVAULT_STORE: pathToFileURL(dir).href, MEMVAULT_TTL_DAYS: '30' } };
}

async function filesLeft(dir: string): Promise<string[]> {
  const store = await FileStore.open(dir);
  const keys: string[] = [];
  for await (const o of listAll(store, 'u/')) keys.push(o.key);
  await store.close();
  return keys.sort();
}

async function stateOf(dir: string): Promise<SweepState | undefined> {
  const store = await FileStore.open(dir);
  try {
    return (await readSweepState(store)).state;
  } finally {
    await store.close();
  }
}

function run(env: Record<string, string>, mode: 'start' | 'continue' = 'start', now?: () => Date) {
  const lines: Record<string, unknown>[] = [];
  const handler = createSweeperHandler({
    env,
    log: (line) => lines.push(JSON.parse(line) as Record<string, unknown>),
    ...(now ? { now } : {}),
  });
  return { lines, result: handler({ mode }, unlimited()) };
}

const youngOnly = USERS.map((uid) => `u/${uid}/f/young`).sort();
const recent = (): string => new Date(Date.now() - 3_600_000).toISOString();

describe('the sweep checkpoint is believed only as far as a run could have written it', () => {
  it('a lease ending in the year 9999 is dropped: the run sweeps, then fails naming it; the next run is clean', async () => {
    const { dir, env } = await fixture('lease-9999', {
      v: 1,
      runs: 1,
      passStartedAt: recent(),
      lastCompletedAt: recent(),
      leaseUntil: '9999-12-31T00:00:00.000Z',
    });
    const first = run(env);
    await expect(first.result).rejects.toMatchObject({ code: 'INTEGRITY' });
    expect(first.lines[0]).toMatchObject({
      event: 'memvault.sweep',
      complete: true,
      expired: 6,
      stateRepaired: ['lease'],
    });
    expect(await filesLeft(dir)).toEqual(youngOnly);
    expect((await stateOf(dir))?.leaseUntil).toBeUndefined();

    const second = run(env);
    await expect(second.result).resolves.toMatchObject({ event: 'memvault.sweep', complete: true });
    expect(second.lines[0]).not.toHaveProperty('stateRepaired');
  });

  it('a lease a real run could hold (10 minutes) still makes a run step aside; one a minute past the limit does not', async () => {
    const held = await fixture('lease-held', {
      v: 1,
      runs: 1,
      passStartedAt: recent(),
      lastCompletedAt: recent(),
      leaseUntil: new Date(Date.now() + 10 * 60_000).toISOString(),
    });
    await expect(run(held.env).result).resolves.toEqual({ event: 'memvault.sweep.skipped', reason: 'running' });
    expect(await filesLeft(held.dir)).toHaveLength(9);

    const tooLong = new Date(Date.now() + MAX_RUN_MS + 2 * 60_000).toISOString();
    const forged = await fixture('lease-too-long', {
      v: 1,
      runs: 1,
      passStartedAt: recent(),
      lastCompletedAt: recent(),
      leaseUntil: tooLong,
    });
    await expect(run(forged.env).result).rejects.toMatchObject({ code: 'INTEGRITY' });
    expect(await filesLeft(forged.dir)).toEqual(youngOnly);
  });

  it('a resume point outside the users keys starts the pass from the first key, and the run fails naming it', async () => {
    const { dir, env } = await fixture('resume-outside', {
      v: 1,
      runs: 1,
      passStartedAt: recent(),
      lastCompletedAt: recent(),
      resumeAfter: '~~~~',
    });
    const r = run(env, 'continue');
    await expect(r.result).rejects.toMatchObject({ code: 'INTEGRITY' });
    expect(r.lines[0]).toMatchObject({
      event: 'memvault.sweep',
      complete: true,
      resumed: false,
      stateRepaired: ['resume-point'],
    });
    expect(await filesLeft(dir)).toEqual(youngOnly);
  });

  it('a well-formed resume point past every key skips one pass at most: the next pass sweeps everything', async () => {
    const { dir, env } = await fixture('resume-past-end', {
      v: 1,
      runs: 1,
      passStartedAt: recent(),
      lastCompletedAt: recent(),
      resumeAfter: 'u/zzzz',
    });
    const first = run(env, 'continue');
    await expect(first.result).resolves.toMatchObject({ event: 'memvault.sweep', complete: true, scanned: 0 });
    expect(await filesLeft(dir)).toHaveLength(9);
    await expect(run(env).result).resolves.toMatchObject({ event: 'memvault.sweep', complete: true, expired: 6 });
    expect(await filesLeft(dir)).toEqual(youngOnly);
  });

  it('a completion time in the future cannot hide an overdue sweep: it is dropped and reported', async () => {
    const { dir, env } = await fixture('future-date', {
      v: 1,
      runs: 1,
      passStartedAt: '9999-01-01T00:00:00.000Z',
      lastCompletedAt: '9999-01-01T00:00:00.000Z',
    });
    const r = run(env);
    await expect(r.result).rejects.toMatchObject({ code: 'INTEGRITY' });
    expect(r.lines[0]).toMatchObject({ stateRepaired: ['dates'] });
    expect((await stateOf(dir))?.lastCompletedAt).not.toMatch(/^9999/);
  });
});

describe('a sweep that has not finished a pass for longer than its schedule says so', () => {
  it('a skipped run of an overdue sweep logs overdue and fails; a run that finishes a pass is no longer overdue', async () => {
    const threeDaysAgo = new Date(Date.now() - 3 * DAY_MS).toISOString();
    const lease = new Date(Date.now() + 10 * 60_000).toISOString();
    const { dir, env } = await fixture('overdue', {
      v: 1,
      runs: 1,
      passStartedAt: threeDaysAgo,
      lastCompletedAt: threeDaysAgo,
      leaseUntil: lease,
    });
    const skipped = run(env);
    await expect(skipped.result).rejects.toMatchObject({ code: 'STORE_INCONSISTENT' });
    expect(skipped.lines[0]).toMatchObject({ event: 'memvault.sweep.skipped', reason: 'running', overdue: true });
    expect(await filesLeft(dir)).toHaveLength(9);

    // After the lease: the run finishes the pass, so it is not overdue any more.
    const later = run(env, 'start', () => new Date(Date.now() + 11 * 60_000));
    await expect(later.result).resolves.toMatchObject({ event: 'memvault.sweep', complete: true });
    expect(later.lines[0]).not.toHaveProperty('overdue');
  });

  it('MEMVAULT_SWEEP_OVERDUE_HOURS sets the limit', async () => {
    const fiveHoursAgo = new Date(Date.now() - 5 * 3_600_000).toISOString();
    const lease = new Date(Date.now() + 10 * 60_000).toISOString();
    const state: SweepState = {
      v: 1,
      runs: 1,
      passStartedAt: fiveHoursAgo,
      lastCompletedAt: fiveHoursAgo,
      leaseUntil: lease,
    };
    const { env } = await fixture('overdue-hours', state);
    await expect(run(env).result).resolves.toMatchObject({ reason: 'running' });
    await expect(run({ ...env, MEMVAULT_SWEEP_OVERDUE_HOURS: '4' }).result).rejects.toMatchObject({
      code: 'STORE_INCONSISTENT',
    });
  });
});

describe('repairSweepState', () => {
  const now = new Date('2026-06-01T00:00:00.000Z');
  it('keeps what a run writes, drops what it cannot have', () => {
    const good: SweepState = {
      v: 1,
      runs: 2,
      passStartedAt: '2026-05-31T23:00:00.000Z',
      leaseUntil: '2026-06-01T00:14:00.000Z',
      resumeAfter: 'u/abc/f/x',
    };
    expect(repairSweepState(good, now)).toEqual({ state: good, repaired: [] });
    expect(repairSweepState({ ...good, leaseUntil: '2026-06-01T00:17:00.000Z' }, now).repaired).toEqual(['lease']);
    expect(repairSweepState({ ...good, leaseUntil: 'soon' }, now).repaired).toEqual(['lease']);
    expect(repairSweepState({ ...good, resumeAfter: 's/sweep-state.json' }, now).repaired).toEqual(['resume-point']);
    expect(repairSweepState({ ...good, resumeAfter: `u/${'x'.repeat(1024)}` }, now).repaired).toEqual(['resume-point']);
    expect(repairSweepState({ ...good, passStartedAt: '2026-06-01T00:02:00.000Z' }, now).repaired).toEqual(['dates']);
    expect(repairSweepState({ ...good, lastCompletedAt: 'yesterday' }, now).repaired).toEqual(['dates']);
  });
});
