/**
 * The sweep across users, checkpoints and dry runs, with history retention on: a batch of one
 * user's expired files settled among the next user's keys leaves that user's history alone; a
 * checkpoint comes after the deletions of every key before it; a dry run counts what a real run
 * drops; a sweep of the history only still stops when asked.
 */
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../kit/clock.js';
import { MemoryStore } from '../../src/store/memory.js';
import { sweep } from '../../src/expiry/sweep.js';
import { versionKeyOf } from '../../src/store/layout.js';

const body = (s: string): Uint8Array => new TextEncoder().encode(s);

async function scenario(withIdleUserBefore: boolean): Promise<{ kept: boolean; versionsDropped?: number }> {
  const clock = new ManualClock();
  const store = new MemoryStore(clock.now);
  if (withIdleUserBefore) await store.put('u/a/f/old.md', body('idle file of user a, no history'));
  clock.advanceDays(40);
  const liveFile = 'u/b/f/live.md';
  const liveVersion = versionKeyOf('b', liveFile, 1);
  await store.put(liveVersion, body('an earlier version of live.md'));
  clock.advanceMs(2 * 60 * 60 * 1000); // the version is now past the 1h grace
  await store.put(liveFile, body('live file of user b, edited since')); // far inside the 30-day TTL
  clock.advanceMs(60_000);
  const summary = await sweep({
    store,
    ttl: { ttlDays: 30 },
    history: { retentionDays: 365, maxVersions: 10 },
    now: clock.now,
  });
  return { kept: (await store.head(liveVersion)) !== null, versionsDropped: summary.versionsDropped };
}

describe("a batch of an earlier user's expired files, settled at the next user's versions", () => {
  it('control: alone, user b keeps the version of a live file', async () => {
    expect(await scenario(false)).toEqual({ kept: true, versionsDropped: 0 });
  });

  it('with an idle user sorted before, user b still keeps the version of a live file', async () => {
    expect(await scenario(true)).toEqual({ kept: true, versionsDropped: 0 });
  });
});

describe("the newest version of a live file, after an earlier user's expired batch", () => {
  it('is kept (the freshness check needs it)', async () => {
    const clock = new ManualClock();
    const store = new MemoryStore(clock.now);
    await store.put('u/a/f/old.md', body('idle file of user a, no history'));
    clock.advanceDays(40);
    const liveFile = 'u/b/f/live.md';
    const current = versionKeyOf('b', liveFile, 1);
    await store.put(liveFile, body('live file of user b'));
    await store.put(current, body('its current version record'));
    clock.advanceMs(2 * 60 * 60 * 1000);
    await store.put('u/a/p/settings', body('{}')); // any recent write the listing shows first
    await sweep({ store, ttl: { ttlDays: 30 }, history: { retentionDays: 365, maxVersions: 10 }, now: clock.now });
    expect(await store.head(liveFile)).not.toBeNull();
    expect(await store.head(current)).not.toBeNull();
  });
});

describe('checkpoints and the versions to drop', () => {
  it('a checkpoint past a version key comes after that version is deleted', async () => {
    const clock = new ManualClock();
    const store = new MemoryStore(clock.now);
    const file = 'u/a/f/notes.md';
    await store.put(file, body('current'));
    const versions = [3, 2, 1].map((seq) => versionKeyOf('a', file, seq));
    for (const key of versions) await store.put(key, body(key));
    await store.put('u/b/f/one.md', body('b1'));
    await store.put('u/b/f/two.md', body('b2'));
    clock.advanceMs(60_000);

    const atCheckpoint: { key: string; excessStillThere: number }[] = [];
    await sweep({
      store,
      ttl: { ttlDays: 30 },
      history: { retentionDays: 365, maxVersions: 1 },
      now: clock.now,
      checkpointEvery: 1,
      onCheckpoint: async (key) => {
        let there = 0;
        for (const v of versions.slice(1)) if (await store.head(v)) there += 1;
        atCheckpoint.push({ key, excessStillThere: there });
      },
    });
    // Sanity: by the end the two versions beyond maxVersions are gone.
    expect(await store.head(versions[1]!)).toBeNull();
    const pastVersions = atCheckpoint.filter((c) => c.key > versions[2]!);
    expect(pastVersions.length).toBeGreaterThan(0);
    for (const c of pastVersions) expect(c).toEqual({ key: c.key, excessStillThere: 0 });
  });
});

describe('a dry run', () => {
  it('reports the same versionsDropped as the real run', async () => {
    const clock = new ManualClock();
    const store = new MemoryStore(clock.now);
    const file = 'u/a/f/idle.md';
    await store.put(file, body('idle'));
    await store.put(versionKeyOf('a', file, 1), body('its version record'));
    clock.advanceDays(40);
    const options = { store, ttl: { ttlDays: 30 }, history: { retentionDays: 365, maxVersions: 10 }, now: clock.now };
    const dry = await sweep({ ...options, dryRun: true });
    const real = await sweep(options);
    expect(real.expired).toBe(1);
    expect(real.versionsDropped).toBe(1);
    expect(dry.expired).toBe(real.expired);
    expect(dry.versionsDropped).toBe(real.versionsDropped);
  });
});

describe('a sweep of the history only', () => {
  it('stops after the first object when shouldStop says so', async () => {
    const clock = new ManualClock();
    const store = new MemoryStore(clock.now);
    for (let i = 0; i < 50; i += 1) await store.put(`u/a/f/file-${String(i).padStart(3, '0')}.md`, new Uint8Array([1]));
    let asked = 0;
    const checkpoints: string[] = [];
    const summary = await sweep({
      store,
      history: { retentionDays: 30, maxVersions: 5 },
      now: clock.now,
      shouldStop: () => {
        asked += 1;
        return true;
      },
      onCheckpoint: (key) => void checkpoints.push(key),
    });
    expect(asked).toBeGreaterThan(0);
    expect(summary.complete).toBe(false);
    expect(checkpoints).toEqual(['u/a/f/file-000.md']);
  });
});
