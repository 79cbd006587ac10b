import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createVault, fromEnv } from '../../src/index.js';
import {
  emptyStore,
  makeS3Store,
  recordS3SuiteRun,
  s3Available,
  s3ClientConfig,
  s3SkipReason,
  s3Url,
} from './helpers.js';

recordS3SuiteRun(import.meta.url);

/**
 * `createVault({ store: 's3://bucket/prefix', s3 })` with no key configured anywhere: start-up stops
 * and says how to make a key, creating nothing (a key made silently in an ephemeral home would be
 * lost with it). With `encryption: { createKeyFile: true }` the first start of a new deployment
 * creates a master key file under MEMVAULT_HOME (0600) and works; later starts read it without the
 * opt-in; a start with another key (a new machine that was never given the file) stops with a
 * clear error and leaves no stray key file behind.
 */
// The library reads no environment by itself: MEMVAULT_HOME reaches it through fromEnv().
const keysFromEnv = () => fromEnv().encryption ?? {};

describe.skipIf(!s3Available())(
  `S3 store with no key configured${s3Available() ? '' : ` (skipped: ${s3SkipReason()})`}`,
  () => {
    const prefix = `default-key-${randomBytes(3).toString('hex')}`;
    const homes: string[] = [];
    const saved = {
      home: process.env['MEMVAULT_HOME'],
      key: process.env['MEMVAULT_MASTER_KEY'],
      file: process.env['MEMVAULT_MASTER_KEY_FILE'],
      kms: process.env['MEMVAULT_KMS_KEY_ID'],
    };
    afterAll(async () => {
      for (const [name, value] of [
        ['MEMVAULT_HOME', saved.home],
        ['MEMVAULT_MASTER_KEY', saved.key],
        ['MEMVAULT_MASTER_KEY_FILE', saved.file],
        ['MEMVAULT_KMS_KEY_ID', saved.kms],
      ] as const) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
      for (const home of homes) await rm(home, { recursive: true, force: true });
      const store = makeS3Store(prefix);
      await emptyStore(store);
      await store.close();
    });

    it('creates a key on a new deployment, and refuses another key later', async () => {
      delete process.env['MEMVAULT_MASTER_KEY'];
      delete process.env['MEMVAULT_MASTER_KEY_FILE'];
      delete process.env['MEMVAULT_KMS_KEY_ID'];
      const first = await mkdtemp(join(tmpdir(), 'memvault-home-'));
      homes.push(first);
      process.env['MEMVAULT_HOME'] = first;
      delete process.env['MEMVAULT_CREATE_KEY_FILE'];
      // No opt-in: a clear error naming `memvault keys create`, and nothing created.
      await expect(
        createVault({ store: s3Url(prefix), s3: s3ClientConfig(), encryption: keysFromEnv() }),
      ).rejects.toThrow(/memvault keys create/);
      await expect(stat(join(first, 'master.key'))).rejects.toThrow();
      const vault = await createVault({
        store: s3Url(prefix),
        s3: s3ClientConfig(),
        encryption: { ...keysFromEnv(), createKeyFile: true },
      });
      expect(await vault.run('u', { command: 'create', path: '/memories/a.md', file_text: 'kept' })).toMatchObject({
        isError: false,
      });
      await vault.close();
      expect((await stat(join(first, 'master.key'))).mode & 0o077).toBe(0);

      // Same home: the same key (read without the opt-in), the same memories.
      const again = await createVault({ store: s3Url(prefix), s3: s3ClientConfig(), encryption: keysFromEnv() });
      expect(JSON.stringify((await again.run('u', { command: 'view', path: '/memories/a.md' })).content)).toContain(
        'kept',
      );
      await again.close();

      // Another machine without the key file: a clear start-up error, and no key file left there.
      const second = await mkdtemp(join(tmpdir(), 'memvault-home-'));
      homes.push(second);
      process.env['MEMVAULT_HOME'] = second;
      await expect(
        createVault({
          store: s3Url(prefix),
          s3: s3ClientConfig(),
          encryption: { ...keysFromEnv(), createKeyFile: true },
        }),
      ).rejects.toThrow(/master key/);
      await expect(stat(join(second, 'master.key'))).rejects.toThrow();
    });
  },
);
