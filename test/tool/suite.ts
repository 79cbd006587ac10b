import { describe, expect, it } from 'vitest';
import { snapshot } from '../kit/stores.js';
import { vaultOn } from '../kit/vault.js';
import type { Vault, VaultOptions } from '../../src/index.js';
import type { ObjectStore } from '../../src/store/port.js';

/**
 * The memory tool suite: every string and error of the spec, the SDK local tool's defects, bad
 * input. It runs unchanged on every store (memory, file, S3 on radosgw): `makeStore` must give a
 * fresh, empty store (or a fresh prefix) per call.
 */
export function runToolSuite(
  storeName: string,
  makeStore: () => Promise<ObjectStore>,
  baseOptions: VaultOptions = {},
): void {
  const U = 'alice@example.com';

  async function setup(files: Record<string, string> = {}) {
    const { vault, store } = await vaultOn(makeStore, baseOptions);
    // A user's first command creates their wrapped data key (encrypted stores): do it up front so
    // that "the store is unchanged" below speaks of the user's files only.
    await vault.run(U, { command: 'view', path: '/memories' });
    for (const [path, text] of Object.entries(files)) {
      const r = await vault.run(U, { command: 'create', path, file_text: text });
      expect(r.isError).toBe(false);
    }
    return { vault, store };
  }

  async function ok(vault: Vault, input: Record<string, unknown>) {
    const r = await vault.run(U, input);
    expect(r, JSON.stringify(r.content)).toMatchObject({ isError: false });
    return r.content;
  }

  /** Runs a command that must fail, and asserts that it changed nothing in the store. */
  async function err(vault: Vault, store: ObjectStore, input: unknown): Promise<string> {
    const before = await snapshot(store);
    const r = await vault.run(U, input);
    expect(r.isError).toBe(true);
    expect(await snapshot(store)).toEqual(before);
    expect(typeof r.content).toBe('string');
    expect(r.content as string).not.toMatch(/\n\s+at |\/work\/|\/tmp\/|node_modules/);
    return r.content as string;
  }

  async function read(vault: Vault, path: string): Promise<string> {
    const files = await vault.files(U);
    const f = await files.read(path);
    if (!f) throw new Error(`missing ${path}`);
    return Buffer.from(f.data).toString('utf8');
  }

  describe(`view (${storeName})`, () => {
    it('lists an empty /memories with the header and the root line', async () => {
      const { vault } = await setup();
      expect(await ok(vault, { command: 'view', path: '/memories' })).toBe(
        "Here're the files and directories up to 2 levels deep in /memories, excluding hidden items and node_modules:\n0B\t/memories",
      );
    });

    it('lists two levels, hides dot names and node_modules, and sizes directories by their contents', async () => {
      const { vault } = await setup({
        '/memories/a.md': 'x'.repeat(100),
        '/memories/proj/notes.md': 'y'.repeat(5632), // 5.5K
        '/memories/proj/deep/more/far.md': 'z'.repeat(10),
        '/memories/.secret/s.md': 'h',
        '/memories/proj/node_modules/m.js': 'm',
        '/memories/.hidden.md': 'hh',
      });
      const out = await ok(vault, { command: 'view', path: '/memories' });
      expect(out).toBe(
        [
          "Here're the files and directories up to 2 levels deep in /memories, excluding hidden items and node_modules:",
          `5.6K\t/memories`,
          `100B\t/memories/a.md`,
          `5.5K\t/memories/proj/`,
          `10B\t/memories/proj/deep/`,
          `5.5K\t/memories/proj/notes.md`,
        ].join('\n'),
      );
    });

    it('shows a file with 6-wide line numbers, and a line range', async () => {
      const { vault } = await setup({ '/memories/f.txt': 'one\ntwo\nthree\n' });
      expect(await ok(vault, { command: 'view', path: '/memories/f.txt' })).toBe(
        "Here's the content of /memories/f.txt with line numbers:\n     1\tone\n     2\ttwo\n     3\tthree",
      );
      expect(await ok(vault, { command: 'view', path: '/memories/f.txt', view_range: [2, -1] })).toBe(
        "Here's the content of /memories/f.txt with line numbers:\n     2\ttwo\n     3\tthree",
      );
      expect(await ok(vault, { command: 'view', path: '/memories/f.txt', view_range: [2, 2] })).toBe(
        "Here's the content of /memories/f.txt with line numbers:\n     2\ttwo",
      );
    });

    it('says a missing path does not exist, in the spec words', async () => {
      const { vault, store } = await setup();
      expect(await err(vault, store, { command: 'view', path: '/memories/nope.md' })).toBe(
        'The path /memories/nope.md does not exist. Please provide a valid path.',
      );
    });

    it('rejects an invalid view_range naming the valid range', async () => {
      const { vault, store } = await setup({ '/memories/f.txt': 'a\nb\nc' });
      for (const range of [
        [0, 2],
        [2, 1],
        [1, 4],
        [4, -1],
        [-3, 2],
      ]) {
        const msg = await err(vault, store, { command: 'view', path: '/memories/f.txt', view_range: range });
        expect(msg).toContain(`Invalid \`view_range\` parameter: [${range[0]}, ${range[1]}]`);
        expect(msg).toContain('[1, 3]');
      }
      expect(await err(vault, store, { command: 'view', path: '/memories/f.txt', view_range: [1] })).toMatch(
        /view_range/,
      );
      expect(await err(vault, store, { command: 'view', path: '/memories/f.txt', view_range: ['1', '2'] })).toMatch(
        /view_range/,
      );
    });

    it('caps a view at 16,000 characters and says how to continue with view_range', async () => {
      const line = 'abcdefghij'.repeat(4); // 40 chars
      const text = Array.from({ length: 1000 }, () => line).join('\n');
      const { vault } = await setup({ '/memories/big.txt': text });
      const out = (await ok(vault, { command: 'view', path: '/memories/big.txt' })) as string;
      const shown = out.split('\n').filter((l) => /^\s+\d+\t/.test(l));
      // Each numbered line costs 6 + 1 + 40 + 1 = 48 characters of the 16,000.
      expect(shown).toHaveLength(Math.floor(16_000 / 48));
      expect(shown.reduce((n, l) => n + l.length + 1, 0)).toBeLessThanOrEqual(16_000);
      expect(out).toContain('view_range [334, -1]');
      const next = (await ok(vault, { command: 'view', path: '/memories/big.txt', view_range: [334, -1] })) as string;
      expect(next.split('\n')[1]).toBe(`   334\t${line}`);
    });

    it('cuts a single line longer than the cap and says so', async () => {
      const { vault } = await setup({ '/memories/long.txt': 'q'.repeat(20_000) + '\nsecond' });
      const out = (await ok(vault, { command: 'view', path: '/memories/long.txt' })) as string;
      expect(out.split('\n')[1]).toBe(`     1\t${'q'.repeat(16_000 - 8)}`);
      expect(out).toContain('Line 1 is longer than 16,000 characters');
      expect(out).toContain('view_range [2, -1]');
    });

    it('caps a huge directory listing', async () => {
      const { vault } = await setup();
      const files = await vault.files(U);
      for (let batch = 0; batch < 700; batch += 25) {
        await Promise.all(
          Array.from({ length: 25 }, (_, j) =>
            files.write(
              `/memories/d/file-with-a-longish-name-${String(batch + j).padStart(4, '0')}.md`,
              new Uint8Array([65]),
            ),
          ),
        );
      }
      const out = (await ok(vault, { command: 'view', path: '/memories' })) as string;
      expect(out.length).toBeLessThan(16_500);
      expect(out).toMatch(/more entries not shown/);
    });

    it('returns images as image blocks and refuses other binary content', async () => {
      const { vault, store } = await setup();
      const files = await vault.files(U);
      const png = Uint8Array.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 1, 2, 3]);
      await files.write('/memories/pic.png', png);
      await files.write('/memories/fake.jpg', new TextEncoder().encode('not an image'));
      await files.write('/memories/blob.bin', Uint8Array.from([0, 159, 146, 150]));
      const out = await ok(vault, { command: 'view', path: '/memories/pic.png' });
      expect(out).toEqual([
        { type: 'text', text: "Here's the image at /memories/pic.png:" },
        {
          type: 'image',
          source: { type: 'base64', media_type: 'image/png', data: Buffer.from(png).toString('base64') },
        },
      ]);
      expect(await err(vault, store, { command: 'view', path: '/memories/fake.jpg' })).toMatch(/not a valid image/);
      expect(await err(vault, store, { command: 'view', path: '/memories/blob.bin' })).toMatch(/binary data/);
    });

    it('caps 999,999 empty lines too (line numbers count), and refuses more with the spec message', async () => {
      const { vault } = await setup();
      const files = await vault.files(U);
      await files.write('/memories/empty-lines.txt', new TextEncoder().encode('\n'.repeat(999_999)));
      const out = (await ok(vault, { command: 'view', path: '/memories/empty-lines.txt' })) as string;
      expect(out.length).toBeLessThan(16_500);
      expect(out).toContain('view_range [2001, -1]');
    });

    it('refuses a file over 999,999 lines with the spec message', async () => {
      const { vault, store } = await setup();
      const files = await vault.files(U);
      await files.write('/memories/lines.txt', new TextEncoder().encode('\n'.repeat(1_000_000)));
      expect(await err(vault, store, { command: 'view', path: '/memories/lines.txt' })).toBe(
        'File /memories/lines.txt exceeds maximum line limit of 999,999 lines.',
      );
    });
  });

  describe(`create (${storeName})`, () => {
    it('creates, and overwrites by default (the model is told create creates or overwrites)', async () => {
      const { vault } = await setup();
      expect(await ok(vault, { command: 'create', path: '/memories/a/b.md', file_text: 'v1' })).toBe(
        'File created successfully at: /memories/a/b.md',
      );
      await ok(vault, { command: 'create', path: '/memories/a/b.md', file_text: 'v2' });
      expect(await read(vault, '/memories/a/b.md')).toBe('v2');
    });

    it("with createMode 'fail' gives the reference error on an existing file", async () => {
      const { vault, store } = await vaultOn(makeStore, { ...baseOptions, createMode: 'fail' });
      await vault.run(U, { command: 'create', path: '/memories/x.md', file_text: 'keep' });
      expect(await err(vault, store, { command: 'create', path: '/memories/x.md', file_text: 'new' })).toBe(
        'Error: File /memories/x.md already exists',
      );
    });

    it('refuses a directory where a file is expected, and a file where a directory is expected', async () => {
      const { vault, store } = await setup({ '/memories/dir/f.md': 'x', '/memories/file.md': 'y' });
      expect(await err(vault, store, { command: 'create', path: '/memories/dir', file_text: 'z' })).toMatch(
        /is a directory/,
      );
      expect(
        await err(vault, store, { command: 'create', path: '/memories/file.md/child.md', file_text: 'z' }),
      ).toMatch(/\/memories\/file\.md is a file/);
      expect(await err(vault, store, { command: 'create', path: '/memories', file_text: 'z' })).toMatch(
        /memory directory itself/,
      );
    });

    it('refuses text over the per-file limit and writes nothing', async () => {
      const { vault, store } = await setup();
      const msg = await err(vault, store, {
        command: 'create',
        path: '/memories/huge.md',
        file_text: 'x'.repeat(1024 * 1024 + 1),
      });
      expect(msg).toMatch(/over the limit of 1,048,576 bytes per file/);
    });
  });

  describe(`str_replace (${storeName})`, () => {
    it('replaces a unique match and shows a snippet', async () => {
      const { vault } = await setup({ '/memories/f.md': 'a\nb\nc\nd\ne\nf\n' });
      expect(await ok(vault, { command: 'str_replace', path: '/memories/f.md', old_str: 'd', new_str: 'D' })).toBe(
        'The memory file has been edited. Here is the snippet showing the change (with line numbers):\n     2\tb\n     3\tc\n     4\tD\n     5\te\n     6\tf',
      );
      expect(await read(vault, '/memories/f.md')).toBe('a\nb\nc\nD\ne\nf\n');
    });

    it('matches an old_str spanning several lines', async () => {
      const { vault } = await setup({ '/memories/f.md': '# Title\nline one\nline two\nend\n' });
      await ok(vault, {
        command: 'str_replace',
        path: '/memories/f.md',
        old_str: 'line one\nline two',
        new_str: 'merged',
      });
      expect(await read(vault, '/memories/f.md')).toBe('# Title\nmerged\nend\n');
    });

    it('deletes old_str when new_str is missing (never writes "undefined")', async () => {
      const { vault } = await setup({ '/memories/f.md': 'keep DROP keep' });
      await ok(vault, { command: 'str_replace', path: '/memories/f.md', old_str: ' DROP' });
      expect(await read(vault, '/memories/f.md')).toBe('keep keep');
    });

    it('gives the spec errors for no match, several matches and a missing file', async () => {
      const { vault, store } = await setup({ '/memories/f.md': 'x\ny x\nz\nx', '/memories/d/g.md': 'g' });
      expect(
        await err(vault, store, { command: 'str_replace', path: '/memories/f.md', old_str: 'nope', new_str: 'n' }),
      ).toBe('No replacement was performed, old_str `nope` did not appear verbatim in /memories/f.md.');
      expect(
        await err(vault, store, { command: 'str_replace', path: '/memories/f.md', old_str: 'x', new_str: 'n' }),
      ).toBe(
        'No replacement was performed. Multiple occurrences of old_str `x` in lines: 1, 2, 4. Please ensure it is unique',
      );
      expect(
        await err(vault, store, { command: 'str_replace', path: '/memories/none.md', old_str: 'x', new_str: 'n' }),
      ).toBe('Error: The path /memories/none.md does not exist. Please provide a valid path.');
      expect(await err(vault, store, { command: 'str_replace', path: '/memories/d', old_str: 'g', new_str: 'n' })).toBe(
        'Error: The path /memories/d does not exist. Please provide a valid path.',
      );
      expect(
        await err(vault, store, { command: 'str_replace', path: '/memories/f.md', old_str: '', new_str: 'n' }),
      ).toMatch(/old_str must not be empty/);
    });

    it('counts overlapping occurrences as ambiguous', async () => {
      const { vault, store } = await setup({ '/memories/f.md': 'aaa' });
      expect(
        await err(vault, store, { command: 'str_replace', path: '/memories/f.md', old_str: 'aa', new_str: 'b' }),
      ).toMatch(/Multiple occurrences/);
    });

    it('cuts a huge old_str in the error echo', async () => {
      const { vault, store } = await setup({ '/memories/f.md': 'abc' });
      const msg = await err(vault, store, {
        command: 'str_replace',
        path: '/memories/f.md',
        old_str: 'q'.repeat(100_000),
        new_str: '',
      });
      expect(msg.length).toBeLessThan(1000);
      expect(msg).toMatch(/99500 more characters/);
    });

    it('keeps CRLF line endings, matching a multi-line old_str written with \\n', async () => {
      const { vault } = await setup({ '/memories/w.txt': 'one\r\ntwo\r\nthree\r\n' });
      await ok(vault, { command: 'str_replace', path: '/memories/w.txt', old_str: 'one\ntwo', new_str: 'uno\ndos' });
      expect(await read(vault, '/memories/w.txt')).toBe('uno\r\ndos\r\nthree\r\n');
      await ok(vault, { command: 'insert', path: '/memories/w.txt', insert_line: 3, insert_text: 'four\nfive\n' });
      expect(await read(vault, '/memories/w.txt')).toBe('uno\r\ndos\r\nthree\r\nfour\r\nfive\r\n');
      const out = (await ok(vault, { command: 'view', path: '/memories/w.txt' })) as string;
      expect(out).not.toContain('\r');
    });
  });

  describe(`insert (${storeName})`, () => {
    it('inserts after a line, at the start, and at the end without a stray blank line', async () => {
      const { vault } = await setup({ '/memories/f.md': 'a\nb\n' });
      expect(await ok(vault, { command: 'insert', path: '/memories/f.md', insert_line: 1, insert_text: 'x' })).toBe(
        'The file /memories/f.md has been edited.',
      );
      expect(await read(vault, '/memories/f.md')).toBe('a\nx\nb\n');
      await ok(vault, { command: 'insert', path: '/memories/f.md', insert_line: 0, insert_text: 'first\n' });
      await ok(vault, { command: 'insert', path: '/memories/f.md', insert_line: 4, insert_text: 'last' });
      expect(await read(vault, '/memories/f.md')).toBe('first\na\nx\nb\nlast\n');
    });

    it('inserts into an empty file and a file without a final newline', async () => {
      const { vault } = await setup({ '/memories/e.md': '', '/memories/n.md': 'a' });
      await ok(vault, { command: 'insert', path: '/memories/e.md', insert_line: 0, insert_text: 'hello\n' });
      expect(await read(vault, '/memories/e.md')).toBe('hello\n');
      await ok(vault, { command: 'insert', path: '/memories/n.md', insert_line: 1, insert_text: 'b' });
      expect(await read(vault, '/memories/n.md')).toBe('a\nb');
    });

    it('gives the spec errors for a bad line and a missing file', async () => {
      const { vault, store } = await setup({ '/memories/f.md': 'a\nb\nc\n' });
      for (const line of [4, -1, 1.5]) {
        expect(
          await err(vault, store, { command: 'insert', path: '/memories/f.md', insert_line: line, insert_text: 'x' }),
        ).toBe(
          `Error: Invalid \`insert_line\` parameter: ${line}. It should be within the range of lines of the file: [0, 3]`,
        );
      }
      expect(
        await err(vault, store, { command: 'insert', path: '/memories/none.md', insert_line: 0, insert_text: 'x' }),
      ).toBe('Error: The path /memories/none.md does not exist');
      expect(
        await err(vault, store, { command: 'insert', path: '/memories/f.md', insert_line: '1', insert_text: 'x' }),
      ).toMatch(/insert_line/);
      expect(await err(vault, store, { command: 'insert', path: '/memories/f.md', insert_text: 'x' })).toMatch(
        /needs `insert_line`/,
      );
    });
  });

  describe(`delete (${storeName})`, () => {
    it('deletes a file and a directory recursively, with the spec strings', async () => {
      const { vault, store } = await setup({
        '/memories/f.md': 'x',
        '/memories/d/a.md': 'a',
        '/memories/d/e/b.md': 'b',
        '/memories/dd.md': 'keep',
      });
      expect(await ok(vault, { command: 'delete', path: '/memories/f.md' })).toBe(
        'Successfully deleted /memories/f.md',
      );
      expect(await ok(vault, { command: 'delete', path: '/memories/d' })).toBe('Successfully deleted /memories/d');
      expect(await read(vault, '/memories/dd.md')).toBe('keep');
      expect(await err(vault, store, { command: 'delete', path: '/memories/d' })).toBe(
        'Error: The path /memories/d does not exist',
      );
      expect(await err(vault, store, { command: 'delete', path: '/memories' })).toBe(
        'Error: Cannot delete the /memories directory itself',
      );
    });
  });

  describe(`rename (${storeName})`, () => {
    it('renames files and directories, with the spec strings', async () => {
      const { vault } = await setup({ '/memories/a.md': 'A', '/memories/p/x.md': 'X', '/memories/p/q/y.md': 'Y' });
      expect(await ok(vault, { command: 'rename', old_path: '/memories/a.md', new_path: '/memories/b/a2.md' })).toBe(
        'Successfully renamed /memories/a.md to /memories/b/a2.md',
      );
      await ok(vault, { command: 'rename', old_path: '/memories/p', new_path: '/memories/r' });
      expect(await read(vault, '/memories/b/a2.md')).toBe('A');
      expect(await read(vault, '/memories/r/q/y.md')).toBe('Y');
      const listing = (await ok(vault, { command: 'view', path: '/memories' })) as string;
      expect(listing).not.toContain('/memories/p');
    });

    it('gives the spec errors and never overwrites', async () => {
      const { vault, store } = await setup({ '/memories/a.md': 'A', '/memories/b.md': 'B', '/memories/d/x.md': 'X' });
      expect(await err(vault, store, { command: 'rename', old_path: '/memories/none', new_path: '/memories/z' })).toBe(
        'Error: The path /memories/none does not exist',
      );
      expect(
        await err(vault, store, { command: 'rename', old_path: '/memories/a.md', new_path: '/memories/b.md' }),
      ).toBe('Error: The destination /memories/b.md already exists');
      expect(await err(vault, store, { command: 'rename', old_path: '/memories/a.md', new_path: '/memories/d' })).toBe(
        'Error: The destination /memories/d already exists',
      );
      expect(await err(vault, store, { command: 'rename', old_path: '/memories/d', new_path: '/memories/a.md' })).toBe(
        'Error: The destination /memories/a.md already exists',
      );
      expect(await err(vault, store, { command: 'rename', old_path: '/memories', new_path: '/memories/z' })).toBe(
        'Error: Cannot rename the /memories directory itself',
      );
      expect(
        await err(vault, store, { command: 'rename', old_path: '/memories/a.md', new_path: '/memories/b.md/c.md' }),
      ).toMatch(/is a file/);
    });

    it('refuses to move a directory into itself without leaking any host path', async () => {
      const { vault, store } = await setup({ '/memories/projects/p.md': 'P' });
      const msg = await err(vault, store, {
        command: 'rename',
        old_path: '/memories/projects',
        new_path: '/memories/projects/sub',
      });
      expect(msg).toBe('Error: Cannot move /memories/projects into itself (/memories/projects/sub is inside it).');
    });
  });

  describe(`paths (${storeName})`, () => {
    it('rejects prefix confusion, traversal (also inside the root), NUL, and echoes canonical paths', async () => {
      const { vault, store } = await setup({ '/memories/x.md': 'x' });
      for (const path of [
        '/memories_evil/x.md',
        '/memoriesX',
        '//memories/x.md',
        '/memories/../etc/passwd',
        '/memories/a/../x.md',
        '/memories/x\u0000.md',
        'memories/x.md',
        '/memories//x.md',
      ]) {
        expect(await err(vault, store, { command: 'view', path })).toMatch(/^Error: Invalid path/);
      }
      expect(await ok(vault, { command: 'create', path: '/memories/./n/./y.md/', file_text: 'y' })).toBe(
        'File created successfully at: /memories/n/y.md',
      );
    });
  });

  describe(`bad input (${storeName})`, () => {
    it('answers every malformed command with a clear error and changes nothing', async () => {
      const { vault, store } = await setup({ '/memories/f.md': 'x' });
      const cases: Array<[unknown, RegExp]> = [
        [null, /must be an object/],
        ['view', /must be an object/],
        [[], /must be an object/],
        [{}, /no `command`/],
        [{ command: 'explode', path: '/memories' }, /Unknown command "explode"/],
        [{ command: 42 }, /Unknown command "42"/],
        [{ command: 'view' }, /needs `path`/],
        [{ command: 'view', path: 7 }, /`path` of view must be a string, not the number 7/],
        [{ command: 'create', path: '/memories/n.md' }, /needs `file_text`/],
        [{ command: 'create', path: '/memories/n.md', file_text: { a: 1 } }, /`file_text` of create must be a string/],
        [{ command: 'str_replace', path: '/memories/f.md', new_str: 'x' }, /needs `old_str`/],
        [
          { command: 'str_replace', path: '/memories/f.md', old_str: 'x', new_str: 5 },
          /`new_str` of str_replace must be a string/,
        ],
        [{ command: 'insert', path: '/memories/f.md', insert_line: 0 }, /needs `insert_text`/],
        [{ command: 'rename', old_path: '/memories/f.md' }, /needs `new_path`/],
        [{ command: 'delete', path: ['/memories/f.md'] }, /must be a string, not an array/],
      ];
      for (const [input, pattern] of cases) expect(await err(vault, store, input)).toMatch(pattern);
    });
  });

  describe(`users (${storeName})`, () => {
    it('keeps users apart and refuses empty or absurd user ids', async () => {
      const { vault } = await setup({ '/memories/secret.md': 'alice only' });
      const bob = await vault.run('bob', { command: 'view', path: '/memories/secret.md' });
      expect(bob.isError).toBe(true);
      expect(() => vault.handlers('')).toThrow(/user id/);
      expect(() => vault.handlers('   ')).toThrow(/user id/);
      expect(() => vault.handlers('x'.repeat(257))).toThrow(/user id/);
      expect(() => vault.handlers('a\u0000b')).toThrow(/user id/);
    });
  });
}
