/**
 * Every documented path limit is the code's. The limits live in src/vault/paths.ts
 * (and the key and user id limits in src/store/layout.ts); docs/paths-and-quotas.md's "Limits"
 * table cites each, and here each is found from the code: the guard at the length limits, the
 * deepest storable paths on the memory and file stores, history on and off (the S3 suite does the
 * same on radosgw), and the table's numbers against the constants.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createVault } from '../../src/memvault.js';
import { canonicalizePath } from '../../src/pipeline/path-guard.js';
import { FileStore } from '../../src/store/file.js';
import { MAX_STORE_KEY_BYTES, MAX_USER_ID_LENGTH } from '../../src/store/layout.js';
import { MemoryStore } from '../../src/store/memory.js';
import {
  MAX_PATH_BYTES,
  MAX_SEGMENT_BYTES,
  STORABLE_LEVELS_OF_LONGEST_NAMES,
  STORABLE_LEVELS_OF_ONE_BYTE_NAMES,
} from '../../src/vault/paths.js';
import { expectDeepestStorable, longestNames, oneByteNames } from './path-limits.js';

const dirs: string[] = [];
afterAll(() => dirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })));
const stores: Array<[string, () => Promise<MemoryStore | FileStore>]> = [
  ['memory store', async () => new MemoryStore()],
  [
    'file store',
    async () => {
      const dir = mkdtempSync(join(tmpdir(), 'memvault-path-limits-'));
      dirs.push(dir);
      return new FileStore(join(dir, 'data'));
    },
  ],
];

describe('the path guard at its length limits', () => {
  const refusedRule = (path: string) => {
    try {
      canonicalizePath(path);
      return 'accepted';
    } catch (error) {
      return (error as { rule?: string }).rule;
    }
  };

  it(`a path of ${MAX_PATH_BYTES} bytes passes, one more byte does not`, () => {
    const filler = (bytes: number) => `/memories/${'a/'.repeat(2000)}${'b'.repeat(bytes - '/memories/'.length - 4000)}`;
    expect(Buffer.byteLength(filler(MAX_PATH_BYTES))).toBe(MAX_PATH_BYTES);
    expect(refusedRule(filler(MAX_PATH_BYTES))).toBe('accepted');
    expect(refusedRule(`${filler(MAX_PATH_BYTES)}c`)).toBe('too-long');
  });

  it(`a name of ${MAX_SEGMENT_BYTES} bytes passes, one more byte does not (UTF-8)`, () => {
    expect(refusedRule(`/memories/${'é'.repeat((MAX_SEGMENT_BYTES - 1) / 2)}a`)).toBe('accepted');
    expect(refusedRule(`/memories/${'é'.repeat((MAX_SEGMENT_BYTES + 1) / 2)}`)).toBe('segment-too-long');
  });
});

describe.each(stores)('the deepest storable paths on the %s, history on and off', (_name, makeStore) => {
  it(`${STORABLE_LEVELS_OF_ONE_BYTE_NAMES} levels of one-byte names`, async () => {
    await expectDeepestStorable(makeStore, oneByteNames, STORABLE_LEVELS_OF_ONE_BYTE_NAMES);
  });

  it(`${STORABLE_LEVELS_OF_LONGEST_NAMES} names of ${MAX_SEGMENT_BYTES} bytes`, async () => {
    await expectDeepestStorable(makeStore, longestNames, STORABLE_LEVELS_OF_LONGEST_NAMES);
  });
});

it(`a user id of ${MAX_USER_ID_LENGTH} characters is served, one more is refused`, async () => {
  const vault = await createVault({ store: new MemoryStore(), encryption: { masterKey: new Uint8Array(32).fill(1) } });
  expect(await vault.run('u'.repeat(MAX_USER_ID_LENGTH), { command: 'view', path: '/memories' })).toMatchObject({
    isError: false,
  });
  expect(await vault.run('u'.repeat(MAX_USER_ID_LENGTH + 1), { command: 'view', path: '/memories' })).toMatchObject({
    isError: true,
    code: 'INVALID_USER',
  });
  await vault.close();
});

describe("docs/paths-and-quotas.md's Limits table", () => {
  const constants: Record<string, number> = {
    MAX_PATH_BYTES,
    MAX_SEGMENT_BYTES,
    MAX_STORE_KEY_BYTES,
    STORABLE_LEVELS_OF_ONE_BYTE_NAMES,
    STORABLE_LEVELS_OF_LONGEST_NAMES,
    MAX_USER_ID_LENGTH,
  };

  it('states every limit as its constant holds it', () => {
    const doc = readFileSync(join(import.meta.dirname, '../../docs/paths-and-quotas.md'), 'utf8');
    const table = doc.slice(doc.indexOf('### Limits'), doc.indexOf('## Quotas'));
    // A row's value is the largest number in its cell ('1 to 256 characters', '4,096 bytes of UTF-8').
    const largest = (cell: string) =>
      Math.max(...[...cell.matchAll(/\d[\d,]*/g)].map((m) => Number(m[0].replace(/,/g, ''))));
    const rows = [...table.matchAll(/^\| [^|]+ \| ([^|]+) \| `([A-Z_]+)`/gm)].map((m) => [m[2]!, largest(m[1]!)]);
    expect(Object.fromEntries(rows)).toEqual(constants);
  });
});
