import { mkdtemp, rm } from 'node:fs/promises';
import * as fsPromises from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it, vi } from 'vitest';
import { FileStore } from '../../src/store/file.js';
import { MARKER_BODY, markerMetadata } from '../../src/store/fence.js';

// Record which paths the store opens for a directory fsync (util/fs opens a directory with 'r').
vi.mock('node:fs/promises', async (importOriginal) => {
  const actual = await importOriginal<typeof fsPromises>();
  return { ...actual, open: vi.fn(actual.open) };
});

const dirs: string[] = [];
afterAll(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

async function durableStore(): Promise<{ store: FileStore; root: string }> {
  const root = await mkdtemp(join(tmpdir(), 'memvault-file-hot-'));
  dirs.push(root);
  return { store: await FileStore.open(root), root };
}

/** Directory fsyncs (opens with flag 'r' of a path that is not an object file) since the last clear. */
function directorySyncs(): number {
  return vi.mocked(fsPromises.open).mock.calls.filter(([path, flags]) => flags === 'r' && !String(path).endsWith('~'))
    .length;
}

it("removes a fence marker without a directory fsync, and keeps the fsync for an ordinary object's delete", async () => {
  const { store } = await durableStore();
  const open = vi.mocked(fsPromises.open);
  const file = await store.put('u/1/f/a', new TextEncoder().encode('file'));
  const marker = await store.put('u/1/f/m', MARKER_BODY, { metadata: markerMetadata('deleted', 'op1') });

  open.mockClear();
  await store.delete('u/1/f/a', { ifMatch: file.etag });
  expect(directorySyncs()).toBe(1);
  expect(await store.head('u/1/f/a')).toBeNull();

  open.mockClear();
  await store.delete('u/1/f/m', { ifMatch: marker.etag });
  expect(directorySyncs()).toBe(0);
  expect(await store.head('u/1/f/m')).toBeNull();

  // An empty object that is not a marker, and a marker deleted without a condition, keep the fsync.
  const empty = await store.put('u/1/f/e', new Uint8Array(0));
  await store.put('u/1/f/m2', MARKER_BODY, { metadata: markerMetadata('moved', 'op2') });
  open.mockClear();
  await store.delete('u/1/f/e', { ifMatch: empty.etag });
  await store.delete('u/1/f/m2');
  expect(directorySyncs()).toBe(2);
  // A marker whose ETag changed meanwhile is refused as before, and stays.
  const again = await store.put('u/1/f/m3', MARKER_BODY, { metadata: markerMetadata('deleted', 'op3') });
  await expect(
    store.delete('u/1/f/m3', { ifMatch: again.etag.replace(/^./, (c) => (c === '0' ? '1' : '0')) }),
  ).rejects.toThrow();
  expect(await store.head('u/1/f/m3')).not.toBeNull();
});

it('reads headers of every length: a long key and metadata past the first read, and an object far larger than it', async () => {
  const { store } = await durableStore();
  const longKey = `u/1/${'k'.repeat(150)}/${'m'.repeat(150)}/${'n'.repeat(150)}/${'o'.repeat(150)}/${'p'.repeat(150)}/${'q'.repeat(150)}`;
  const metadata = Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`field${i}`, 'v'.repeat(100)]));
  const big = new Uint8Array(100_000).fill(7);
  await store.put(longKey, big, { metadata });
  const head = await store.head(longKey);
  expect(head?.size).toBe(100_000);
  const listed = await store.list('u/1/');
  expect(listed.objects.map((o) => [o.key, o.size])).toEqual([[longKey, 100_000]]);
  const got = await store.get(longKey);
  expect(got?.metadata).toEqual(metadata);
  expect(got?.body.byteLength).toBe(100_000);
  // A small object whose whole file fits in the first read: its size is the file's, checked as before.
  await store.put('u/1/s', new Uint8Array([1, 2, 3]));
  expect((await store.head('u/1/s'))?.size).toBe(3);
  const small = await store.put('u/1/t', new Uint8Array(0), { metadata });
  expect((await store.head('u/1/t'))?.etag).toBe(small.etag);
});
