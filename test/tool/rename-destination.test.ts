/**
 * rename never overwrites (spec): any file at the destination is refused, even one holding the
 * source's bytes, unless it is this very rename's own copy (written before a crash, or before an
 * answer was lost), which it recognises by the origin derived from the source version. A rename of
 * a path onto itself answers as the spec does for its source: missing, or the destination exists.
 */
import { describe, expect, it } from 'vitest';
import { renameOrigin } from '../../src/vault/tree/operations.js';
import { memoryVault, textAt } from '../kit/vault.js';

const U = 'alice';

describe('rename onto an existing file', () => {
  it('is refused when the destination holds the same bytes as the source, and changes nothing', async () => {
    const { vault } = await memoryVault();
    await vault.run(U, { command: 'create', path: '/memories/todo.md', file_text: 'same\n' });
    await vault.run(U, { command: 'create', path: '/memories/done.md', file_text: 'same\n' });
    const result = await vault.run(U, {
      command: 'rename',
      old_path: '/memories/todo.md',
      new_path: '/memories/done.md',
    });
    expect(result).toMatchObject({ isError: true, content: 'Error: The destination /memories/done.md already exists' });
    expect(await textAt(vault, U, '/memories/todo.md')).toBe('same\n');
    expect(await textAt(vault, U, '/memories/done.md')).toBe('same\n');
    await vault.close();
  });

  it("is refused when the destination is another rename's copy of the same bytes", async () => {
    const { vault } = await memoryVault();
    await vault.run(U, { command: 'create', path: '/memories/a.md', file_text: 'x' });
    await vault.run(U, { command: 'create', path: '/memories/b.md', file_text: 'x' });
    expect(
      (await vault.run(U, { command: 'rename', old_path: '/memories/a.md', new_path: '/memories/c.md' })).isError,
    ).toBe(false);
    const result = await vault.run(U, { command: 'rename', old_path: '/memories/b.md', new_path: '/memories/c.md' });
    expect(result).toMatchObject({ isError: true, content: 'Error: The destination /memories/c.md already exists' });
    expect(await textAt(vault, U, '/memories/b.md')).toBe('x');
    await vault.close();
  });

  it('completes over its own copy, left by an earlier run of the same rename (a crash before the fence)', async () => {
    const { vault } = await memoryVault();
    await vault.run(U, { command: 'create', path: '/memories/a.md', file_text: 'A' });
    const files = await vault.files(U);
    const source = (await files.read('/memories/a.md'))!;
    // What the first run wrote before it stopped: the copy, with the origin of this source version.
    await files.write('/memories/b.md', source.data, {
      ifNoneMatch: true,
      origin: renameOrigin('/memories/a.md', source.etag),
    });
    const again = await vault.run(U, { command: 'rename', old_path: '/memories/a.md', new_path: '/memories/b.md' });
    expect(again).toMatchObject({ isError: false, content: 'Successfully renamed /memories/a.md to /memories/b.md' });
    expect(await textAt(vault, U, '/memories/a.md')).toBeNull();
    expect(await textAt(vault, U, '/memories/b.md')).toBe('A');
    await vault.close();
  });

  it('derives the origin from the source path and version', () => {
    expect(renameOrigin('/memories/a.md', 'e1')).toBe(renameOrigin('/memories/a.md', 'e1'));
    expect(renameOrigin('/memories/a.md', 'e1')).not.toBe(renameOrigin('/memories/b.md', 'e1'));
    expect(renameOrigin('/memories/a.md', 'e1')).not.toBe(renameOrigin('/memories/a.md', 'e2'));
    expect(renameOrigin('/memories/a.md', 'e1')).not.toContain('memories');
  });
});

describe('rename onto itself', () => {
  it('of a missing path answers that the path does not exist (spec)', async () => {
    const { vault } = await memoryVault();
    const result = await vault.run(U, {
      command: 'rename',
      old_path: '/memories/nope.md',
      new_path: '/memories/nope.md',
    });
    expect(result).toMatchObject({
      isError: true,
      code: 'NOT_FOUND',
      content: 'Error: The path /memories/nope.md does not exist',
    });
    await vault.close();
  });

  it('of a file or a directory answers that the destination exists, and changes nothing', async () => {
    const { vault } = await memoryVault();
    await vault.run(U, { command: 'create', path: '/memories/d/f.md', file_text: 'f' });
    for (const path of ['/memories/d/f.md', '/memories/d']) {
      const result = await vault.run(U, { command: 'rename', old_path: path, new_path: path });
      expect(result).toMatchObject({
        isError: true,
        code: 'ALREADY_EXISTS',
        content: `Error: The destination ${path} already exists`,
      });
    }
    expect(await textAt(vault, U, '/memories/d/f.md')).toBe('f');
    await vault.close();
  });
});
