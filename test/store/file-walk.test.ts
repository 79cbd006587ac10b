import { mkdtemp, rm } from 'node:fs/promises';
import * as fsPromises from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { afterAll, expect, it, vi } from 'vitest';
import { FileStore } from '../../src/store/file.js';

// Record the directories the store reads, to check that list walks only those that can hold the prefix.
vi.mock('node:fs/promises', async (importOriginal) => {
  const actual = await importOriginal<typeof fsPromises>();
  return { ...actual, readdir: vi.fn(actual.readdir) };
});

const dirs: string[] = [];
afterAll(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

it('lists by walking only the directories that can contain the prefix', async () => {
  const root = await mkdtemp(join(tmpdir(), 'memvault-file-walk-'));
  dirs.push(root);
  const store = await FileStore.open(root, { durable: false });
  const keys = ['u/1/a/x', 'u/1/a/y/z', 'u/1/ab', 'u/1/b/x', 'u/2/a/x', 'v/a', `u/1/${'L'.repeat(200)}/x`];
  for (const key of keys) await store.put(key, new Uint8Array(0));
  const readdir = vi.mocked(fsPromises.readdir);

  readdir.mockClear();
  expect((await store.list('u/1/a')).objects.map((o) => o.key)).toEqual(['u/1/a/x', 'u/1/a/y/z', 'u/1/ab']);
  const visited = readdir.mock.calls.map(([path]) => relative(root, String(path)).split('\\').join('/'));
  // The walk starts at the directory of the prefix's complete segments (u/1), never at the root.
  expect(visited.sort()).toEqual(['u/1', 'u/1/a', 'u/1/a/y']);

  readdir.mockClear();
  expect((await store.list(`u/1/${'L'.repeat(200)}/`)).objects.map((o) => o.key)).toEqual([`u/1/${'L'.repeat(200)}/x`]);
  // A prefix ending in '/' starts right in its directory: the continuation pieces of the long segment and nothing else.
  const longWalk = readdir.mock.calls.map(([path]) => relative(root, String(path)));
  expect(longWalk.length).toBeGreaterThan(0);
  expect(longWalk.every((p) => p.startsWith(join('u', '1', '%4C')))).toBe(true);
  expect(longWalk.length).toBe(1);

  // Paging with startAfter skips whole subtrees that sort before it.
  readdir.mockClear();
  expect((await store.list('u/', { startAfter: 'u/1/b/x' })).objects.map((o) => o.key)).toEqual(['u/2/a/x']);
  const pagedWalk = readdir.mock.calls.map(([path]) => relative(root, String(path)).split('\\').join('/'));
  expect(pagedWalk).not.toContain('u/1/a');
  expect(pagedWalk).not.toContain('u/1/a/y');
});
