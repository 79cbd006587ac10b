/**
 * The sweeper with a controlled clock on the memory and file stores: what it deletes and keeps, the
 * dry run against the real run, concurrent sweepers, and writes and reads racing a sweep.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { AuditEntry } from '../../src/audit/record.js';
import { DAY_MS } from '../../src/expiry/config.js';
import { keyHash, sweep, type SweepDecision } from '../../src/expiry/sweep.js';
import { FileStore } from '../../src/store/file.js';
import { MemoryStore } from '../../src/store/memory.js';
import type { ListOptions, ListPage, ObjectStore } from '../../src/store/port.js';
import { ManualClock, counted, expiryFor, filesOf } from './helpers.js';
import { expirySetup } from '../kit/expiry.js';
import { decode, encode } from '../kit/text.js';

const HOUR = 3600 * 1000;

function fileKeys(store: MemoryStore): string[] {
  return store.keys().filter((k) => k.includes('/f/'));
}

describe('sweep: what goes and what stays', () => {
  it('deletes a file idle past its TTL (plus grace) and keeps files written or read within it', async () => {
    const { clock, store, files } = await expirySetup();
    await files.write('/memories/idle.md', encode('idle'));
    await files.write('/memories/read.md', encode('read'));
    await files.write('/memories/rewritten.md', encode('v1'));
    clock.advanceDays(20);
    await files.read('/memories/read.md'); // touch
    await files.write('/memories/rewritten.md', encode('v2'));
    clock.advanceDays(10); // idle.md: 30 days, hidden; the others: 10 days

    // Within the grace hour after hiding: not yet.
    const early = await sweep({ store, ttl: { ttlDays: 30 }, now: clock.now });
    expect(early).toMatchObject({ scanned: 3, expired: 0, kept: 3, errors: 0 });
    clock.advanceMs(HOUR);
    const expired: SweepDecision[] = [];
    const summary = await sweep({ store, ttl: { ttlDays: 30 }, now: clock.now, onExpired: (d) => expired.push(d) });
    expect(summary).toMatchObject({ scanned: 3, expired: 1, kept: 2, errors: 0, users: 1, mode: 'store' });
    expect(expired.map((d) => d.idleDays)).toEqual([30]);
    expect(await files.read('/memories/idle.md')).toBeNull();
    expect(decode((await files.read('/memories/read.md'))!.data)).toBe('read');
    expect(decode((await files.read('/memories/rewritten.md'))!.data)).toBe('v2');
    expect(fileKeys(store)).toHaveLength(2);
  });

  it('a file read every day for a year survives a daily sweep; its unread sibling goes after 30 days', async () => {
    const { clock, store, files } = await expirySetup();
    await files.write('/memories/daily.md', encode('keep me'));
    await files.write('/memories/never.md', encode('forget me'));
    let touches = 0;
    let neverGoneOnDay: number | undefined;
    for (let day = 1; day <= 365; day++) {
      clock.advanceDays(1);
      const { result, requests } = await counted(() => files.read('/memories/daily.md'));
      expect(result).not.toBeNull();
      touches += requests['PUT'] ?? 0;
      clock.advanceMs(3 * HOUR); // the cron sweep at 03:00
      await sweep({ store, ttl: { ttlDays: 30 }, now: clock.now });
      clock.advanceMs(-3 * HOUR);
      if (
        neverGoneOnDay === undefined &&
        (await store.head(fileKeys(store).find((k) => k.endsWith('never.md')) ?? 'none')) === null
      )
        neverGoneOnDay = day;
    }
    expect(decode((await files.read('/memories/daily.md'))!.data)).toBe('keep me');
    expect(touches).toBe(365); // one touch per daily read: exactly once per interval
    expect(neverGoneOnDay).toBe(30);
  });

  it("applies each user's TTL class from the marker in the listing, and keeps files of an unknown class", async () => {
    const clock = new ManualClock();
    const store = new MemoryStore(clock.now);
    const tiers: Record<string, string> = { pro: 'pro', gold: 'gold' };
    const expiry = expiryFor(store, clock, { classes: { pro: 90, gold: 400 }, classOf: (u) => tiers[u] });
    for (const user of ['free', 'pro', 'gold'])
      await (await filesOf(store, expiry, user)).write('/memories/a.md', encode(user));
    clock.advanceDays(100);
    const { result: summary, requests } = await counted(() =>
      sweep({ store, ttl: { ttlDays: 30, classes: { pro: 90 } }, now: clock.now }),
    );
    // free (30 d) and pro (90 d) expire; gold is not configured in this sweep: kept, reported.
    expect(summary).toMatchObject({ users: 3, scanned: 3, expired: 2, kept: 0, errors: 1, unknownClass: 1 });
    expect(requests['LIST']).toBe(1); // classes come from the same listing
    const left = fileKeys(store);
    expect(left).toHaveLength(1);
    expect(decode((await store.get(left[0]!))!.body)).toBe('gold');
  });

  it('two markers (a class change in flight): the longer TTL wins', async () => {
    const { clock, store, files } = await expirySetup({ classes: { pro: 90 }, classOf: () => 'pro' });
    await files.write('/memories/a.md', encode('a'));
    const marker = store.keys().find((k) => k.includes('/c/'))!;
    await store.put(marker.replace(/pro$/, 'short'), new Uint8Array(0));
    clock.advanceDays(60);
    const summary = await sweep({ store, ttl: { ttlDays: 30, classes: { pro: 90, short: 7 } }, now: clock.now });
    expect(summary).toMatchObject({ expired: 0, kept: 1 });
  });
});

describe('sweep: dry run, concurrency and races', () => {
  async function population(seed: number): Promise<{ store: MemoryStore; clock: ManualClock }> {
    const clock = new ManualClock();
    const store = new MemoryStore(clock.now);
    const expiry = expiryFor(store, clock, {
      classes: { pro: 60 },
      classOf: (u) => (u.endsWith('7') ? 'pro' : undefined),
    });
    let x = seed;
    const rand = (n: number): number => {
      x = (x * 1103515245 + 12345) % 2 ** 31;
      return x % n;
    };
    for (let day = 0; day < 120; day++) {
      for (let i = 0; i < 5; i++) {
        const files = await filesOf(store, expiry, `user-${rand(20)}`);
        const path = `/memories/f${rand(15)}.md`;
        if (rand(3) === 0) await files.read(path);
        else await files.write(path, encode(`day ${day}`));
      }
      clock.advanceDays(1);
    }
    return { store, clock };
  }

  it('a dry run names exactly the files a real run at the same --as-of deletes', async () => {
    const { store, clock } = await population(7);
    const asOf = clock.now();
    clock.advanceDays(3); // the sweeps run later, judging the same date
    const before = new Set(fileKeys(store));
    const wouldDelete: string[] = [];
    const dry = await sweep({
      store,
      ttl: { ttlDays: 30, classes: { pro: 60 } },
      asOf,
      now: clock.now,
      dryRun: true,
      onExpired: (d) => wouldDelete.push(d.key),
    });
    expect(new Set(fileKeys(store))).toEqual(before); // a dry run changes nothing
    const deleted: string[] = [];
    const real = await sweep({
      store,
      ttl: { ttlDays: 30, classes: { pro: 60 } },
      asOf,
      now: clock.now,
      onExpired: (d) => deleted.push(d.key),
    });
    expect(wouldDelete.length).toBeGreaterThan(10);
    expect(wouldDelete.length).toBeLessThan(before.size);
    expect(deleted).toEqual(wouldDelete);
    expect({ scanned: dry.scanned, expired: dry.expired, kept: dry.kept }).toEqual({
      scanned: real.scanned,
      expired: real.expired,
      kept: real.kept,
    });
    expect(new Set(fileKeys(store))).toEqual(new Set([...before].filter((k) => !deleted.includes(k))));
  });

  it('refuses a real run judging a future date; a dry run may look ahead', async () => {
    const clock = new ManualClock();
    const store = new MemoryStore(clock.now);
    const future = new Date(clock.now().getTime() + 2 * DAY_MS);
    await expect(sweep({ store, ttl: { ttlDays: 30 }, now: clock.now, asOf: future })).rejects.toThrow(/future/);
    await expect(
      sweep({ store, ttl: { ttlDays: 30 }, now: clock.now, asOf: future, dryRun: true }),
    ).resolves.toMatchObject({ scanned: 0 });
  });

  it('two sweepers at once: the same files go, every live file stays, no errors', async () => {
    const { store, clock } = await population(11);
    const expected = new Set<string>();
    await sweep({
      store,
      ttl: { ttlDays: 30, classes: { pro: 60 } },
      now: clock.now,
      dryRun: true,
      onExpired: (d) => expected.add(d.key),
    });
    const before = fileKeys(store);
    const [a, b] = await Promise.all([
      sweep({ store, ttl: { ttlDays: 30, classes: { pro: 60 } }, now: clock.now, pageSize: 7 }),
      sweep({ store, ttl: { ttlDays: 30, classes: { pro: 60 } }, now: clock.now, pageSize: 13 }),
    ]);
    expect(a.errors + b.errors).toBe(0);
    expect(new Set(fileKeys(store))).toEqual(new Set(before.filter((k) => !expected.has(k))));
    expect(a.expired).toBe(expected.size);
    expect(b.expired).toBe(expected.size); // the slower one finds them gone: counted, harmless
  });

  it("a write landing between the sweeper's LIST and its delete survives", async () => {
    const clock = new ManualClock();
    const base = new MemoryStore(clock.now);
    const expiry = expiryFor(base, clock);
    const files = await filesOf(base, expiry, 'alice');
    await files.write('/memories/a.md', encode('old a'));
    await files.write('/memories/b.md', encode('old b'));
    clock.advanceDays(31);
    // The store the sweeper sees runs the user's write right after its LIST returns.
    let injected = false;
    const racing: ObjectStore = Object.create(base) as ObjectStore;
    racing.list = async (prefix: string, options?: ListOptions): Promise<ListPage> => {
      const page = await base.list(prefix, options);
      if (!injected) {
        injected = true;
        await files.write('/memories/a.md', encode('new a')); // overwrite of a hidden file
      }
      return page;
    };
    const summary = await sweep({ store: racing, ttl: { ttlDays: 30 }, now: clock.now });
    expect(summary).toMatchObject({ scanned: 2, expired: 1, kept: 1, changedDuringSweep: 1, errors: 0 });
    expect(decode((await files.read('/memories/a.md'))!.data)).toBe('new a');
    expect(await files.read('/memories/b.md')).toBeNull();
  });

  it('a read racing the sweeper cannot resurrect an expired file (it is hidden, not touched)', async () => {
    const clock = new ManualClock();
    const base = new MemoryStore(clock.now);
    const expiry = expiryFor(base, clock);
    const files = await filesOf(base, expiry, 'alice');
    await files.write('/memories/a.md', encode('a'));
    clock.advanceDays(31);
    const racing: ObjectStore = Object.create(base) as ObjectStore;
    let read: unknown = 'not run';
    let touches = -1;
    racing.list = async (prefix: string, options?: ListOptions): Promise<ListPage> => {
      const page = await base.list(prefix, options);
      const { result, requests } = await counted(() => files.read('/memories/a.md'));
      read = result;
      touches = requests['PUT'] ?? 0;
      return page;
    };
    const summary = await sweep({ store: racing, ttl: { ttlDays: 30 }, now: clock.now });
    expect(read).toBeNull();
    expect(touches).toBe(0);
    expect(summary.expired).toBe(1);
  });
});

describe('sweep: audit, file store', () => {
  it("writes one expire record per deletion with the key's hash, never a name or the store uid, and a summary record", async () => {
    const { clock, store, files } = await expirySetup({}, 'alice@example.com');
    await files.write('/memories/secret-project.md', encode('x'));
    await files.write('/memories/other.md', encode('y'));
    const keys = fileKeys(store);
    clock.advanceDays(31);
    const entries: AuditEntry[] = [];
    await sweep({ store, ttl: { ttlDays: 30 }, now: clock.now, audit: { append: (e) => entries.push(e) } });
    expect(entries).toHaveLength(3);
    const perFile = entries.slice(0, 2);
    expect(new Set(perFile.map((e) => e.path))).toEqual(new Set(keys.map((k) => `sha256:${keyHash(k)}`)));
    for (const e of perFile) {
      expect(e).toMatchObject({ type: 'expire', outcome: 'ok', counts: { bytes: 1, idleDays: 31 } });
      // The store uid is recomputable from the user id with the master key, also after an erasure.
      expect(e.uid).toBeUndefined();
    }
    expect(entries[2]).toMatchObject({
      type: 'expire',
      outcome: 'ok',
      counts: { scanned: 2, expired: 2, kept: 0, errors: 0 },
    });
    const all = JSON.stringify(entries);
    expect(all).not.toContain('secret');
    expect(all).not.toContain('alice');
    // A dry run writes nothing.
    const dryEntries: AuditEntry[] = [];
    await sweep({
      store,
      ttl: { ttlDays: 30 },
      now: clock.now,
      dryRun: true,
      audit: { append: (e) => dryEntries.push(e) },
    });
    expect(dryEntries).toEqual([]);
  });

  it("sweeps a file store by its files' times", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'memvault-sweep-'));
    try {
      const clock = new ManualClock();
      const store = await FileStore.open(dir, { now: clock.now, durable: false });
      const expiry = expiryFor(store, clock);
      const files = await filesOf(store, expiry, 'alice');
      await files.write('/memories/old.md', encode('old'));
      clock.advanceDays(15);
      await files.write('/memories/new.md', encode('new'));
      clock.advanceDays(16);
      const summary = await sweep({ store, ttl: { ttlDays: 30 }, now: clock.now });
      expect(summary).toMatchObject({ scanned: 2, expired: 1, kept: 1 });
      expect(await files.read('/memories/new.md')).not.toBeNull();
      await store.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
