// The embedded key file's directory fsync follows the one policy of util/fs.ts: a platform that
// cannot sync a directory is not an error; any other failure is (the old code swallowed every
// failure, so a key could be reported created and then lost with the data it protects).
import type * as fsPromises from 'node:fs/promises';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { MemvaultError } from '../../src/errors.js';
import { loadOrCreateLocalMasterKey } from '../../src/crypto/local-key.js';

let directorySyncError: string | undefined;
const directoriesSynced: string[] = [];

vi.mock('node:fs/promises', async (importOriginal) => {
  const actual = await importOriginal<typeof fsPromises>();
  const open = async (...args: Parameters<typeof actual.open>) => {
    const handle = await actual.open(...args);
    if (!(await handle.stat()).isDirectory()) return handle;
    const sync = async () => {
      directoriesSynced.push(String(args[0]));
      if (directorySyncError)
        throw Object.assign(new Error(`${directorySyncError}: simulated`), { code: directorySyncError });
      return handle.sync();
    };
    return new Proxy(handle, { get: (target, key) => (key === 'sync' ? sync : Reflect.get(target, key, target)) });
  };
  return { ...actual, open: vi.fn(open) };
});

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'memvault-key-fsync-'));
  directorySyncError = undefined;
  directoriesSynced.length = 0;
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('key file creation: the directory fsync', () => {
  it('syncs the directory that holds the new key file', async () => {
    const file = path.join(dir, 'master.key');
    const { created } = await loadOrCreateLocalMasterKey(file);
    expect(created).toBe(true);
    expect(directoriesSynced).toEqual([dir]);
  });

  it.each(['EINVAL', 'ENOTSUP', 'EISDIR'])(
    'a platform that cannot sync a directory (%s) is not an error',
    async (code) => {
      directorySyncError = code;
      const file = path.join(dir, 'master.key');
      const { created, masterKey } = await loadOrCreateLocalMasterKey(file);
      expect(created).toBe(true);
      expect(masterKey.byteLength).toBe(32);
    },
  );

  it.each(['EIO', 'ENOSPC'])(
    'a failing sync (%s) is a CONFIG error naming the errno, and the key is not handed out',
    async (code) => {
      directorySyncError = code;
      const file = path.join(dir, 'master.key');
      const error = await loadOrCreateLocalMasterKey(file).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(MemvaultError);
      expect((error as MemvaultError).code).toBe('CONFIG');
      expect((error as MemvaultError).message).toContain(`cannot be made durable (${code})`);
      // The link is in place: the next start reads it rather than making a second key.
      directorySyncError = undefined;
      expect((await stat(file)).isFile()).toBe(true);
      expect((await loadOrCreateLocalMasterKey(file)).created).toBe(false);
    },
  );
});
