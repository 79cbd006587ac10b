/**
 * The memory store keeps its keys sorted as they come and go (src/store/memory.ts), so that a LIST is
 * a search and a page: checked against the plain definition (filter by prefix and `after`, sort by
 * compareKeys, cut pages of maxKeys) over random puts, copies and deletes, astral keys included.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compareKeys, MemoryStore } from '../../src/store/memory.js';
import { listAll } from '../../src/store/port.js';

const segment = fc.constantFrom('a', 'b', 'ab', 'z', 'é', '😀', 'a/', 'b/c', '');
const key = fc.array(segment, { minLength: 1, maxLength: 4 }).map((parts) => parts.join('') || 'k');
const op = fc.oneof(
  fc.record({ kind: fc.constant('put' as const), key }),
  fc.record({ kind: fc.constant('delete' as const), key }),
  fc.record({ kind: fc.constant('deleteMany' as const), keys: fc.array(key, { maxLength: 3 }) }),
  fc.record({ kind: fc.constant('copy' as const), from: key, to: key }),
);

describe('MemoryStore sorted key index', () => {
  it('lists what filtering and sorting every key would, page by page', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(op, { maxLength: 60 }),
        fc.constantFrom('', 'a', 'ab', 'b', '😀', 'a/'),
        fc.integer({ min: 1, max: 5 }),
        async (ops, prefix, maxKeys) => {
          const store = new MemoryStore();
          const live = new Set<string>();
          for (const o of ops) {
            if (o.kind === 'put') {
              await store.put(o.key, new Uint8Array([1]));
              live.add(o.key);
            } else if (o.kind === 'delete') {
              await store.delete(o.key);
              live.delete(o.key);
            } else if (o.kind === 'deleteMany') {
              await store.deleteMany(o.keys);
              for (const k of o.keys) live.delete(k);
            } else if (live.has(o.from)) {
              await store.copy(o.from, o.to);
              live.add(o.to);
            }
          }
          const expected = [...live].filter((k) => k.startsWith(prefix)).sort(compareKeys);
          expect(store.keys()).toEqual([...live].sort(compareKeys));
          const listed: string[] = [];
          for await (const o of listAll(store, prefix, maxKeys)) listed.push(o.key);
          expect(listed).toEqual(expected);
          // startAfter any key, listed or not: the keys after it.
          for (const after of [...expected.slice(0, 3), 'a', '😀']) {
            const page = await store.list(prefix, { startAfter: after, maxKeys: 1000 });
            expect(page.objects.map((o) => o.key)).toEqual(expected.filter((k) => compareKeys(k, after) > 0));
          }
        },
      ),
      { numRuns: 300 },
    );
  });
});
