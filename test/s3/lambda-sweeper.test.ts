/**
 * The Lambda sweeper against the real S3 server of this run, with the environment the CDK construct
 * gives the function (bucket references pointed at this run's prefixes, plus the endpoint): it
 * deletes what `memvault expire` deletes, keeps its checkpoint in the bucket, and after a run that
 * ran out of time the continue run finishes the pass. LastModified comes from the server's clock,
 * so the sweeper and `memvault expire` get the same clock set 31 days ahead.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readSweepState } from '../../src/expiry/checkpoint.js';
import { DAY_MS } from '../../src/expiry/config.js';
import { createSweeperHandler } from '../../src/lambda/handler.js';
import { listAll } from '../../src/store/port.js';
import { createS3Store, type S3Store } from '../../src/store/s3.js';
import {
  contextEndingAfter,
  memvaultExpire,
  synthSweeper,
  unlimited,
  type ConstructSweeper,
} from '../lambda/helpers.js';
import { RUN_PREFIX, recordS3SuiteRun, s3ClientConfig, s3Connection, s3SkipReason } from './helpers.js';

recordS3SuiteRun(import.meta.url);
const connection = s3Connection();
const ahead = (): Date => new Date(Date.now() + 31 * DAY_MS + 2 * 3600_000);

describe.skipIf(!connection)(
  `the Lambda sweeper on a real S3 server${connection ? '' : ` (skipped: ${s3SkipReason()})`}`,
  () => {
    let sweeper: ConstructSweeper;
    const stores: S3Store[] = [];
    beforeAll(() => {
      sweeper = synthSweeper({ ttlClasses: { default: 30, pro: 365 } });
    }, 120_000);
    afterAll(async () => {
      for (const store of stores) {
        const keys: string[] = [];
        for await (const o of listAll(store, '')) keys.push(o.key);
        await store.deleteMany(keys);
        await store.close();
      }
    });

    /** The construct's environment with its buckets at `<bucket>/<run>/<name>` on this server. */
    function environment(name: string): Record<string, string> {
      const c = connection!;
      const base = `${c.bucket}/${RUN_PREFIX}/${name}`;
      return {
        ...sweeper.environment(`${base}-memory`, `${base}-audit`),
        MEMVAULT_S3_ENDPOINT: c.endpoint,
        MEMVAULT_S3_REGION: c.region,
        MEMVAULT_S3_FORCE_PATH_STYLE: 'true',
        MEMVAULT_S3_ACCESS_KEY_ID: c.accessKeyId,
        MEMVAULT_S3_SECRET_ACCESS_KEY: c.secretAccessKey,
      };
    }

    function open(url: string): S3Store {
      const store = createS3Store({ url, s3: s3ClientConfig() });
      stores.push(store);
      return store;
    }

    /** 6 users of 8 files; u02 is of class pro (365 days), so only its files outlive 31 days. */
    async function populate(store: S3Store): Promise<void> {
      const body = new TextEncoder().encode('x');
      await store.put('u/u02/c/pro', new Uint8Array(0));
      await Promise.all(
        Array.from({ length: 6 * 8 }, (_, i) =>
          store.put(`u/u0${Math.floor(i / 8)}/f/${String(i % 8).padStart(2, '0')}`, body),
        ),
      );
    }

    const keys = async (store: S3Store, prefix = 'u/'): Promise<string[]> => {
      const out: string[] = [];
      for await (const o of listAll(store, prefix)) out.push(o.key);
      return out;
    };

    it('deletes what `memvault expire` deletes, ships audit records to the audit store, and records the pass', async () => {
      const env = environment('whole');
      const refEnv = environment('whole-ref');
      expect(env.MEMVAULT_STORE).toBe(`s3://${connection!.bucket}/${RUN_PREFIX}/whole-memory/memvault`);
      expect(env.MEMVAULT_CONDITIONAL_DELETE).toBe('native');
      const store = open(env.MEMVAULT_STORE!);
      const reference = open(refEnv.MEMVAULT_STORE!);
      const audit = open(env.MEMVAULT_AUDIT_STORE!);
      await populate(store);
      await populate(reference);

      // The CLI's audit upload takes its S3 settings from MEMVAULT_S3_ENDPOINT/REGION only (no test credentials): the reference goes without.
      delete refEnv.MEMVAULT_AUDIT_STORE;
      const cli = await memvaultExpire(['--json'], refEnv, ahead);
      expect(cli.err).toBe('');
      expect(cli.code).toBe(0);
      const lines: string[] = [];
      const result = await createSweeperHandler({ env, now: ahead, log: (l) => void lines.push(l) })(
        { mode: 'start' },
        unlimited(),
      );

      expect(result).toEqual({ event: 'memvault.sweep', complete: true, errors: 0, expired: 40, scanned: 48 });
      expect(await keys(store)).toEqual(await keys(reference));
      expect((await keys(store)).filter((k) => k.includes('/f/'))).toEqual(
        Array.from({ length: 8 }, (_, i) => `u/u02/f/0${i}`),
      );
      const line = JSON.parse(lines[0]!) as Record<string, unknown>;
      const expected = JSON.parse(cli.out) as Record<string, unknown>;
      for (const field of ['scanned', 'expired', 'kept', 'errors', 'users', 'mode'])
        expect(line[field], field).toEqual(expected[field]);
      expect((line.requests as Record<string, number>).DELETE_MANY).toBe(1);
      expect((await keys(audit, '')).length).toBeGreaterThan(0);
      const { state } = await readSweepState(store);
      expect(state).toMatchObject({ v: 1, runs: 1 });
      expect(state?.resumeAfter).toBeUndefined();
    });

    it('after a run that ran out of time, the continue run resumes from the checkpoint in the bucket', async () => {
      const env = environment('sliced');
      const refEnv = environment('sliced-ref');
      const store = open(env.MEMVAULT_STORE!);
      const reference = open(refEnv.MEMVAULT_STORE!);
      open(env.MEMVAULT_AUDIT_STORE!);
      await populate(store);
      await populate(reference);
      delete refEnv.MEMVAULT_AUDIT_STORE;
      expect((await memvaultExpire(['--json'], refEnv, ahead)).code).toBe(0);

      const handler = createSweeperHandler({ env, now: ahead, log: () => undefined });
      // Out of time after 20 objects (one is u02's class marker): inside u02 (the pro user), behind whose marker the resume point lies.
      const first = await handler({ mode: 'start' }, contextEndingAfter(20));
      expect(first).toMatchObject({ event: 'memvault.sweep', complete: false, scanned: 19, errors: 0 });
      const { state } = await readSweepState(store);
      expect(state?.resumeAfter).toBe('u/u02/f/02');
      // A start event with the pass unfinished continues it rather than starting over.
      const second = await handler({ mode: 'start' }, unlimited());
      expect(second).toMatchObject({ event: 'memvault.sweep', complete: true, scanned: 29, errors: 0 });
      expect(await keys(store)).toEqual(await keys(reference));
      expect((await readSweepState(store)).state).toMatchObject({ runs: 2 });
    });
  },
);
