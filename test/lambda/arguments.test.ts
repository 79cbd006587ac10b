/**
 * For `memvault/lambda`: a misspelt event mode (it once fell back to a full
 * 'start' sweep) or handler option is a CONFIG error, and the store is unchanged: no file deleted,
 * no sweep checkpoint written.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DAY_MS } from '../../src/expiry/config.js';
import { isMemvaultError } from '../../src/errors.js';
import { createSweeperHandler, type SweeperEvent } from '../../src/lambda/handler.js';
import { FileStore } from '../../src/store/file.js';
import { snapshot } from '../kit/stores.js';

let dir: string;
let env: Record<string, string>;
const context = { getRemainingTimeInMillis: () => 600_000 };

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'memvault-lambda-args-'));
  // Files idle for 40 days: any sweep with a 30-day TTL deletes them.
  const store = await FileStore.open(dir, { now: () => new Date(Date.now() - 40 * DAY_MS), durable: false });
  for (let i = 0; i < 3; i++) await store.put(`u/user${i}/f/file${i}`, new TextEncoder().encode('x'));
  await store.close();
  env = { MEMVAULT_STORE: `file://${dir}`, MEMVAULT_TTL_DAYS: '30' };
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function stored(): Promise<Map<string, string>> {
  const store = await FileStore.open(dir);
  try {
    return await snapshot(store);
  } finally {
    await store.close();
  }
}

function codeOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (error) {
    return isMemvaultError(error) ? error.code : 'not a MemvaultError';
  }
  return undefined;
}

describe('the sweeper handler refuses what means nothing, before it reads or deletes anything', () => {
  it.each([
    ['a misspelt mode', { mode: 'contineu' }],
    ['mode: a number', { mode: 1 }],
    ['the event: a string', 'continue'],
  ])('event with %s: CONFIG, the store unchanged', async (_what, event) => {
    const before = await stored();
    expect(before.size).toBe(3);
    const lines: string[] = [];
    const handler = createSweeperHandler({ env, log: (line) => lines.push(line) });
    await expect(handler(event as SweeperEvent, context)).rejects.toMatchObject({ code: 'CONFIG' });
    expect(await stored()).toEqual(before);
    expect(lines.map((l) => (JSON.parse(l) as { event: string }).event)).toEqual(['memvault.sweep.failed']);
  });

  it.each([
    ['a misspelt option', { pagesize: 10 }],
    ['pageSize 0', { pageSize: 0 }],
    ['checkpointEvery 1.5', { checkpointEvery: 1.5 }],
    ['checkpointIntervalMs NaN', { checkpointIntervalMs: NaN }],
    ['log: a string', { log: 'stdout' }],
  ])('createSweeperHandler with %s: CONFIG', (_what, options) => {
    expect(codeOf(() => createSweeperHandler({ env, ...(options as object) }))).toBe('CONFIG');
  });

  it('the valid events still sweep: continue with nothing to continue skips, start deletes the idle files', async () => {
    const handler = createSweeperHandler({ env, log: () => {} });
    expect(await handler({ mode: 'continue' }, context)).toEqual({
      event: 'memvault.sweep.skipped',
      reason: 'nothing-to-continue',
    });
    const result = await handler(undefined, context);
    expect(result).toMatchObject({ event: 'memvault.sweep', expired: 3, errors: 0 });
  });
});
