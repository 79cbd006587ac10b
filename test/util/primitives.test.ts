// The shared primitives of src/util: one pool, one errno helper, one directory fsync, one lock each.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { forEachLimit, mapLimit } from '../../src/util/concurrency.js';
import { errnoOf, hasErrno } from '../../src/util/errno.js';
import { fsyncDirectory } from '../../src/util/fs.js';
import { KeyedMutex, Mutex, ReadWriteLock } from '../../src/util/rw-lock.js';

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

const tick = () => new Promise<void>((r) => setImmediate(r));

describe('mapLimit / forEachLimit', () => {
  it('keeps item order in the results and never runs more than the limit at once', async () => {
    let running = 0;
    let peak = 0;
    const results = await mapLimit([5, 1, 4, 2, 3, 0, 6], 3, async (n, i) => {
      running += 1;
      peak = Math.max(peak, running);
      await new Promise((r) => setTimeout(r, n));
      running -= 1;
      return `${i}:${n}`;
    });
    expect(results).toEqual(['0:5', '1:1', '2:4', '3:2', '4:3', '5:0', '6:6']);
    expect(peak).toBe(3);
    expect(await mapLimit([], 4, async () => 1)).toEqual([]);
    // A limit below one still makes progress.
    expect(await mapLimit([1, 2], 0, async (n) => n * 2)).toEqual([2, 4]);
  });

  it('after a failure starts nothing new, lets the items in flight finish, then throws the first error', async () => {
    for (const run of [
      (fn: (n: number) => Promise<void>) => forEachLimit([0, 1, 2, 3, 4, 5], 2, fn),
      (fn: (n: number) => Promise<void>) => mapLimit([0, 1, 2, 3, 4, 5], 2, fn),
    ]) {
      const started: number[] = [];
      const slow = deferred();
      let slowDone = false;
      let settled = false;
      const done = run(async (n) => {
        started.push(n);
        if (n === 0) {
          await slow.promise;
          slowDone = true;
          return;
        }
        if (n === 1) throw new Error('first');
        throw new Error('later');
      }).then(
        () => 'resolved',
        (e: Error) => e.message,
      );
      void done.then(() => (settled = true));
      await tick();
      await tick();
      // Item 0 is still in flight: the pool has not answered yet, and nothing after the failure started.
      expect(settled).toBe(false);
      expect(started).toEqual([0, 1]);
      slow.resolve();
      expect(await done).toBe('first');
      expect(slowDone).toBe(true);
      expect(started).toEqual([0, 1]);
    }
  });
});

describe('errnoOf', () => {
  it('reads the code of a system error and nothing else', () => {
    expect(errnoOf(Object.assign(new Error('x'), { code: 'ENOENT' }))).toBe('ENOENT');
    expect(errnoOf({ code: 'EEXIST' })).toBe('EEXIST');
    expect(errnoOf({ code: 17 })).toBeUndefined();
    expect(errnoOf(null)).toBeUndefined();
    expect(errnoOf(undefined)).toBeUndefined();
    expect(errnoOf('ENOENT')).toBeUndefined();
    expect(hasErrno({ code: 'ENOTDIR' }, 'ENOENT', 'ENOTDIR')).toBe(true);
    expect(hasErrno({ code: 'EIO' }, 'ENOENT', 'ENOTDIR')).toBe(false);
    expect(hasErrno(new Error('ENOENT'), 'ENOENT')).toBe(false);
  });
});

describe('fsyncDirectory', () => {
  it('syncs a directory, and throws when the directory is not there (durability was promised)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'memvault-util-'));
    try {
      await expect(fsyncDirectory(dir)).resolves.toBeUndefined();
      await expect(fsyncDirectory(join(dir, 'gone'))).rejects.toMatchObject({ code: 'ENOENT' });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('ReadWriteLock, Mutex, KeyedMutex', () => {
  it('readers share, a writer is alone, and a waiting writer blocks later readers (FIFO)', async () => {
    const lock = new ReadWriteLock();
    const order: string[] = [];
    const r1 = await lock.acquire(false);
    const r2 = await lock.acquire(false);
    expect(lock.idle).toBe(false);
    const w = lock.acquire(true).then((release) => (order.push('writer'), release));
    const r3 = lock.acquire(false).then((release) => (order.push('late reader'), release));
    await tick();
    expect(order).toEqual([]);
    r1();
    r2();
    const releaseWriter = await w;
    await tick();
    expect(order).toEqual(['writer']);
    releaseWriter();
    (await r3)();
    expect(order).toEqual(['writer', 'late reader']);
    expect(lock.idle).toBe(true);
  });

  it('a release called twice does not release a later holder', async () => {
    const lock = new ReadWriteLock();
    const first = await lock.acquire(true);
    first();
    const second = await lock.acquire(true);
    first();
    let third = false;
    void lock.acquire(true).then(() => (third = true));
    await tick();
    expect(third).toBe(false);
    second();
    await tick();
    expect(third).toBe(true);
    const mutex = new Mutex();
    const a = await mutex.acquire();
    a();
    a();
    expect(mutex.holders).toBe(0);
  });

  it('a mutex per key: one key runs one at a time, other keys do not wait, and idle keys are dropped', async () => {
    const locks = new KeyedMutex();
    const order: string[] = [];
    const gate = deferred();
    const first = locks.run('a', async () => {
      order.push('a1 start');
      await gate.promise;
      order.push('a1 end');
    });
    const second = locks.run('a', async () => void order.push('a2'));
    await locks.run('b', async () => void order.push('b'));
    expect(locks.size).toBe(1);
    gate.resolve();
    await Promise.all([first, second]);
    expect(order).toEqual(['a1 start', 'b', 'a1 end', 'a2']);
    expect(locks.size).toBe(0);
    await expect(locks.run('c', async () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    expect(locks.size).toBe(0);
  });
});

describe('publishTemporary', () => {
  it('publishes a temporary at a free name and never replaces a file that is there (EEXIST, both files kept)', async () => {
    const { readFileSync, writeFileSync, existsSync } = await import('node:fs');
    const { publishTemporary, temporaryPathFor } = await import('../../src/util/fs.js');
    const dir = mkdtempSync(join(tmpdir(), 'memvault-util-'));
    try {
      const target = join(dir, 'copy.db');
      const first = temporaryPathFor(target);
      writeFileSync(first, 'ours');
      await publishTemporary(first, target);
      expect(readFileSync(target, 'utf8')).toBe('ours');
      expect(existsSync(first)).toBe(false);
      const second = temporaryPathFor(target);
      writeFileSync(second, 'another');
      await expect(publishTemporary(second, target)).rejects.toMatchObject({ code: 'EEXIST' });
      expect(readFileSync(target, 'utf8')).toBe('ours');
      expect(readFileSync(second, 'utf8')).toBe('another');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('temporaryPathFor / commitTemporary', () => {
  it('names a file beside the target and moves it over the target whole; a missing temporary leaves the target as it was', async () => {
    const { readFileSync, writeFileSync, existsSync } = await import('node:fs');
    const { commitTemporary, temporaryPathFor } = await import('../../src/util/fs.js');
    const dir = mkdtempSync(join(tmpdir(), 'memvault-util-'));
    try {
      const target = join(dir, 'out.tar');
      writeFileSync(target, 'old');
      const temporary = temporaryPathFor(target);
      expect(temporary.startsWith(`${target}.`)).toBe(true);
      expect(temporaryPathFor(target)).not.toBe(temporary);
      writeFileSync(temporary, 'new');
      await commitTemporary(temporary, target);
      expect(readFileSync(target, 'utf8')).toBe('new');
      expect(existsSync(temporary)).toBe(false);
      await expect(commitTemporary(temporaryPathFor(target), target)).rejects.toMatchObject({ code: 'ENOENT' });
      expect(readFileSync(target, 'utf8')).toBe('new');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
