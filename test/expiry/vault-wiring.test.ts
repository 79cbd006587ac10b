/**
 * createVault({ expiry }) end to end through the memory tool's commands: needs the `expiry` option
 * wiring in src/memvault.ts (see docs/expiry.md).
 */
import { describe, expect, it } from 'vitest';
import { createVault } from '../../src/memvault.js';
import { sweep } from '../../src/expiry/sweep.js';
import { MemoryStore } from '../../src/store/memory.js';
import { ManualClock } from './helpers.js';

describe('createVault with expiry', () => {
  it('a created file is served while read daily, vanishes after its TTL unread, and the sweeper removes it', async () => {
    const clock = new ManualClock();
    const store = new MemoryStore(clock.now);
    const vault = await createVault({ store, expiry: { ttlDays: 30, now: clock.now } });
    expect(
      (await vault.run('alice', { command: 'create', path: '/memories/kept.md', file_text: 'kept' })).isError,
    ).toBe(false);
    expect(
      (await vault.run('alice', { command: 'create', path: '/memories/idle.md', file_text: 'idle' })).isError,
    ).toBe(false);
    for (let day = 0; day < 40; day++) {
      clock.advanceDays(1);
      expect((await vault.run('alice', { command: 'view', path: '/memories/kept.md' })).isError).toBe(false);
    }
    const idle = await vault.run('alice', { command: 'view', path: '/memories/idle.md' });
    expect(idle.isError).toBe(true);
    const listing = await vault.run('alice', { command: 'view', path: '/memories' });
    expect(JSON.stringify(listing.content)).toContain('kept.md');
    expect(JSON.stringify(listing.content)).not.toContain('idle.md');
    // Re-creating the expired path works before the sweep has run.
    expect(
      (await vault.run('alice', { command: 'create', path: '/memories/idle.md', file_text: 'again' })).isError,
    ).toBe(false);
    clock.advanceDays(40);
    const summary = await sweep({ store, ttl: { ttlDays: 30 }, now: clock.now });
    expect(summary).toMatchObject({ scanned: 2, expired: 2 });
    await vault.close();
  });
});
