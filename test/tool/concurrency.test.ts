import { describe, expect, it } from 'vitest';
import { createVault, type Vault } from '../../src/index.js';
import { MemoryStore } from '../../src/store/memory.js';
import { PreconditionFailedError } from '../../src/store/port.js';
import { FaultyStore } from '../faulty-store.js';
import { callTool } from '../helpers.js';

const U = 'user-1';

async function text(vault: Vault, path: string): Promise<string | null> {
  const f = await (await vault.files(U)).read(path);
  return f ? Buffer.from(f.data).toString('utf8') : null;
}

describe('concurrent edits', () => {
  it("runs one turn's parallel str_replace and insert calls on one file without losing an edit", async () => {
    const vault = await createVault({ store: new FaultyStore(new MemoryStore(), 3) });
    await vault.run(U, { command: 'create', path: '/memories/f.md', file_text: 'm0\nm1\nm2\nm3\n' });
    const calls = [
      ...[0, 1, 2, 3].map((i) => ({ command: 'str_replace', path: '/memories/f.md', old_str: `m${i}`, new_str: `edited-${i}` })),
      ...[0, 1, 2, 3].map((i) => ({ command: 'insert', path: '/memories/f.md', insert_line: 0, insert_text: `inserted-${i}` })),
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
      Array.from({ length: 40 }, (_, i) => vault.run(U, { command: 'insert', path: '/memories/log.md', insert_line: 0, insert_text: `${tag}-${i}` }));
    const results = await Promise.all([...edits(a, 'a'), ...edits(b, 'b')]);
    const succeeded = results.filter((r) => !r.isError).length;
    const lines = (await text(a, '/memories/log.md'))!.split('\n').filter(Boolean);
    // Every edit that reported success is in the file, and nothing else is.
    expect(lines).toHaveLength(succeeded);
    expect(succeeded).toBe(80);
  });

  it('keeps an edit made while its directory is being renamed', async () => {
    const store = new FaultyStore(new MemoryStore(), 2);
    const vault = await createVault({ store });
    const other = await createVault({ store }); // another process: not serialised by our locks
    for (let i = 0; i < 5; i++) await vault.run(U, { command: 'create', path: `/memories/d/f${i}.md`, file_text: `v${i}\n` });
    const [renamed, ...edits] = await Promise.all([
      vault.run(U, { command: 'rename', old_path: '/memories/d', new_path: '/memories/e' }),
      ...[0, 1, 2, 3, 4].map((i) => other.run(U, { command: 'insert', path: `/memories/d/f${i}.md`, insert_line: 1, insert_text: `edit${i}` })),
    ]);
    expect(renamed!.isError).toBe(false);
    for (let i = 0; i < 5; i++) {
      const moved = await text(vault, `/memories/e/f${i}.md`);
      const left = await text(vault, `/memories/d/f${i}.md`);
      expect(moved).not.toBeNull();
      // An edit that succeeded is in the file, wherever the file ended up.
      if (!edits[i]!.isError) expect(`${moved ?? ''}${left ?? ''}`).toContain(`edit${i}`);
    }
  });
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
    const inserted = await vault.run(U, { command: 'insert', path: '/memories/f.md', insert_line: 2, insert_text: 'c' });
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
    for (let i = 0; i < 4; i++) await vault.run(U, { command: 'create', path: `/memories/src/f${i}.md`, file_text: `content ${i}\n` });
    await vault.run(U, { command: 'create', path: '/memories/src/sub/g.md', file_text: 'deep\n' });
    return vault;
  }
  const names = ['f0.md', 'f1.md', 'f2.md', 'f3.md', 'sub/g.md'];
  const contentOf = (n: string) => (n === 'sub/g.md' ? 'deep\n' : `content ${n[1]}\n`);

  it('a directory rename crashed at any request leaves every file whole, and running it again completes it', async () => {
    for (let step = 1; step < 40; step++) {
      const store = new FaultyStore(new MemoryStore());
      const vault = await seeded(store);
      store.failAt(step);
      const first = await vault.run(U, { command: 'rename', old_path: '/memories/src', new_path: '/memories/dst' });
      store.disarm();
      // A fault in the clean-up of a fence marker or in a history write (after the file's move took
      // effect) is absorbed; any other fails the command.
      if (store.fired) expect(first.isError, `step ${step}: ${JSON.stringify(store.firedOn)}`).toBe(!store.firedAbsorbably);
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
  });

  it('a file rename crashed between copy and delete completes when run again', async () => {
    const store = new FaultyStore(new MemoryStore());
    const vault = await createVault({ store });
    await vault.run(U, { command: 'create', path: '/memories/a.md', file_text: 'A' });
    // A file rename's store operations: GET the source, LIST below it and LIST its history (in
    // parallel), PUT the copy, PUT the copy's version, LIST (the copy's name check), PUT the fence
    // over the source, PUT its tombstone, DELETE the fence's marker. A failure in the history writes
    // or in that last clean-up is no error (the file has moved; the marker left behind is no file to
    // anyone; a version that could not be kept is missing from the history).
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
        expect((await vault.run(U, { command: 'rename', old_path: '/memories/a.md', new_path: '/memories/b.md' })).isError).toBe(false);
      }
      expect(await text(vault, '/memories/b.md')).toBe('A');
      expect(await text(vault, '/memories/a.md')).toBeNull();
      await vault.run(U, { command: 'rename', old_path: '/memories/b.md', new_path: '/memories/a.md' });
      if (!store.fired) break;
    }
    expect(absorbed).toBe(3); // the copy's version, the tombstone, the marker's clean-up
  });

  it.each([false, true])('a failed edit changes nothing (history %s)', async (history) => {
    // GET, PUT (and with history the version's PUT, whose failure leaves the edit made and the
    // version missing from the history).
    for (let step = 1; step <= 3; step++) {
      const store = new FaultyStore(new MemoryStore());
      const vault = await createVault({ store, history });
      await vault.run(U, { command: 'create', path: '/memories/a.md', file_text: 'one\n' });
      store.failAt(step);
      const r = await vault.run(U, { command: 'str_replace', path: '/memories/a.md', old_str: 'one', new_str: 'two' });
      store.disarm();
      expect(r.isError).toBe(store.fired && !store.firedAbsorbably);
      expect(store.firedInHistory).toBe(history && step === 3);
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
