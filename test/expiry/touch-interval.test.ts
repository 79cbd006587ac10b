/**
 * A one-day TTL works without a setting (the default touch interval is a day,
 * or half the shortest TTL when that is shorter), and MEMVAULT_TOUCH_INTERVAL_HOURS is read.
 */
import { describe, expect, it } from 'vitest';
import { expiryOptionsFromEnv } from '../../src/config/from-env.js';
import { DAY_MS } from '../../src/expiry/config.js';
import { isMemvaultError } from '../../src/errors.js';
import { createVault } from '../../src/memvault.js';
import { MemoryStore } from '../../src/store/memory.js';
import { encode } from '../kit/text.js';
import { expiryFor, expirySetup } from '../kit/expiry.js';
import { ManualClock } from '../kit/clock.js';

const HOUR_MS = 3_600_000;

describe('the default touch interval', () => {
  it('is half a one-day TTL, and a file read every 13 hours is kept for days (touched before its TTL runs out)', async () => {
    const { clock, expiry, files } = await expirySetup({ ttlDays: 1 });
    expect(expiry.touchIntervalMs).toBe(12 * HOUR_MS);
    await files.write('/memories/a.md', encode('kept by reading'));
    for (let i = 0; i < 10; i++) {
      clock.advanceMs(13 * HOUR_MS);
      expect(await files.read('/memories/a.md'), `read ${i + 1}`).not.toBeNull();
    }
    // Not read for a day and a half: idle past its TTL, it is gone.
    clock.advanceMs(36 * HOUR_MS);
    expect(await files.read('/memories/a.md')).toBeNull();
  });

  it('stays a day for TTLs of two days and more, and follows the shortest class', () => {
    const clock = new ManualClock();
    const store = new MemoryStore(clock.now);
    expect(expiryFor(store, clock, { ttlDays: 30 }).touchIntervalMs).toBe(DAY_MS);
    expect(expiryFor(store, clock, { ttlDays: 2 }).touchIntervalMs).toBe(DAY_MS);
    expect(expiryFor(store, clock, { ttlDays: 30, classes: { trial: 1 } }).touchIntervalMs).toBe(12 * HOUR_MS);
    // An explicit interval is still checked against the shortest TTL.
    expect(() => expiryFor(store, clock, { ttlDays: 1, touchIntervalMs: DAY_MS })).toThrow(
      /shorter than the shortest TTL/,
    );
  });

  it('createVault({ expiry: { ttlDays: 1 } }) opens', async () => {
    const vault = await createVault({ store: new MemoryStore(), expiry: { ttlDays: 1 } });
    expect((await vault.run('u', { command: 'create', path: '/memories/a.md', file_text: 'x' })).isError).toBe(false);
    await vault.close();
  });
});

describe('expiryOptionsFromEnv (what every CLI command reads)', () => {
  it('reads MEMVAULT_TTL_DAYS alone, and MEMVAULT_TOUCH_INTERVAL_HOURS beside it; the env object is not changed', () => {
    const env = { MEMVAULT_TTL_DAYS: '1' };
    expect(expiryOptionsFromEnv(env)).toEqual({ ttlDays: 1, defaultClass: 'default' });
    expect(env).toEqual({ MEMVAULT_TTL_DAYS: '1' });
    expect(expiryOptionsFromEnv({ MEMVAULT_TTL_DAYS: '1', MEMVAULT_TOUCH_INTERVAL_HOURS: '6' })).toEqual({
      ttlDays: 1,
      defaultClass: 'default',
      touchIntervalMs: 6 * HOUR_MS,
    });
    expect(
      expiryOptionsFromEnv({ MEMVAULT_TTL_DAYS: '7', MEMVAULT_TOUCH_INTERVAL_HOURS: '0.5' })?.touchIntervalMs,
    ).toBe(HOUR_MS / 2);
    expect(expiryOptionsFromEnv({})).toBeUndefined();
  });

  it.each(['0', '-1', 'abc', 'NaN', 'Infinity', '1h'])(
    'refuses MEMVAULT_TOUCH_INTERVAL_HOURS=%s as CONFIG, naming the variable',
    (value) => {
      let error: unknown;
      try {
        expiryOptionsFromEnv({ MEMVAULT_TTL_DAYS: '3', MEMVAULT_TOUCH_INTERVAL_HOURS: value });
      } catch (e) {
        error = e;
      }
      expect(isMemvaultError(error, 'CONFIG')).toBe(true);
      expect((error as Error).message).toContain('MEMVAULT_TOUCH_INTERVAL_HOURS');
    },
  );

  it('an interval as long as the TTL is refused at start-up, and the message says which variable to lower', async () => {
    const options = expiryOptionsFromEnv({ MEMVAULT_TTL_DAYS: '1', MEMVAULT_TOUCH_INTERVAL_HOURS: '24' });
    await expect(createVault({ store: new MemoryStore(), expiry: options! })).rejects.toThrow(
      /MEMVAULT_TOUCH_INTERVAL_HOURS/,
    );
  });
});
