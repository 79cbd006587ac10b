/**
 * A sweep meeting re-creates of the names it expires, on the memory and the file store (radosgw:
 * test/s3/sweep-recreate.test.ts): the re-created files keep their history.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'vitest';
import { FileStore } from '../../src/store/file.js';
import { MemoryStore } from '../../src/store/memory.js';
import { DAY_MS } from '../../src/expiry/config.js';
import { sweepMeetsRecreates, type StoreTime } from '../kit/sweep-recreate.js';

/**
 * The store's clock runs 31 days behind until the files have been written, then on time: the files
 * are 31 days old when the sweep (on time) meets them, and every later write is stamped as the
 * vault's own clock stamps its version records (a restore compares the two).
 */
function laggingClock(): { now: () => Date; time: StoreTime } {
  let offset = -31 * DAY_MS;
  const now = (): Date => new Date(Date.now() + offset);
  return { now, time: { age: async () => void (offset = 0), sweepNow: () => new Date() } };
}

describe('a sweep meeting re-creates keeps what was written after it started', () => {
  it(
    'memory store: 12 names expired and made again mid-sweep keep their new versions',
    { timeout: 60_000 },
    async () => {
      const clock = laggingClock();
      await sweepMeetsRecreates(new MemoryStore(clock.now), 12, clock.time);
    },
  );

  it('file store: the same', { timeout: 60_000 }, async () => {
    const clock = laggingClock();
    const dir = mkdtempSync(join(tmpdir(), 'memvault-sweep-recreate-'));
    const store = await FileStore.open(dir, { durable: false, now: clock.now });
    try {
      await sweepMeetsRecreates(store, 12, clock.time);
    } finally {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
