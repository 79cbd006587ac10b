/**
 * The documented path limits found from the code, on any store: the deepest path that can be stored
 * is stored and read back, and one level more is refused as too long to store, changing nothing.
 * Used by path-limits.test.ts (memory and file stores) and test/s3/path-limits.test.ts (radosgw).
 */
import { expect } from 'vitest';
import { createVault } from '../../src/memvault.js';
import { listAll, type ObjectStore } from '../../src/store/port.js';
import { MAX_SEGMENT_BYTES } from '../../src/vault/paths.js';

const MASTER_KEY = new Uint8Array(32).fill(3);

/** A path of `levels` one-byte names. */
export const oneByteNames = (levels: number, letter = 'a') => `/memories/${Array(levels).fill(letter).join('/')}`;

/** A path of `levels` names of MAX_SEGMENT_BYTES each. */
export const longestNames = (levels: number, letter = 'n') =>
  `/memories/${Array.from({ length: levels }, (_, i) => `${i}`.padEnd(MAX_SEGMENT_BYTES, letter)).join('/')}`;

async function keysOf(store: ObjectStore): Promise<string[]> {
  const keys: string[] = [];
  for await (const info of listAll(store, '')) keys.push(info.key);
  return keys.sort();
}

/**
 * `pathOf(levels)` is stored and read back, with history on and off; `pathOf(levels + 1)` (other
 * names, so that no ancestor is a file) is refused as too long to store and writes nothing.
 */
export async function expectDeepestStorable(
  makeStore: () => Promise<ObjectStore>,
  pathOf: (levels: number, letter?: string) => string,
  levels: number,
): Promise<void> {
  for (const history of [true, false]) {
    const store = await makeStore();
    const vault = await createVault({ store, encryption: { masterKey: MASTER_KEY }, history });
    try {
      const deepest = pathOf(levels);
      expect(
        await vault.run('u', { command: 'create', path: deepest, file_text: 'deepest' }),
        `history ${history}`,
      ).toMatchObject({ isError: false });
      expect((await vault.run('u', { command: 'view', path: deepest })).content).toMatch(/deepest/);
      const before = await keysOf(store);
      const over = await vault.run('u', { command: 'create', path: pathOf(levels + 1, 'z'), file_text: 'x' });
      expect(over, `history ${history}`).toMatchObject({ isError: true, code: 'INVALID_PATH' });
      expect(over.content).toMatch(/^Error: The path \/memories\/.* is too long to store/);
      expect(await keysOf(store)).toEqual(before);
    } finally {
      await vault.close();
    }
  }
}
