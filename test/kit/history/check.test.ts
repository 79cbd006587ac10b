/** The history checker's rules fire on the histories they forbid, and stay quiet on what overlap allows. */
import { describe, expect, it } from 'vitest';
import { checkHistory, checkKept, type HistoryOp } from './check.js';
import { SWEEP_IDLE_MS, type Op } from './model.js';

let seq = 0;
const op = (o: Op, start: number, end: number, ok = true, extra: Partial<HistoryOp> = {}): HistoryOp => ({
  proc: 'p',
  seq: seq++,
  op: o,
  start,
  end,
  acknowledged: true,
  ok,
  ...extra,
});
const seed = op({ kind: 'create', path: '/memories/d0/f0.md', id: 'id:a' }, 0, 0);
const final = (entries: Record<string, string[]>) => new Map(Object.entries(entries));

describe('history checker rules', () => {
  it('an acknowledged insert missing at the end is a violation, unless a later delete explains it', () => {
    const insert = op({ kind: 'insert', path: '/memories/d0/f0.md', token: 't:1' }, 10, 20);
    expect(checkHistory([seed, insert], final({ '/memories/d0/f0.md': ['id:a'] })).map((v) => v.rule)).toEqual([
      'acknowledged insert lost',
    ]);
    const del = op({ kind: 'delete', path: '/memories/d0' }, 30, 40);
    expect(checkHistory([seed, insert, del], final({}))).toEqual([]);
    // A delete that ended before the insert began does not explain it.
    const early = op({ kind: 'delete', path: '/memories/d0' }, 1, 5);
    expect(checkHistory([seed, early, insert], final({})).map((v) => v.rule)).toEqual(['acknowledged insert lost']);
  });

  it('an insert travels with renames: found at the new place; lost there is still a violation', () => {
    const insert = op({ kind: 'insert', path: '/memories/d0/f0.md', token: 't:1' }, 10, 20);
    const rename = op({ kind: 'rename', from: '/memories/d0', to: '/memories/d1' }, 15, 30);
    expect(checkHistory([seed, insert, rename], final({ '/memories/d1/f0.md': ['id:a', 't:1'] }))).toEqual([]);
    expect(checkHistory([seed, insert, rename], final({ '/memories/d1/f0.md': ['id:a'] })).map((v) => v.rule)).toEqual([
      'acknowledged insert lost',
    ]);
  });

  it('a file back below a deleted path is a violation unless created or moved there afterwards', () => {
    const del = op({ kind: 'delete', path: '/memories/d0' }, 30, 40);
    expect(checkHistory([seed, del], final({ '/memories/d0/f0.md': ['id:a'] })).map((v) => v.rule)).toEqual([
      'came back after a delete',
    ]);
    const recreate = op({ kind: 'create', path: '/memories/d0/f0.md', id: 'id:b' }, 35, 50);
    expect(checkHistory([seed, del, recreate], final({ '/memories/d0/f0.md': ['id:b'] }))).toEqual([]);
  });

  it('a file at two places after a successful rename is a violation; after a cut-off one it is allowed', () => {
    const ok = op({ kind: 'rename', from: '/memories/d0', to: '/memories/d1' }, 10, 20);
    const state = final({ '/memories/d0/f0.md': ['id:a'], '/memories/d1/f0.md': ['id:a'] });
    expect(checkHistory([seed, ok], state).map((v) => v.rule)).toEqual(['file at two places']);
    const cut = op({ kind: 'rename', from: '/memories/d0', to: '/memories/d1' }, 10, 3010, false, {
      acknowledged: false,
    });
    expect(checkHistory([seed, cut], state)).toEqual([]);
  });

  it('a read that misses an insert acknowledged before it began is a violation, unless something overlapped', () => {
    const insert = op({ kind: 'insert', path: '/memories/d0/f0.md', token: 't:1' }, 10, 20);
    const read = op({ kind: 'view', path: '/memories/d0/f0.md' }, 30, 40, true, { content: 'Here\n     1\tid:a' });
    const state = final({ '/memories/d0/f0.md': ['id:a', 't:1'] });
    expect(checkHistory([seed, insert, read], state).map((v) => v.rule)).toEqual([
      'read missed an acknowledged insert',
    ]);
    const rename = op({ kind: 'rename', from: '/memories/d0', to: '/memories/d1' }, 25, 35, false, {
      code: 'CONFLICT',
    });
    expect(checkHistory([seed, insert, rename, read], state)).toEqual([]);
    const future = op({ kind: 'view', path: '/memories/d0/f0.md' }, 1, 5, true, {
      content: 'Here\n     1\tid:a\n     2\tt:1',
    });
    expect(checkHistory([seed, insert, future], state).map((v) => v.rule)).toEqual(['read from the future']);
  });
});

describe('history checker rules: restores and the kept history', () => {
  it('a restore that went back before an insert explains it missing; one that went back after it does not', () => {
    const insert = op({ kind: 'insert', path: '/memories/d0/f0.md', token: 't:1' }, 10, 20);
    const state = final({ '/memories/d0/f0.md': ['id:a'] });
    const before = op({ kind: 'restore', back: 0, asOf: 15 }, 30, 40);
    expect(checkHistory([seed, insert, before], state)).toEqual([]);
    const after = op({ kind: 'restore', back: 0, asOf: 25 }, 30, 40);
    expect(checkHistory([seed, insert, after], state).map((v) => v.rule)).toEqual(['acknowledged insert lost']);
  });

  it('a file back after a delete is explained by a restore to before the delete ended', () => {
    const del = op({ kind: 'delete', path: '/memories/d0' }, 30, 40);
    const state = final({ '/memories/d0/f0.md': ['id:a'] });
    expect(checkHistory([seed, del, op({ kind: 'restore', back: 0, asOf: 35 }, 50, 60)], state)).toEqual([]);
    expect(
      checkHistory([seed, del, op({ kind: 'restore', back: 0, asOf: 45 }, 50, 60)], state).map((v) => v.rule),
    ).toEqual(['came back after a delete']);
  });

  it('an acknowledged insert in no kept version is a violation, unless a sweep may have expired its file', () => {
    const insert = op({ kind: 'insert', path: '/memories/d0/f0.md', token: 't:1' }, 10, 20);
    expect(checkKept([seed, insert], new Set(['t:1']))).toEqual([]);
    expect(checkKept([seed, insert], new Set()).map((v) => v.rule)).toEqual(['acknowledged insert not in the history']);
    const sweep = op({ kind: 'sweep' }, 10 + SWEEP_IDLE_MS, 20 + SWEEP_IDLE_MS);
    expect(checkKept([seed, insert, sweep], new Set())).toEqual([]);
  });
});
