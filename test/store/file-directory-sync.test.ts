/**
 * A directory the file store makes is durable once its parent is fsync'd. That fsync runs beside
 * the write that needed the directory (its temp file's write and fsync) instead of before it, and
 * every durable write into the directory (or below it) answers only once it has landed; one that
 * failed fails them. Here the fsync of a directory is held, or failed, by a mock of
 * src/util/fs.ts's fsyncDirectory.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { FileStore } from '../../src/store/file.js';
import type * as FsUtil from '../../src/util/fs.js';

const control = vi.hoisted(() => ({
  /** Directories whose fsync waits for `release` (or fails with `fail`). */
  hold: new Set<string>(),
  held: [] as string[],
  release: undefined as (() => void) | undefined,
  gate: Promise.resolve(),
  fail: false,
}));
vi.mock('../../src/util/fs.js', async (importOriginal) => {
  const actual = await importOriginal<typeof FsUtil>();
  return {
    ...actual,
    fsyncDirectory: async (path: string) => {
      if (control.hold.has(path)) {
        control.held.push(path);
        await control.gate;
        if (control.fail) throw Object.assign(new Error('EIO: i/o error, fsync'), { code: 'EIO' });
      }
      return actual.fsyncDirectory(path);
    },
  };
});

const dirs: string[] = [];
afterAll(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});
beforeEach(() => {
  control.hold.clear();
  control.held.length = 0;
  control.fail = false;
  control.gate = new Promise<void>((resolve) => (control.release = resolve));
});
const text = (s: string) => new TextEncoder().encode(s);
const settle = async (): Promise<void> => {
  for (let i = 0; i < 50; i++) await new Promise((resolve) => setImmediate(resolve));
};

describe('a new directory is durable before a write into it answers', () => {
  it.each([
    ['a create-only put', { ifNoneMatch: '*' as const }],
    ['a replacing put', {}],
  ])('%s into a new directory waits for the fsync of the directory that holds it', async (_name, options) => {
    const root = await mkdtemp(join(tmpdir(), 'memvault-dirsync-'));
    dirs.push(root);
    const store = await FileStore.open(root);
    await store.put('a/seed', text('seed'));
    control.hold.add(join(root, 'a')); // the parent of the new directory a/b
    let answered = false;
    const put = store.put('a/b/new', text('new'), options).then((r) => ((answered = true), r));
    // The object itself lands (its own write and its directory's fsync do not wait for the parent's).
    for (let i = 0; i < 2000 && (await store.head('a/b/new')) === null; i++) await settle();
    expect(new TextDecoder().decode((await store.get('a/b/new'))!.body)).toBe('new');
    await settle();
    expect(control.held).toEqual([join(root, 'a')]);
    expect(answered).toBe(false);
    // Another durable write into the same directory waits for the same fsync.
    let secondAnswered = false;
    const second = store.put('a/b/other', text('other'), { ifNoneMatch: '*' }).then(() => (secondAnswered = true));
    for (let i = 0; i < 2000 && (await store.head('a/b/other')) === null; i++) await settle();
    await settle();
    expect(secondAnswered).toBe(false);
    control.release!();
    expect((await put).etag).toMatch(/./);
    await second;
    expect(answered && secondAnswered).toBe(true);
    await store.close();
  });

  it('a failed fsync of the parent fails the write, and every later durable write below that directory', async () => {
    const root = await mkdtemp(join(tmpdir(), 'memvault-dirsync-'));
    dirs.push(root);
    const store = await FileStore.open(root);
    await store.put('a/seed', text('seed'));
    control.hold.add(join(root, 'a'));
    control.fail = true;
    control.release!();
    await expect(store.put('a/b/new', text('new'), { ifNoneMatch: '*' })).rejects.toMatchObject({
      code: 'STORE_UNAVAILABLE',
      message: 'the local store failed: EIO',
    });
    await expect(store.put('a/b/c/deeper', text('x'))).rejects.toMatchObject({
      message: 'the local store failed: EIO',
    });
    // Elsewhere the store goes on.
    await store.put('z/elsewhere', text('fine'));
    await store.close();
  });

  it("without durability nothing is fsync'd and nothing waits", async () => {
    const root = await mkdtemp(join(tmpdir(), 'memvault-dirsync-'));
    dirs.push(root);
    const store = await FileStore.open(root, { durable: false });
    control.hold.add(root);
    control.hold.add(join(root, 'a'));
    await store.put('a/b/new', text('new'), { ifNoneMatch: '*' });
    expect(control.held).toEqual([]);
    await store.close();
  });
});
