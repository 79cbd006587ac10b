/**
 * The Lambda sweeper on file stores, with the environment the CDK construct gives the function and
 * the handler bundle esbuild wrote into the assembly: it deletes what `memvault expire` deletes,
 * stops cleanly when its time runs out and the next run continues from the checkpoint, steps aside
 * while another run holds the pass, and fails closed.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { readSweepState, SWEEP_STATE_KEY, writeSweepState } from '../../src/expiry/checkpoint.js';
import { DAY_MS } from '../../src/expiry/config.js';
import {
  createSweeperHandler,
  type SweeperContext,
  type SweeperEvent,
  type SweeperResult,
} from '../../src/lambda/handler.js';
import { FileStore } from '../../src/store/file.js';
import { listAll } from '../../src/store/port.js';
import {
  asFileUrl,
  contextEndingAfter,
  memvaultExpire,
  synthSweeper,
  unlimited,
  type ConstructSweeper,
} from './helpers.js';

const USERS = 12;
const FILES = 10;
let sweeper: ConstructSweeper;
let bundled: (event: SweeperEvent, context: SweeperContext) => Promise<SweeperResult>;
let root: string;

/** Users u00..: even files idle 40 days, odd ones 10; u03 is of class pro (365 days), u07 of an unknown class. */
async function populate(url: string, unknownClassUser = false): Promise<void> {
  let t = Date.now() - 40 * DAY_MS;
  const store = await FileStore.open(fileURLToPath(url), { now: () => new Date(t), durable: false });
  const body = new TextEncoder().encode('x');
  for (let u = 0; u < USERS; u++) {
    const uid = `u${String(u).padStart(2, '0')}`;
    if (uid === 'u03') await store.put(`u/${uid}/c/pro`, new Uint8Array(0));
    if (uid === 'u07' && unknownClassUser) await store.put(`u/${uid}/c/enterprise`, new Uint8Array(0));
    for (let f = 0; f < FILES; f += 2) await store.put(`u/${uid}/f/${String(f).padStart(3, '0')}`, body);
  }
  t = Date.now() - 10 * DAY_MS;
  for (let u = 0; u < USERS; u++) {
    const uid = `u${String(u).padStart(2, '0')}`;
    for (let f = 1; f < FILES; f += 2) await store.put(`u/${uid}/f/${String(f).padStart(3, '0')}`, body);
  }
  await store.close();
}

async function keysOf(url: string, prefix = 'u/'): Promise<string[]> {
  const store = await FileStore.open(fileURLToPath(url));
  const keys: string[] = [];
  for await (const o of listAll(store, prefix)) keys.push(o.key);
  await store.close();
  return keys;
}

interface Fixture {
  env: Record<string, string>;
  storeUrl: string;
  auditUrl: string;
  referenceUrl: string;
}

/** The construct's environment pointed at two fresh file stores (sweeper, and `memvault expire` as the reference). */
async function fixture(name: string, unknownClassUser = false): Promise<Fixture> {
  const dir = join(root, name);
  const constructEnv = sweeper.environment('memory-bucket', 'audit-bucket');
  const env = {
    ...constructEnv,
    MEMVAULT_STORE: asFileUrl(constructEnv.MEMVAULT_STORE!, dir),
    MEMVAULT_AUDIT_STORE: asFileUrl(constructEnv.MEMVAULT_AUDIT_STORE!, dir),
  };
  const referenceUrl = asFileUrl(constructEnv.MEMVAULT_STORE!, join(dir, 'reference'));
  await populate(env.MEMVAULT_STORE, unknownClassUser);
  await populate(referenceUrl, unknownClassUser);
  return { env, storeUrl: env.MEMVAULT_STORE, auditUrl: env.MEMVAULT_AUDIT_STORE, referenceUrl };
}

/** Run the bundled handler with `env` as the function's environment. */
async function runBundled(
  env: Record<string, string>,
  event: SweeperEvent,
  context: SweeperContext,
): Promise<{ result: SweeperResult; lines: Record<string, unknown>[] }> {
  const saved = { ...process.env };
  const lines: Record<string, unknown>[] = [];
  const write = process.stdout.write.bind(process.stdout);
  process.stdout.write = ((chunk: string | Uint8Array) => {
    for (const line of String(chunk).split('\n'))
      if (line.startsWith('{')) lines.push(JSON.parse(line) as Record<string, unknown>);
    return true;
  }) as typeof process.stdout.write;
  try {
    for (const k of Object.keys(process.env)) if (k.startsWith('MEMVAULT_')) delete process.env[k];
    Object.assign(process.env, env);
    return { result: await bundled(event, context), lines };
  } finally {
    process.stdout.write = write;
    process.env = saved;
  }
}

beforeAll(async () => {
  sweeper = synthSweeper({ ttlClasses: { default: 30, pro: 365 } });
  bundled = await sweeper.bundledHandler();
  root = mkdtempSync(join(tmpdir(), 'memvault-lambda-'));
}, 120_000);
afterAll(() => {
  rmSync(sweeper.outdir, { recursive: true, force: true });
  rmSync(root, { recursive: true, force: true });
});

describe("the bundled sweeper with the construct's environment (file store)", () => {
  let f: Fixture;
  beforeEach(async (ctx) => {
    f = await fixture(ctx.task.id);
  });

  it('deletes exactly what `memvault expire` deletes, ships its audit records and logs one JSON summary line', async () => {
    const reference = await memvaultExpire(['--json', '--store', f.referenceUrl], f.env);
    expect(reference.code).toBe(0);
    const { result, lines } = await runBundled(f.env, { mode: 'start' }, unlimited());

    expect(await keysOf(f.storeUrl)).toEqual(await keysOf(f.referenceUrl));
    // 11 default users' idle files went; pro u03's did not.
    expect(result).toEqual({ event: 'memvault.sweep', complete: true, errors: 0, expired: 55, scanned: 120 });
    expect((await keysOf(f.storeUrl)).filter((k) => k.startsWith('u/u03/f/'))).toHaveLength(10);

    expect(lines).toHaveLength(1);
    const line = lines[0]!;
    const cli = JSON.parse(reference.out) as Record<string, unknown>;
    // versionsDropped: both enforce file history's retention by default (0 here: no versions).
    expect(line['versionsDropped']).toBe(0);
    for (const field of [
      'scanned',
      'expired',
      'kept',
      'errors',
      'users',
      'ttlDays',
      'classes',
      'mode',
      'graceMinutes',
      'versionsDropped',
    ])
      expect(line[field], field).toEqual(cli[field]);
    expect(line).toMatchObject({
      event: 'memvault.sweep',
      complete: true,
      resumed: false,
      pass: { runs: 1 },
      auditShipped: true,
    });
    // No key, user id or path in the line.
    expect(JSON.stringify(line)).not.toMatch(/u\/u\d\d|"u\d\d"|file:|\/tmp\//);

    // One audit record per deletion, shipped as a sealed segment to the audit store.
    const audit = await keysOf(f.auditUrl, '');
    expect(audit.length).toBeGreaterThan(0);
    // The pass is recorded as complete: nothing left to continue.
    const { state } = await readSweepState(await FileStore.open(fileURLToPath(f.storeUrl)));
    expect(state).toMatchObject({ v: 1, runs: 1 });
    expect(state?.resumeAfter).toBeUndefined();
    expect(state?.leaseUntil).toBeUndefined();
    expect(state?.lastCompletedAt).toBeDefined();
    const next = await runBundled(f.env, { mode: 'continue' }, unlimited());
    expect(next.result).toEqual({ event: 'memvault.sweep.skipped', reason: 'nothing-to-continue' });
  });

  it('stops cleanly when its time runs out, and the continue run finishes the pass from the checkpoint', async () => {
    const reference = await memvaultExpire(['--json', '--store', f.referenceUrl], f.env);
    expect(reference.code).toBe(0);
    const original = await keysOf(f.storeUrl);
    // Out of time after 45 objects (u03 has a class marker): inside u04's files.
    const first = await runBundled(f.env, { mode: 'start' }, contextEndingAfter(46));
    expect(first.result).toMatchObject({ event: 'memvault.sweep', complete: false, errors: 0 });
    const store = await FileStore.open(fileURLToPath(f.storeUrl));
    const { state } = await readSweepState(store);
    await store.close();
    const checkpoint = state!.resumeAfter!;
    expect(checkpoint).toMatch(/^u\/u04\/f\//);
    expect(state?.leaseUntil).toBeUndefined();
    // Up to the checkpoint the store is as expire leaves it; after it, untouched.
    const now = await keysOf(f.storeUrl);
    const expected = await keysOf(f.referenceUrl);
    expect(now.filter((k) => k <= checkpoint)).toEqual(expected.filter((k) => k <= checkpoint));
    expect(now.filter((k) => k > checkpoint)).toEqual(original.filter((k) => k > checkpoint));

    const second = await runBundled(f.env, { mode: 'continue' }, unlimited());
    expect(second.result).toMatchObject({ event: 'memvault.sweep', complete: true, errors: 0 });
    expect(second.lines[0]).toMatchObject({
      resumed: true,
      pass: { runs: 2, startedAt: first.lines[0]!.pass && (first.lines[0]!.pass as { startedAt: string }).startedAt },
    });
    const firstScanned = first.result.event === 'memvault.sweep' ? first.result.scanned : 0;
    const secondScanned = second.result.event === 'memvault.sweep' ? second.result.scanned : 0;
    expect(firstScanned + secondScanned).toBe(120);
    expect(await keysOf(f.storeUrl)).toEqual(await keysOf(f.referenceUrl));
  });

  it('fails closed on files of a TTL class it does not know: keeps them, logs the summary, and the invocation fails', async () => {
    const g = await fixture('unknown-class', true);
    await expect(runBundled(g.env, { mode: 'start' }, unlimited())).rejects.toThrow(/could not be handled/);
    expect((await keysOf(g.storeUrl)).filter((k) => k.startsWith('u/u07/f/'))).toHaveLength(10);
  });
});

describe('the handler: leases, a run that dies, configuration', () => {
  const logs: string[] = [];
  const log = (line: string): void => void logs.push(line);
  beforeEach(() => {
    logs.length = 0;
  });

  it('a run that fails mid-pass keeps its last checkpoint; the next run resumes there and deletes what expire would', async () => {
    const f = await fixture('dies');
    const reference = await memvaultExpire(['--json', '--store', f.referenceUrl], f.env);
    expect(reference.code).toBe(0);
    let asked = 0;
    const dying: SweeperContext = {
      getRemainingTimeInMillis: () => {
        if (++asked > 80) throw new Error('simulated crash');
        return 900_000;
      },
    };
    const handler = createSweeperHandler({ env: f.env, log, checkpointIntervalMs: 0, checkpointEvery: 20 });
    await expect(handler({ mode: 'start' }, dying)).rejects.toThrow(/failed unexpectedly/);
    expect(JSON.parse(logs.at(-1)!)).toEqual({
      event: 'memvault.sweep.failed',
      code: 'INTERNAL',
      message: 'unexpected Error',
    });
    const store = await FileStore.open(fileURLToPath(f.storeUrl));
    const { state } = await readSweepState(store);
    await store.close();
    expect(state?.resumeAfter).toMatch(/^u\/u0\d\/f\//);
    expect(state?.leaseUntil).toBeUndefined();

    const result = await handler({ mode: 'continue' }, unlimited());
    expect(result).toMatchObject({ event: 'memvault.sweep', complete: true, errors: 0 });
    expect(await keysOf(f.storeUrl)).toEqual(await keysOf(f.referenceUrl));
  });

  it('steps aside while another run holds the lease, and takes over once it has expired', async () => {
    const f = await fixture('lease');
    const store = await FileStore.open(fileURLToPath(f.storeUrl));
    const lease = new Date(Date.now() + 10 * 60_000).toISOString();
    await writeSweepState(
      store,
      { v: 1, runs: 1, passStartedAt: new Date().toISOString(), leaseUntil: lease, resumeAfter: 'u/u05/f/004' },
      undefined,
    );
    await store.close();
    const before = await keysOf(f.storeUrl);

    const now = createSweeperHandler({ env: f.env, log });
    expect(await now({ mode: 'start' }, unlimited())).toEqual({ event: 'memvault.sweep.skipped', reason: 'running' });
    expect(await keysOf(f.storeUrl)).toEqual(before);

    const later = createSweeperHandler({ env: f.env, log, now: () => new Date(Date.now() + 11 * 60_000) });
    const result = await later({ mode: 'continue' }, unlimited());
    // It continued after u/u05/f/004: users before that were left alone.
    expect(result).toMatchObject({ event: 'memvault.sweep', complete: true });
    const left = await keysOf(f.storeUrl);
    expect(left.filter((k) => k.startsWith('u/u00/f/'))).toHaveLength(10);
    expect(left.filter((k) => k.startsWith('u/u06/f/'))).toHaveLength(5);
  });

  it('fails closed without a store, without a TTL, and on a checkpoint it cannot read', async () => {
    const f = await fixture('config');
    const noStore = { ...f.env };
    delete noStore.MEMVAULT_STORE;
    await expect(createSweeperHandler({ env: noStore, log })({}, unlimited())).rejects.toThrow(
      /MEMVAULT_STORE is not set/,
    );
    expect(JSON.parse(logs.at(-1)!)).toMatchObject({ event: 'memvault.sweep.failed', code: 'CONFIG' });
    const noTtl = { ...f.env };
    delete noTtl.MEMVAULT_TTL_DAYS;
    delete noTtl.MEMVAULT_TTL_CLASSES;
    await expect(createSweeperHandler({ env: noTtl, log })({}, unlimited())).rejects.toThrow(/no TTL configured/);

    const store = await FileStore.open(fileURLToPath(f.storeUrl));
    await store.put(SWEEP_STATE_KEY, new TextEncoder().encode('{"v":2}'));
    await store.close();
    const before = await keysOf(f.storeUrl);
    await expect(createSweeperHandler({ env: f.env, log })({}, unlimited())).rejects.toThrow(
      /checkpoint .* is not valid/,
    );
    expect(await keysOf(f.storeUrl)).toEqual(before);
  });
});
