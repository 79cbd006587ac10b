import { describe, expect, it } from 'vitest';
import { snapshot } from '../helpers.js';
import { createVault, type Vault, type VaultOptions } from '../../src/index.js';
import type { ObjectStore } from '../../src/store/port.js';
import { HookedStore } from '../kit/stores.js';
import { journalPath } from '../../src/tool/commands/tree.js';

/**
 * Tree integrity on every store (memory, file, S3 on radosgw): `makeStore` gives a
 * fresh empty store (or prefix) per call.
 * - A directory rename resumes only onto exactly the state it left; anything written at its
 *   destination since is the spec's "already exists", and a refused rename changes nothing.
 * - A name is a file or a directory, never both, also when two instances race; delete and rename
 *   of a name that is already both take both halves.
 * - A path whose key would exceed the store's limit is refused up front with one clear error,
 *   also inside a directory rename (nothing copied, no journal).
 */

export function runTreeIntegritySuite(
  storeName: string,
  makeStore: () => Promise<ObjectStore>,
  baseOptions: VaultOptions = {},
  races = 8,
): void {
  const U = 'tree-user@example.com';
  const SOURCE: Record<string, string> = {
    'a.md': 'alpha\n',
    'b.md': 'bravo\n',
    'c.md': 'charlie\n',
    'd.md': 'delta\n',
    'sub/e.md': 'echo\n',
    'sub/f.md': 'foxtrot\n',
  };

  async function setup(): Promise<{ store: HookedStore; vault: Vault }> {
    const store = new HookedStore(await makeStore());
    const vault = await createVault({ store, ...baseOptions });
    for (const [name, text] of Object.entries(SOURCE)) {
      const r = await vault.run(U, { command: 'create', path: `/memories/src/${name}`, file_text: text });
      expect(r.isError, JSON.stringify(r.content)).toBe(false);
    }
    return { store, vault };
  }

  async function textAt(vault: Vault, path: string): Promise<string | null> {
    const file = await (await vault.files(U)).read(path);
    return file ? Buffer.from(file.data).toString('utf8') : null;
  }

  async function allFiles(vault: Vault): Promise<Record<string, string>> {
    const files = await vault.files(U);
    const out: Record<string, string> = {};
    for await (const f of files.listFiles('/memories')) out[f.path] = (await textAt(vault, f.path))!;
    return out;
  }

  const rename = (vault: Vault) =>
    vault.run(U, { command: 'rename', old_path: '/memories/src', new_path: '/memories/dst' });

  /** Nothing changed since `before` but one object gone: the journal of a rename that can no longer resume. */
  async function expectOnlyJournalDropped(store: ObjectStore, before: Map<string, string>): Promise<void> {
    const after = await snapshot(store);
    expect([...after].filter(([k, v]) => before.get(k) !== v)).toEqual([]);
    expect([...before.keys()].filter((k) => !after.has(k))).toHaveLength(1);
  }

  /** Every source file is whole at its old place or its new place. */
  async function expectNothingLost(vault: Vault): Promise<void> {
    for (const [name, text] of Object.entries(SOURCE)) {
      const old = await textAt(vault, `/memories/src/${name}`);
      const moved = await textAt(vault, `/memories/dst/${name}`);
      expect([old, moved], name).toContain(text);
    }
  }

  describe(`a failed directory rename and what came after it (${storeName})`, () => {
    it('does not overwrite files written at the destination after the half-copied one was deleted', async () => {
      const { store, vault } = await setup();
      store.arm('put', 3); // journal, one or two copies, then a store error
      const first = await rename(vault);
      expect(first.isError).toBe(true);
      expect(first.content as string).not.toMatch(/injected/);
      expect(store.fired).toBe(true);
      expect(await (await vault.files(U)).isDirectory('/memories/dst')).toBe(true);
      // The user deletes the half-copied destination and writes new work there.
      expect((await vault.run(U, { command: 'delete', path: '/memories/dst' })).isError).toBe(false);
      for (const name of ['a.md', 'sub/e.md', 'new.md']) {
        expect(
          (await vault.run(U, { command: 'create', path: `/memories/dst/${name}`, file_text: `new work ${name}\n` }))
            .isError,
        ).toBe(false);
      }
      const before = await snapshot(store);
      const again = await rename(vault);
      expect(again).toMatchObject({ isError: true, content: 'Error: The destination /memories/dst already exists' });
      await expectOnlyJournalDropped(store, before);
      for (const name of ['a.md', 'sub/e.md', 'new.md'])
        expect(await textAt(vault, `/memories/dst/${name}`)).toBe(`new work ${name}\n`);
      for (const [name, text] of Object.entries(SOURCE))
        expect(await textAt(vault, `/memories/src/${name}`)).toBe(text);
      await vault.close();
    });

    it('does not resume onto a copy the user edited after the rename stopped in its delete phase', async () => {
      const { store, vault } = await setup();
      // Journal, six copies, two sources fenced ("moved" markers, the point where a file moves), then a store error.
      store.arm('put', 1 + Object.keys(SOURCE).length + 3);
      expect((await rename(vault)).isError).toBe(true);
      await expectNothingLost(vault);
      // Some sources are gone (moved), at least one is still there; the user edits every copy.
      const remaining = await Promise.all(Object.keys(SOURCE).map((n) => textAt(vault, `/memories/src/${n}`)));
      expect(remaining.filter((t) => t === null).length).toBeGreaterThan(0);
      expect(remaining.filter((t) => t !== null).length).toBeGreaterThan(0);
      for (const name of Object.keys(SOURCE)) {
        const r = await vault.run(U, {
          command: 'insert',
          path: `/memories/dst/${name}`,
          insert_line: 0,
          insert_text: `edited ${name}`,
        });
        expect(r.isError).toBe(false);
      }
      const before = await snapshot(store);
      const again = await rename(vault);
      expect(again).toMatchObject({ isError: true, content: 'Error: The destination /memories/dst already exists' });
      await expectOnlyJournalDropped(store, before);
      for (const [name, text] of Object.entries(SOURCE))
        expect(await textAt(vault, `/memories/dst/${name}`)).toBe(`edited ${name}\n${text}`);
      await vault.close();
    });

    it('refuses to resume when anything new appeared at the destination, even at a path it would not write', async () => {
      const { store, vault } = await setup();
      store.arm('put', 4);
      expect((await rename(vault)).isError).toBe(true);
      expect(
        (await vault.run(U, { command: 'create', path: '/memories/dst/unrelated.md', file_text: 'mine\n' })).isError,
      ).toBe(false);
      const before = await snapshot(store);
      expect(await rename(vault)).toMatchObject({
        isError: true,
        content: 'Error: The destination /memories/dst already exists',
      });
      await expectOnlyJournalDropped(store, before);
      await vault.close();
    });

    it('still resumes onto exactly the state it left, with edits of the sources made meanwhile', async () => {
      const { store, vault } = await setup();
      store.arm('put', 4);
      expect((await rename(vault)).isError).toBe(true);
      expect(
        (await vault.run(U, { command: 'str_replace', path: '/memories/src/a.md', old_str: 'alpha', new_str: 'ALPHA' }))
          .isError,
      ).toBe(false);
      const again = await rename(vault);
      expect(again).toMatchObject({ isError: false, content: 'Successfully renamed /memories/src to /memories/dst' });
      const files = await allFiles(vault);
      expect(files).toEqual(
        Object.fromEntries(
          Object.entries(SOURCE).map(([n, t]) => [`/memories/dst/${n}`, n === 'a.md' ? 'ALPHA\n' : t]),
        ),
      );
      await vault.close();
    });

    it('takes back its own copies when a rival writes at the destination while it copies (a refused rename changes nothing)', async () => {
      const { store, vault } = await setup();
      const rival = await createVault({ store, ...baseOptions });
      const before = await allFiles(vault);
      // Right after the rename checked its destination (at its journal's PUT), the rival creates a
      // file where one of the copies is going.
      store.arm('put', 1, {
        fail: false,
        hook: async () => {
          const r = await rival.run(U, { command: 'create', path: '/memories/dst/c.md', file_text: 'rival\n' });
          expect(r.isError).toBe(false);
        },
      });
      const result = await rename(vault);
      expect(result).toMatchObject({ isError: true, content: 'Error: The destination /memories/dst already exists' });
      expect(await allFiles(vault)).toEqual({ ...before, '/memories/dst/c.md': 'rival\n' });
      await rival.close();
      await vault.close();
    });

    it('treats a journal of the old format (no id) as not resumable', async () => {
      const { store, vault } = await setup();
      const files = await vault.files(U);
      await files.write(
        journalPath('/memories/src'),
        new TextEncoder().encode(JSON.stringify({ from: '/memories/src', to: '/memories/dst' })),
      );
      expect(
        (await vault.run(U, { command: 'create', path: '/memories/dst/a.md', file_text: 'not a copy\n' })).isError,
      ).toBe(false);
      const before = await snapshot(store);
      expect(await rename(vault)).toMatchObject({
        isError: true,
        content: 'Error: The destination /memories/dst already exists',
      });
      expect(await snapshot(store)).toEqual(before);
      expect(await textAt(vault, '/memories/dst/a.md')).toBe('not a copy\n');
      await vault.close();
    });
  });

  describe(`directory renames and deletes against each other, from two instances (${storeName})`, () => {
    const busyMessage =
      /^Error: Cannot change \/memories\/\S+ now: (a rename of .* to .* is in progress or stopped part-way|a delete of .* is in progress or stopped part-way|another rename or delete of it is in progress)/;

    for (const [label, second] of [
      [
        'a rename of the same directory elsewhere',
        { command: 'rename', old_path: '/memories/src', new_path: '/memories/other' },
      ],
      [
        'a rename of a subdirectory',
        { command: 'rename', old_path: '/memories/src/sub', new_path: '/memories/moved-sub' },
      ],
      [
        'a rename into the directory',
        { command: 'rename', old_path: '/memories/extra', new_path: '/memories/src/extra' },
      ],
    ] as const) {
      it(`a rename of /memories/src and ${label} at once: one wins, the other gets a clear error, every file at exactly one place`, async () => {
        for (let round = 0; round < 3; round++) {
          const { store, vault } = await setup();
          expect(
            (await vault.run(U, { command: 'create', path: '/memories/extra/x.md', file_text: 'extra\n' })).isError,
          ).toBe(false);
          const rival = await createVault({ store, ...baseOptions });
          const [first, other] = await Promise.all([rename(vault), rival.run(U, second)]);
          const outcome = `round ${round}: ${JSON.stringify([first.content, other.content])}`;
          // Both may succeed only where one ran entirely before the other (e.g. the rename into
          // /memories/src); two changes of one directory never both succeed.
          if (second.old_path === '/memories/src')
            expect([first, other].filter((r) => !r.isError).length, outcome).toBeLessThanOrEqual(1);
          // A loser says why: the other operation holds the directory, or (ran after it) the path is gone.
          for (const r of [first, other])
            if (r.isError)
              expect(r.content as string, outcome).toMatch(
                new RegExp(`${busyMessage.source}|^Error: The path \\S+ does not exist$`),
              );
          const files = await allFiles(vault);
          // Every file is at exactly one place.
          for (const [name, text] of [...Object.entries(SOURCE), ['x.md', 'extra\n'] as const]) {
            const places = Object.entries(files).filter(
              ([path, t]) => t === text && path.endsWith(name.split('/').pop()!),
            );
            expect(places.length, `${outcome}: ${name} in ${JSON.stringify(Object.keys(files))}`).toBe(1);
          }
          expect(Object.keys(files).filter((p) => p.includes('.memvault'))).toEqual([]);
          await rival.close();
          await vault.close();
        }
      });
    }
  });

  describe(`a name is a file or a directory, never both (${storeName})`, () => {
    it(`two instances creating /memories/x and /memories/x/y.md at once: never both (${races} races)`, async () => {
      const store = await makeStore();
      const one = await createVault({ store, ...baseOptions });
      const two = await createVault({ store, ...baseOptions });
      await one.run(U, { command: 'view', path: '/memories' });
      let bothWon = 0;
      let fileWon = 0;
      let dirWon = 0;
      for (let i = 0; i < races; i++) {
        const x = `/memories/race${i}`;
        const [file, child] = await Promise.all([
          one.run(U, { command: 'create', path: x, file_text: 'file\n' }),
          two.run(U, { command: 'create', path: `${x}/y.md`, file_text: 'child\n' }),
        ]);
        if (!file.isError && !child.isError) bothWon++;
        if (!file.isError) fileWon++;
        if (!child.isError) dirWon++;
        for (const r of [file, child])
          if (r.isError) expect(r.content as string).toMatch(/is a directory|is a file, not a directory/);
        // What the store holds agrees with what was acknowledged, and is never both.
        const files = await one.files(U);
        const isFile = (await files.stat(x)) !== null;
        const isDirectory = await files.isDirectory(x);
        expect(isFile && isDirectory, `race ${i}`).toBe(false);
        expect(isFile).toBe(!file.isError);
        expect(isDirectory).toBe(!child.isError);
      }
      expect(bothWon).toBe(0);
      // Both may lose a race (each then says why, and a retry works); the tally is for the log.
      console.info(
        `[name races, ${storeName}] ${races} races: file won ${fileWon}, directory won ${dirWon}, both lost ${races - fileWon - dirWon}`,
      );
      await one.close();
      await two.close();
    });

    it('a rename onto a name made a directory meanwhile by another instance is refused and changes nothing', async () => {
      const hooked = new HookedStore(await makeStore());
      const vault = await createVault({ store: hooked, ...baseOptions });
      const rival = await createVault({ store: hooked, ...baseOptions });
      expect((await vault.run(U, { command: 'create', path: '/memories/n.md', file_text: 'n\n' })).isError).toBe(false);
      // The rival's file lands below the target name right before the rename's PUT.
      hooked.arm('put', 1, {
        fail: false,
        hook: async () => {
          await (await rival.files(U)).write('/memories/t/inner.md', new TextEncoder().encode('inner\n'));
        },
      });
      const r = await vault.run(U, { command: 'rename', old_path: '/memories/n.md', new_path: '/memories/t' });
      expect(r).toMatchObject({ isError: true, content: 'Error: The destination /memories/t already exists' });
      expect(await allFiles(vault)).toEqual({ '/memories/n.md': 'n\n', '/memories/t/inner.md': 'inner\n' });
      await rival.close();
      await vault.close();
    });

    async function broken(): Promise<{ store: ObjectStore; vault: Vault }> {
      const store = await makeStore();
      const vault = await createVault({ store, ...baseOptions });
      const files = await vault.files(U);
      const put = (path: string, text: string) =>
        files.write(path, new TextEncoder().encode(text), { deferNameCheck: true });
      // As an older version (or a race it did not catch) left it: x is a file and a directory.
      await put('/memories/x', 'the file x\n');
      await put('/memories/x/y.md', 'below x\n');
      await put('/memories/x/z/w.md', 'deeper\n');
      await put('/memories/keep.md', 'keep\n');
      return { store, vault };
    }

    it('delete of a name that is both removes both halves', async () => {
      const { vault } = await broken();
      expect(await vault.run(U, { command: 'delete', path: '/memories/x' })).toMatchObject({
        isError: false,
        content: 'Successfully deleted /memories/x',
      });
      expect(await allFiles(vault)).toEqual({ '/memories/keep.md': 'keep\n' });
      await vault.close();
    });

    it('rename of a name that is both moves both halves, and refuses a destination that exists', async () => {
      const { vault } = await broken();
      expect(
        await vault.run(U, { command: 'rename', old_path: '/memories/x', new_path: '/memories/keep.md' }),
      ).toMatchObject({
        isError: true,
        content: 'Error: The destination /memories/keep.md already exists',
      });
      expect(
        await vault.run(U, { command: 'rename', old_path: '/memories/x', new_path: '/memories/moved' }),
      ).toMatchObject({ isError: false });
      expect(await allFiles(vault)).toEqual({
        '/memories/keep.md': 'keep\n',
        '/memories/moved': 'the file x\n',
        '/memories/moved/y.md': 'below x\n',
        '/memories/moved/z/w.md': 'deeper\n',
      });
      await vault.close();
    });
  });

  describe(`paths within the store's key limit (${storeName})`, () => {
    it('stores the deepest path of one-letter names the documented rule allows, and refuses one level more before writing anything', async () => {
      const store = await makeStore();
      const vault = await createVault({ store, ...baseOptions });
      await vault.run(U, { command: 'view', path: '/memories' });
      const probe = await vault.files(U);
      // The documented rule: the stored key is the user prefix and each name, encrypted, joined by '/'.
      // Find the deepest path that the store accepts and check the error one level below it.
      let depth = 1;
      const at = (n: number) => `/memories/${Array.from({ length: n }, () => 'a').join('/')}`;
      while (depth < 600) {
        try {
          probe.assertStorable(at(depth + 1));
          depth += 1;
        } catch {
          break;
        }
      }
      expect(depth).toBeGreaterThan(20);
      expect(depth).toBeLessThan(600);
      expect((await vault.run(U, { command: 'create', path: at(depth), file_text: 'deep\n' })).isError).toBe(false);
      expect(await textAt(vault, at(depth))).toBe('deep\n');
      const listing = await vault.run(U, { command: 'view', path: at(depth - 1) });
      expect(listing.isError).toBe(false);
      const before = await snapshot(store);
      const sibling = await vault.run(U, { command: 'create', path: `${at(depth - 1)}/b/c`, file_text: 'x' });
      expect(sibling).toMatchObject({ isError: true });
      expect(sibling.content as string).toMatch(/^Error: The path \/memories\/.* is too long to store/);
      // Every command answers a path past the limit with the same clear error (no request with an
      // over-long key or prefix reaches the store).
      const farTooDeep = `/memories/b/${at(depth + 20).slice('/memories/'.length)}`;
      for (const input of [
        { command: 'view', path: farTooDeep },
        { command: 'delete', path: farTooDeep },
        { command: 'str_replace', path: farTooDeep, old_str: 'a', new_str: 'b' },
        { command: 'rename', old_path: at(depth), new_path: farTooDeep },
        { command: 'rename', old_path: farTooDeep, new_path: '/memories/elsewhere' },
      ]) {
        const r = await vault.run(U, input);
        expect(r.isError, JSON.stringify(input)).toBe(true);
        expect(r.content as string, JSON.stringify(input)).toMatch(/is too long to store|does not exist/);
      }
      expect(await snapshot(store)).toEqual(before);
      await vault.close();
    });

    it('a directory rename whose deepest target would be too long is refused up front and changes nothing', async () => {
      const store = await makeStore();
      const vault = await createVault({ store, ...baseOptions });
      const files = await vault.files(U);
      // A name of 255 bytes that every codec lengthens (escaped 3x in plain mode, +42% encrypted),
      // and the deepest chain below /memories/a that fits but does not fit below that name.
      const longName = '\u4e2d'.repeat(85);
      const chainOf = (k: number) => Array.from({ length: k }, (_, i) => `d${i % 10}`).join('/');
      const fits = (path: string) => {
        try {
          files.assertStorable(path);
          return true;
        } catch {
          return false;
        }
      };
      let k = 1;
      while (fits(`/memories/a/${chainOf(k + 1)}/f.md`)) k += 1;
      expect(fits(`/memories/${longName}/${chainOf(k)}/f.md`)).toBe(false);
      for (let i = 0; i < 10; i++) await files.write(`/memories/a/top${i}.md`, new TextEncoder().encode(`top ${i}\n`));
      await files.write(`/memories/a/${chainOf(k)}/f.md`, new TextEncoder().encode('deep\n'));
      const before = await snapshot(store);
      const r = await vault.run(U, { command: 'rename', old_path: '/memories/a', new_path: `/memories/${longName}` });
      expect(r.isError).toBe(true);
      expect(r.content as string).toMatch(/^Error: The path \/memories\/\u4e2d+\/.* is too long to store/);
      expect(await snapshot(store)).toEqual(before);
      await vault.close();
    });
  });
}
