/**
 * The file store on a file system without hard links (FAT, some network and FUSE mounts), where
 * link(2) answers EPERM: create-only writes cannot link (src/store/file/write.ts), so the store
 * falls back to the key's lock for every create (and the lock itself to O_EXCL, src/store/file/lock.ts).
 * The whole adapter contract must still hold, and racing creates and copies still have one winner.
 */
import type * as FsPromises from 'node:fs/promises';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { FileStore } from '../../src/store/file.js';
import { PreconditionFailedError } from '../../src/store/port.js';
import { runStoreContract } from './contract.js';

const links = vi.hoisted(() => ({ tried: 0 }));
vi.mock('node:fs/promises', async (importOriginal) => {
  const actual = await importOriginal<typeof FsPromises>();
  return {
    ...actual,
    link: async () => {
      links.tried += 1;
      throw Object.assign(new Error('EPERM: operation not permitted, link'), { code: 'EPERM' });
    },
  };
});

const dirs: string[] = [];
afterAll(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});
async function sandbox(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'memvault-nolinks-'));
  dirs.push(dir);
  return dir;
}
const text = (s: string) => new TextEncoder().encode(s);

runStoreContract('file, without hard links', async () => {
  const dir = await sandbox();
  return { store: await FileStore.open(join(dir, 'store')), cleanup: () => rm(dir, { recursive: true, force: true }) };
});

describe('FileStore without hard links', () => {
  it('creates once under the lock after link() is refused: one winner among racing creates and copies, and the key holds it', async () => {
    const store = await FileStore.open(await sandbox());
    const before = links.tried;
    await store.put('source', text('copied'));
    for (let round = 0; round < 20; round += 1) {
      const key = `k${round}`;
      const results = await Promise.allSettled([
        store.copy('source', key, { ifNoneMatch: '*' }),
        store.put(key, text('writer 1'), { ifNoneMatch: '*' }),
        store.put(key, text('writer 2'), { ifNoneMatch: '*' }),
      ]);
      const winners = results.flatMap((r, i) => (r.status === 'fulfilled' ? [i] : []));
      expect(winners).toHaveLength(1);
      for (const r of results) if (r.status === 'rejected') expect(r.reason).toBeInstanceOf(PreconditionFailedError);
      expect(new TextDecoder().decode((await store.get(key))!.body)).toBe(
        winners[0] === 0 ? 'copied' : `writer ${winners[0]}`,
      );
    }
    expect(links.tried).toBeGreaterThan(before); // link() was tried (and refused), not skipped
  });

  it('commits prepared creates staged before link() was found refused: written again under the lock, no temp file left', async () => {
    const dir = await sandbox();
    const store = await FileStore.open(dir);
    // Both staged while the store still believes in hard links (a fresh store's first creates).
    const first = await store.prepareCreate('a/first', text('one'));
    const second = await store.prepareCreate('a/second', text('two'));
    await first.commit(); // link() refused: the store falls back (the staged temp file went with the link)
    await second.commit(); // staged before the fall-back: its temp file dropped, written again under the lock
    expect(new TextDecoder().decode((await store.get('a/first'))!.body)).toBe('one');
    expect(new TextDecoder().decode((await store.get('a/second'))!.body)).toBe('two');
    // Create-only still: a prepared create of a taken key loses.
    const late = await store.prepareCreate('a/first', text('late'));
    await expect(late.commit()).rejects.toBeInstanceOf(PreconditionFailedError);
    await store.idle();
    const names = await readdir(join(dir, 'a'));
    expect(names.filter((n) => n.includes('~tmp'))).toEqual([]);
  });
});
