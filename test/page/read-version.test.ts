/**
 * vault.readVersion (src/lifecycle/read-version.ts): one kept version's content and record, audited
 * as a read of history; invalid arguments refused before anything is read.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { createVault } from '../../src/memvault.js';
import { MemoryStore } from '../../src/store/memory.js';

const vault = await createVault({
  store: new MemoryStore(),
  encryption: { masterKey: randomBytes(32).toString('base64') },
  history: true,
});
afterAll(() => vault.close());

describe('vault.readVersion', () => {
  it('reads each kept version, a tombstone as empty, and null for one never kept', async () => {
    await vault.run('ann', { command: 'create', path: '/memories/a.md', file_text: 'first\n' });
    await vault.run('ann', { command: 'create', path: '/memories/a.md', file_text: 'second\n' });
    await vault.run('ann', { command: 'delete', path: '/memories/a.md' });
    const { versions } = await vault.history('ann', '/memories/a.md');
    expect(versions).toHaveLength(3);
    const texts = await Promise.all(
      versions.map(async (v) => {
        const read = await vault.readVersion('ann', '/memories/a.md', v.seq, { actor: 'page:person' });
        return [read?.seq, read?.actor, read?.end, new TextDecoder().decode(read?.data)];
      }),
    );
    expect(texts).toEqual([
      [versions[0]!.seq, 'model', 'deleted', ''],
      [versions[1]!.seq, 'model', undefined, 'second\n'],
      [versions[2]!.seq, 'model', undefined, 'first\n'],
    ]);
    await expect(vault.readVersion('ann', '/memories/a.md', versions[0]!.seq + 1)).resolves.toBeNull();
  });

  it('refuses an invalid argument and an unknown user before reading', async () => {
    await expect(vault.readVersion('ann', '/memories/a.md', 0)).rejects.toMatchObject({ code: 'INVALID_INPUT' });
    await expect(vault.readVersion('ann', '/memories/a.md', 1.5)).rejects.toMatchObject({ code: 'INVALID_INPUT' });
    await expect(vault.readVersion('ann', '/memories', 1)).rejects.toMatchObject({ code: 'INVALID_INPUT' });
    await expect(vault.readVersion('ann', '/etc/passwd', 1)).rejects.toMatchObject({ code: 'INVALID_PATH' });
    await expect(vault.readVersion('ann', '/memories/a.md', 1, { who: 'x' } as never)).rejects.toMatchObject({
      code: 'INVALID_INPUT',
    });
    await expect(vault.readVersion('nobody', '/memories/a.md', 1)).rejects.toMatchObject({ code: 'NOT_FOUND' });
  });
});
