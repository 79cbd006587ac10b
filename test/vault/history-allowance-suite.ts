/**
 * The history allowance cannot be outgrown: versions and tombstones of empty
 * files used to count 0 bytes, so creating and deleting empty files grew the history without bound
 * (300 objects against a 2,000-byte allowance in one run). Every kept version now counts at least
 * 512 bytes, and the allowance bounds the count of versions too: the loop is refused, and what is
 * kept stays within both. Run on the memory and file stores (test/vault/history-allowance.test.ts)
 * and on radosgw (test/s3/history-allowance.test.ts).
 */
import { describe, expect, it } from 'vitest';
import { createVault, type Vault } from '../../src/index.js';
import { USERS_PREFIX } from '../../src/store/layout.js';
import { listAll, type ObjectStore } from '../../src/store/port.js';
import { isKeptVersionKey } from '../kit/stores.js';
import { suiteVaults } from '../kit/vault.js';

/** More than any allowance below admits: a loop that reaches it was never refused. */
const MAX_ROUNDS = 300;

export function historyAllowanceSuite(
  name: string,
  makeStore: () => Promise<ObjectStore>,
  options: { timeoutMs?: number } = {},
): void {
  const { masterKey, opened } = suiteVaults();
  const timeout = options.timeoutMs ?? 60_000;

  /** Create and delete empty files, one name each, until a create is refused; the refusal and the rounds done. */
  async function churnEmptyFiles(
    vault: Vault,
  ): Promise<{ rounds: number; refusal: { code?: string; content: unknown } | undefined }> {
    for (let round = 0; round < MAX_ROUNDS; round++) {
      const path = `/memories/empty-${round}.md`;
      const created = await vault.run('churn', { command: 'create', path, file_text: '' });
      if (created.isError) return { rounds: round, refusal: created };
      const deleted = await vault.run('churn', { command: 'delete', path });
      expect(deleted.isError, JSON.stringify(deleted.content)).toBe(false);
    }
    return { rounds: MAX_ROUNDS, refusal: undefined };
  }

  /** The kept versions in the store (raw listing) and what they count: each its plaintext bytes, 512 at least. */
  async function kept(store: ObjectStore, vault: Vault): Promise<{ objects: number; counted: number }> {
    let objects = 0;
    for await (const o of listAll(store, USERS_PREFIX)) if (isKeptVersionKey(o.key)) objects += 1;
    const { versions } = await vault.history('churn', '/memories');
    expect(versions).toHaveLength(objects);
    return { objects, counted: versions.reduce((n, v) => n + Math.max(v.size, 512), 0) };
  }

  describe(`the history allowance on ${name}`, () => {
    it(
      'creating and deleting empty files is refused once the allowance is full; the kept versions stay within its 2,000 bytes',
      async () => {
        const store = await makeStore();
        const vault = await createVault({
          store,
          encryption: { masterKey },
          history: true,
          quota: { maxUserBytes: 100_000, maxHistoryBytes: 2_000 },
        });
        opened.push(vault);
        const { rounds, refusal } = await churnEmptyFiles(vault);
        expect(rounds).toBeLessThan(MAX_ROUNDS);
        expect(refusal).toMatchObject({ isError: true, code: 'QUOTA_EXCEEDED' });
        expect(String(refusal!.content)).toContain('Quota exceeded (file history per user)');
        const { objects, counted } = await kept(store, vault);
        expect(counted).toBeLessThanOrEqual(2_000);
        expect(objects).toBeLessThanOrEqual(3); // 2,000 / 512
        expect(objects).toBeGreaterThan(0);
        // Every deleted file's end is kept (what its undo and a put-back's refusal need): only their content went.
        expect((await vault.history('churn', '/memories')).versions.every((v) => v.end === 'deleted')).toBe(true);
      },
      timeout,
    );

    it(
      'the allowance bounds the count of versions as well: with bytes to spare, the loop is refused at the count, in its words',
      async () => {
        const store = await makeStore();
        const vault = await createVault({
          store,
          encryption: { masterKey },
          history: true,
          quota: { maxUserBytes: 100_000, maxHistoryBytes: 10_000_000, maxHistoryVersions: 8 },
        });
        opened.push(vault);
        const { rounds, refusal } = await churnEmptyFiles(vault);
        expect(rounds).toBeLessThan(MAX_ROUNDS);
        expect(refusal).toMatchObject({ isError: true, code: 'QUOTA_EXCEEDED' });
        expect(String(refusal!.content)).toContain('already keeps 8 of the 8 versions it may hold');
        const { objects } = await kept(store, vault);
        expect(objects).toBeLessThanOrEqual(8);
        expect(objects).toBeGreaterThanOrEqual(6); // pruning goes to three quarters, never below the files' newest
      },
      timeout,
    );

    it(
      'renaming a file to new names again and again is refused once the newest versions fill the allowance; the kept versions stay within it',
      async () => {
        const store = await makeStore();
        const vault = await createVault({
          store,
          encryption: { masterKey },
          history: true,
          quota: { maxUserBytes: 100_000, maxHistoryBytes: 10_000_000, maxHistoryVersions: 8 },
        });
        opened.push(vault);
        const created = await vault.run('churn', {
          command: 'create',
          path: '/memories/name-0.md',
          file_text: 'moving\n',
        });
        expect(created.isError).toBe(false);
        let refusal: { code?: string; content: unknown } | undefined;
        let round = 0;
        for (; round < MAX_ROUNDS && refusal === undefined; round++) {
          const renamed = await vault.run('churn', {
            command: 'rename',
            old_path: `/memories/name-${round}.md`,
            new_path: `/memories/name-${round + 1}.md`,
          });
          if (renamed.isError) refusal = renamed;
        }
        expect(round).toBeLessThan(MAX_ROUNDS);
        expect(refusal).toMatchObject({ isError: true, code: 'QUOTA_EXCEEDED' });
        expect(String(refusal!.content)).toContain('this rename would keep 2 more versions');
        const { objects } = await kept(store, vault);
        expect(objects).toBeLessThanOrEqual(8);
        // The file is whole where the last admitted rename put it.
        expect(
          new TextDecoder().decode((await (await vault.files('churn')).read(`/memories/name-${round - 1}.md`))!.data),
        ).toBe('moving\n');
      },
      timeout,
    );
  });
}
