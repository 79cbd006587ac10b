/**
 * The key cache (src/crypto/key-cache.ts) and key records (src/crypto/key-provider.ts) at their
 * edges: the exact cache age after which a key is read again (so a record that disappeared or
 * changed is noticed), the count bound and its order, the wipe grace, every damaged-record case and
 * its message, the record's exact encoding, which provider opens a record. The mutation target
 * `keys` runs this.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { computeRecordMac, type UserKeyring, type UserKeys } from '../../../src/crypto/format.js';
import { KeyCache } from '../../../src/crypto/key-cache.js';
import {
  contentVersionsOf,
  DAMAGED_KEY_RECORD_MESSAGE,
  decodeKeyRecord,
  describeKey,
  encodeKeyRecord,
  NAME_ROOT_KEY_VERSION,
  OLD_FORMAT_MESSAGE,
  recordMacFields,
  recordVersions,
  sealKeyRecord,
  selectUnwrapProvider,
  type KeyProvider,
  type KeyRecord,
} from '../../../src/crypto/key-provider.js';
import { loadSodium } from '../../../src/crypto/sodium.js';
import { METRICS } from '../../../src/telemetry/names.js';
import { registerInMemoryTelemetry, total, type InMemoryTelemetry } from '../../telemetry/harness.js';

let telemetry: InMemoryTelemetry;
beforeAll(async () => {
  await loadSodium();
  telemetry = registerInMemoryTelemetry();
});
afterAll(async () => {
  await telemetry.shutdown();
});
afterEach(() => {
  vi.useRealTimers();
});

function keys(fill: number, keyVersion = 1): UserKeys {
  const bytes = () => new Uint8Array(32).fill(fill);
  return {
    keyVersion,
    contentKey: bytes(),
    nameKey: bytes(),
    nameSivKey: bytes(),
    commitment: bytes(),
    auditPseudonymKey: bytes(),
  };
}
function keyring(fill: number): UserKeyring {
  const current = keys(fill);
  return { current, byVersion: new Map([[1, current]]) };
}
const isWiped = (ring: UserKeyring) =>
  [...ring.byVersion.values()].every((k) =>
    [k.contentKey, k.nameKey, k.nameSivKey, k.commitment, k.auditPseudonymKey].every((b) => b.every((x) => x === 0)),
  );
const isWhole = (ring: UserKeyring) =>
  [...ring.byVersion.values()].every((k) =>
    [k.contentKey, k.nameKey, k.nameSivKey, k.commitment, k.auditPseudonymKey].every((b) => b.every((x) => x !== 0)),
  );

describe('KeyCache: the age', () => {
  it('holds a key for exactly maxAgeMs: a millisecond before it is a hit, at it a miss, and the key leaves and is wiped', () => {
    let now = 1_000_000;
    const cache = new KeyCache({ maxAgeMs: 500, wipeGraceMs: 0, now: () => now });
    const ring = keyring(1);
    const entry = cache.set('u', ring);
    expect(entry).toMatchObject({ keys: ring, loadedAt: 1_000_000, wiped: false });
    now += 499;
    expect(cache.get('u')).toBe(entry);
    now += 1;
    expect(cache.get('u')).toBeUndefined();
    expect(cache.size).toBe(0);
    expect(entry.wiped).toBe(true);
    expect(isWiped(ring)).toBe(true);
    // Set again: a fresh load time, held again for the full age.
    const again = cache.set('u', keyring(2));
    expect(again.loadedAt).toBe(now);
    now += 499;
    expect(cache.get('u')).toBe(again);
  });

  it('defaults to ten minutes', () => {
    let now = 0;
    const cache = new KeyCache({ wipeGraceMs: 0, now: () => now });
    const entry = cache.set('u', keyring(1));
    now = 10 * 60_000 - 1;
    expect(cache.get('u')).toBe(entry);
    now = 10 * 60_000;
    expect(cache.get('u')).toBeUndefined();
    expect(entry.wiped).toBe(true);
  });

  it('counts a hit only for a key within its age (an aged-out entry is a miss)', async () => {
    let now = 1_000_000; // a real clock's scale: the age is now minus the load time, not any other sum
    const cache = new KeyCache({ maxAgeMs: 100, wipeGraceMs: 0, now: () => now });
    await telemetry.collect();
    expect(cache.get('u')).toBeUndefined(); // miss: nothing there
    cache.set('u', keyring(1));
    cache.get('u'); // hit
    cache.get('u'); // hit
    now += 100;
    cache.get('u'); // miss: too old
    const points = await telemetry.collect();
    expect(total(points, METRICS.keyCacheLookups, { 'memvault.key_cache.result': 'hit' })).toBe(2);
    expect(total(points, METRICS.keyCacheLookups, { 'memvault.key_cache.result': 'miss' })).toBe(2);
  });

  it('uses the real clock by default', () => {
    vi.useFakeTimers({ now: 5_000_000, toFake: ['Date', 'setTimeout', 'clearTimeout'] });
    const cache = new KeyCache({ maxAgeMs: 1000, wipeGraceMs: 0 });
    const entry = cache.set('u', keyring(1));
    expect(entry.loadedAt).toBe(5_000_000);
    vi.setSystemTime(5_000_999);
    expect(cache.get('u')).toBe(entry);
    vi.setSystemTime(5_001_000);
    expect(cache.get('u')).toBeUndefined();
  });
});

describe('KeyCache: the count bound', () => {
  it('holds at most maxEntries users, the least recently used leaving first (a get counts as a use)', () => {
    const cache = new KeyCache({ maxEntries: 2, wipeGraceMs: 0 });
    const a = cache.set('a', keyring(1));
    const b = cache.set('b', keyring(2));
    expect(cache.get('a')).toBe(a); // a is now the most recently used
    const c = cache.set('c', keyring(3));
    expect(cache.size).toBe(2);
    expect(cache.get('b')).toBeUndefined();
    expect(b.wiped).toBe(true);
    expect(isWiped(b.keys)).toBe(true);
    expect(cache.get('a')).toBe(a);
    expect(cache.get('c')).toBe(c);
    expect(a.wiped || c.wiped).toBe(false);
  });

  it('at least one entry, whatever maxEntries says', () => {
    for (const maxEntries of [0, -5]) {
      const cache = new KeyCache({ maxEntries, wipeGraceMs: 0 });
      const a = cache.set('a', keyring(1));
      expect(cache.get('a')).toBe(a);
      cache.set('b', keyring(2));
      expect(cache.size).toBe(1);
      expect(a.wiped).toBe(true);
    }
  });

  it('defaults to 1,000 users', () => {
    const cache = new KeyCache({ wipeGraceMs: 0 });
    const first = cache.set('u0', keyring(1));
    for (let i = 1; i < 1000; i++) cache.set(`u${i}`, keyring(1));
    expect(cache.size).toBe(1000);
    expect(first.wiped).toBe(false);
    cache.set('u1000', keyring(1));
    expect(cache.size).toBe(1000);
    expect(first.wiped).toBe(true);
    expect(cache.get('u0')).toBeUndefined();
  });
});

describe('KeyCache: wiping', () => {
  it('a replaced or evicted key is wiped only after the grace (5 s by default), in use until then', () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const cache = new KeyCache();
    const old = cache.set('u', keyring(1));
    const fresh = cache.set('u', keyring(2));
    expect(cache.get('u')).toBe(fresh);
    expect(old.wiped).toBe(false);
    expect(isWhole(old.keys)).toBe(true);
    vi.advanceTimersByTime(4_999);
    expect(old.wiped).toBe(false);
    vi.advanceTimersByTime(1);
    expect(old.wiped).toBe(true);
    expect(isWiped(old.keys)).toBe(true);
    expect(fresh.wiped).toBe(false);
    cache.evict('u');
    expect(cache.get('u')).toBeUndefined();
    expect(fresh.wiped).toBe(false);
    vi.advanceTimersByTime(5_000);
    expect(fresh.wiped).toBe(true);
    cache.evict('nobody'); // nothing there: nothing happens
    expect(cache.size).toBe(0);
  });

  it('detached keys are handed out, never cached, and wiped after the grace like an evicted entry', () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const cache = new KeyCache({ now: () => 1234 });
    const ring = keyring(3);
    const entry = cache.detached(ring);
    expect(entry.keys).toBe(ring);
    expect(entry.loadedAt).toBe(1234);
    expect(entry.wiped).toBe(false);
    expect(cache.size).toBe(0);
    vi.advanceTimersByTime(4_999);
    expect(isWhole(ring)).toBe(true);
    vi.advanceTimersByTime(1);
    expect(entry.wiped).toBe(true);
    expect(isWiped(ring)).toBe(true);
    // close() wipes one still waiting out its grace too
    const waiting = cache.detached(keyring(4));
    cache.clear();
    expect(waiting.wiped).toBe(true);
    vi.useRealTimers();
  });

  it('a grace of 0 or less wipes at once', () => {
    for (const wipeGraceMs of [0, -1]) {
      const cache = new KeyCache({ wipeGraceMs });
      const entry = cache.set('u', keyring(1));
      cache.evict('u');
      expect(entry.wiped).toBe(true);
      expect(isWiped(entry.keys)).toBe(true);
    }
  });

  it('a pending wipe does not keep the process alive', () => {
    const cache = new KeyCache({ wipeGraceMs: 60_000 });
    const before = process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
    cache.set('u', keyring(1));
    cache.evict('u');
    expect(process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length).toBe(before);
    cache.clear();
  });

  it('holds no bookkeeping for wipes already done (a long-running host evicts keys for days)', () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const cache = new KeyCache({ wipeGraceMs: 1_000 });
    // The only way to see the bookkeeping is its size: read it as the memory bound it is.
    const pending = () => (Reflect.get(cache, 'pendingWipes') as Map<unknown, unknown>).size;
    for (let i = 0; i < 50; i++) cache.set(`u${i}`, keyring(1));
    for (let i = 0; i < 50; i++) cache.evict(`u${i}`);
    expect(pending()).toBe(50);
    vi.advanceTimersByTime(1_000);
    expect(pending()).toBe(0);
    cache.set('a', keyring(1));
    cache.evict('a');
    expect(pending()).toBe(1);
    cache.clear();
    expect(pending()).toBe(0);
  });

  it('clear wipes at once what is held and what waits out its grace, and cancels the pending wipes', () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const cache = new KeyCache({ wipeGraceMs: 1_000 });
    const waiting = cache.set('a', keyring(1));
    cache.evict('a');
    const held = cache.set('b', keyring(2));
    expect(vi.getTimerCount()).toBe(1);
    cache.clear();
    expect(waiting.wiped && held.wiped).toBe(true);
    expect(isWiped(waiting.keys) && isWiped(held.keys)).toBe(true);
    expect(cache.size).toBe(0);
    expect(cache.get('b')).toBeUndefined();
    expect(vi.getTimerCount()).toBe(0);
  });
});

// ---------------------------------------------------------------------------------------------
// Key records

const DEPLOYMENT = 'AAAAAAAAAAAAAAAAAAAAAA';
const MAC_KEY = new Uint8Array(32).fill(3);
const wrapped = (fill: number) => new Uint8Array(40).fill(fill);
const b64 = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64');
const b64url = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64url');

function single(): Record<string, unknown> {
  return {
    format: 2,
    deployment: DEPLOYMENT,
    kind: 'local',
    keyId: 'kcv1',
    keyVersion: 1,
    wrapped: b64(wrapped(1)),
    mac: b64url(new Uint8Array(32).fill(9)),
  };
}
function versioned(): Record<string, unknown> {
  return {
    ...single(),
    keyVersion: 4,
    wrapped: b64(wrapped(4)),
    readFrom: 3,
    older: [
      { keyVersion: 1, wrapped: b64(wrapped(1)) },
      { keyVersion: 3, wrapped: b64(wrapped(3)) },
    ],
  };
}
const bytesOf = (value: unknown) => new TextEncoder().encode(JSON.stringify(value));
const damaged = { code: 'INTEGRITY', message: 'Error: A stored key record is damaged and cannot be read.' };

describe('key records: decode', () => {
  it('reads a single-version and a versioned record exactly', () => {
    expect(decodeKeyRecord(bytesOf(single()))).toEqual({
      format: 2,
      deployment: DEPLOYMENT,
      kind: 'local',
      keyId: 'kcv1',
      keyVersion: 1,
      wrapped: new Uint8Array(wrapped(1)),
      mac: new Uint8Array(32).fill(9),
    });
    const v = decodeKeyRecord(bytesOf(versioned()));
    expect(v.readFrom).toBe(3);
    expect(v.older).toEqual([
      { keyVersion: 1, wrapped: new Uint8Array(wrapped(1)) },
      { keyVersion: 3, wrapped: new Uint8Array(wrapped(3)) },
    ]);
    expect(decodeKeyRecord(bytesOf({ ...single(), kind: 'kms', keyId: 'arn:aws:kms:x' })).kind).toBe('kms');
    expect(
      decodeKeyRecord(
        bytesOf({
          ...single(),
          keyVersion: 0xffffffff,
          readFrom: 0xffffffff,
          older: [{ keyVersion: 1, wrapped: b64(wrapped(1)) }],
        }),
      ).keyVersion,
    ).toBe(0xffffffff);
    // Version 2 reading from 1: older holds version 1 only.
    expect(
      decodeKeyRecord(
        bytesOf({ ...single(), keyVersion: 2, readFrom: 1, older: [{ keyVersion: 1, wrapped: b64(wrapped(1)) }] }),
      ).older,
    ).toHaveLength(1);
    // Version 3 reading from 1: versions 1 and 2.
    const three = {
      ...single(),
      keyVersion: 3,
      readFrom: 1,
      older: [1, 2].map((keyVersion) => ({ keyVersion, wrapped: b64(wrapped(keyVersion)) })),
    };
    expect(decodeKeyRecord(bytesOf(three)).older!.map((o) => o.keyVersion)).toEqual([1, 2]);
    // readFrom at the current version: only the name root is kept.
    expect(
      decodeKeyRecord(bytesOf({ ...versioned(), readFrom: 4, older: [{ keyVersion: 1, wrapped: b64(wrapped(1)) }] }))
        .older,
    ).toHaveLength(1);
  });

  it('refuses a format-1 store with its own message, and nothing else but format 2', () => {
    expect(() => decodeKeyRecord(bytesOf({ ...single(), format: 1 }))).toThrow(
      expect.objectContaining({
        code: 'CONFIG',
        message:
          'This store was written by an earlier memvault (storage format 1, before authenticated key records); this version reads format 2 only (docs/format.md). Nothing was changed.',
      }),
    );
    expect(OLD_FORMAT_MESSAGE).toMatch(/^This store was written by an earlier memvault/);
    expect(DAMAGED_KEY_RECORD_MESSAGE).toBe(damaged.message);
    for (const format of [3, '2', undefined, 0])
      expect(() => decodeKeyRecord(bytesOf({ ...single(), format }))).toThrow(expect.objectContaining(damaged));
  });

  it('refuses every damaged field of a single-version record', () => {
    const cases: Array<Record<string, unknown>> = [
      { deployment: 5 },
      { deployment: 'short' },
      { deployment: `${DEPLOYMENT}A` },
      { deployment: `x${DEPLOYMENT}` },
      { deployment: 'AAAAAAAAAAAAAAAAAAAAA=' },
      { kind: 'other' },
      { kind: undefined },
      { keyId: '' },
      { keyId: 7 },
      { keyVersion: '1' },
      { keyVersion: 1.5 },
      { keyVersion: 0 },
      { keyVersion: -1 },
      { keyVersion: 0x100000000 },
      { wrapped: 5 },
      { wrapped: '' },
      { wrapped: '!!!!' },
      { wrapped: 'QUJD\nRA==' },
      { mac: 5 },
      { mac: undefined },
      { mac: b64url(new Uint8Array(31)) },
      { mac: b64url(new Uint8Array(33)) },
      { mac: b64(new Uint8Array(32).fill(0xfb)) }, // standard base64, not base64url
      { extra: 1 },
      { readFrom: 1 }, // versioned fields on a single-version record
      { older: [] },
    ];
    for (const change of cases) {
      expect(() => decodeKeyRecord(bytesOf({ ...single(), ...change })), JSON.stringify(change)).toThrow(
        expect.objectContaining(damaged),
      );
    }
    for (const raw of ['null', '5', '"text"', '[1]', '{', '']) {
      expect(() => decodeKeyRecord(new TextEncoder().encode(raw)), raw).toThrow(expect.objectContaining(damaged));
    }
    // Not UTF-8 (and no NUL byte): the same error.
    const notUtf8 = Buffer.concat([
      Buffer.from('{"format":2,"keyId":"'),
      Buffer.from([0xe2, 0x28, 0xa1]),
      Buffer.from('"}'),
    ]);
    expect(() => decodeKeyRecord(notUtf8)).toThrow(expect.objectContaining(damaged));
  });

  it('refuses records that only the field checks catch (the kept-versions rule alone would take them)', () => {
    const v1 = { keyVersion: 1, wrapped: b64(wrapped(1)) };
    const cases: Array<Record<string, unknown>> = [
      // readFrom below 1, with the versions such a readFrom would ask for.
      {
        keyVersion: 4,
        readFrom: 0,
        older: [1, 2, 3].map((keyVersion) => ({ keyVersion, wrapped: b64(wrapped(keyVersion)) })),
      },
      {
        keyVersion: 4,
        readFrom: -2,
        older: [1, 2, 3].map((keyVersion) => ({ keyVersion, wrapped: b64(wrapped(keyVersion)) })),
      },
      // readFrom past the current version: no content version at all.
      { keyVersion: 4, readFrom: 5, older: [v1] },
      // readFrom as a string: compared and added as text, it would ask for no version but 1.
      { keyVersion: 4, readFrom: '3', older: [v1] },
      { keyVersion: 2, readFrom: 9, older: [v1] },
      // A key version that is no integer, or past 32 bits, with a matching kept list.
      { keyVersion: 1.5, readFrom: 1, older: [v1] },
      { keyVersion: 0x100000000, readFrom: 0x100000000, older: [v1] },
      // A deployment id that is not a string but reads as one.
      { deployment: [DEPLOYMENT] },
    ];
    for (const change of cases) {
      expect(() => decodeKeyRecord(bytesOf({ ...single(), ...change })), JSON.stringify(change)).toThrow(
        expect.objectContaining(damaged),
      );
    }
  });

  it('refuses a versioned record that keeps other versions than version 1 and readFrom up', () => {
    const cases: Array<Record<string, unknown>> = [
      { readFrom: undefined },
      { readFrom: '3' },
      { readFrom: 2.5 },
      { readFrom: 0 },
      { readFrom: 5 },
      { older: undefined },
      { older: 'x' },
      { older: [null, { keyVersion: 3, wrapped: b64(wrapped(3)) }] },
      { older: [5, { keyVersion: 3, wrapped: b64(wrapped(3)) }] },
      {
        older: [
          { keyVersion: 1, wrapped: b64(wrapped(1)), extra: 1 },
          { keyVersion: 3, wrapped: b64(wrapped(3)) },
        ],
      },
      {
        older: [
          { keyVersion: '1', wrapped: b64(wrapped(1)) },
          { keyVersion: 3, wrapped: b64(wrapped(3)) },
        ],
      },
      {
        older: [
          { keyVersion: 1.5, wrapped: b64(wrapped(1)) },
          { keyVersion: 3, wrapped: b64(wrapped(3)) },
        ],
      },
      {
        older: [
          { keyVersion: 1, wrapped: 7 },
          { keyVersion: 3, wrapped: b64(wrapped(3)) },
        ],
      },
      {
        older: [
          { keyVersion: 1, wrapped: '' },
          { keyVersion: 3, wrapped: b64(wrapped(3)) },
        ],
      },
      {
        older: [
          { keyVersion: 1, wrapped: '%%%%' },
          { keyVersion: 3, wrapped: b64(wrapped(3)) },
        ],
      },
      { older: [{ keyVersion: 3, wrapped: b64(wrapped(3)) }] }, // the name root missing
      { older: [{ keyVersion: 1, wrapped: b64(wrapped(1)) }] }, // version 3 missing
      {
        older: [
          { keyVersion: 3, wrapped: b64(wrapped(3)) },
          { keyVersion: 1, wrapped: b64(wrapped(1)) },
        ],
      }, // out of order
      {
        older: [
          { keyVersion: 1, wrapped: b64(wrapped(1)) },
          { keyVersion: 2, wrapped: b64(wrapped(2)) },
        ],
      }, // 2 is below readFrom
      {
        older: [
          { keyVersion: 1, wrapped: b64(wrapped(1)) },
          { keyVersion: 3, wrapped: b64(wrapped(3)) },
          { keyVersion: 4, wrapped: b64(wrapped(4)) },
        ],
      }, // the current version among the older ones
      { extra: true },
    ];
    for (const change of cases) {
      expect(() => decodeKeyRecord(bytesOf({ ...versioned(), ...change })), JSON.stringify(change)).toThrow(
        expect.objectContaining(damaged),
      );
    }
    // An entry's own entries as an object (not an array element of the right shape).
    expect(() => decodeKeyRecord(bytesOf({ ...versioned(), older: { 0: 1 } }))).toThrow(
      expect.objectContaining(damaged),
    );
  });
});

describe('key records: encode, seal, fields', () => {
  const base = { deployment: DEPLOYMENT, kind: 'local' as const, keyId: 'kcv1', keyVersion: 1, wrapped: wrapped(1) };

  it('encodes the fields in their pinned order, versioned fields only when present, and decodes back', () => {
    const record = sealKeyRecord(base, 'uid1', MAC_KEY);
    expect(record.format).toBe(2);
    expect(record.mac).toEqual(
      computeRecordMac(MAC_KEY, {
        deploymentId: DEPLOYMENT,
        uid: 'uid1',
        kind: 'local',
        keyId: 'kcv1',
        keyVersion: 1,
        wrapped: wrapped(1),
      }),
    );
    expect(new TextDecoder().decode(encodeKeyRecord(record))).toBe(
      `{"format":2,"deployment":"${DEPLOYMENT}","kind":"local","keyId":"kcv1","keyVersion":1,"wrapped":"${b64(wrapped(1))}","mac":"${b64url(record.mac)}"}`,
    );
    expect(decodeKeyRecord(encodeKeyRecord(record))).toEqual(record);
    const v = sealKeyRecord(
      {
        ...base,
        keyVersion: 3,
        wrapped: wrapped(3),
        readFrom: 2,
        older: [1, 2].map((keyVersion) => ({ keyVersion, wrapped: wrapped(keyVersion) })),
      },
      'uid1',
      MAC_KEY,
    );
    expect(new TextDecoder().decode(encodeKeyRecord(v))).toBe(
      `{"format":2,"deployment":"${DEPLOYMENT}","kind":"local","keyId":"kcv1","keyVersion":3,"wrapped":"${b64(wrapped(3))}","readFrom":2,"older":[{"keyVersion":1,"wrapped":"${b64(wrapped(1))}"},{"keyVersion":2,"wrapped":"${b64(wrapped(2))}"}],"mac":"${b64url(v.mac)}"}`,
    );
    expect(decodeKeyRecord(encodeKeyRecord(v))).toEqual(v);
    // The uid is under the MAC: the same record for another uid has another MAC.
    expect(sealKeyRecord(base, 'uid2', MAC_KEY).mac).not.toEqual(record.mac);
  });

  it('MAC fields: readFrom and older only for a versioned record (readFrom 0 when absent)', () => {
    expect(recordMacFields(base, 'u')).toEqual({
      deploymentId: DEPLOYMENT,
      uid: 'u',
      kind: 'local',
      keyId: 'kcv1',
      keyVersion: 1,
      wrapped: wrapped(1),
    });
    expect('readFrom' in recordMacFields(base, 'u')).toBe(false);
    const older = [{ keyVersion: 1, wrapped: wrapped(1) }];
    expect(recordMacFields({ ...base, keyVersion: 2, older }, 'u')).toMatchObject({ readFrom: 0, older });
    expect(recordMacFields({ ...base, keyVersion: 2, readFrom: 2, older }, 'u')).toMatchObject({ readFrom: 2, older });
  });

  it('versions of a record, current last; content versions from readFrom to the current one', () => {
    expect(recordVersions({ keyVersion: 1, wrapped: wrapped(1) })).toEqual([{ keyVersion: 1, wrapped: wrapped(1) }]);
    expect(
      recordVersions({ keyVersion: 3, wrapped: wrapped(3), older: [{ keyVersion: 1, wrapped: wrapped(1) }] }).map(
        (v) => v.keyVersion,
      ),
    ).toEqual([1, 3]);
    expect(contentVersionsOf({ keyVersion: 1 })).toEqual([1]);
    expect(contentVersionsOf({ keyVersion: 5 })).toEqual([5]);
    expect(contentVersionsOf({ keyVersion: 5, readFrom: 3 })).toEqual([3, 4, 5]);
    expect(contentVersionsOf({ keyVersion: 5, readFrom: 5 })).toEqual([5]);
    expect(NAME_ROOT_KEY_VERSION).toBe(1);
  });
});

describe('which provider opens a record', () => {
  const provider = (kind: 'local' | 'kms', keyId: string): KeyProvider => ({
    kind,
    keyId,
    wrap: () => Promise.reject(new Error('unused')),
    unwrap: () => Promise.reject(new Error('unused')),
  });
  const record = (kind: 'local' | 'kms', keyId: string) =>
    ({ ...decodeKeyRecord(bytesOf(single())), kind, keyId }) as KeyRecord;

  it('the one with the record kind and key id; for KMS any KMS key; a local key only when its check value matches', () => {
    const localA = provider('local', 'A');
    const localB = provider('local', 'B');
    const kmsX = provider('kms', 'X');
    const kmsY = provider('kms', 'Y');
    expect(selectUnwrapProvider(record('local', 'B'), [localA, localB, kmsX])).toBe(localB);
    expect(selectUnwrapProvider(record('local', 'C'), [localA, localB, kmsX])).toBeNull();
    expect(selectUnwrapProvider(record('kms', 'Y'), [kmsX, kmsY])).toBe(kmsY);
    expect(selectUnwrapProvider(record('kms', 'alias/z'), [localA, kmsY, kmsX])).toBe(kmsY);
    expect(selectUnwrapProvider(record('kms', 'X'), [localA])).toBeNull();
    // The same key id under another kind is not the key.
    expect(selectUnwrapProvider(record('local', 'X'), [kmsX])).toBeNull();
    expect(selectUnwrapProvider(record('kms', 'A'), [localA])).toBeNull();
    expect(selectUnwrapProvider(record('local', 'A'), [])).toBeNull();
  });

  it('names a key for the operator', () => {
    expect(describeKey('local', 'abc')).toBe('local master key abc');
    expect(describeKey('kms', 'arn:aws:kms:eu:1:key/k')).toBe('AWS KMS key arn:aws:kms:eu:1:key/k');
  });
});
