/**
 * The embedded store never follows a link out of its root (README, "Security model"): a symbolic
 * link planted anywhere in the data directory, in place of a directory or of an object file, makes
 * the operation fail with a clear store error, and nothing outside the root is read, written,
 * created or deleted. The root itself may be a link (the operator's choice).
 */
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, readdir, readFile, rename, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createVault } from '../../src/index.js';
import { MemvaultError } from '../../src/errors.js';
import { FileStore } from '../../src/store/file.js';

const dirs: string[] = [];
afterAll(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

async function sandbox(): Promise<{ root: string; outside: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'memvault-links-'));
  dirs.push(dir);
  const root = join(dir, 'root');
  const outside = join(dir, 'outside');
  await mkdir(root);
  await mkdir(outside);
  return { root, outside };
}

/** Every file and directory below `dir`, relative, sorted. */
async function tree(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true });
  return entries.map(String).sort();
}

const text = (s: string) => new TextEncoder().encode(s);

async function refused(promise: Promise<unknown>): Promise<void> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(MemvaultError);
  expect((error as MemvaultError).code).toBe('STORE_UNAVAILABLE');
  expect((error as MemvaultError).message).toBe('the local store failed: ELINK');
}

describe('FileStore and links planted in its data directory', () => {
  it('refuses a link in place of a directory: no write, read, copy or delete goes through it', async () => {
    const { root, outside } = await sandbox();
    const store = await FileStore.open(root, { durable: false });
    // Key 'evil/x' lives in directory 'evil'; an object written through a link would land outside.
    await symlink(outside, join(root, 'evil'));
    await refused(store.put('evil/x', text('payload')));
    await refused(store.put('evil/deeper/x', text('payload')));
    await refused(store.put('evil/x', text('payload'), { ifNoneMatch: '*' }));
    expect(await tree(outside)).toEqual([]);

    // A file outside, in the store's own format, is not served through the link either.
    const honest = await FileStore.open(join(outside, '..', 'honest'), { durable: false });
    dirs.push(join(outside, '..', 'honest'));
    await honest.put('x', text('outside secret'));
    await writeFile(join(outside, 'x~'), await readFile(join(outside, '..', 'honest', 'x~')));
    await refused(store.get('evil/x'));
    await refused(store.head('evil/x'));
    await refused(store.copy('evil/x', 'inside'));
    await refused(store.delete('evil/x'));
    expect((await store.deleteMany(['evil/x'])).failed).toEqual(['evil/x']);
    expect(await tree(outside)).toEqual(['x~']);
    expect(await store.get('inside')).toBeNull();
    // Listing never walks into a link, neither met on the way nor where the walk starts.
    expect((await store.list('')).objects).toEqual([]);
    expect((await store.list('evil/')).objects).toEqual([]);
    expect((await store.list('evil/x')).objects).toEqual([]);
  });

  it('refuses a link deeper down, and a link in place of an object file', async () => {
    const { root, outside } = await sandbox();
    const store = await FileStore.open(root, { durable: false });
    await store.put('a/b/keep', text('mine'));
    await symlink(outside, join(root, 'a', 'b', 'c'));
    await refused(store.put('a/b/c/x', text('payload')));
    expect(await tree(outside)).toEqual([]);

    // An object file that is a link to a file outside: reading, heading and copying refuse it.
    const honestDir = join(outside, '..', 'honest2');
    dirs.push(honestDir);
    const honest = await FileStore.open(honestDir, { durable: false });
    await honest.put('s', text('outside secret'));
    await symlink(join(honestDir, 's~'), join(root, 'a', 'b', 'stolen~'));
    await refused(store.get('a/b/stolen'));
    await refused(store.head('a/b/stolen'));
    await refused(store.copy('a/b/stolen', 'a/b/copy'));
    await refused(store.put('a/b/stolen', text('x'), { ifNoneMatch: '*' }));
    expect(new TextDecoder().decode((await honest.get('s'))!.body)).toBe('outside secret');
    // The store's own objects next to the links still work.
    expect(new TextDecoder().decode((await store.get('a/b/keep'))!.body)).toBe('mine');
    expect((await store.list('a/')).objects.map((o) => o.key)).toEqual(['a/b/keep']);
    // A prefix whose directory is the link: its walk would start inside the link, and lists nothing.
    await writeFile(join(outside, 'y~'), await readFile(join(honestDir, 's~')));
    expect((await store.list('a/b/c/')).objects).toEqual([]);
    expect((await store.list('a/b/c/y')).objects).toEqual([]);
  });

  it('refuses a link above directories a write would create, at any depth, creating nothing through it', async () => {
    const { root, outside } = await sandbox();
    const store = await FileStore.open(root, { durable: true });
    await store.put('a/keep', text('mine'));
    await symlink(outside, join(root, 'a', 'b'));
    await refused(store.put('a/b/c/d/x', text('payload')));
    await refused(store.put('a/b/c/y', text('payload'), { ifNoneMatch: '*' }));
    await refused(store.copy('a/keep', 'a/b/c/d/e/z'));
    expect(await tree(outside)).toEqual([]);
    // Below a real directory the same depth is created (one realpath, then a mkdir per new level).
    await store.put('a/r/c/d/x', text('fine'), { ifNoneMatch: '*' });
    expect(new TextDecoder().decode((await store.get('a/r/c/d/x'))!.body)).toBe('fine');
  });

  it('works on a root that is itself a link (the operator chose it)', async () => {
    const { root, outside } = await sandbox();
    const linkedRoot = join(outside, 'linked-root');
    await symlink(root, linkedRoot);
    const store = await FileStore.open(linkedRoot, { durable: false });
    await store.put('d/e/f', text('ok'));
    expect(new TextDecoder().decode((await store.get('d/e/f'))!.body)).toBe('ok');
    expect((await store.list('d/')).objects.map((o) => o.key)).toEqual(['d/e/f']);
    await store.delete('d/e/f');
    expect(await tree(root)).toEqual([]);
  });

  it("through the vault: a user's directory swapped for a link makes commands fail, and nothing outside is touched", async () => {
    const { root, outside } = await sandbox();
    const store = await FileStore.open(root, { durable: false });
    const masterKey = randomBytes(32).toString('base64');
    const vault = await createVault({ store, encryption: { masterKey } });
    const U = 'linked-user';
    expect((await vault.run(U, { command: 'create', path: '/memories/notes.md', file_text: 'hello\n' })).isError).toBe(
      false,
    );
    // Move the user's directory (u/<uid>) outside and leave a link in its place, as an attacker
    // with write access to the data directory, or a careless operator, might.
    const [uid] = await readdir(join(root, 'u'));
    const moved = join(outside, 'user');
    await rename(join(root, 'u', uid!), moved);
    await symlink(moved, join(root, 'u', uid!));
    const before = await tree(moved);

    for (const input of [
      { command: 'create', path: '/memories/planted.md', file_text: 'written through the link\n' },
      { command: 'view', path: '/memories/notes.md' },
      { command: 'str_replace', path: '/memories/notes.md', old_str: 'hello', new_str: 'bye' },
      { command: 'delete', path: '/memories/notes.md' },
    ]) {
      const result = await vault.run(U, input);
      expect(result.isError, JSON.stringify(input)).toBe(true);
      expect(result.content as string).not.toContain(root);
      expect(result.content as string).not.toMatch(/hello|\/tmp\//);
    }
    expect(await tree(moved)).toEqual(before);
    await vault.close();
  });
});
