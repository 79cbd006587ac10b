/**
 * The vault side of idle expiry with a controlled clock: touch on read (at most once per interval,
 * counted as PUT requests), expired files are absent, TTL-class tags and markers.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { TTL_CLASS_TAG_KEY } from '../../src/expiry/config.js';
import { FileStore } from '../../src/store/file.js';
import { MemoryStore } from '../../src/store/memory.js';
import { listAll, PreconditionFailedError } from '../../src/store/port.js';
import { ManualClock, counted, expiryFor, filesOf } from './helpers.js';
import { expirySetup } from '../kit/expiry.js';
import { decode, encode } from '../kit/text.js';

const F = '/memories/notes.md';

describe('touch on read', () => {
  it('writes a file back in place when its last touch is a day old, and then not again for a day', async () => {
    const { clock, store, files } = await expirySetup();
    await files.write(F, encode('hello'));
    const key = (await listAll(store, 'u/').next()).value!.key;

    // Within the first day: reads never copy.
    for (let i = 0; i < 23; i++) {
      clock.advanceMs(60 * 60 * 1000);
      const { requests } = await counted(() => files.read(F));
      expect(requests).toEqual({ GET: 1 });
    }
    clock.advanceMs(60 * 60 * 1000); // exactly one day after the write
    const first = await counted(() => files.read(F));
    expect(first.requests).toEqual({ GET: 1, PUT: 1 });
    expect((await store.head(key))!.lastModified).toEqual(clock.now());
    expect(decode(first.result!.data)).toBe('hello');

    // 48 more reads over the next 24 hours: no second touch until a full interval has passed.
    let touches = 0;
    for (let i = 0; i < 48; i++) {
      clock.advanceMs(30 * 60 * 1000);
      const { requests } = await counted(() => files.read(F));
      touches += requests['PUT'] ?? 0;
    }
    expect(touches).toBe(1); // the read at exactly +24 h
  });

  it('concurrent reads of a stale file in one process share one touch', async () => {
    const { clock, files } = await expirySetup();
    await files.write(F, encode('hello'));
    clock.advanceDays(2);
    const { requests } = await counted(() => Promise.all(Array.from({ length: 10 }, () => files.read(F))));
    expect(requests['PUT']).toBe(1);
    expect(requests['GET']).toBe(10);
  });

  it('keeps the TTL-class tag across the touch (memory and file adapters)', async () => {
    const { clock, store, files } = await expirySetup({ classes: { pro: 365 }, classOf: () => 'pro' });
    await files.write(F, encode('hello'));
    const key = store.keys().find((k) => k.includes('/f/'))!;
    expect(store.tagsOf(key)).toEqual({ [TTL_CLASS_TAG_KEY]: 'pro' });
    clock.advanceDays(3);
    await files.read(F);
    expect(store.tagsOf(key)).toEqual({ [TTL_CLASS_TAG_KEY]: 'pro' });
  });

  it("the file adapter moves the file's time on a touch (the write in place rewrites its header)", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'memvault-expiry-'));
    try {
      const clock = new ManualClock();
      const store = await FileStore.open(dir, { now: clock.now, durable: false });
      const expiry = expiryFor(store, clock);
      const files = await filesOf(store, expiry, 'alice');
      await files.write(F, encode('hello'));
      const written = (await files.stat(F))!.lastModified;
      clock.advanceDays(5);
      const { requests } = await counted(() => files.read(F));
      expect(requests['PUT']).toBe(1);
      const touched = (await files.stat(F))!.lastModified;
      expect(touched.getTime() - written.getTime()).toBe(5 * 24 * 3600 * 1000);
      expect(await store.tagsOf((await listAll(store, 'u/').next()).value!.key)).toEqual({
        [TTL_CLASS_TAG_KEY]: 'default',
      });
      await store.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a failing touch does not fail the read', async () => {
    const clock = new ManualClock();
    const store = new MemoryStore(clock.now);
    const errors: unknown[] = [];
    const expiry = expiryFor(store, clock, { onTouchError: (e) => errors.push(e) });
    const files = await filesOf(store, expiry, 'alice');
    await files.write(F, encode('hello'));
    clock.advanceDays(2);
    store.put = () => Promise.reject(new Error('put refused'));
    expect(decode((await files.read(F))!.data)).toBe('hello');
    expect(errors).toHaveLength(1);
  });
});

describe('expired files are absent to the vault', () => {
  it('read, stat, listFiles and isDirectory skip a file idle past its TTL, and the read does not touch it', async () => {
    const { clock, store, files } = await expirySetup();
    await files.write('/memories/dir/old.md', encode('old'));
    clock.advanceDays(20);
    await files.write('/memories/young.md', encode('young'));
    clock.advanceDays(10); // old.md: exactly 30 idle days; young.md: 10

    const { result, requests } = await counted(() => files.read('/memories/dir/old.md'));
    expect(result).toBeNull();
    expect(requests['PUT']).toBeUndefined();
    expect(await files.stat('/memories/dir/old.md')).toBeNull();
    expect(await files.isDirectory('/memories/dir')).toBe(false);
    const listed: string[] = [];
    for await (const f of files.listFiles('/memories')) listed.push(f.path);
    expect(listed).toEqual(['/memories/young.md']);
    // Still stored (the sweeper deletes it), but never served again.
    expect(store.keys().filter((k) => k.includes('/f/'))).toHaveLength(2);
  });

  it('isDirectory finds a live file behind expired ones', async () => {
    const { clock, files } = await expirySetup();
    await files.write('/memories/d/a.md', encode('a'));
    clock.advanceDays(29);
    await files.write('/memories/d/b.md', encode('b'));
    clock.advanceDays(2);
    expect(await files.isDirectory('/memories/d')).toBe(true);
  });

  it('create-only replaces an expired, not yet swept file but never a live one', async () => {
    const { clock, files } = await expirySetup();
    await files.write(F, encode('old'));
    await expect(files.write(F, encode('x'), { ifNoneMatch: true })).rejects.toBeInstanceOf(PreconditionFailedError);
    clock.advanceDays(31);
    await files.write(F, encode('new'), { ifNoneMatch: true });
    expect(decode((await files.read(F))!.data)).toBe('new');
  });
});

describe('TTL classes', () => {
  it('tags every write with the class, records a non-default class once per user, and TTLs follow the class', async () => {
    const clock = new ManualClock();
    const store = new MemoryStore(clock.now);
    const tiers: Record<string, string> = { alice: 'pro' };
    const expiry = expiryFor(store, clock, { classes: { pro: 365 }, classOf: (u) => tiers[u] });
    const alice = await filesOf(store, expiry, 'alice');
    const bob = await filesOf(store, expiry, 'bob');
    const first = await counted(() => alice.write(F, encode('a')));
    // marker lookup, marker, file, and the created name's check (src/vault/names.ts: one LIST below it)
    expect(first.requests).toEqual({ LIST: 2, PUT: 2 });
    const second = await counted(() => alice.write('/memories/b.md', encode('b')));
    expect(second.requests).toEqual({ PUT: 1, LIST: 1 });
    await bob.write(F, encode('b'));
    const markers = store.keys().filter((k) => k.includes('/c/'));
    expect(markers).toHaveLength(1);
    expect(markers[0]).toMatch(/^u\/[^/]+\/c\/pro$/);
    const fileTags = store
      .keys()
      .filter((k) => k.includes('/f/'))
      .map((k) => store.tagsOf(k)![TTL_CLASS_TAG_KEY])
      .sort();
    expect(fileTags).toEqual(['default', 'pro', 'pro']);

    clock.advanceDays(40);
    expect(await alice.read(F)).not.toBeNull(); // pro: 365 days
    expect(await bob.read(F)).toBeNull(); // default: 30 days

    // Downgrade: a new service (another process) sees alice as default; its first write drops the marker.
    tiers['alice'] = 'default';
    const later = expiryFor(store, clock, { classes: { pro: 365 }, classOf: (u) => tiers[u] });
    await (await filesOf(store, later, 'alice')).write('/memories/c.md', encode('c'));
    expect(store.keys().filter((k) => k.includes('/c/'))).toEqual([]);
  });

  it('refuses a configuration where reading once per interval could not keep a file', () => {
    const clock = new ManualClock();
    expect(() =>
      expiryFor(new MemoryStore(clock.now), clock, { ttlDays: 1, touchIntervalMs: 24 * 3600 * 1000 }),
    ).toThrow(/touchIntervalMs/);
    expect(() => expiryFor(new MemoryStore(clock.now), clock, { ttlDays: 0 })).toThrow(/ttlDays/);
    expect(() => expiryFor(new MemoryStore(clock.now), clock, { classes: { 'a b': 3 } })).toThrow(/class name/);
  });
});
