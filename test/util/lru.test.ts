// The one bounded map (src/util/lru.ts): its eviction rule, tested once for every user (key cache,
// expiry's touch and marker memories, the codec's name memo).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { LruMap } from '../../src/util/lru.js';

describe('LruMap', () => {
  it('evicts the least recently used entry: get and set refresh, peek and has do not', () => {
    const evicted: Array<[string, number]> = [];
    const lru = new LruMap<string, number>(3, (key, value) => evicted.push([key, value]));
    lru.set('a', 1).set('b', 2).set('c', 3);
    expect(lru.get('a')).toBe(1); // a is now the most recent: b is the oldest
    expect(lru.peek('b')).toBe(2); // peek leaves b the oldest
    expect(lru.has('b')).toBe(true);
    lru.set('d', 4);
    expect(evicted).toEqual([['b', 2]]);
    expect([...lru.keys()]).toEqual(['c', 'a', 'd']);
    lru.set('c', 30); // replacing refreshes, and is no eviction
    expect(evicted).toEqual([['b', 2]]);
    expect([...lru.keys()]).toEqual(['a', 'd', 'c']);
    lru.set('e', 5);
    expect(evicted).toEqual([
      ['b', 2],
      ['a', 1],
    ]);
    expect([...lru.values()]).toEqual([4, 30, 5]);
  });

  it('delete and clear remove without calling onEvict; a missing key reads as undefined and changes nothing', () => {
    const evicted: string[] = [];
    const lru = new LruMap<string, string>(2, (key) => evicted.push(key));
    lru.set('a', 'x').set('b', 'y');
    expect(lru.get('zz')).toBeUndefined();
    expect(lru.size).toBe(2);
    expect(lru.delete('a')).toBe(true);
    expect(lru.delete('a')).toBe(false);
    lru.set('c', 'z');
    expect(evicted).toEqual([]);
    lru.clear();
    expect(lru.size).toBe(0);
    expect(evicted).toEqual([]);
  });

  it('holds undefined values like any other (get refreshes them too)', () => {
    const lru = new LruMap<string, undefined>(2);
    lru.set('a', undefined).set('b', undefined);
    lru.get('a');
    lru.set('c', undefined);
    expect([...lru.keys()]).toEqual(['a', 'c']);
  });

  it('passes over pinned entries: the next least recently used leaves, the entry just set never does', () => {
    const pinned = new Set<string>(['a']);
    const evicted: string[] = [];
    const lru = new LruMap<string, number>(
      2,
      (key) => evicted.push(key),
      (_value, key) => pinned.has(key),
    );
    lru.set('a', 1).set('b', 2).set('c', 3);
    expect(evicted).toEqual(['b']);
    expect([...lru.keys()]).toEqual(['a', 'c']);
    pinned.add('c');
    lru.set('d', 4); // a and c pinned: d stays too, the map is over its bound until one is unpinned
    expect(evicted).toEqual(['b']);
    expect(lru.size).toBe(3);
    pinned.clear();
    lru.set('e', 5); // back within the bound, oldest first
    expect(evicted).toEqual(['b', 'a', 'c']);
    expect([...lru.keys()]).toEqual(['d', 'e']);
  });

  it('refuses a bound below one', () => {
    expect(() => new LruMap(0)).toThrow(RangeError);
    expect(() => new LruMap(Number.NaN)).toThrow(RangeError);
    expect(new LruMap(2.7).maxEntries).toBe(2);
  });

  it('matches a reference model of the rule on random operation sequences', () => {
    type Op = { kind: 'get' | 'set' | 'peek' | 'delete'; key: number };
    const op = fc.record({
      kind: fc.constantFrom<Op['kind']>('get', 'set', 'peek', 'delete'),
      key: fc.integer({ min: 0, max: 7 }),
    });
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 5 }), fc.array(op, { maxLength: 60 }), (max, ops) => {
        const evicted: number[] = [];
        const lru = new LruMap<number, number>(max, (key) => evicted.push(key));
        // The model: keys from least to most recently used, and the values.
        let order: number[] = [];
        const values = new Map<number, number>();
        const expectedEvicted: number[] = [];
        ops.forEach(({ kind, key }, step) => {
          const present = order.includes(key);
          if (kind === 'set') {
            order = [...order.filter((k) => k !== key), key];
            values.set(key, step);
            while (order.length > max) {
              const oldest = order.shift()!;
              values.delete(oldest);
              expectedEvicted.push(oldest);
            }
            lru.set(key, step);
          } else if (kind === 'get') {
            if (present) order = [...order.filter((k) => k !== key), key];
            expect(lru.get(key)).toBe(present ? values.get(key) : undefined);
          } else if (kind === 'peek') {
            expect(lru.peek(key)).toBe(present ? values.get(key) : undefined);
          } else {
            expect(lru.delete(key)).toBe(present);
            order = order.filter((k) => k !== key);
            values.delete(key);
          }
          expect([...lru.keys()]).toEqual(order);
          expect(lru.size).toBeLessThanOrEqual(max);
        });
        expect(evicted).toEqual(expectedEvicted);
      }),
    );
  });
});
