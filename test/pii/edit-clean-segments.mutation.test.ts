/**
 * The redactor remembers path segments its scan found clean (pii/clean-segments.ts), so
 * that the names most commands repeat are not scanned again. Only clean segments are kept: a value
 * in a name is redacted however often it comes back.
 */
import { describe, expect, it } from 'vitest';
import { cleanSegmentsMemo, scopedSegments } from '../../src/pii/clean-segments.js';
import { redactPathValues } from '../../src/pii/edit.js';

const tag = () => '1a2b3c4d';
const PATHS = [
  '/memories/notes.md',
  '/memories/jane.roe@example.com/notes.md',
  '/memories/notes.md',
  '/memories/card 4111111111111111.md',
  '/memories/jane.roe@example.com/notes.md',
];

describe('clean path segments remembered', () => {
  it('gives what a scan of every segment gives, clean or not, first time or again', () => {
    const memo = cleanSegmentsMemo(16);
    for (const path of [...PATHS, ...PATHS])
      expect(redactPathValues(path, tag, undefined, memo)).toEqual(redactPathValues(path, tag));
  });

  it('keeps the clean segments only, never one with a finding', () => {
    const added: string[] = [];
    const memo = cleanSegmentsMemo(16);
    redactPathValues('/memories/jane.roe@example.com/notes.md', tag, undefined, {
      has: (s) => memo.has(s),
      add: (s) => (added.push(s), memo.add(s)),
    });
    expect(added).toEqual(['', 'memories', 'notes.md']);
  });

  it('skips the scan of a remembered segment', () => {
    // A memo that claims every segment is clean: nothing is scanned, so nothing is found.
    const result = redactPathValues('/memories/jane.roe@example.com', tag, undefined, {
      has: () => true,
      add: () => {},
    });
    expect(result).toEqual({ path: '/memories/jane.roe@example.com', findings: [], rejected: [] });
  });

  it('forgets the least recently seen past its bound', () => {
    const memo = cleanSegmentsMemo(2);
    memo.add('a');
    memo.add('b');
    expect(memo.has('a')).toBe(true); // 'a' now the most recent
    memo.add('c');
    expect([memo.has('a'), memo.has('b'), memo.has('c')]).toEqual([true, false, true]);
  });

  it("keeps each user's segments apart in one shared memo", () => {
    const shared = cleanSegmentsMemo(16);
    const alice = scopedSegments(shared, 'alice');
    const bob = scopedSegments(shared, 'bob');
    redactPathValues('/memories/divorce-lawyer.md', tag, undefined, alice);
    expect(alice.has('divorce-lawyer.md')).toBe(true);
    expect(bob.has('divorce-lawyer.md')).toBe(false);
    expect(shared.has('divorce-lawyer.md')).toBe(false);
    expect(shared.has('alice\u0000divorce-lawyer.md')).toBe(true);
    // A scope that ends where another's segment starts is not the same entry.
    expect(scopedSegments(shared, 'alice\u0000divorce-lawyer.m').has('d')).toBe(false);
  });
});
