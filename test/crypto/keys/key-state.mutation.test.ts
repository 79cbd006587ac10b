/**
 * Key state marks (src/crypto/key-state.ts) and the checked read of a user's record
 * (readUserRecord, src/crypto/wrapped-secret.ts) straight against a memory store: a record of a key
 * version below the newest mark is refused, the versions a marked drop retired are never used, a
 * record ahead of its marks gets its mark, a planted mark-shaped key is listed past. Part of the
 * mutation target `keys`; the scenarios through the vault are test/crypto/key-rollback.test.ts.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { concatBytes, lengthPrefixed, toBase64Url, u32be, utf8 } from '../../../src/crypto/bytes.js';
import { keyedHash } from '../../../src/crypto/format.js';
import { encodeKeyRecord, sealKeyRecord, type KeyProvider, type KeyRecord } from '../../../src/crypto/key-provider.js';
import {
  isOlderKeyState,
  keyStateMarkKey,
  keyStateMarkPrefix,
  keyStateOf,
  markKeyState,
  newestKeyStateMark,
  parseKeyStateMark,
  withoutDroppedVersions,
  type KeyState,
} from '../../../src/crypto/key-state.js';
import { userKeyKey, userPrefix } from '../../../src/crypto/layout.js';
import { createLocalKeyProvider } from '../../../src/crypto/local-key.js';
import { KEY_RECORD_ROLLED_BACK_MESSAGE, readUserRecord, readUserSecret } from '../../../src/crypto/wrapped-secret.js';
import { MemoryStore } from '../../../src/store/memory.js';
import { listAll, PreconditionFailedError, type ObjectStore } from '../../../src/store/port.js';

const DEPLOYMENT = 'BBBBBBBBBBBBBBBBBBBBBB';
const UID = 'uidAAAAAAAAAAAAAAAAAAAAAAA';
const OTHER_UID = 'uidBBBBBBBBBBBBBBBBBBBBBBB';
const binding = { deploymentId: DEPLOYMENT, macKey: new Uint8Array(32).fill(5) };

let local: KeyProvider;
beforeAll(async () => {
  local = await createLocalKeyProvider(new Uint8Array(32).fill(1));
});

const secretOf = (v: number) => new Uint8Array(32).fill(10 + v);

/** A record at `keyVersion`, keeping version 1 and every version from `readFrom` up (as a re-key leaves it). */
async function record(keyVersion: number, readFrom = keyVersion): Promise<KeyRecord> {
  const wrapOf = (v: number) => local.wrap(secretOf(v), { deploymentId: DEPLOYMENT, uid: UID, keyVersion: v });
  const kept =
    keyVersion === 1
      ? []
      : [1, ...Array.from({ length: keyVersion - readFrom }, (_, i) => readFrom + i).filter((v) => v > 1)];
  const older = await Promise.all(kept.map(async (v) => ({ keyVersion: v, wrapped: await wrapOf(v) })));
  return sealKeyRecord(
    {
      deployment: DEPLOYMENT,
      kind: 'local',
      keyId: local.keyId,
      keyVersion,
      wrapped: await wrapOf(keyVersion),
      ...(keyVersion > 1 ? { readFrom, older } : {}),
    },
    UID,
    binding.macKey,
  );
}

async function storeWith(r: KeyRecord, marked: KeyState[] = []): Promise<MemoryStore> {
  const store = new MemoryStore();
  await store.put(userKeyKey(UID), encodeKeyRecord(r));
  for (const state of marked) await store.put(keyStateMarkKey(UID, state, binding), new Uint8Array(0));
  return store;
}

async function keysUnder(store: ObjectStore, prefix: string): Promise<string[]> {
  const keys: string[] = [];
  for await (const o of listAll(store, prefix)) keys.push(o.key);
  return keys;
}

/** A store view that records every request and can fail the PUTs. */
function recording(inner: MemoryStore, failPuts = false) {
  const requests: string[] = [];
  const store = Object.assign(Object.create(inner) as MemoryStore, {
    get: (key: string) => (requests.push(`GET ${key}`), inner.get(key)),
    list: (prefix: string, o?: { maxKeys?: number }) => (
      requests.push(`LIST ${prefix} ${o?.maxKeys ?? ''}`.trim()),
      inner.list(prefix, o)
    ),
    put: (key: string, body: Uint8Array, o?: Parameters<MemoryStore['put']>[2]) => {
      requests.push(`PUT ${key}`);
      return failPuts ? Promise.reject(new Error('store down')) : inner.put(key, body, o);
    },
  });
  return { store, requests };
}

describe('key states', () => {
  it('of a record: its version, and readFrom (the version itself for a single-version record)', async () => {
    expect(keyStateOf({ keyVersion: 1 })).toEqual({ keyVersion: 1, readFrom: 1 });
    expect(keyStateOf({ keyVersion: 3, readFrom: 2 })).toEqual({ keyVersion: 3, readFrom: 2 });
    expect(keyStateOf(await record(4, 3))).toEqual({ keyVersion: 4, readFrom: 3 });
  });

  it('order: a lower version first, then at one version the one that still reads older versions', () => {
    const s = (keyVersion: number, readFrom: number): KeyState => ({ keyVersion, readFrom });
    expect(isOlderKeyState(s(1, 1), s(2, 1))).toBe(true);
    expect(isOlderKeyState(s(2, 1), s(2, 2))).toBe(true);
    expect(isOlderKeyState(s(2, 2), s(3, 2))).toBe(true);
    expect(isOlderKeyState(s(2, 2), s(2, 2))).toBe(false);
    expect(isOlderKeyState(s(2, 2), s(2, 1))).toBe(false);
    expect(isOlderKeyState(s(3, 2), s(2, 2))).toBe(false);
    expect(isOlderKeyState(s(3, 1), s(2, 2))).toBe(false);
  });
});

describe('marks', () => {
  it('live in a folder of their own under the user prefix, with both numbers counted down and a MAC', () => {
    expect(keyStateMarkPrefix(UID)).toBe(`${userPrefix(UID)}a/`);
    const key = keyStateMarkKey(UID, { keyVersion: 2, readFrom: 1 }, binding);
    expect(key).toMatch(new RegExp(`^u/${UID}/a/9999999997-9999999998-[A-Za-z0-9_-]{22}$`));
    expect(keyStateMarkKey(UID, { keyVersion: 0xffffffff, readFrom: 0xffffffff }, binding)).toMatch(
      /\/a\/5705032704-5705032704-/,
    );
  });

  it('carry the MAC docs/format.md gives: BLAKE2b-16 under the record MAC key over label, deployment, uid and both numbers', () => {
    const key = keyStateMarkKey(UID, { keyVersion: 7, readFrom: 6 }, binding);
    const message = concatBytes(
      lengthPrefixed(utf8('memvault/v2/key-state')),
      lengthPrefixed(utf8(DEPLOYMENT)),
      lengthPrefixed(utf8(UID)),
      u32be(7),
      u32be(6),
    );
    expect(key).toBe(
      `${keyStateMarkPrefix(UID)}9999999992-9999999993-${toBase64Url(keyedHash(binding.macKey, message, 16))}`,
    );
  });

  it('sort newest first, by version then by readFrom', () => {
    const states: KeyState[] = [
      { keyVersion: 2, readFrom: 1 },
      { keyVersion: 10, readFrom: 10 },
      { keyVersion: 2, readFrom: 2 },
      { keyVersion: 9, readFrom: 9 },
      { keyVersion: 10, readFrom: 9 },
      { keyVersion: 3, readFrom: 2 },
    ];
    const sorted = states.map((s) => keyStateMarkKey(UID, s, binding)).sort();
    expect(sorted.map((k) => parseKeyStateMark(UID, k, binding))).toEqual([
      { keyVersion: 10, readFrom: 10 },
      { keyVersion: 10, readFrom: 9 },
      { keyVersion: 9, readFrom: 9 },
      { keyVersion: 3, readFrom: 2 },
      { keyVersion: 2, readFrom: 2 },
      { keyVersion: 2, readFrom: 1 },
    ]);
  });

  it('are believed only with their MAC for this deployment, user and state', () => {
    const state = { keyVersion: 5, readFrom: 4 };
    const key = keyStateMarkKey(UID, state, binding);
    expect(parseKeyStateMark(UID, key, binding)).toEqual(state);
    const name = key.slice(keyStateMarkPrefix(UID).length);
    const refused = [
      keyStateMarkKey(OTHER_UID, state, binding).replace(OTHER_UID, UID), // another user's mark
      keyStateMarkKey(UID, state, { ...binding, deploymentId: 'CCCCCCCCCCCCCCCCCCCCCC' }),
      keyStateMarkKey(UID, state, { ...binding, macKey: new Uint8Array(32).fill(6) }),
      `${keyStateMarkPrefix(UID)}${name.replace('9999999994-', '9999999993-')}`, // a higher version claimed
      `${keyStateMarkPrefix(UID)}${name.replace('-9999999995-', '-9999999994-')}`, // a later drop claimed
      `${keyStateMarkPrefix(UID)}${name}x`,
      `${keyStateMarkPrefix(UID)}x${name}`,
      `${keyStateMarkPrefix(UID)}${name.slice(0, -1)}`,
      `${keyStateMarkPrefix(UID)}${name.slice(0, -1)}+`,
      // 22 base64url characters whose last one carries bits past the 16 bytes: no MAC at all.
      `${keyStateMarkPrefix(UID)}${name.slice(0, -1)}${name.endsWith('B') ? 'C' : 'B'}`,
      `${userPrefix(UID)}f/${name}`,
    ];
    for (const k of refused) expect(parseKeyStateMark(UID, k, binding), k).toBeNull();
    expect(parseKeyStateMark(OTHER_UID, key, binding)).toBeNull();
  });

  it('never witness an impossible state (readFrom 0, above the version, a version past u32)', () => {
    // Keys as a forger would write them, with the MAC a real mark of that state would carry.
    const forged = (keyVersion: number, readFrom: number, macOf: KeyState) =>
      keyStateMarkKey(UID, macOf, binding).replace(
        /a\/\d{10}-\d{10}-/,
        `a/${String(9_999_999_999 - keyVersion).padStart(10, '0')}-${String(9_999_999_999 - readFrom).padStart(10, '0')}-`,
      );
    expect(parseKeyStateMark(UID, forged(3, 0, { keyVersion: 3, readFrom: 0 }), binding)).toBeNull();
    expect(parseKeyStateMark(UID, forged(3, 4, { keyVersion: 3, readFrom: 4 }), binding)).toBeNull();
    expect(parseKeyStateMark(UID, forged(3, 3, { keyVersion: 3, readFrom: 3 }), binding)).toEqual({
      keyVersion: 3,
      readFrom: 3,
    });
    expect(parseKeyStateMark(UID, forged(1, 1, { keyVersion: 1, readFrom: 1 }), binding)).toEqual({
      keyVersion: 1,
      readFrom: 1,
    });
    const last = 0xffffffff;
    expect(parseKeyStateMark(UID, forged(last, last, { keyVersion: last, readFrom: last }), binding)).toEqual({
      keyVersion: last,
      readFrom: last,
    });
    const past = 0x1_0000_0000;
    expect(parseKeyStateMark(UID, forged(past, 1, { keyVersion: past, readFrom: 1 }), binding)).toBeNull();
  });
});

describe('the newest mark', () => {
  it('is the first key listed when it is a genuine mark: no other request', async () => {
    const inner = new MemoryStore();
    await markKeyState(inner, UID, { keyVersion: 2, readFrom: 1 }, binding);
    await markKeyState(inner, UID, { keyVersion: 2, readFrom: 2 }, binding);
    const { store, requests } = recording(inner);
    const first = (await inner.list(keyStateMarkPrefix(UID), { maxKeys: 1 })).objects[0];
    expect(await newestKeyStateMark(store, UID, binding, first)).toEqual({ keyVersion: 2, readFrom: 2 });
    expect(requests).toEqual([]);
  });

  it('is none when there is no mark; a planted first key is listed past', async () => {
    const inner = new MemoryStore();
    const { store, requests } = recording(inner);
    expect(await newestKeyStateMark(store, UID, binding, undefined)).toBeNull();
    expect(requests).toEqual([]);
    // Planted: sorts before every genuine mark; only planted keys: none.
    await inner.put(`${keyStateMarkPrefix(UID)}0000000000-0000000000-${'A'.repeat(22)}`, new Uint8Array(0));
    const planted = (await inner.list(keyStateMarkPrefix(UID), { maxKeys: 1 })).objects[0];
    expect(await newestKeyStateMark(store, UID, binding, planted)).toBeNull();
    expect(requests).toEqual([`LIST ${keyStateMarkPrefix(UID)} 1000`]);
    await markKeyState(inner, UID, { keyVersion: 3, readFrom: 2 }, binding);
    await markKeyState(inner, UID, { keyVersion: 2, readFrom: 2 }, binding);
    expect(await newestKeyStateMark(store, UID, binding, planted)).toEqual({ keyVersion: 3, readFrom: 2 });
  });
});

describe('writing a mark', () => {
  it('is a create-only PUT of an empty object, none for version 1, and a mark already there is no error', async () => {
    const inner = new MemoryStore();
    const puts: Array<{ key: string; size: number; ifNoneMatch?: string }> = [];
    const store = Object.assign(Object.create(inner) as MemoryStore, {
      put: (key: string, body: Uint8Array, o: Parameters<MemoryStore['put']>[2] = {}) => (
        puts.push({ key, size: body.byteLength, ...(o.ifNoneMatch ? { ifNoneMatch: o.ifNoneMatch } : {}) }),
        inner.put(key, body, o)
      ),
    });
    await markKeyState(store, UID, { keyVersion: 1, readFrom: 1 }, binding);
    expect(puts).toEqual([]);
    await markKeyState(store, UID, { keyVersion: 2, readFrom: 1 }, binding);
    await markKeyState(store, UID, { keyVersion: 2, readFrom: 1 }, binding);
    const key = keyStateMarkKey(UID, { keyVersion: 2, readFrom: 1 }, binding);
    expect(puts).toEqual([
      { key, size: 0, ifNoneMatch: '*' },
      { key, size: 0, ifNoneMatch: '*' },
    ]);
    expect(await keysUnder(inner, userPrefix(UID))).toEqual([key]);
  });

  it('passes any other failure on', async () => {
    const store = Object.assign(Object.create(new MemoryStore()) as MemoryStore, {
      put: () => Promise.reject(new Error('store down')),
    });
    await expect(markKeyState(store, UID, { keyVersion: 2, readFrom: 2 }, binding)).rejects.toThrow('store down');
    const raced = Object.assign(Object.create(new MemoryStore()) as MemoryStore, {
      put: () => Promise.reject(new PreconditionFailedError('k')),
    });
    await expect(markKeyState(raced, UID, { keyVersion: 2, readFrom: 2 }, binding)).resolves.toBeUndefined();
  });
});

describe('a record under the marks', () => {
  it('keeps every version when no drop was marked past its readFrom; loses the dropped ones (never version 1) otherwise', async () => {
    const pending = await record(3, 2);
    expect(withoutDroppedVersions(pending, null)).toBe(pending);
    expect(withoutDroppedVersions(pending, { keyVersion: 3, readFrom: 2 })).toBe(pending);
    expect(withoutDroppedVersions(pending, { keyVersion: 2, readFrom: 2 })).toBe(pending);
    const single = await record(1);
    expect(withoutDroppedVersions(single, { keyVersion: 1, readFrom: 1 })).toBe(single);
    // A single-version record has nothing to drop, whatever the mark says (readUserRecord refuses it first).
    expect(withoutDroppedVersions(single, { keyVersion: 2, readFrom: 2 })).toBe(single);
    const usable = withoutDroppedVersions(pending, { keyVersion: 3, readFrom: 3 });
    expect(usable).toMatchObject({ keyVersion: 3, readFrom: 3, wrapped: pending.wrapped, mac: pending.mac });
    expect(usable.older!.map((o) => o.keyVersion)).toEqual([1]);
    const wide = await record(5, 2);
    expect(withoutDroppedVersions(wide, { keyVersion: 5, readFrom: 4 }).older!.map((o) => o.keyVersion)).toEqual([
      1, 4,
    ]);
    expect(wide.older!.map((o) => o.keyVersion)).toEqual([1, 2, 3, 4]); // the record read is left as it is
  });
});

describe('readUserRecord', () => {
  it('GET of the record beside a LIST of one key of the marks (never the whole user prefix); no record: null', async () => {
    const inner = new MemoryStore();
    await inner.put(`${userPrefix(UID)}f/x`, new Uint8Array(1));
    const { store, requests } = recording(inner);
    expect(await readUserRecord(store, UID, binding)).toBeNull();
    expect(requests).toEqual([`GET ${userKeyKey(UID)}`, `LIST ${keyStateMarkPrefix(UID)} 1`]);
  });

  it('a record of a version below the newest mark is INTEGRITY, before anything is unwrapped', async () => {
    for (const [r, marked] of [
      [await record(1), [{ keyVersion: 2, readFrom: 1 }]],
      [await record(1), [{ keyVersion: 2, readFrom: 2 }]],
      [await record(2, 1), [{ keyVersion: 3, readFrom: 2 }]],
      [await record(2, 2), [{ keyVersion: 3, readFrom: 3 }]],
    ] as const) {
      const store = await storeWith(r, [...marked]);
      await expect(readUserRecord(store, UID, binding)).rejects.toMatchObject({
        code: 'INTEGRITY',
        message: KEY_RECORD_ROLLED_BACK_MESSAGE,
      });
      let unwraps = 0;
      const counting: KeyProvider = {
        ...local,
        kind: local.kind,
        keyId: local.keyId,
        unwrap: (w, c) => (unwraps++, local.unwrap(w, c)),
      };
      await expect(readUserSecret(store, UID, binding, [counting])).rejects.toMatchObject({ code: 'INTEGRITY' });
      expect(unwraps).toBe(0);
    }
    expect(KEY_RECORD_ROLLED_BACK_MESSAGE).toBe(
      "Error: This user's key record is older than one memvault has already used (a retired key record was put back), so memvault will not use it. " +
        'Nothing was read or written. Recovery: the operator restores the newest key record (docs/encryption.md, "Key records never move backwards").',
    );
  });

  it('a record at the newest mark is read as it is, with no write', async () => {
    const r = await record(2, 2);
    const inner = await storeWith(r, [
      { keyVersion: 2, readFrom: 1 },
      { keyVersion: 2, readFrom: 2 },
    ]);
    const { store, requests } = recording(inner);
    const found = await readUserRecord(store, UID, binding);
    expect(found!.record).toEqual(r);
    expect(found!.usable).toBe(found!.record);
    expect(found!.etag).toBe((await inner.head(userKeyKey(UID)))!.etag);
    expect(found!.lastModified).toEqual((await inner.head(userKeyKey(UID)))!.lastModified);
    expect(requests.filter((q) => q.startsWith('PUT'))).toEqual([]);
  });

  it('the record of before a marked drop: read, but its dropped versions are not used (nor unwrapped)', async () => {
    const pending = await record(2, 1);
    const store = await storeWith(pending, [
      { keyVersion: 2, readFrom: 1 },
      { keyVersion: 2, readFrom: 2 },
    ]);
    const found = await readUserRecord(store, UID, binding);
    expect(found!.record).toEqual(pending);
    expect(found!.usable).toMatchObject({ keyVersion: 2, readFrom: 2 });
    const contexts: number[] = [];
    const spying: KeyProvider = {
      kind: local.kind,
      keyId: local.keyId,
      wrap: local.wrap,
      unwrap: (w, c) => (contexts.push(c.keyVersion), local.unwrap(w, c)),
    };
    const opened = await readUserSecret(store, UID, binding, [spying]);
    expect(opened!.record).toMatchObject({ keyVersion: 2, readFrom: 2 });
    expect([...opened!.versions!.keys()]).toEqual([1, 2]);
    expect(contexts).toEqual([1, 2]);
    // No mark is written for it: the newest mark is ahead.
    expect(await keysUnder(store, keyStateMarkPrefix(UID))).toHaveLength(2);
  });

  it('a record ahead of its marks (or with none) gets its mark; version 1 needs none; a failed mark write still reads', async () => {
    for (const [r, marked, expected] of [
      [await record(2, 1), [], { keyVersion: 2, readFrom: 1 }],
      [await record(2, 2), [{ keyVersion: 2, readFrom: 1 }], { keyVersion: 2, readFrom: 2 }],
      [await record(3, 2), [{ keyVersion: 2, readFrom: 2 }], { keyVersion: 3, readFrom: 2 }],
    ] as const) {
      const store = await storeWith(r, [...marked]);
      expect((await readUserRecord(store, UID, binding))!.record).toEqual(r);
      expect(parseKeyStateMark(UID, (await keysUnder(store, keyStateMarkPrefix(UID)))[0]!, binding)).toEqual(expected);
    }
    const single = await storeWith(await record(1));
    await readUserRecord(single, UID, binding);
    expect(await keysUnder(single, keyStateMarkPrefix(UID))).toEqual([]);
    const { store, requests } = recording(await storeWith(await record(3, 3)), true);
    expect((await readUserRecord(store, UID, binding))!.record.keyVersion).toBe(3);
    expect(requests.at(-1)).toBe(`PUT ${keyStateMarkKey(UID, { keyVersion: 3, readFrom: 3 }, binding)}`);
  });
});
