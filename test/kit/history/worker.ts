/**
 * One process of the history checker (test/kit/history/run.ts): its own memvault instance (own S3
 * client or own file-store handle, no shared in-process locks) on the shared store, running seeded
 * random operations until its deadline and appending a `start` and an `end` record per operation to
 * its log file until the stop file appears (synchronously, so a kill -9 leaves the log whole up to
 * the operation in flight, which then has no `end`).
 *
 *   tsx worker.ts <s3-url | file-url> <proc> <seed> <stop-file> <log-file>
 *   env: MEMVAULT_TEST_MASTER_KEY; for S3 also MEMVAULT_S3_ENDPOINT, MEMVAULT_S3_REGION,
 *        MEMVAULT_S3_ACCESS_KEY_ID, MEMVAULT_S3_SECRET_ACCESS_KEY
 */
import { appendFileSync, existsSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { createVault } from '../../../src/index.js';
import { s3Deleter, storeDeleter, type ConditionalDeleter } from '../../../src/expiry/deleter.js';
import { sweep } from '../../../src/expiry/sweep.js';
import { parseS3Url, s3ConfigFromEnv, type S3Store } from '../../../src/store/s3.js';
import {
  nextOp,
  RESUME_AFTER_MS,
  rng,
  SWEEP_GRACE_MS,
  sweepClock,
  sweeperClock,
  TOUCH_INTERVAL_MS,
  TTL_DAYS,
  USER,
  type LogRecord,
  type Op,
} from './model.js';

const [url, proc, seedArg, stopFile, logFile] = process.argv.slice(2);
const masterKey = process.env.MEMVAULT_TEST_MASTER_KEY;
if (!url || !proc || !seedArg || !stopFile || !logFile || !masterKey)
  throw new Error('usage: worker.ts <store-url> <proc> <seed> <stop-file> <log> (MEMVAULT_TEST_MASTER_KEY set)');

/** How long an instance keeps a user's key record before it reads it again. */
const KEY_CACHE_MS = 3_000;
const log = (record: LogRecord): void => appendFileSync(logFile, `${JSON.stringify(record)}\n`);
const onS3 = url.startsWith('s3://');
// Expiry as the sweeps see it (reads touch files idle TOUCH_INTERVAL_MS), paused directory renames
// taken over after RESUME_AFTER_MS, and a history allowance no run reaches (nothing is pruned, so
// every acknowledged write must still be in the history at the end).
const vault = await createVault({
  store: url,
  ...(onS3 ? { s3: { ...s3ConfigFromEnv(), forcePathStyle: true } } : {}),
  encryption: { masterKey, cache: { maxAgeMs: KEY_CACHE_MS } },
  expiry: { ttlDays: TTL_DAYS, touchIntervalMs: TOUCH_INTERVAL_MS, now: sweepClock },
  limits: { resumeAfterMs: RESUME_AFTER_MS },
  quota: { maxHistoryBytes: 1e12 },
});
const store = vault.store;
const deleter: ConditionalDeleter = onS3
  ? s3Deleter({
      client: (store as S3Store).client,
      bucket: parseS3Url(url).bucket,
      prefix: parseS3Url(url).prefix,
      mode: 'recheck',
    })
  : storeDeleter(store);

async function apply(op: Op): Promise<{ ok: boolean; code?: string; content?: string }> {
  if (op.kind === 'sweep') {
    const summary = await sweep({
      store,
      ttl: { ttlDays: TTL_DAYS },
      now: sweeperClock,
      graceMs: SWEEP_GRACE_MS,
      deleter,
    });
    return {
      ok: summary.errors === 0,
      content: JSON.stringify({ expired: summary.expired, changed: summary.changedDuringSweep }),
    };
  }
  // Old key versions are dropped once every instance has re-read the record: the settle time is the
  // key cache's age plus a second, short here so that drops happen while the others still run.
  if (op.kind === 'rekey') {
    await vault.rekeyUser(USER, { settleMs: KEY_CACHE_MS + 1_000 });
    return { ok: true };
  }
  if (op.kind === 'restore') {
    await vault.restore(USER, { asOf: new Date(op.asOf!) });
    return { ok: true };
  }
  const input =
    op.kind === 'insert'
      ? { command: 'insert', path: op.path, insert_line: 1, insert_text: op.token }
      : op.kind === 'create'
        ? { command: 'create', path: op.path, file_text: `${op.id}\n` }
        : op.kind === 'view'
          ? { command: 'view', path: op.path }
          : op.kind === 'rename'
            ? { command: 'rename', old_path: op.from, new_path: op.to }
            : { command: 'delete', path: op.path };
  const result = await vault.run(USER, input);
  const content = typeof result.content === 'string' ? result.content : JSON.stringify(result.content);
  return {
    ok: !result.isError,
    ...(result.code !== undefined ? { code: result.code } : {}),
    ...(op.kind === 'view' && !result.isError ? { content } : {}),
  };
}

const random = rng(Number(seedArg));
for (let seq = 0; !existsSync(stopFile); seq++) {
  const drawn = nextOp(random, proc, seq);
  const op: Op = drawn.kind === 'restore' ? { ...drawn, asOf: Date.now() - drawn.back } : drawn;
  log({ type: 'start', proc, seq, op, at: Date.now() });
  let outcome: { ok: boolean; code?: string; content?: string };
  try {
    outcome = await apply(op);
  } catch (error) {
    outcome = { ok: false, code: `THROWN:${(error as Error).name}` };
  }
  log({ type: 'end', proc, seq, at: Date.now(), ...outcome });
  await sleep(Math.floor(random() * 20));
}
await vault.close();
