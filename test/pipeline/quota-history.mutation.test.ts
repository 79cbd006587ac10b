/**
 * The quota's history allowance (docs/versions.md, "Quotas"), on the memory store: what a user
 * notices when their file history fills up. Written for the quota's mutation target
 * (scripts/mutation/targets.mjs): the exact boundary, the pruning of the oldest versions, the
 * refusal and its message, renames never refused, concurrent writes reserved, history off untouched.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { createVault, type Vault } from '../../src/index.js';
import { MemoryStore } from '../../src/store/memory.js';
import { VERSION_MARK } from '../../src/store/layout.js';

const masterKey = randomBytes(32).toString('base64');
const opened: Vault[] = [];

async function open(
  quota: { maxUserBytes: number; maxHistoryBytes?: number; maxHistoryVersions?: number; maxUserFiles?: number },
  history = true,
): Promise<{ vault: Vault; store: MemoryStore }> {
  const store = new MemoryStore();
  const vault = await createVault({ store, encryption: { masterKey }, history, quota });
  opened.push(vault);
  return { vault, store };
}

const body = (c: string, bytes = 600): string => `${c.repeat(bytes - 1)}\n`;
const versionKeys = (store: MemoryStore): string[] => store.keys().filter((k) => k.split('/')[2] === 'v');
const refusal = (command: string, newBytes: number, used: number, limit: number, counted = newBytes): string =>
  `Error: Quota exceeded (file history per user): this ${command} would keep a version of ${newBytes.toLocaleString('en-US')} bytes` +
  (counted > newBytes ? ` (counted as ${counted}: every kept version counts at least that)` : '') +
  `, but the newest versions of the user's files already hold ${used.toLocaleString('en-US')} of the ${limit.toLocaleString('en-US')} bytes the history may keep, ` +
  'and none of them may be dropped. Nothing was written. Delete files you no longer need, then try again.';
const countRefusal = (command: string, versions: number, limit: number): string =>
  `Error: Quota exceeded (file history per user): this ${command} would keep one more version, but the user's history already keeps ${versions} ` +
  `of the ${limit} versions it may hold, and none of them may be dropped: each is the newest version of a file, or the record that a ` +
  'deleted file ended. Nothing was written. Edit or reuse the files you have instead of creating new ones; room comes back as old versions ' +
  "pass the history's retention.";

afterAll(async () => {
  for (const vault of opened) await vault.close();
});

describe('quota: the history allowance', () => {
  it('a write that fills the allowance exactly is kept whole; one byte more drops the oldest version first', async () => {
    const { vault, store } = await open({ maxUserBytes: 10_000, maxHistoryBytes: 1800 });
    for (const c of ['A', 'B', 'C'])
      expect(await vault.run('u', { command: 'create', path: '/memories/a.md', file_text: body(c) })).toMatchObject({
        isError: false,
      });
    // 1,800 of 1,800: nothing dropped.
    expect(versionKeys(store)).toHaveLength(3);
    // 601 more: the oldest go until it fits (down to 1,199, the room it needs: A and B), never C, the newest.
    expect(
      await vault.run('u', { command: 'create', path: '/memories/a.md', file_text: body('D', 601) }),
    ).toMatchObject({ isError: false });
    const versions = (await vault.history('u', '/memories/a.md')).versions;
    expect(versions.map((v) => v.size)).toEqual([601, 600]);
  });

  it('a write past the allowance prunes to three quarters of it when that leaves room, and not before it is past; a small version counts the floor', async () => {
    const { vault } = await open({ maxUserBytes: 10_000, maxHistoryBytes: 2100 });
    // Within the allowance: nothing is dropped (3 x 520 kept, + 200 counted as 512 = 2,072 of 2,100).
    for (const c of ['A', 'B', 'C'])
      expect(
        await vault.run('r', { command: 'create', path: '/memories/a.md', file_text: body(c, 520) }),
      ).toMatchObject({ isError: false });
    expect(
      await vault.run('r', { command: 'create', path: '/memories/a.md', file_text: body('D', 200) }),
    ).toMatchObject({ isError: false });
    expect((await vault.history('r', '/memories/a.md')).versions.map((v) => v.size)).toEqual([200, 520, 520, 520]);
    // A fifth of 29 bytes counts 512 too: 2,584 would pass 2,100, so the oldest go (down to 1,575 at most, the low-water mark: A goes).
    expect(await vault.run('r', { command: 'create', path: '/memories/a.md', file_text: body('E', 29) })).toMatchObject(
      { isError: false },
    );
    expect((await vault.history('r', '/memories/a.md')).versions.map((v) => v.size)).toEqual([29, 200, 520, 520]);

    // Nine versions of 600 (5,400 of 5,400), then one of 1 byte (512): down to 4,050 or less (six left), not just to 4,888.
    const { vault: nine } = await open({ maxUserBytes: 10_000, maxHistoryBytes: 5400 });
    for (let i = 0; i < 9; i++)
      expect(
        await nine.run('r2', { command: 'create', path: '/memories/b.md', file_text: body(String(i)) }),
      ).toMatchObject({ isError: false });
    expect(await nine.run('r2', { command: 'create', path: '/memories/b.md', file_text: body('Z', 1) })).toMatchObject({
      isError: false,
    });
    const after = (await nine.history('r2', '/memories')).versions;
    expect(after.map((v) => v.size)).toEqual([1, 600, 600, 600, 600, 600, 600]);
  });

  it('the newest versions alone over the allowance: refused before anything is written, with the rule and the figures', async () => {
    const { vault, store } = await open({ maxUserBytes: 10_000, maxHistoryBytes: 1200 });
    expect(await vault.run('t', { command: 'create', path: '/memories/c.md', file_text: body('G') })).toMatchObject({
      isError: false,
    });
    const before = store.keys();
    const refused = await vault.run('t', { command: 'create', path: '/memories/d.md', file_text: body('H', 601) });
    expect(refused).toMatchObject({
      isError: true,
      code: 'QUOTA_EXCEEDED',
      content: refusal('create', 601, 600, 1200),
    });
    expect(store.keys()).toEqual(before);
    // Exactly at the allowance: allowed.
    expect(await vault.run('t', { command: 'create', path: '/memories/d.md', file_text: body('H') })).toMatchObject({
      isError: false,
    });
    // An edit keeps a version too, and is refused the same way, in its own words.
    const edit = await vault.run('t', {
      command: 'insert',
      path: '/memories/d.md',
      insert_line: 0,
      insert_text: 'more',
    });
    expect(edit).toMatchObject({ isError: true, code: 'QUOTA_EXCEEDED' });
    expect(edit.content).toBe(refusal('insert', 605, 1200, 1200));
    // An empty file is a kept version too: it counts the floor.
    const full = store.keys();
    const empty = await vault.run('t', { command: 'create', path: '/memories/e.md', file_text: '' });
    expect(empty).toMatchObject({
      isError: true,
      code: 'QUOTA_EXCEEDED',
      content: refusal('create', 0, 1200, 1200, 512),
    });
    expect(store.keys()).toEqual(full);
    // A rename keeps two versions the history cannot drop (the copy's, the source's tombstone): refused without room, nothing changed.
    const renamed = await vault.run('t', { command: 'rename', old_path: '/memories/c.md', new_path: '/memories/e.md' });
    expect(renamed).toMatchObject({
      isError: true,
      code: 'QUOTA_EXCEEDED',
      content:
        'Error: Quota exceeded (file history per user): this rename would keep two more versions (counted as 1,024 bytes), but the newest versions of the ' +
        "user's files already hold 1,200 of the 1,200 bytes the history may keep, and none of them may be dropped. Nothing was changed. " +
        "Edit the file where it is instead of moving it; room comes back as old versions pass the history's retention.",
    });
    expect(store.keys()).toEqual(full);
    // A delete is never refused.
    expect(await vault.run('t', { command: 'delete', path: '/memories/c.md' })).toMatchObject({ isError: false });
  });

  it('two writes at once are reserved against the allowance together: exactly one of them fits', async () => {
    const { vault } = await open({ maxUserBytes: 10_000, maxHistoryBytes: 1812 });
    expect(await vault.run('p', { command: 'create', path: '/memories/c.md', file_text: body('G') })).toMatchObject({
      isError: false,
    });
    const results = await Promise.all(
      ['/memories/x.md', '/memories/y.md'].map((path) =>
        vault.run('p', { command: 'create', path, file_text: body('X', 700) }),
      ),
    );
    expect(results.filter((r) => r.isError).map((r) => r.code)).toEqual(['QUOTA_EXCEEDED']);
    // The refused one counted the other's reservation: 600 kept + 700 reserved or written.
    expect(results.find((r) => r.isError)!.content).toBe(refusal('create', 700, 1300, 1812));
    // Once the refused one is released, what is counted is exactly what is kept: 1,300 + 512 fits exactly.
    expect(await vault.run('p', { command: 'create', path: '/memories/z.md', file_text: 'z\n' })).toMatchObject({
      isError: false,
    });
    const again = await vault.run('p', { command: 'create', path: '/memories/w.md', file_text: 'w\n' });
    expect(again).toMatchObject({
      isError: true,
      code: 'QUOTA_EXCEEDED',
      content: refusal('create', 2, 1812, 1812, 512),
    });
  });

  it('the history holds a bounded number of versions: past it the oldest go; the newest alone filling it is refused in its own words; a delete prunes what its tombstone ended', async () => {
    const { vault, store } = await open({ maxUserBytes: 100_000, maxHistoryBytes: 1_000_000, maxHistoryVersions: 4 });
    for (const c of ['A', 'B', 'C', 'D'])
      expect(await vault.run('n', { command: 'create', path: '/memories/a.md', file_text: body(c, 2) })).toMatchObject({
        isError: false,
      });
    expect(versionKeys(store)).toHaveLength(4); // exactly the count: nothing dropped
    // A fifth: down to three (the low-water mark), then the new one.
    expect(await vault.run('n', { command: 'create', path: '/memories/a.md', file_text: body('E', 2) })).toMatchObject({
      isError: false,
    });
    expect((await vault.history('n', '/memories/a.md')).versions.map((v) => v.size)).toHaveLength(4);
    for (const path of ['/memories/b.md', '/memories/c.md', '/memories/d.md'])
      expect(await vault.run('n', { command: 'create', path, file_text: 'x\n' })).toMatchObject({ isError: false });
    expect(versionKeys(store)).toHaveLength(4); // each file's newest, no more
    const before = store.keys();
    const refused = await vault.run('n', { command: 'create', path: '/memories/e.md', file_text: 'e\n' });
    expect(refused).toMatchObject({ isError: true, code: 'QUOTA_EXCEEDED', content: countRefusal('create', 4, 4) });
    expect(store.keys()).toEqual(before);
    // A rename needs room for two: refused by the count in its words.
    const renamed = await vault.run('n', { command: 'rename', old_path: '/memories/b.md', new_path: '/memories/f.md' });
    expect(renamed).toMatchObject({
      isError: true,
      code: 'QUOTA_EXCEEDED',
      content: countRefusal('rename', 4, 4).replace('one more version', '2 more versions'),
    });
    expect(store.keys()).toEqual(before);
    // A delete's tombstone takes the place of what it ended: still four.
    expect(await vault.run('n', { command: 'delete', path: '/memories/a.md' })).toMatchObject({ isError: false });
    expect(versionKeys(store)).toHaveLength(4);
    expect((await vault.history('n', '/memories/a.md')).versions.map((v) => v.end)).toEqual(['deleted']);
  });

  it('with history off the allowance is never checked, however small', async () => {
    const { vault, store } = await open({ maxUserBytes: 10_000, maxHistoryBytes: 1, maxHistoryVersions: 1 }, false);
    for (const c of ['A', 'B', 'C'])
      expect(await vault.run('o', { command: 'create', path: '/memories/a.md', file_text: body(c) })).toMatchObject({
        isError: false,
      });
    expect(await vault.run('o', { command: 'delete', path: '/memories/a.md' })).toMatchObject({ isError: false });
    // A delete counts no tombstone either: the next create is not measured against the history.
    expect(await vault.run('o', { command: 'create', path: '/memories/b.md', file_text: body('D') })).toMatchObject({
      isError: false,
    });
    expect(versionKeys(store)).toEqual([]);
  });

  it('by default history may keep four times what the files can count, and 20 versions per file', async () => {
    const { vault } = await open({ maxUserBytes: 1_000, maxUserFiles: 3 });
    for (const c of ['A', 'B', 'C'])
      expect(
        await vault.run('d', { command: 'create', path: `/memories/${c}.md`, file_text: body(c, 300) }),
      ).toMatchObject({ isError: false });
    // A fourth file of 300 would pass the byte quota (1,200 > 1,000) first.
    expect(
      await vault.run('d', { command: 'create', path: '/memories/D.md', file_text: body('D', 300) }),
    ).toMatchObject({
      isError: true,
      code: 'QUOTA_EXCEEDED',
    });
    // Overwrites keep versions (512 counted each) up to 4 x (1,000 + 3 x 512) = 10,144, then the oldest go; never refused.
    for (let i = 0; i < 30; i++)
      expect(
        await vault.run('d', { command: 'create', path: '/memories/A.md', file_text: body(String(i % 10), 300) }),
      ).toMatchObject({ isError: false });
    const kept = (await vault.history('d', '/memories')).versions.length;
    expect(kept * 512).toBeLessThanOrEqual(10_144);
    expect(kept).toBeGreaterThan(Math.floor((10_144 * 0.75) / 512) - 1);
  });
});

describe('quota: when the history is listed', () => {
  /**
   * Counts the LISTs of the user's history (`u/{uid}/v/`) apart from the rest; not one file's
   * (`u/{uid}/v/{names}/@`: a read's freshness or a create's look at its newest number).
   */
  class CountingLists extends MemoryStore {
    historyLists = 0;
    override async list(prefix: string, options?: Parameters<MemoryStore['list']>[1]) {
      if (prefix.split('/')[2] === 'v' && !prefix.endsWith(`/${VERSION_MARK}`)) this.historyLists += 1;
      return super.list(prefix, options);
    }
  }

  async function counted(maxHistoryBytes: number, bytes = 1000, maxHistoryVersions = 1000) {
    const store = new CountingLists();
    const vault = await createVault({
      store,
      encryption: { masterKey },
      quota: { maxUserBytes: 1_000_000, maxHistoryBytes, maxHistoryVersions, refreshEveryWrites: 1 },
    });
    opened.push(vault);
    // Each write after the first lists the files again (refreshEveryWrites: 1): listing n is write n's.
    const listsAfter = async (writes: number) => {
      store.historyLists = 0;
      for (let i = 0; i < writes; i++)
        expect(
          (await vault.run('u', { command: 'create', path: `/memories/f${i}.md`, file_text: body('x', bytes) }))
            .isError,
        ).toBe(false);
      return store.historyLists;
    };
    return { listsAfter };
  }

  it('with the first listing of the files and every tenth after it, while under half the allowance', async () => {
    const { listsAfter } = await counted(1_000_000);
    expect(await listsAfter(10)).toBe(1); // listing 1
    expect(await listsAfter(1)).toBe(1); // listing 11
    expect(await listsAfter(9)).toBe(0);
    expect(await listsAfter(1)).toBe(1); // listing 21
  });

  it('for a large history, once per 200 versions it held at its last listing (never more often than every tenth)', async () => {
    const store = new CountingLists();
    const vault = await createVault({
      store,
      encryption: { masterKey },
      quota: { maxUserBytes: 100_000_000, maxHistoryBytes: 100_000_000, refreshEveryWrites: 1 },
    });
    opened.push(vault);
    // 2,401 versions of one file (written with history on, through the host's handle: no listing of the quota's).
    const files = await vault.files('big');
    for (let i = 0; i < 2_401; i++) await files.write('/memories/h.md', new TextEncoder().encode(`v${i}\n`));
    const listsAfter = async (writes: number) => {
      store.historyLists = 0;
      for (let i = 0; i < writes; i++)
        expect(
          (await vault.run('big', { command: 'create', path: `/memories/g${i}.md`, file_text: 'x\n' })).isError,
        ).toBe(false);
      return store.historyLists;
    };
    // Listing 1 finds 2,401 versions (one LIST page per 1,000: 3 pages): the next comes with listing 1 + 13.
    expect(await listsAfter(1)).toBe(3);
    expect(await listsAfter(12)).toBe(0);
    expect(await listsAfter(1)).toBe(3); // listing 14 (2,414 versions now: every 13th again)
    expect(await listsAfter(12)).toBe(0);
    expect(await listsAfter(1)).toBe(3);
  }, 60_000);

  it('with every listing of the files once past half the allowance, of bytes or of versions', async () => {
    // 1,000 bytes a version: write n's listing sees the n - 1 versions before it.
    const { listsAfter } = await counted(10_000);
    // Listing 1 (the first), then writes 6 to 9, which each see 5,000 (half) or more of 10,000 kept.
    expect(await listsAfter(5)).toBe(1);
    expect(await listsAfter(1)).toBe(1); // exactly half
    expect(await listsAfter(3)).toBe(3);
    // Just under half: write 6 sees 5,000 of 10,020 kept (half is 5,010), so no listing past the first.
    const { listsAfter: under } = await counted(10_020);
    expect(await under(6)).toBe(1);
    // Small versions (512 counted each) under half the bytes, but half the versions: 5 of 10.
    const { listsAfter: count } = await counted(1_000_000, 2, 10);
    expect(await count(5)).toBe(1);
    expect(await count(1)).toBe(1); // write 6 sees 5 versions: exactly half
  });
});
