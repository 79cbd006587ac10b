/**
 * The audit chain's primitives at their edges: the canonical serialisation every hash
 * depends on, the domain-separated hash and MACs (computed independently here, per docs/audit.md),
 * and the MAC comparison.
 */
import { createHash, createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  AUDIT_KEY_BYTES,
  auditMac,
  canonicalJson,
  GENESIS_HASH,
  hashCanonical,
  macMatches,
  recordHash,
} from '../../src/audit/chain.js';

describe('canonicalJson', () => {
  it('serialises every JSON value exactly, without whitespace', () => {
    expect(canonicalJson(null)).toBe('null');
    expect(canonicalJson('a"b\n')).toBe('"a\\"b\\n"');
    expect(canonicalJson(true)).toBe('true');
    expect(canonicalJson(false)).toBe('false');
    expect(canonicalJson(0)).toBe('0');
    expect(canonicalJson(-1.5)).toBe('-1.5');
    expect(canonicalJson([])).toBe('[]');
    expect(canonicalJson({})).toBe('{}');
    expect(canonicalJson([1, 'x', null, [2]])).toBe('[1,"x",null,[2]]');
    // Array holes and undefined elements are null, as JSON.stringify writes them.
    expect(canonicalJson([undefined, 1])).toBe('[null,1]');
    expect(canonicalJson({ z: 1, a: 2, m: { y: [], b: null } })).toBe('{"a":2,"m":{"b":null,"y":[]},"z":1}');
    expect(canonicalJson({ a: undefined, b: 1, c: undefined })).toBe('{"b":1}');
    expect(canonicalJson({ a: undefined })).toBe('{}');
    // UTF-16 code unit order: 'B' < 'a' < 'é' < '😀'.
    expect(canonicalJson({ '😀': 1, é: 2, a: 3, B: 4 })).toBe('{"B":4,"a":3,"é":2,"😀":1}');
  });

  it('is what JSON.parse reads back, whatever the key order on disk', () => {
    const record = { seq: 3, nested: { b: [1, { d: 'x', c: false }], a: 'é' }, type: 'command' };
    const canonical = canonicalJson(record);
    expect(canonicalJson(JSON.parse(canonical))).toBe(canonical);
    expect(
      canonicalJson(
        JSON.parse(JSON.stringify({ type: 'command', nested: { a: 'é', b: [1, { c: false, d: 'x' }] }, seq: 3 })),
      ),
    ).toBe(canonical);
  });

  it('refuses what a JSON line cannot carry, naming it', () => {
    for (const n of [Number.NaN, Infinity, -Infinity])
      expect(() => canonicalJson({ n })).toThrow('audit records hold finite numbers only');
    expect(() => canonicalJson({ f: () => 1 })).toThrow('audit records cannot hold a function');
    expect(() => canonicalJson({ b: 10n })).toThrow('audit records cannot hold a bigint');
    expect(() => canonicalJson([Symbol('s')])).toThrow('audit records cannot hold a symbol');
    expect(() => canonicalJson(undefined)).toThrow('audit records cannot hold a undefined');
  });
});

describe('hashes and MACs, computed independently', () => {
  const key = new Uint8Array(AUDIT_KEY_BYTES).fill(9);

  it('the genesis hash is 64 zeros; keys are 32 bytes', () => {
    expect(GENESIS_HASH).toBe('0'.repeat(64));
    expect(AUDIT_KEY_BYTES).toBe(32);
  });

  it('hash = SHA-256("memvault-audit-v1\\n" | canonical JSON without hash and mac)', () => {
    const record = { seq: 1, type: 'start', prevHash: GENESIS_HASH, hash: 'x', mac: 'y' };
    const canonical = '{"prevHash":"' + GENESIS_HASH + '","seq":1,"type":"start"}';
    const expected = createHash('sha256').update(`memvault-audit-v1\n${canonical}`).digest('hex');
    expect(hashCanonical(canonical)).toBe(expected);
    expect(recordHash(record)).toBe(expected);
    expect(recordHash({ ...record, mac: 'other' })).toBe(expected);
  });

  it('record and checkpoint MACs are HMAC-SHA256 with their own domains, never each other', () => {
    const text = 'abc123';
    expect(auditMac(key, 'record', text)).toBe(
      createHmac('sha256', key).update(`memvault-audit-mac-v2\n${text}`).digest('hex'),
    );
    expect(auditMac(key, 'checkpoint', text)).toBe(
      createHmac('sha256', key).update(`memvault-audit-checkpoint-v2\n${text}`).digest('hex'),
    );
    expect(auditMac(key, 'record', text)).not.toBe(auditMac(key, 'checkpoint', text));
  });

  it('macMatches: the right MAC only, for its kind and key; wrong lengths and non-hex are no match', () => {
    const text = 'hash-of-record';
    const mac = auditMac(key, 'record', text);
    expect(macMatches(key, 'record', text, mac)).toBe(true);
    expect(macMatches(key, 'record', text, mac.toUpperCase())).toBe(true);
    expect(macMatches(key, 'checkpoint', text, mac)).toBe(false);
    expect(macMatches(new Uint8Array(32).fill(8), 'record', text, mac)).toBe(false);
    expect(macMatches(key, 'record', `${text}x`, mac)).toBe(false);
    expect(macMatches(key, 'record', text, mac.slice(0, -2))).toBe(false);
    expect(macMatches(key, 'record', text, `${mac}00`)).toBe(false);
    expect(macMatches(key, 'record', text, '')).toBe(false);
    expect(macMatches(key, 'record', text, `${mac.slice(0, -1)}${mac.endsWith('0') ? '1' : '0'}`)).toBe(false);
  });
});
