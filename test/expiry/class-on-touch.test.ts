/**
 * A touch is a write: it records the user's class first, so that the sweeper judges a user whose
 * class changed and who only reads by the class the vault serves them by.
 */
import { describe, expect, it } from 'vitest';
import { parseUserKey } from '../../src/expiry/layout.js';
import { sweep } from '../../src/expiry/sweep.js';
import { listAll } from '../../src/store/port.js';
import { MemoryStore } from '../../src/store/memory.js';
import { ManualClock } from '../kit/clock.js';
import { expiryFor, filesOf } from '../kit/expiry.js';

const encode = (s: string): Uint8Array => new TextEncoder().encode(s);

describe('a class change seen only by reads', () => {
  it('the sweeper does not delete a file the vault (pro, 365 days) still serves', async () => {
    const clock = new ManualClock();
    const store = new MemoryStore(clock.now);
    const host: { tier: string | undefined } = { tier: undefined };
    const options = { classes: { pro: 365 }, classOf: () => host.tier };
    const before = await filesOf(store, expiryFor(store, clock, options), 'alice');
    await before.write('/memories/a.md', encode('kept for a pro user'));

    host.tier = 'pro'; // the host upgrades alice
    clock.advanceDays(10);
    const vault = expiryFor(store, clock, options);
    expect(await (await filesOf(store, vault, 'alice')).read('/memories/a.md')).not.toBeNull(); // touched, tagged pro

    clock.advanceDays(40); // 40 idle days: inside pro's 365, past default's 30
    const summary = await sweep({ store, ttl: { ttlDays: 30, classes: { pro: 365 } }, now: clock.now });
    const stillServed = await (await filesOf(store, expiryFor(store, clock, options), 'alice')).read('/memories/a.md');
    expect({ expired: summary.expired, served: stillServed !== null }).toEqual({ expired: 0, served: true });
  });

  it('a downgrade seen only by reads: the touch takes the longer class marker away', async () => {
    const clock = new ManualClock();
    const store = new MemoryStore(clock.now);
    const host: { tier: string | undefined } = { tier: 'pro' };
    const options = { classes: { pro: 365 }, classOf: () => host.tier };
    await (await filesOf(store, expiryFor(store, clock, options), 'alice')).write('/memories/a.md', encode('x'));
    const markers = async (): Promise<string[]> => {
      const found: string[] = [];
      for await (const object of listAll(store, 'u/'))
        if (parseUserKey(object.key).kind === 'class') found.push(object.key);
      return found;
    };
    expect(await markers()).toHaveLength(1);

    host.tier = undefined; // back to the default class (30 days)
    clock.advanceDays(10);
    expect(
      await (await filesOf(store, expiryFor(store, clock, options), 'alice')).read('/memories/a.md'),
    ).not.toBeNull();
    expect(await markers()).toEqual([]);
    clock.advanceDays(31); // idle past the default class's 30 days: the sweeper takes it, as the vault hides it
    const summary = await sweep({ store, ttl: { ttlDays: 30, classes: { pro: 365 } }, now: clock.now });
    expect(summary.expired).toBe(1);
  });
});
