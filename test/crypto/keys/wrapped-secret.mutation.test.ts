/**
 * Wrapped secrets (src/crypto/wrapped-secret.ts) straight against a memory store: a record is
 * authenticated before it is unwrapped, a user with files and no key record gets the recovery
 * message and never a new key, two processes creating the same secret end with one, every secret
 * that is not handed out is wiped. Part of the mutation target `keys`.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { DEPLOYMENT_ID_PATTERN, deriveRecordMacKey, verifyRecordMac } from '../../../src/crypto/format.js';
import {
  decodeKeyRecord,
  encodeKeyRecord,
  recordMacFields,
  sealKeyRecord,
  type KeyProvider,
  type KeyRecord,
  type WrapContext,
} from '../../../src/crypto/key-provider.js';
import { DEPLOYMENT_CONTEXT_UID, DEPLOYMENT_RECORD_KEY, userKeyKey, userPrefix } from '../../../src/crypto/layout.js';
import { createLocalKeyProvider } from '../../../src/crypto/local-key.js';
import {
  authenticUserRecord,
  DEPLOYMENT_RECORD_INTEGRITY_MESSAGE,
  INITIAL_KEY_VERSION,
  isAuthenticRecord,
  KEY_RECORD_INTEGRITY_MESSAGE,
  KEY_RECORD_MISSING_MESSAGE,
  keyRecordIntegrityError,
  newDeploymentId,
  newSecret,
  NoMatchingKeyError,
  openRecord,
  openRecordVersions,
  openUserRecord,
  readDeployment,
  readOrCreateDeployment,
  readOrCreateUserSecret,
  readUserSecret,
  userHasObjects,
} from '../../../src/crypto/wrapped-secret.js';
import { keyStateMarkPrefix } from '../../../src/crypto/key-state.js';
import { MemoryStore } from '../../../src/store/memory.js';
import { PreconditionFailedError } from '../../../src/store/port.js';

const DEPLOYMENT = 'BBBBBBBBBBBBBBBBBBBBBB';
const UID = 'uidAAAAAAAAAAAAAAAAAAAAAAA';
const MAC_KEY = new Uint8Array(32).fill(5);
const binding = { deploymentId: DEPLOYMENT, macKey: MAC_KEY };

let local: KeyProvider;
let otherLocal: KeyProvider;
beforeAll(async () => {
  local = await createLocalKeyProvider(new Uint8Array(32).fill(1));
  otherLocal = await createLocalKeyProvider(new Uint8Array(32).fill(2));
});

/** A provider that records every unwrap's context and can be told to fail the n-th one. */
function spying(inner: KeyProvider, failAt = -1) {
  const contexts: WrapContext[] = [];
  const provider: KeyProvider = {
    kind: inner.kind,
    keyId: inner.keyId,
    wrap: (k, c) => inner.wrap(k, c),
    unwrap: async (w, c) => {
      contexts.push(c);
      if (contexts.length - 1 === failAt) throw new Error('unwrap failed');
      return inner.unwrap(w, c);
    },
  };
  return { provider, contexts };
}

function recorder() {
  const wiped: Uint8Array[] = [];
  return {
    wiped,
    wipe: (b: Uint8Array) => {
      wiped.push(b);
      b.fill(0);
    },
  };
}

async function userRecord(
  secrets: Map<number, Uint8Array>,
  current: number,
  readFrom?: number,
  uid = UID,
  deployment = DEPLOYMENT,
): Promise<KeyRecord> {
  const wrapOf = (v: number) => local.wrap(secrets.get(v)!, { deploymentId: deployment, uid, keyVersion: v });
  const older =
    current > 1
      ? await Promise.all(
          [...secrets.keys()]
            .filter((v) => v < current)
            .map(async (v) => ({ keyVersion: v, wrapped: await wrapOf(v) })),
        )
      : undefined;
  return sealKeyRecord(
    {
      deployment,
      kind: 'local',
      keyId: local.keyId,
      keyVersion: current,
      wrapped: await wrapOf(current),
      ...(older ? { readFrom: readFrom ?? current, older } : {}),
    },
    uid,
    MAC_KEY,
  );
}
const secretOf = (fill: number) => new Uint8Array(32).fill(fill);

describe('messages', () => {
  it('say what happened and the recovery, naming no record, user or key', () => {
    expect(KEY_RECORD_INTEGRITY_MESSAGE).toBe(
      "Error: This user's key record failed its integrity check: it was altered, replaced or copied from another deployment, so memvault will not use it. Nothing was read or written. Recovery: the operator restores the key record from a backup or an earlier object version.",
    );
    expect(KEY_RECORD_MISSING_MESSAGE).toBe(
      'Error: This user\'s key record is missing although their memory files exist; memvault will not create a new key (the files would become unreadable). Nothing was written. Recovery: the operator restores the key record from a backup or an earlier object version (docs/encryption.md, "A missing or changed key record").',
    );
    expect(DEPLOYMENT_RECORD_INTEGRITY_MESSAGE).toBe(
      'The deployment record (k/_deployment) opens but fails its integrity check: it was altered. Restore it from a backup or an earlier object version.',
    );
    expect(keyRecordIntegrityError()).toMatchObject({ code: 'INTEGRITY', message: KEY_RECORD_INTEGRITY_MESSAGE });
    expect(INITIAL_KEY_VERSION).toBe(1);
  });
});

describe('opening records', () => {
  it('unwraps with the record deployment, the uid and the key version; no provider is KEY_UNAVAILABLE with the record', async () => {
    const record = await userRecord(new Map([[1, secretOf(7)]]), 1);
    const { provider, contexts } = spying(local);
    expect(await openRecord(record, UID, [otherLocal, provider])).toEqual(secretOf(7));
    expect(contexts).toEqual([{ deploymentId: DEPLOYMENT, uid: UID, keyVersion: 1 }]);
    for (const open of [
      () => openRecord(record, UID, [otherLocal]),
      () => openRecordVersions(record, UID, [otherLocal], () => undefined),
    ]) {
      const error = await open().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(NoMatchingKeyError);
      expect(error).toMatchObject({
        code: 'KEY_UNAVAILABLE',
        message: 'Error: The key that protects this user is not configured; the service cannot open it.',
        record,
      });
    }
  });

  it('unwraps every version with its own number, and wipes those opened when one fails', async () => {
    const record = await userRecord(
      new Map([
        [1, secretOf(1)],
        [2, secretOf(2)],
        [3, secretOf(3)],
      ]),
      3,
      2,
    );
    const { provider, contexts } = spying(local);
    const opened = await openRecordVersions(record, UID, [provider], () => undefined);
    expect([...opened.entries()]).toEqual([
      [1, secretOf(1)],
      [2, secretOf(2)],
      [3, secretOf(3)],
    ]);
    expect(contexts.map((c) => c.keyVersion)).toEqual([1, 2, 3]);
    expect(contexts.every((c) => c.uid === UID && c.deploymentId === DEPLOYMENT)).toBe(true);
    const failing = spying(local, 2);
    const { wiped, wipe } = recorder();
    await expect(openRecordVersions(record, UID, [failing.provider], wipe)).rejects.toThrow('unwrap failed');
    expect(wiped).toHaveLength(2);
    expect(wiped.every((b) => b.every((x) => x === 0))).toBe(true);
  });

  it('authenticates before unwrapping: another deployment, another uid or another MAC key is refused without a KMS call', async () => {
    const record = await userRecord(new Map([[1, secretOf(7)]]), 1);
    expect(isAuthenticRecord(record, UID, binding)).toBe(true);
    expect(isAuthenticRecord(record, 'uidBBBBBBBBBBBBBBBBBBBBBBB', binding)).toBe(false);
    expect(isAuthenticRecord(record, UID, { deploymentId: 'CCCCCCCCCCCCCCCCCCCCCC', macKey: MAC_KEY })).toBe(false);
    expect(isAuthenticRecord(record, UID, { deploymentId: DEPLOYMENT, macKey: new Uint8Array(32).fill(6) })).toBe(
      false,
    );
    // A record MACed right but naming another deployment.
    const foreign = await userRecord(new Map([[1, secretOf(7)]]), 1, undefined, UID, 'CCCCCCCCCCCCCCCCCCCCCC');
    expect(isAuthenticRecord(foreign, UID, binding)).toBe(false);
    const { provider, contexts } = spying(local);
    expect(await openUserRecord(record, UID, binding, [provider])).toEqual(secretOf(7));
    await expect(openUserRecord(foreign, UID, binding, [provider])).rejects.toMatchObject({
      code: 'INTEGRITY',
      message: KEY_RECORD_INTEGRITY_MESSAGE,
    });
    expect(contexts).toHaveLength(1);
    // authenticUserRecord: damaged bytes and a forged record give the same model-facing error.
    expect(authenticUserRecord(encodeKeyRecord(record), UID, binding)).toEqual(record);
    for (const body of [new TextEncoder().encode('{"format":2}'), encodeKeyRecord(foreign)]) {
      expect(() => authenticUserRecord(body, UID, binding)).toThrow(
        expect.objectContaining({ code: 'INTEGRITY', message: KEY_RECORD_INTEGRITY_MESSAGE }),
      );
    }
  });
});

describe('new secrets', () => {
  it('a fresh 32-byte buffer of its own, wrapped for the context; a KMS-style provider generates it', async () => {
    const context = { deploymentId: DEPLOYMENT, uid: UID, keyVersion: 1 };
    const a = await newSecret(local, context);
    const b = await newSecret(local, context);
    expect(a.secret.byteLength).toBe(32);
    expect(a.secret.buffer.byteLength).toBe(32); // not a view of a shared pool
    expect(a.secret).not.toEqual(b.secret);
    expect(a.secret.some((x) => x !== 0)).toBe(true);
    expect(await local.unwrap(a.wrapped, context)).toEqual(a.secret);
    const generated = { plaintext: secretOf(9), wrapped: new Uint8Array([1, 2, 3]) };
    const seen: WrapContext[] = [];
    const kms: KeyProvider = {
      kind: 'kms',
      keyId: 'k',
      wrap: () => Promise.reject(new Error('wrap must not be called')),
      unwrap: () => Promise.reject(new Error('unused')),
      generateDataKey: (c) => {
        seen.push(c);
        return Promise.resolve(generated);
      },
    };
    expect(await newSecret(kms, context)).toEqual({ secret: generated.plaintext, wrapped: generated.wrapped });
    expect(seen).toEqual([context]);
  });

  it('deployment ids are 22 base64url characters, each new', () => {
    const ids = new Set(Array.from({ length: 20 }, () => newDeploymentId()));
    expect(ids.size).toBe(20);
    for (const id of ids) expect(id).toMatch(DEPLOYMENT_ID_PATTERN);
  });
});

describe('the deployment record', () => {
  it('none: null, and nothing created by a read; created once, MACed with its own secret, then read back', async () => {
    const store = new MemoryStore();
    expect(await readDeployment(store, [local], () => undefined)).toBeNull();
    expect(await store.head(DEPLOYMENT_RECORD_KEY)).toBeNull();
    const { wiped, wipe } = recorder();
    const created = await readOrCreateDeployment(store, local, [local], wipe);
    expect(created.created).toBe(true);
    expect(created.secret.byteLength).toBe(32);
    expect(created.secret.some((x) => x !== 0)).toBe(true);
    const stored = (await store.get(DEPLOYMENT_RECORD_KEY))!;
    expect(created.etag).toBe(stored.etag);
    const record = decodeKeyRecord(stored.body);
    expect(record).toEqual(created.record);
    expect(record).toMatchObject({ kind: 'local', keyId: local.keyId, keyVersion: 1 });
    expect(record.deployment).toMatch(DEPLOYMENT_ID_PATTERN);
    expect(
      verifyRecordMac(deriveRecordMacKey(created.secret), recordMacFields(record, DEPLOYMENT_CONTEXT_UID), record.mac),
    ).toBe(true);
    expect(
      await local.unwrap(record.wrapped, {
        deploymentId: record.deployment,
        uid: DEPLOYMENT_CONTEXT_UID,
        keyVersion: 1,
      }),
    ).toEqual(created.secret);
    // The MAC key was wiped; the secret handed out was not.
    expect(wiped).toHaveLength(1);
    expect(wiped[0]).not.toBe(created.secret);
    const again = await readOrCreateDeployment(store, local, [local], wipe);
    expect(again).toEqual({ secret: created.secret, record, etag: stored.etag, created: false });
    expect(await readDeployment(store, [local], wipe)).toEqual({
      secret: created.secret,
      record,
      etag: stored.etag,
      created: false,
    });
  });

  it('an altered record that still opens is refused, and its secret wiped', async () => {
    const store = new MemoryStore();
    const created = await readOrCreateDeployment(store, local, [local], () => undefined);
    const altered = { ...created.record, mac: new Uint8Array(32).fill(1) };
    await store.put(DEPLOYMENT_RECORD_KEY, encodeKeyRecord(altered));
    const { wiped, wipe } = recorder();
    await expect(readDeployment(store, [local], wipe)).rejects.toMatchObject({
      code: 'INTEGRITY',
      message: DEPLOYMENT_RECORD_INTEGRITY_MESSAGE,
    });
    expect(wiped).toHaveLength(1);
    expect(wiped[0]!.every((x) => x === 0)).toBe(true);
    await expect(readOrCreateDeployment(store, local, [local], wipe)).rejects.toMatchObject({ code: 'INTEGRITY' });
  });

  it('two processes creating at once: the loser wipes its secret and takes the winner record', async () => {
    const store = new MemoryStore();
    const winner = await readOrCreateDeployment(new MemoryStore(), local, [local], () => undefined);
    const winnerBody = encodeKeyRecord(winner.record);
    let gets = 0;
    const racing = Object.assign(Object.create(store) as MemoryStore, {
      get: (key: string) => (key === DEPLOYMENT_RECORD_KEY && gets++ === 0 ? Promise.resolve(null) : store.get(key)),
    });
    await store.put(DEPLOYMENT_RECORD_KEY, winnerBody);
    const { wiped, wipe } = recorder();
    const got = await readOrCreateDeployment(racing, local, [local], wipe);
    expect(got.created).toBe(false);
    expect(got.secret).toEqual(winner.secret);
    expect(got.record).toEqual(winner.record);
    expect(wiped).toHaveLength(2); // our MAC key and our secret
    // The winner's record gone again by the time we read it: CONFLICT, try again.
    const vanishing = Object.assign(Object.create(store) as MemoryStore, { get: () => Promise.resolve(null) });
    await expect(readOrCreateDeployment(vanishing, local, [local], wipe)).rejects.toMatchObject({
      code: 'CONFLICT',
      message: 'Error: A key record was created and removed concurrently; please try again.',
    });
    // Another failure of the put passes through, the secret wiped.
    const failing = Object.assign(Object.create(new MemoryStore()) as MemoryStore, {
      put: () => Promise.reject(new Error('store down')),
    });
    const f = recorder();
    await expect(readOrCreateDeployment(failing, local, [local], f.wipe)).rejects.toThrow('store down');
    expect(f.wiped).toHaveLength(2);
  });
});

describe('user key records', () => {
  it('none: null; a single-version record: its secret; a versioned one: every version, the current one as the secret', async () => {
    const store = new MemoryStore();
    expect(await readUserSecret(store, UID, binding, [local])).toBeNull();
    const single = await userRecord(new Map([[1, secretOf(4)]]), 1);
    await store.put(userKeyKey(UID), encodeKeyRecord(single));
    const one = (await readUserSecret(store, UID, binding, [local]))!;
    expect(one).toMatchObject({ secret: secretOf(4), record: single, created: false });
    expect(one.etag).toBe((await store.head(userKeyKey(UID)))!.etag);
    expect(one.versions).toBeUndefined();
    const versioned = await userRecord(
      new Map([
        [1, secretOf(1)],
        [2, secretOf(2)],
      ]),
      2,
      1,
    );
    await store.put(userKeyKey(UID), encodeKeyRecord(versioned));
    const two = (await readUserSecret(store, UID, binding, [local]))!;
    expect(two.secret).toEqual(secretOf(2));
    expect([...two.versions!.keys()]).toEqual([1, 2]);
    expect(two.versions!.get(2)).toBe(two.secret);
    expect(two.created).toBe(false);
    // The default wipe zeroes what was opened before a failure.
    const returned: Uint8Array[] = [];
    let calls = 0;
    const failingAfterOne: KeyProvider = {
      kind: local.kind,
      keyId: local.keyId,
      wrap: (k, c) => local.wrap(k, c),
      unwrap: async (w, c) => {
        if (calls++ === 1) throw new Error('unwrap failed');
        const secret = await local.unwrap(w, c);
        returned.push(secret);
        return secret;
      },
    };
    await expect(readUserSecret(store, UID, binding, [failingAfterOne])).rejects.toThrow('unwrap failed');
    expect(returned).toHaveLength(1);
    expect(returned[0]!.every((x) => x === 0)).toBe(true);
    // A record of another user put in place is refused.
    await store.put(
      userKeyKey(UID),
      encodeKeyRecord(await userRecord(new Map([[1, secretOf(4)]]), 1, undefined, 'uidBBBBBBBBBBBBBBBBBBBBBBB')),
    );
    await expect(readUserSecret(store, UID, binding, [local])).rejects.toMatchObject({
      code: 'INTEGRITY',
      message: KEY_RECORD_INTEGRITY_MESSAGE,
    });
  });

  it('userHasObjects: anything under the user prefix, nothing of another user, by a listing of one key', async () => {
    const inner = new MemoryStore();
    const asked: Array<{ prefix: string; maxKeys?: number }> = [];
    const store = Object.assign(Object.create(inner) as MemoryStore, {
      list: (prefix: string, options: { maxKeys?: number } = {}) => {
        asked.push({ prefix, ...(options.maxKeys !== undefined ? { maxKeys: options.maxKeys } : {}) });
        return inner.list(prefix, options);
      },
    });
    expect(await userHasObjects(store, UID)).toBe(false);
    expect(asked).toEqual([{ prefix: userPrefix(UID), maxKeys: 1 }]);
    expect(await userHasObjects(store, UID)).toBe(false);
    await store.put(`${userPrefix('uidBBBBBBBBBBBBBBBBBBBBBBB')}f/x`, new Uint8Array(1));
    expect(await userHasObjects(store, UID)).toBe(false);
    await store.put(`${userPrefix(UID)}v/x`, new Uint8Array(1));
    expect(await userHasObjects(store, UID)).toBe(true);
  });

  it('a new user gets one new key, stored create-only; an existing one is read', async () => {
    const store = new MemoryStore();
    const { wiped, wipe } = recorder();
    const created = await readOrCreateUserSecret(store, UID, binding, local, [local], wipe);
    expect(created.created).toBe(true);
    expect(created.versions).toEqual(new Map([[1, created.secret]]));
    expect(created.versions!.get(1)).toBe(created.secret);
    const stored = (await store.get(userKeyKey(UID)))!;
    expect(created.etag).toBe(stored.etag);
    expect(decodeKeyRecord(stored.body)).toEqual(created.record);
    expect(created.record).toMatchObject({ deployment: DEPLOYMENT, kind: 'local', keyId: local.keyId, keyVersion: 1 });
    expect(isAuthenticRecord(created.record, UID, binding)).toBe(true);
    expect(await local.unwrap(created.record.wrapped, { deploymentId: DEPLOYMENT, uid: UID, keyVersion: 1 })).toEqual(
      created.secret,
    );
    expect(wiped).toEqual([]);
    const again = await readOrCreateUserSecret(store, UID, binding, local, [local], wipe);
    expect(again).toMatchObject({ secret: created.secret, created: false, etag: stored.etag });
  });

  it('opening an existing key costs one GET and, beside it, one LIST of one key (the newest key state mark); a deployment one GET; no write, no new secret', async () => {
    const inner = new MemoryStore();
    await inner.put(`${userPrefix(UID)}f/somefile`, new Uint8Array(10));
    await inner.put(userKeyKey(UID), encodeKeyRecord(await userRecord(new Map([[1, secretOf(4)]]), 1)));
    await readOrCreateDeployment(inner, local, [local], () => undefined);
    const requests: string[] = [];
    const store = Object.assign(Object.create(inner) as MemoryStore, {
      get: (key: string) => (requests.push(`GET ${key}`), inner.get(key)),
      list: (prefix: string, o?: { maxKeys?: number }) => (requests.push(`LIST ${prefix}`), inner.list(prefix, o)),
      put: (key: string, body: Uint8Array, o?: Parameters<MemoryStore['put']>[2]) => (
        requests.push(`PUT ${key}`),
        inner.put(key, body, o)
      ),
    });
    let wraps = 0;
    const counting: KeyProvider = {
      kind: local.kind,
      keyId: local.keyId,
      wrap: (k, c) => (wraps++, local.wrap(k, c)),
      unwrap: (w, c) => local.unwrap(w, c),
    };
    expect((await readOrCreateUserSecret(store, UID, binding, counting, [counting], () => undefined)).secret).toEqual(
      secretOf(4),
    );
    expect(requests).toEqual([`GET ${userKeyKey(UID)}`, `LIST ${keyStateMarkPrefix(UID)}`]);
    requests.length = 0;
    expect((await readOrCreateDeployment(store, counting, [counting], () => undefined)).created).toBe(false);
    expect(requests).toEqual([`GET ${DEPLOYMENT_RECORD_KEY}`]);
    expect(wraps).toBe(0);
  });

  it('files without a key record: the recovery message, never a new key; unless the record appeared meanwhile', async () => {
    const store = new MemoryStore();
    await store.put(`${userPrefix(UID)}f/somefile`, new Uint8Array(10));
    await expect(readOrCreateUserSecret(store, UID, binding, local, [local], () => undefined)).rejects.toMatchObject({
      code: 'STORE_INCONSISTENT',
      message: KEY_RECORD_MISSING_MESSAGE,
    });
    expect(await store.head(userKeyKey(UID))).toBeNull();
    // Another process created the record (and a first file) between our read and our listing.
    const record = await userRecord(new Map([[1, secretOf(8)]]), 1);
    let reads = 0;
    const racing = Object.assign(Object.create(store) as MemoryStore, {
      get: async (key: string) => {
        if (key === userKeyKey(UID) && reads++ === 0) return null;
        return store.get(key);
      },
    });
    await store.put(userKeyKey(UID), encodeKeyRecord(record));
    const raced = await readOrCreateUserSecret(racing, UID, binding, local, [local], () => undefined);
    expect(raced).toMatchObject({ secret: secretOf(8), created: false });
  });

  it('two processes creating at once: the loser wipes its secret and takes the winner key; a vanished winner is CONFLICT', async () => {
    const store = new MemoryStore();
    const record = await userRecord(new Map([[1, secretOf(6)]]), 1);
    const winnerBody = encodeKeyRecord(record);
    let reads = 0;
    const racing = Object.assign(Object.create(store) as MemoryStore, {
      get: (key: string) => (key === userKeyKey(UID) && reads++ === 0 ? Promise.resolve(null) : store.get(key)),
      put: async (key: string, body: Uint8Array, options?: Parameters<MemoryStore['put']>[2]) => {
        if (key === userKeyKey(UID)) {
          await store.put(key, winnerBody); // the other process's put lands first
          throw new PreconditionFailedError(key);
        }
        return store.put(key, body, options);
      },
    });
    const { wiped, wipe } = recorder();
    const got = await readOrCreateUserSecret(racing, UID, binding, local, [local], wipe);
    expect(got).toMatchObject({ secret: secretOf(6), created: false });
    expect(wiped).toHaveLength(1);
    expect(wiped[0]!.every((x) => x === 0)).toBe(true);
    const empty = new MemoryStore();
    const vanishing = Object.assign(Object.create(empty) as MemoryStore, {
      put: (key: string) => Promise.reject(new PreconditionFailedError(key)),
    });
    await expect(
      readOrCreateUserSecret(vanishing, UID, binding, local, [local], () => undefined),
    ).rejects.toMatchObject({
      code: 'CONFLICT',
      message: 'Error: A key record was created and removed concurrently; please try again.',
    });
    const failing = Object.assign(Object.create(empty) as MemoryStore, {
      put: () => Promise.reject(new Error('store down')),
    });
    const f = recorder();
    await expect(readOrCreateUserSecret(failing, UID, binding, local, [local], f.wipe)).rejects.toThrow('store down');
    expect(f.wiped).toHaveLength(1);
  });
});
