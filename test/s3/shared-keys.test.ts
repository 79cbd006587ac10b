import { randomBytes } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { createVault, type Vault } from '../../src/index.js';
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
 * Shared key state on a real S3 server: two vault instances on one bucket prefix. A key record or
 * deployment record deleted under them is an error on both (the running one after the key-cache
 * age), never a silently created key; the user's key is created with a conditional PUT only.
 */
describe.skipIf(!s3Available())(
  `S3: shared key state seen by every instance${s3Available() ? '' : ` (skipped: ${s3SkipReason()})`}`,
  () => {
    const prefix = `shared-keys-${randomBytes(3).toString('hex')}`;
    const KEY = Buffer.alloc(32, 9).toString('base64');
    const MAX_AGE = 60_000;
    afterAll(async () => {
      for (const p of [prefix, `${prefix}-d`]) {
        const store = makeS3Store(p);
        await emptyStore(store);
        await store.close();
      }
    });

    const open = (p: string, clock: { now: number }): Promise<Vault> =>
      createVault({
        store: s3Url(p),
        s3: s3ClientConfig(),
        encryption: { masterKey: KEY, cache: { now: () => clock.now, maxAgeMs: MAX_AGE, wipeGraceMs: 0 } },
      });
    const view = async (vault: Vault, user: string) => vault.run(user, { command: 'view', path: '/memories/a.md' });

    it('a deleted key record: a second instance refuses at once, the first after the cache age; no key is re-created', async () => {
      const clock = { now: 1_000_000 };
      const a = await open(prefix, clock);
      expect((await a.run('alice', { command: 'create', path: '/memories/a.md', file_text: 'kept' })).isError).toBe(
        false,
      );
      const raw = makeS3Store(prefix);
      const recordKey = (await raw.list('k/')).objects.map((o) => o.key).find((k) => k !== 'k/_deployment')!;
      const saved = (await raw.get(recordKey))!.body;
      await raw.delete(recordKey);

      const b = await open(prefix, clock);
      const refused = await view(b, 'alice');
      expect(refused.isError).toBe(true);
      expect(String(refused.content)).toContain('key record is missing although their memory files exist');
      expect(String((await view(a, 'alice')).content)).toContain('kept');
      clock.now += MAX_AGE;
      for (const vault of [a, b]) {
        const after = await view(vault, 'alice');
        expect(after.isError).toBe(true);
        expect(String(after.content)).toContain('restores the key record from a backup');
      }
      expect(await raw.head(recordKey)).toBeNull();

      await raw.put(recordKey, saved);
      for (const vault of [a, b]) expect(String((await view(vault, 'alice')).content)).toContain('kept');
      await raw.close();
      await Promise.all([a.close(), b.close()]);
    });

    it('a deleted deployment record stops the running instance after the cache age; a new instance does not start', async () => {
      const clock = { now: 1_000_000 };
      const p = `${prefix}-d`;
      const a = await open(p, clock);
      expect((await a.run('alice', { command: 'create', path: '/memories/a.md', file_text: 'kept' })).isError).toBe(
        false,
      );
      const raw = makeS3Store(p);
      const saved = (await raw.get('k/_deployment'))!.body;
      await raw.delete('k/_deployment');
      await expect(open(p, clock)).rejects.toMatchObject({ code: 'STORE_INCONSISTENT' });
      clock.now += MAX_AGE;
      const stopped = await view(a, 'alice');
      expect(stopped.isError).toBe(true);
      expect(String(stopped.content)).toContain('disappeared or changed while this service was running');
      // A new user is refused too: no second answer from a stale deployment.
      expect((await a.run('newcomer', { command: 'create', path: '/memories/n.md', file_text: 'x' })).isError).toBe(
        true,
      );
      expect(await raw.head('k/_deployment')).toBeNull();
      await raw.put('k/_deployment', saved);
      expect(String((await view(a, 'alice')).content)).toContain('kept');
      await raw.close();
      await a.close();
    });
  },
);
