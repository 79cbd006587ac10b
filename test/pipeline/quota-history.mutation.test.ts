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

async function open(quota: { maxUserBytes: number; maxHistoryBytes?: number }, history = true): Promise<{ vault: Vault; store: MemoryStore }> {
  const store = new MemoryStore();
  const vault = await createVault({ store, encryption: { masterKey }, history, quota });
  opened.push(vault);
  return { vault, store };
}

const body = (c: string, bytes = 300): string => `${c.repeat(bytes - 1)}\n`;
const versionKeys = (store: MemoryStore): string[] => store.keys().filter((k) => k.split('/')[2] === 'v');
const refusal = (command: string, newBytes: number, used: number, limit: number): string =>
  `Error: Quota exceeded (file history per user): this ${command} would keep a version of ${newBytes} bytes, but the newest versions of the ` +
  `user's files already hold ${used} of the ${limit} bytes the history may keep, and none of them may be dropped. Nothing was written. ` +
  'Delete files you no longer need, then try again.';

afterAll(async () => {
  for (const vault of opened) await vault.close();
});

describe('quota: the history allowance', () => {
  it('a write that fills the allowance exactly is kept whole; one byte more drops the oldest version first', async () => {
    const { vault, store } = await open({ maxUserBytes: 10_000, maxHistoryBytes: 900 });
    for (const c of ['A', 'B', 'C'])
      expect(await vault.run('u', { command: 'create', path: '/memories/a.md', file_text: body(c) })).toMatchObject({ isError: false });
    // 900 of 900: nothing dropped.
    expect(versionKeys(store)).toHaveLength(3);
    // 301 more: the oldest go until it fits (down to 599, the room it needs: A and B), never C, the newest.
    expect(await vault.run('u', { command: 'create', path: '/memories/a.md', file_text: body('D', 301) })).toMatchObject({ isError: false });
    const versions = (await vault.history('u', '/memories/a.md')).versions;
    expect(versions.map((v) => v.size)).toEqual([301, 300]);
    expect(versions.reduce((n, v) => n + v.size, 0)).toBeLessThanOrEqual(900);
  });

  it('a write past the allowance prunes to three quarters of it when that leaves room, and not before it is past', async () => {
    const { vault } = await open({ maxUserBytes: 10_000, maxHistoryBytes: 900 });
    // Within the allowance: nothing is dropped (750 kept, + 100 = 850 of 900).
    for (const c of ['A', 'B', 'C'])
      expect(await vault.run('r', { command: 'create', path: '/memories/a.md', file_text: body(c, 250) })).toMatchObject({ isError: false });
    expect(await vault.run('r', { command: 'create', path: '/memories/a.md', file_text: body('D', 100) })).toMatchObject({ isError: false });
    expect((await vault.history('r', '/memories/a.md')).versions.map((v) => v.size)).toEqual([100, 250, 250, 250]);
    // Nine versions of 100 (900 of 900), then one of 1 byte: down to 675 or less (six left), not just to 899.
    for (let i = 0; i < 9; i++)
      expect(await vault.run('r2', { command: 'create', path: '/memories/b.md', file_text: body(String(i), 100) })).toMatchObject({ isError: false });
    const before = (await vault.history('r2', '/memories')).versions.reduce((n, v) => n + v.size, 0);
    expect(before).toBeLessThanOrEqual(900);
    expect(await vault.run('r2', { command: 'create', path: '/memories/b.md', file_text: body('Z', 1) })).toMatchObject({ isError: false });
    const after = (await vault.history('r2', '/memories')).versions;
    expect(after.reduce((n, v) => n + v.size, 0)).toBeLessThanOrEqual(675 + 1);
    expect(after.reduce((n, v) => n + v.size, 0)).toBeGreaterThan(575);
    expect(after.filter((v) => v.path === '/memories/b.md')[0]!.size).toBe(1);
  });

  it('the newest versions alone over the allowance: refused before anything is written, with the rule and the figures', async () => {
    const { vault, store } = await open({ maxUserBytes: 10_000, maxHistoryBytes: 500 });
    expect(await vault.run('t', { command: 'create', path: '/memories/c.md', file_text: body('G') })).toMatchObject({ isError: false });
    const before = store.keys();
    const refused = await vault.run('t', { command: 'create', path: '/memories/d.md', file_text: body('H', 201) });
    expect(refused).toMatchObject({ isError: true, code: 'QUOTA_EXCEEDED', content: refusal('create', 201, 300, 500) });
    expect(store.keys()).toEqual(before);
    // Exactly at the allowance: allowed.
    expect(await vault.run('t', { command: 'create', path: '/memories/d.md', file_text: body('H', 200) })).toMatchObject({ isError: false });
    // An edit keeps a version too, and is refused the same way, in its own words.
    const edit = await vault.run('t', { command: 'insert', path: '/memories/d.md', insert_line: 0, insert_text: 'more' });
    expect(edit).toMatchObject({ isError: true, code: 'QUOTA_EXCEEDED' });
    expect(edit.content).toBe(refusal('insert', 205, 500, 500));
    // A rename moves what is counted already: accounted, never refused.
    expect(await vault.run('t', { command: 'rename', old_path: '/memories/c.md', new_path: '/memories/e.md' })).toMatchObject({ isError: false });
    // A delete frees nothing of the history (its versions stay), and is never refused either.
    expect(await vault.run('t', { command: 'delete', path: '/memories/e.md' })).toMatchObject({ isError: false });
  });

  it('two writes at once are reserved against the allowance together: exactly one of them fits', async () => {
    const { vault } = await open({ maxUserBytes: 10_000, maxHistoryBytes: 500 });
    expect(await vault.run('p', { command: 'create', path: '/memories/c.md', file_text: body('G') })).toMatchObject({ isError: false });
    const results = await Promise.all(
      ['/memories/x.md', '/memories/y.md'].map((path) => vault.run('p', { command: 'create', path, file_text: body('X', 150) })),
    );
    expect(results.filter((r) => r.isError).map((r) => r.code)).toEqual(['QUOTA_EXCEEDED']);
    // The refused one counted the other's reservation: 300 kept + 150 reserved or written.
    expect(results.find((r) => r.isError)!.content).toBe(refusal('create', 150, 450, 500));
    // Once the refused one is released, what is counted is exactly what is kept: 450 of 500.
    expect(await vault.run('p', { command: 'create', path: '/memories/z.md', file_text: body('Z', 50) })).toMatchObject({ isError: false });
    const again = await vault.run('p', { command: 'create', path: '/memories/w.md', file_text: body('W', 2) });
    expect(again).toMatchObject({ isError: true, code: 'QUOTA_EXCEEDED', content: refusal('create', 2, 500, 500) });
  });

  it('with history off the allowance is never checked, however small', async () => {
    const { vault, store } = await open({ maxUserBytes: 10_000, maxHistoryBytes: 1 }, false);
    for (const c of ['A', 'B', 'C'])
      expect(await vault.run('o', { command: 'create', path: '/memories/a.md', file_text: body(c) })).toMatchObject({ isError: false });
    expect(versionKeys(store)).toEqual([]);
  });

  it('by default history may keep four times the byte quota', async () => {
    const { vault } = await open({ maxUserBytes: 1_000 });
    for (const c of ['A', 'B', 'C'])
      expect(await vault.run('d', { command: 'create', path: `/memories/${c}.md`, file_text: body(c) })).toMatchObject({ isError: false });
    // 900 of 4,000 kept; a fourth file of 300 would pass the byte quota (1,200 > 1,000) first.
    expect(await vault.run('d', { command: 'create', path: '/memories/D.md', file_text: body('D') })).toMatchObject({ isError: true, code: 'QUOTA_EXCEEDED' });
    // Overwrites keep versions: 3 x 300 current + versions up to 4,000, then the oldest go; never refused.
    for (let i = 0; i < 12; i++)
      expect(await vault.run('d', { command: 'create', path: '/memories/A.md', file_text: body(String(i % 10)) })).toMatchObject({ isError: false });
    const kept = (await vault.history('d', '/memories')).versions.reduce((n, v) => n + v.size, 0);
    expect(kept).toBeLessThanOrEqual(4_000);
    expect(kept).toBeGreaterThan(1_000);
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

  async function counted(maxHistoryBytes: number) {
    const store = new CountingLists();
    const vault = await createVault({ store, encryption: { masterKey }, quota: { maxUserBytes: 1_000_000, maxHistoryBytes, refreshEveryWrites: 1 } });
    opened.push(vault);
    // Each write after the first lists the files again (refreshEveryWrites: 1): listing n is write n's.
    const listsAfter = async (writes: number) => {
      store.historyLists = 0;
      for (let i = 0; i < writes; i++)
        expect((await vault.run('u', { command: 'create', path: `/memories/f${i}.md`, file_text: body('x', 100) })).isError).toBe(false);
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
        expect((await vault.run('big', { command: 'create', path: `/memories/g${i}.md`, file_text: 'x\n' })).isError).toBe(false);
      return store.historyLists;
    };
    // Listing 1 finds 2,401 versions (one LIST page per 1,000: 3 pages): the next comes with listing 1 + 13.
    expect(await listsAfter(1)).toBe(3);
    expect(await listsAfter(12)).toBe(0);
    expect(await listsAfter(1)).toBe(3); // listing 14 (2,414 versions now: every 13th again)
    expect(await listsAfter(12)).toBe(0);
    expect(await listsAfter(1)).toBe(3);
  }, 60_000);

  it('with every listing of the files once past half the allowance', async () => {
    // 100 bytes a version: write n's listing sees the n - 1 versions before it.
    const { listsAfter } = await counted(1_000);
    // Listing 1 (the first), then writes 6 to 9, which each see 500 (half) or more of 1,000 kept.
    expect(await listsAfter(5)).toBe(1);
    expect(await listsAfter(1)).toBe(1); // exactly half
    expect(await listsAfter(3)).toBe(3);
    // Just under half: write 6 sees 500 of 1,002 kept (half is 501), so no listing past the first.
    const { listsAfter: under } = await counted(1_002);
    expect(await under(6)).toBe(1);
  });
});
