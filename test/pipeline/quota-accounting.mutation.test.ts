/**
 * What the quota's view of a user's usage learns from the command itself (src/pipeline/quota-files.ts):
 * a delete frees its bytes at once, and a file the command sized needs no new listing afterwards.
 * Written for the quota's mutation target (scripts/mutation/targets.mjs).
 */
import { afterAll, describe, expect, it } from 'vitest';
import { createVault, type Vault } from '../../src/index.js';
import { withRequestCounter, type RequestCounter } from '../../src/store/accounting.js';
import { MemoryStore } from '../../src/store/memory.js';

const opened: Vault[] = [];
async function open(maxUserBytes: number): Promise<Vault> {
  const vault = await createVault({ store: new MemoryStore(), quota: { maxUserBytes } });
  opened.push(vault);
  return vault;
}
afterAll(async () => {
  for (const vault of opened) await vault.close();
});

async function counted(
  vault: Vault,
  user: string,
  input: Record<string, unknown>,
): Promise<{ isError: boolean; requests: RequestCounter }> {
  const requests: RequestCounter = {};
  const result = await withRequestCounter(requests, () => vault.run(user, input));
  return { isError: result.isError, requests };
}

describe('quota: usage the command itself tells', () => {
  it('a deleted file frees its bytes at once: the same bytes fit again right after', async () => {
    const vault = await open(500);
    const file = `${'a'.repeat(299)}\n`;
    expect(await vault.run('d', { command: 'create', path: '/memories/a.md', file_text: file })).toMatchObject({
      isError: false,
    });
    expect(await vault.run('d', { command: 'delete', path: '/memories/a.md' })).toMatchObject({ isError: false });
    expect(await vault.run('d', { command: 'create', path: '/memories/b.md', file_text: file })).toMatchObject({
      isError: false,
    });
    // And the count is exact: 300 of 500 used, so 201 more is refused.
    expect(
      await vault.run('d', { command: 'create', path: '/memories/c.md', file_text: 'c'.repeat(201) }),
    ).toMatchObject({
      isError: true,
      code: 'QUOTA_EXCEEDED',
    });
  });

  it('a delete of a file the command sized needs no new listing: the next write costs what a write costs', async () => {
    const vault = await open(10_000);
    for (const name of ['a', 'b', 'x'])
      expect(
        await vault.run('s', { command: 'create', path: `/memories/${name}.md`, file_text: `${name}\n` }),
      ).toMatchObject({ isError: false });
    const plain = await counted(vault, 's', { command: 'create', path: '/memories/y.md', file_text: 'y\n' });
    expect(plain.isError).toBe(false);
    expect((await counted(vault, 's', { command: 'delete', path: '/memories/a.md' })).isError).toBe(false);
    const afterDelete = await counted(vault, 's', { command: 'create', path: '/memories/z.md', file_text: 'z\n' });
    expect(afterDelete.isError).toBe(false);
    expect(afterDelete.requests).toEqual(plain.requests);
  });
});
