import { randomBytes } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { createVault, MemvaultError } from '../../src/index.js';
import { listAll } from '../../src/store/port.js';
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
 * On a real S3 server: a prefix with user data but no deployment record never
 * becomes a new deployment, and `create: false` never writes to an empty prefix.
 */
describe.skipIf(!s3Available())(
  `S3: a lost deployment record fails closed${s3Available() ? '' : ` (skipped: ${s3SkipReason()})`}`,
  () => {
    const prefix = `deployment-${randomBytes(3).toString('hex')}`;
    const KEY = Buffer.alloc(32, 5).toString('base64');
    afterAll(async () => {
      for (const p of [prefix, `${prefix}-empty`]) {
        const store = makeS3Store(p);
        await emptyStore(store);
        await store.close();
      }
    });

    const keysOf = async (p: string) => {
      const store = makeS3Store(p);
      const keys: string[] = [];
      for await (const o of listAll(store, '')) keys.push(o.key);
      await store.close();
      return keys.sort();
    };

    it('stops start-up with STORE_INCONSISTENT when k/_deployment is deleted, and writes nothing', async () => {
      const vault = await createVault({ store: s3Url(prefix), s3: s3ClientConfig(), encryption: { masterKey: KEY } });
      expect((await vault.run('alice', { command: 'create', path: '/memories/a.md', file_text: 'kept' })).isError).toBe(
        false,
      );
      await vault.close();
      const raw = makeS3Store(prefix);
      await raw.delete('k/_deployment');
      await raw.close();
      const before = await keysOf(prefix);
      let error: unknown;
      try {
        await createVault({ store: s3Url(prefix), s3: s3ClientConfig(), encryption: { masterKey: KEY } });
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(MemvaultError);
      expect((error as MemvaultError).code).toBe('STORE_INCONSISTENT');
      expect((error as MemvaultError).message).toMatch(/Recovery: restore k\/_deployment/);
      expect(await keysOf(prefix)).toEqual(before);
    });

    it('create: false on an empty prefix (a mistyped store) is CONFIG and writes nothing', async () => {
      let error: unknown;
      try {
        await createVault({
          store: s3Url(`${prefix}-empty`),
          s3: s3ClientConfig(),
          encryption: { masterKey: KEY },
          create: false,
        });
      } catch (e) {
        error = e;
      }
      expect((error as MemvaultError).code).toBe('CONFIG');
      expect((error as MemvaultError).message).toMatch(/no memvault deployment in this store/);
      expect(await keysOf(`${prefix}-empty`)).toEqual([]);
      // The same prefix with the default (create) mode is a new deployment.
      const vault = await createVault({
        store: s3Url(`${prefix}-empty`),
        s3: s3ClientConfig(),
        encryption: { masterKey: KEY },
      });
      await vault.close();
      expect(await keysOf(`${prefix}-empty`)).toEqual(['k/_deployment']);
    });
  },
);
