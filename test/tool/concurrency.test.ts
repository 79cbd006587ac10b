import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createVault, type Vault } from '../../src/index.js';
import { FileStore } from '../../src/store/file.js';
import { FENCE_METADATA } from '../../src/store/fence.js';
import { MemoryStore } from '../../src/store/memory.js';
import { PreconditionFailedError, type ObjectStore, type PutOptions } from '../../src/store/port.js';
import { FaultyStore } from '../faulty-store.js';
import { callTool } from '../helpers.js';
import { StoreWrapper, type StoreOp } from '../kit/stores.js';

const U = 'user-1';

/** How a file is taken out of use: a marker PUT (S3, and the tests' wrappers by default) or the store's conditional delete. */
const fenceKinds: Array<[string, boolean]> = [
  ['a marker', false],
  ['the conditional delete', true],
];

async function text(vault: Vault, path: string): Promise<string | null> {
  const f = await (await vault.files(U)).read(path);
  return f ? Buffer.from(f.data).toString('utf8') : null;
}

describe('concurrent edits', () => {
  it("runs one turn's parallel str_replace and insert calls on one file without losing an edit", async () => {
    const vault = await createVault({ store: new FaultyStore(new MemoryStore(), 3) });
    await vault.run(U, { command: 'create', path: '/memories/f.md', file_text: 'm0\nm1\nm2\nm3\n' });
    const calls = [
      ...[0, 1, 2, 3].map((i) => ({
        command: 'str_replace',
        path: '/memories/f.md',
        old_str: `m${i}`,
        new_str: `edited-${i}`,
      })),
      ...[0, 1, 2, 3].map((i) => ({
        command: 'insert',
        path: '/memories/f.md',
        insert_line: 0,
        insert_text: `inserted-${i}`,
      })),
    ];
    const results = await Promise.all(calls.map((c) => callTool(vault, U, c)));
    expect(results.every((r) => !r.isError)).toBe(true);
    const final = (await text(vault, '/memories/f.md'))!;
    for (let i = 0; i < 4; i++) {
      expect(final).toContain(`edited-${i}`);
      expect(final).toContain(`inserted-${i}`);
    }
    expect(final.split('\n').filter(Boolean)).toHaveLength(8);
  });

  it('loses nothing when two processes (two vaults, separate locks) edit one file', async () => {
    const shared = new MemoryStore();
    const a = await createVault({ store: new FaultyStore(shared, 2) });
    const b = await createVault({ store: new FaultyStore(shared, 2) });
    await a.run(U, { command: 'create', path: '/memories/log.md', file_text: '' });
    const edits = (vault: Vault, tag: string) =>
      Array.from({ length: 40 }, (_, i) =>
        vault.run(U, { command: 'insert', path: '/memories/log.md', insert_line: 0, insert_text: `${tag}-${i}` }),
      );
    const results = await Promise.all([...edits(a, 'a'), ...edits(b, 'b')]);
    const succeeded = results.filter((r) => !r.isError).length;
    const lines = (await text(a, '/memories/log.md'))!.split('\n').filter(Boolean);
    // Every edit that reported success is in the file, and nothing else is.
    expect(lines).toHaveLength(succeeded);
    expect(succeeded).toBe(80);
  });

  it.each(fenceKinds)(
    'keeps an edit made while its directory is being renamed (fenced by %s)',
    async (_kind, deleteExactly) => {
      const store = new FaultyStore(new MemoryStore(), 2, { deleteExactly });
      const vault = await createVault({ store });
      const other = await createVault({ store }); // another process: not serialised by our locks
      for (let i = 0; i < 5; i++)
        await vault.run(U, { command: 'create', path: `/memories/d/f${i}.md`, file_text: `v${i}\n` });
      const [renamed, ...edits] = await Promise.all([
        vault.run(U, { command: 'rename', old_path: '/memories/d', new_path: '/memories/e' }),
        ...[0, 1, 2, 3, 4].map((i) =>
          other.run(U, { command: 'insert', path: `/memories/d/f${i}.md`, insert_line: 1, insert_text: `edit${i}` }),
        ),
      ]);
      expect(renamed!.isError).toBe(false);
      for (let i = 0; i < 5; i++) {
        const moved = await text(vault, `/memories/e/f${i}.md`);
        const left = await text(vault, `/memories/d/f${i}.md`);
        expect(moved).not.toBeNull();
        // An edit that succeeded is in the file, wherever the file ended up.
        if (!edits[i]!.isError) expect(`${moved ?? ''}${left ?? ''}`).toContain(`edit${i}`);
      }
    },
  );
});

describe('lost answers', () => {
  it('does not apply an edit twice when its write landed but the answer was lost (SDK retry then 412)', async () => {
    const inner = new MemoryStore();
    let loseNextAnswer = false;
    // The server applies the PUT, the response is lost, the SDK's retry meets our own write: 412.
    const store = Object.create(inner) as MemoryStore;
    store.put = async (key, body, options) => {
      const result = await inner.put(key, body, options);
      if (loseNextAnswer && options?.ifMatch !== undefined) {
        loseNextAnswer = false;
        throw new PreconditionFailedError(key);
      }
      return result;
    };
    const vault = await createVault({ store });
    await vault.run(U, { command: 'create', path: '/memories/f.md', file_text: 'a\nb\n' });
    loseNextAnswer = true;
    const inserted = await vault.run(U, {
      command: 'insert',
      path: '/memories/f.md',
      insert_line: 2,
      insert_text: 'c',
    });
    expect(inserted).toMatchObject({ isError: false, content: 'The file /memories/f.md has been edited.' });
    loseNextAnswer = true;
    const replaced = await vault.run(U, { command: 'str_replace', path: '/memories/f.md', old_str: 'b', new_str: 'B' });
    expect(replaced.isError).toBe(false);
    expect(await text(vault, '/memories/f.md')).toBe('a\nB\nc\n');
  });
});

describe('crash safety', () => {
  async function seeded(store: FaultyStore) {
    const vault = await createVault({ store });
    for (let i = 0; i < 4; i++)
      await vault.run(U, { command: 'create', path: `/memories/src/f${i}.md`, file_text: `content ${i}\n` });
    await vault.run(U, { command: 'create', path: '/memories/src/sub/g.md', file_text: 'deep\n' });
    return vault;
  }
  const names = ['f0.md', 'f1.md', 'f2.md', 'f3.md', 'sub/g.md'];
  const contentOf = (n: string) => (n === 'sub/g.md' ? 'deep\n' : `content ${n[1]}\n`);

  it.each(fenceKinds)(
    'a directory rename crashed at any request leaves every file whole, and running it again completes it (fenced by %s)',
    async (_kind, deleteExactly) => {
      for (let step = 1; step < 40; step++) {
        const store = new FaultyStore(new MemoryStore(), 0, { deleteExactly });
        const vault = await seeded(store);
        store.failAt(step);
        const first = await vault.run(U, { command: 'rename', old_path: '/memories/src', new_path: '/memories/dst' });
        store.disarm();
        // A fault in the clean-up of a fence marker or in a history write (after the file's move took
        // effect) is absorbed; any other fails the command.
        if (store.fired)
          expect(first.isError, `step ${step}: ${JSON.stringify(store.firedOn)}`).toBe(!store.firedAbsorbably);
        else expect(first.isError).toBe(false);
        for (const n of names) {
          const old = await text(vault, `/memories/src/${n}`);
          const moved = await text(vault, `/memories/dst/${n}`);
          expect(old !== null || moved !== null, `step ${step}: ${n} lost`).toBe(true);
          for (const t of [old, moved]) if (t !== null) expect(t).toBe(contentOf(n));
        }
        if (first.isError) {
          expect(first.content).not.toMatch(/injected|\n\s+at /);
          const again = await vault.run(U, { command: 'rename', old_path: '/memories/src', new_path: '/memories/dst' });
          expect(again, `step ${step}`).toMatchObject({ isError: false });
        }
        for (const n of names) {
          expect(await text(vault, `/memories/dst/${n}`)).toBe(contentOf(n));
          expect(await text(vault, `/memories/src/${n}`)).toBeNull();
        }
        const listing = await vault.run(U, { command: 'view', path: '/memories' });
        expect(listing.content).not.toContain('.memvault');
        if (!store.fired) break; // the crash point lies past the last request
      }
    },
  );

  it.each(fenceKinds)(
    'a file rename crashed at any request completes when run again (fenced by %s)',
    async (_kind, deleteExactly) => {
      const store = new FaultyStore(new MemoryStore(), 0, { deleteExactly });
      const vault = await createVault({ store });
      await vault.run(U, { command: 'create', path: '/memories/a.md', file_text: 'A' });
      // A file rename's store operations: GET the source, LIST below it and LIST its history (in
      // parallel), PUT the copy, PUT the copy's version, LIST (the copy's name check) and LIST its
      // history's newest number (the copy is numbered by the clock), the fence of the source (a marker
      // PUT, or the conditional delete), PUT its tombstone, and after a marker the DELETE of the
      // marker. A failure in the history writes, the copy's look at its newest number or that last
      // clean-up is no error (the file has moved; the marker left behind is no file to anyone; a
      // version that could not be kept is missing from the history; the copy keeps its number).
      let absorbed = 0;
      for (let step = 1; step <= 12; step++) {
        store.failAt(step);
        const r = await vault.run(U, { command: 'rename', old_path: '/memories/a.md', new_path: '/memories/b.md' });
        store.disarm();
        expect(r.isError, `step ${step}: ${JSON.stringify(store.firedOn)}`).toBe(store.fired && !store.firedAbsorbably);
        if (store.firedAbsorbably) absorbed += 1;
        const a = await text(vault, '/memories/a.md');
        const b = await text(vault, '/memories/b.md');
        expect(a === 'A' || b === 'A').toBe(true);
        if (r.isError) {
          expect(
            (await vault.run(U, { command: 'rename', old_path: '/memories/a.md', new_path: '/memories/b.md' })).isError,
          ).toBe(false);
        }
        expect(await text(vault, '/memories/b.md')).toBe('A');
        expect(await text(vault, '/memories/a.md')).toBeNull();
        await vault.run(U, { command: 'rename', old_path: '/memories/b.md', new_path: '/memories/a.md' });
        if (!store.fired) break;
      }
      // The copy's version and newest number, the tombstone and the marker's clean-up (a delete fence leaves none).
      expect(absorbed).toBe(deleteExactly ? 3 : 4);
    },
  );

  it.each([false, true])('a failed edit changes nothing (history %s)', async (history) => {
    // GET, the GET of the user's settings (pause memory, just before the first change), PUT (and
    // with history the version's PUT, whose failure leaves the edit made and the version missing
    // from the history).
    for (let step = 1; step <= 4; step++) {
      const store = new FaultyStore(new MemoryStore());
      const vault = await createVault({ store, history });
      await vault.run(U, { command: 'create', path: '/memories/a.md', file_text: 'one\n' });
      store.failAt(step);
      const r = await vault.run(U, { command: 'str_replace', path: '/memories/a.md', old_str: 'one', new_str: 'two' });
      store.disarm();
      expect(r.isError).toBe(store.fired && !store.firedAbsorbably);
      expect(store.firedInHistory).toBe(history && step === 4);
      const t = await text(vault, '/memories/a.md');
      expect(t).toBe(r.isError ? 'one\n' : 'two\n');
      if (history) {
        // A failed edit kept no version either; a landed one kept its own unless that PUT failed.
        const kept = (await vault.history(U, '/memories/a.md')).versions.length;
        expect(kept).toBe(r.isError || store.firedInHistory ? 1 : 2);
      }
    }
  });
});

/**
 * Runs `hook` once, just before the first fence of a user's file goes out (a marker PUT, or the
 * conditional delete where the wrapper offers it): the moment an edit from another instance can
 * still land on the version the fence names.
 */
class BeforeFirstFence extends StoreWrapper {
  hook: (() => Promise<unknown>) | undefined;
  fired = 0;
  protected override async step(op: StoreOp): Promise<void> {
    if (op === 'deleteExactly') await this.fire();
  }
  override async put(key: string, body: Uint8Array, options?: PutOptions): Promise<{ etag: string }> {
    const reason = options?.metadata?.[FENCE_METADATA];
    if (reason === 'moved' || reason === 'deleted') await this.fire();
    return super.put(key, body, options);
  }
  private async fire(): Promise<void> {
    const hook = this.hook;
    this.hook = undefined;
    if (hook) {
      this.fired += 1;
      await hook();
    }
  }
}

const stores: Array<[string, () => Promise<{ store: ObjectStore; done(): Promise<void> }>]> = [
  ['memory', async () => ({ store: new MemoryStore(), done: async () => {} })],
  [
    'file',
    async () => {
      const root = await mkdtemp(join(tmpdir(), 'memvault-fence-race-'));
      const store = await FileStore.open(root);
      return { store, done: () => rm(root, { recursive: true, force: true }) };
    },
  ],
];

describe.each(stores)('an edit that lands just before the fence is kept (%s store)', (_name, open) => {
  /** A vault whose first fence waits for `hook`, and another instance (no shared locks) on the same store. */
  async function twoInstances(deleteExactly: boolean, files: Record<string, string>) {
    const { store: inner, done } = await open();
    const store = new BeforeFirstFence(inner, { deleteExactly });
    const encryption = { masterKey: Buffer.alloc(32, 8).toString('base64') };
    const vault = await createVault({ store, encryption });
    const other = await createVault({ store: inner, encryption });
    for (const [path, file_text] of Object.entries(files)) await vault.run(U, { command: 'create', path, file_text });
    const insert = (path: string, insert_text: string) =>
      other.run(U, { command: 'insert', path, insert_line: 1, insert_text });
    const close = async () => {
      await other.close();
      await vault.close();
      await done();
    };
    return { store, vault, insert, close };
  }

  it.each(fenceKinds)(
    'a file rename copies the newer version and fences again (fenced by %s)',
    async (_kind, deleteExactly) => {
      const { store, vault, insert, close } = await twoInstances(deleteExactly, { '/memories/a.md': 'one\n' });
      store.hook = async () => expect((await insert('/memories/a.md', 'two')).isError).toBe(false);
      expect(
        await vault.run(U, { command: 'rename', old_path: '/memories/a.md', new_path: '/memories/b.md' }),
      ).toMatchObject({ isError: false });
      expect(store.fired).toBe(1);
      expect(await text(vault, '/memories/b.md')).toBe('one\ntwo\n');
      expect(await text(vault, '/memories/a.md')).toBeNull();
      await close();
    },
  );

  it.each(fenceKinds)('a directory rename does the same for each file (fenced by %s)', async (_kind, deleteExactly) => {
    const { store, vault, insert, close } = await twoInstances(deleteExactly, {
      '/memories/d/x.md': 'x\n',
      '/memories/d/y.md': 'y\n',
    });
    // Both files are edited while the first fence is held: that file's edit lands before its fence;
    // the other's fence runs meanwhile (fences go out several at once), so its edit may find it moved.
    const edited = new Map<string, boolean>();
    store.hook = async () => {
      for (const n of ['x', 'y']) edited.set(n, !(await insert(`/memories/d/${n}.md`, 'edited')).isError);
    };
    const renamed = await vault.run(U, { command: 'rename', old_path: '/memories/d', new_path: '/memories/e' });
    expect(renamed, JSON.stringify(renamed.content)).toMatchObject({ isError: false });
    expect(store.fired).toBe(1);
    expect([...edited.values()]).toContain(true);
    for (const n of ['x', 'y']) {
      expect(await text(vault, `/memories/e/${n}.md`)).toBe(edited.get(n) ? `${n}\nedited\n` : `${n}\n`);
      expect(await text(vault, `/memories/d/${n}.md`)).toBeNull();
    }
    await close();
  });

  it.each(fenceKinds)(
    'a delete takes the newer version; an edit after it finds no file (fenced by %s)',
    async (_kind, deleteExactly) => {
      const { store, vault, insert, close } = await twoInstances(deleteExactly, { '/memories/a.md': 'one\n' });
      store.hook = async () => expect((await insert('/memories/a.md', 'two')).isError).toBe(false);
      expect(await vault.run(U, { command: 'delete', path: '/memories/a.md' })).toMatchObject({ isError: false });
      expect(store.fired).toBe(1);
      expect(await text(vault, '/memories/a.md')).toBeNull();
      expect(await insert('/memories/a.md', 'three')).toMatchObject({ isError: true, code: 'NOT_FOUND' });
      // Both ends are in the history: the edit's version, then the delete's tombstone.
      expect((await vault.history(U, '/memories/a.md')).versions.map((v) => v.end ?? 'content')).toEqual([
        'deleted',
        'content',
        'content',
      ]);
      await close();
    },
  );
});
