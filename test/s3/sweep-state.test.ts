/**
 * The sweeper believes its checkpoint in the bucket only as far as a run could have written it, on
 * a real S3 server (radosgw): a lease ending in the year 9999, a resume point
 * past every key or outside the users' keys, a completion date in the future. Each state is written
 * into the bucket as a forger (or a bug) would; the Lambda handler then runs with the environment a
 * deployment gives it. LastModified comes from the server's clock, so the sweeper's clock is set 31
 * days ahead and every date in a state is relative to it. On the code before the checkpoint was
 * checked, the first case skipped every run as "running" without an error, and the overdue case
 * reported nothing.
 */
import { describe, expect, it } from 'vitest';
import { readSweepState, writeSweepState, type SweepState } from '../../src/expiry/checkpoint.js';
import { DAY_MS } from '../../src/expiry/config.js';
import { createSweeperHandler } from '../../src/lambda/handler.js';
import { listAll } from '../../src/store/port.js';
import type { S3Store } from '../../src/store/s3.js';
import { unlimited } from '../lambda/helpers.js';
import { recordS3SuiteRun, s3Connection, s3SkipReason, suiteStoresWithUrl } from './helpers.js';

recordS3SuiteRun(import.meta.url);
const connection = s3Connection();
const AHEAD_MS = 31 * DAY_MS + 2 * 3_600_000;
const ahead = (): Date => new Date(Date.now() + AHEAD_MS);
/** A time relative to the sweeper's clock. */
const at = (offsetMs: number): string => new Date(Date.now() + AHEAD_MS + offsetMs).toISOString();
const USERS = ['u01', 'u02', 'u03'];

describe.skipIf(!connection)(
  `the sweep checkpoint in the bucket${connection ? '' : ` (skipped: ${s3SkipReason()})`}`,
  () => {
    // A store of its own per fixture, emptied after the suite.
    const nextStore = suiteStoresWithUrl('sweep-state');

    /** Three users of three files each (all idle 31 days by the sweeper's clock), and `state` as the checkpoint. */
    async function fixture(state: SweepState): Promise<{ store: S3Store; env: Record<string, string> }> {
      const c = connection!;
      const { store, url } = await nextStore();
      const body = new TextEncoder().encode('x');
      await Promise.all(USERS.flatMap((uid) => ['a', 'b', 'c'].map((f) => store.put(`u/${uid}/f/${f}`, body))));
      await writeSweepState(store, state, undefined);
      const env = {
        MEMVAULT_STORE: url,
        MEMVAULT_TTL_DAYS: '30',
        MEMVAULT_S3_ENDPOINT: c.endpoint,
        MEMVAULT_S3_REGION: c.region,
        MEMVAULT_S3_FORCE_PATH_STYLE: 'true',
        MEMVAULT_S3_ACCESS_KEY_ID: c.accessKeyId,
        MEMVAULT_S3_SECRET_ACCESS_KEY: c.secretAccessKey,
      };
      return { store, env };
    }

    async function files(store: S3Store): Promise<number> {
      let n = 0;
      for await (const o of listAll(store, 'u/')) if (o.key.includes('/f/')) n += 1;
      return n;
    }

    function run(env: Record<string, string>, mode: 'start' | 'continue' = 'start', now = ahead) {
      const lines: Record<string, unknown>[] = [];
      const handler = createSweeperHandler({
        env,
        now,
        log: (line) => lines.push(JSON.parse(line) as Record<string, unknown>),
      });
      return { lines, result: handler({ mode }, unlimited()) };
    }

    it('a lease ending in the year 9999 is dropped: the run sweeps, fails naming it, and the next run is clean', async () => {
      const { store, env } = await fixture({
        v: 1,
        runs: 1,
        passStartedAt: at(-3_600_000),
        lastCompletedAt: at(-3_600_000),
        leaseUntil: '9999-12-31T00:00:00.000Z',
      });
      const first = run(env);
      await expect(first.result).rejects.toMatchObject({ code: 'INTEGRITY' });
      expect(first.lines[0]).toMatchObject({
        event: 'memvault.sweep',
        complete: true,
        expired: 9,
        stateRepaired: ['lease'],
      });
      expect(await files(store)).toBe(0);
      expect((await readSweepState(store)).state?.leaseUntil).toBeUndefined();
      const second = run(env);
      await expect(second.result).resolves.toMatchObject({ event: 'memvault.sweep', complete: true });
      expect(second.lines[0]).not.toHaveProperty('stateRepaired');
    });

    it('a resume point outside the users keys starts from the first key and fails; one past every key skips one pass at most', async () => {
      const outside = await fixture({
        v: 1,
        runs: 1,
        passStartedAt: at(-3_600_000),
        lastCompletedAt: at(-3_600_000),
        resumeAfter: '~~~~',
      });
      const r = run(outside.env, 'continue');
      await expect(r.result).rejects.toMatchObject({ code: 'INTEGRITY' });
      expect(r.lines[0]).toMatchObject({ complete: true, resumed: false, stateRepaired: ['resume-point'] });
      expect(await files(outside.store)).toBe(0);

      const past = await fixture({
        v: 1,
        runs: 1,
        passStartedAt: at(-3_600_000),
        lastCompletedAt: at(-3_600_000),
        resumeAfter: 'u/zzzz',
      });
      await expect(run(past.env, 'continue').result).resolves.toMatchObject({ complete: true, scanned: 0 });
      expect(await files(past.store)).toBe(9);
      await expect(run(past.env).result).resolves.toMatchObject({ complete: true, expired: 9 });
      expect(await files(past.store)).toBe(0);
    });

    it('a completion date in the future is dropped and reported; a skipped run of an overdue sweep fails with overdue', async () => {
      const future = await fixture({
        v: 1,
        runs: 1,
        passStartedAt: '9999-01-01T00:00:00.000Z',
        lastCompletedAt: '9999-01-01T00:00:00.000Z',
      });
      const r = run(future.env);
      await expect(r.result).rejects.toMatchObject({ code: 'INTEGRITY' });
      expect(r.lines[0]).toMatchObject({ stateRepaired: ['dates'] });
      expect((await readSweepState(future.store)).state?.lastCompletedAt).not.toMatch(/^9999/);

      const overdue = await fixture({
        v: 1,
        runs: 1,
        passStartedAt: at(-3 * DAY_MS),
        lastCompletedAt: at(-3 * DAY_MS),
        leaseUntil: at(10 * 60_000),
      });
      const skipped = run(overdue.env);
      await expect(skipped.result).rejects.toMatchObject({ code: 'STORE_INCONSISTENT' });
      expect(skipped.lines[0]).toMatchObject({ event: 'memvault.sweep.skipped', reason: 'running', overdue: true });
      expect(await files(overdue.store)).toBe(9);
      const later = run(overdue.env, 'start', () => new Date(Date.now() + AHEAD_MS + 11 * 60_000));
      await expect(later.result).resolves.toMatchObject({ event: 'memvault.sweep', complete: true, expired: 9 });
      expect(later.lines[0]).not.toHaveProperty('overdue');
    });
  },
);
