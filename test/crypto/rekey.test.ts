/**
 * Re-keying a user's data key. A new key version in the record, every object
 * re-sealed in place under it (If-Match), the old versions dropped once nothing needs them; reads pick
 * the key by the header's version; names and audit pseudonyms stay on the first version.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readFileSync } from 'node:fs';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createEncryptedCodecProvider } from '../../src/crypto/codec.js';
import { FORMAT_VERSION } from '../../src/crypto/format.js';
import { decodeKeyRecord, encodeKeyRecord } from '../../src/crypto/key-provider.js';
import { userKeyKey } from '../../src/crypto/layout.js';
import { createLocalKeyProvider } from '../../src/crypto/local-key.js';
import { rotateKeys, verifyKeys } from '../../src/crypto/operations.js';
import { loadSodium } from '../../src/crypto/sodium.js';
import { createVault, type Vault } from '../../src/memvault.js';
import { MemoryStore } from '../../src/store/memory.js';
import { FaultyStore } from '../faulty-store.js';
import { createKmsKeyProvider } from '../../src/crypto/kms-key.js';
import { rekeyUid } from '../../src/crypto/rekey.js';
import { KmsStandIn, STAND_IN_KEY_ID } from './kms-stand-in.js';
import {
  Clock,
  concurrentEditsScenario,
  rekeyStores,
  FILES,
  historyScenario,
  instance,
  ok,
  rawObjects,
  readAll,
  recordOf,
  resealScenario,
  sealedVersions,
  seed,
  USER,
} from './rekey-scenarios.js';
import { caught, expectCode } from './helpers.js';
import { decode, encode } from '../kit/text.js';

beforeAll(async () => {
  await loadSodium();
});

/** A memory store on a manual clock, a master key, and a vault on them with the seeded user's files. */
async function seededMemory(
  extra: Record<string, unknown> = {},
): Promise<{ clock: Clock; store: MemoryStore; masterKey: Uint8Array; vault: Vault }> {
  const clock = new Clock();
  const store = new MemoryStore(clock.date);
  const masterKey = new Uint8Array(randomBytes(32));
  const vault = await instance(store, masterKey, clock, extra);
  await seed(vault);
  return { clock, store, masterKey, vault };
}

const dirs: string[] = [];
afterEach(async () => {
  for (const d of dirs.splice(0)) await rm(d, { recursive: true, force: true });
});

const stores = rekeyStores('rekey');

describe.each(stores)('re-keying on the %s store', (_name, makeStore) => {
  it(
    're-seals file history too: every version and record under the new key, the same history after, a restore to before the re-key',
    () => historyScenario(makeStore),
    30_000,
  );
  it('re-seals every object in place under a new version, drops the old one, keeps names and audit pseudonyms', () =>
    resealScenario(makeStore));
  it('under concurrent edits from another instance (stale key cache) loses nothing; the old version is dropped only after the settle time', () =>
    concurrentEditsScenario(makeStore));
});

describe('key versions', () => {
  it('old objects open only with the version they name; a planted old-version object after the drop is an integrity error', async () => {
    const { clock, store, masterKey, vault } = await seededMemory();
    const uid = (await vault.files(USER)).uid;
    const provider = await createEncryptedCodecProvider({
      store,
      keyProvider: await createLocalKeyProvider(masterKey),
      createDeployment: false,
    });
    const target = '/memories/notes/todo.md';
    const targetKey = (await provider.forUser(USER)).keyFor(target);
    const v1 = (await rawObjects(store, uid)).find((o) => o.key === targetKey)!;
    expect(v1.version).toBe(1);

    // Pending: the record holds versions 1 and 2 (settle not reached, wait: false).
    const pending = await vault.rekeyUser(USER, {
      settleMs: 3_600_000,
      wait: false,
      now: clock.now,
      sleep: clock.sleep,
    });
    expect(pending).toMatchObject({ keyVersion: 2, oldVersionsDropped: false, resealed: 3 });
    expect(pending.settlesAt).toBeDefined();
    const record = await recordOf(store, uid);
    expect(record.readFrom).toBe(1);
    const v2 = (await rawObjects(store, uid)).find((o) => o.key === v1.key)!;
    expect(v2.version).toBe(2);

    const files = async () => (await instance(store, masterKey, clock)).files(USER);
    // While pending, the genuine version-1 bytes still open (an object not yet re-sealed).
    await store.put(v1.key, v1.body);
    expect(decode((await (await files()).read(target))!.data)).toBe(FILES[target]);

    // A header that names the other version than the key that sealed it: INTEGRITY either way.
    const relabel = (body: Uint8Array, version: number) => {
      const copy = new Uint8Array(body);
      new DataView(copy.buffer).setUint32(1, version);
      return copy;
    };
    await store.put(v1.key, relabel(v1.body, 2));
    expectCode(await caught(async () => (await files()).read(target)), 'INTEGRITY');
    await store.put(v1.key, relabel(v2.body, 1));
    expectCode(await caught(async () => (await files()).read(target)), 'INTEGRITY');
    // A version the record does not hold.
    await store.put(v1.key, relabel(v2.body, 3));
    expectCode(await caught(async () => (await files()).read(target)), 'INTEGRITY');
    expect(relabel(v2.body, 3)[0]).toBe(FORMAT_VERSION);

    // Finish: the old version is dropped once settled; the genuine version-1 bytes planted back are refused.
    await store.put(v1.key, v2.body);
    clock.t += 3_600_000;
    const done = await vault.rekeyUser(USER, { settleMs: 3_600_000, now: clock.now, sleep: clock.sleep });
    expect(done).toMatchObject({ keyVersion: 2, startedVersion: false, oldVersionsDropped: true });
    await store.put(v1.key, v1.body);
    expectCode(await caught(async () => (await files()).read(target)), 'INTEGRITY');
    // The instance that ran the re-key refuses it too (its cache was evicted), and the listing still works.
    expectCode(await caught(async () => (await vault.files(USER)).read(target)), 'INTEGRITY');
    const listing = await vault.run(USER, { command: 'view', path: '/memories' });
    expect(listing.isError).toBe(false);
    await vault.close();
    await provider.close();
  });

  it('a versioned record is authenticated whole: altering an older wrap, readFrom or the older list is refused', async () => {
    const { clock, store, masterKey, vault } = await seededMemory();
    const uid = (await vault.files(USER)).uid;
    await vault.rekeyUser(USER, { settleMs: 3_600_000, wait: false, now: clock.now, sleep: clock.sleep });
    const original = (await store.get(userKeyKey(uid)))!.body;
    const record = decodeKeyRecord(original);
    const tampered = [
      { ...record, readFrom: 2, older: record.older!.slice(0, 1) }, // claims the drop without the MAC
      { ...record, older: record.older!.map((o) => ({ ...o, wrapped: record.wrapped })) }, // swaps a wrap
    ];
    for (const bad of tampered) {
      await store.put(userKeyKey(uid), encodeKeyRecord(bad));
      const e = await caught(async () => (await instance(store, masterKey, clock)).files(USER));
      expectCode(e, 'INTEGRITY');
    }
    // Structurally wrong versioned records are damaged (decode refuses them).
    const json = JSON.parse(decode(original)) as Record<string, unknown>;
    for (const bad of [
      { ...json, older: [] },
      { ...json, readFrom: 0 },
      { ...json, readFrom: 3 },
      { ...json, older: [...(json['older'] as unknown[]), { keyVersion: 5, wrapped: json['wrapped'] }] },
      (({ readFrom: _r, ...rest }) => rest)(json),
    ]) {
      expect(() => decodeKeyRecord(encode(JSON.stringify(bad)))).toThrow(/damaged/);
    }
    await store.put(userKeyKey(uid), original);
    expect(await readAll(await instance(store, masterKey, clock), USER)).toEqual(FILES);
    await vault.close();
  });

  it('rotation re-wraps every version a record holds; keys verify opens them with the new key alone', async () => {
    const clock = new Clock();
    const store = new MemoryStore(clock.date);
    const oldKey = new Uint8Array(randomBytes(32));
    const newKey = new Uint8Array(randomBytes(32));
    const vault = await instance(store, oldKey, clock);
    await seed(vault);
    await vault.rekeyUser(USER, { settleMs: 3_600_000, wait: false, now: clock.now, sleep: clock.sleep });
    await vault.close();
    const result = await rotateKeys({
      store,
      from: await createLocalKeyProvider(oldKey),
      to: await createLocalKeyProvider(newKey),
    });
    expect(result.rewrapped).toBe(2);
    const verified = await verifyKeys({ store, providers: await createLocalKeyProvider(newKey) });
    expect(verified.failed).toEqual([]);
    const after = await instance(store, newKey, clock);
    expect(await readAll(after, USER)).toEqual(FILES);
    // The re-key continues under the new master key and drops version... once settled.
    clock.t += 3_600_000;
    expect(await after.rekeyUser(USER, { settleMs: 3_600_000, now: clock.now, sleep: clock.sleep })).toMatchObject({
      oldVersionsDropped: true,
    });
    expect(await readAll(await instance(store, newKey, clock), USER)).toEqual(FILES);
    await after.close();
  });

  it.each([
    ['without', false],
    ['with', true],
  ])(
    'a crash at every request of a re-key (%s file history) leaves every file readable, and a rerun completes',
    async (_with, history) => {
      const clock = new Clock();
      const masterKey = new Uint8Array(randomBytes(32));
      const setup = async () => {
        const faulty = new FaultyStore(new MemoryStore(clock.date));
        const vault = await instance(faulty, masterKey, clock, { history });
        await seed(vault);
        return { faulty, vault };
      };
      // Count the requests of a whole run.
      const probe = await setup();
      const start = probe.faulty.calls;
      await probe.vault.rekeyUser(USER, { settleMs: 0, now: clock.now, sleep: clock.sleep });
      const total = probe.faulty.calls - start;
      expect(total).toBeGreaterThan(10);
      await probe.vault.close();
      let crashed = 0;
      for (let n = 1; n <= total; n++) {
        const { faulty, vault } = await setup();
        faulty.failAt(n);
        const first = await vault.rekeyUser(USER, { settleMs: 0, now: clock.now, sleep: clock.sleep }).then(
          () => 'ok',
          (e: Error) => e.message,
        );
        if (faulty.fired) {
          crashed += 1;
          expect(first).not.toBe('ok');
        }
        faulty.disarm();
        // Every file readable by a fresh instance, whatever step crashed.
        expect(
          await readAll(await instance(faulty, masterKey, clock, { history }), USER),
          `crash at request ${n}`,
        ).toEqual(FILES);
        // The rerun continues the version under way, or starts it when the crash came first: version 2 either way.
        const rerun = await vault.rekeyUser(USER, { settleMs: 0, now: clock.now, sleep: clock.sleep });
        expect(rerun, `rerun after crash at ${n}`).toMatchObject({ keyVersion: 2, oldVersionsDropped: true });
        const uid = (await vault.files(USER)).uid;
        expect(
          (await rawObjects(faulty, uid)).every((o) => o.version === 2),
          `crash at ${n}`,
        ).toBe(true);
        // Every kept version and record too (and, with history, 3 of them: none lost, none doubled).
        const sealed = await sealedVersions(faulty, uid);
        expect(sealed.every((o) => (o.body ?? 2) === 2 && (o.record ?? 2) === 2)).toBe(true);
        expect(sealed.filter((o) => o.key.includes('/v/'))).toHaveLength(history ? 3 : 0);
        expect(await readAll(await instance(faulty, masterKey, clock, { history }), USER)).toEqual(FILES);
        await vault.close();
      }
      expect(crashed).toBe(total);
    },
  );

  it('forget after a re-key shreds every version: no record, no object, nothing readable (raw scan)', async () => {
    const { clock, store, vault } = await seededMemory();
    await seed(vault, 'other@example.com', { '/memories/keep.md': 'keep\n' });
    const uid = (await vault.files(USER)).uid;
    await vault.rekeyUser(USER, { settleMs: 3_600_000, wait: false, now: clock.now, sleep: clock.sleep });
    const erased = await vault.forgetUser(USER);
    expect(erased.keyDeleted).toBe(true);
    const left = store.keys();
    expect(left.filter((k) => k.includes(uid))).toEqual([]);
    expect(left.some((k) => k.startsWith('u/'))).toBe(true); // the other user's file is still there
    const haystack = (
      await Promise.all(left.map(async (k) => Buffer.from((await store.get(k))!.body).toString('latin1')))
    ).join('\n');
    for (const content of Object.values(FILES)) expect(haystack).not.toContain(content.trim());
    expectCode(await caught(() => vault.rekeyUser(USER, { settleMs: 0 })), 'NOT_FOUND');
    await vault.close();
  });

  it('writes a rekey audit record under the unchanged audit pseudonym', async () => {
    const clock = new Clock();
    const dir = await mkdtemp(join(tmpdir(), 'memvault-rekey-audit-'));
    dirs.push(dir);
    const file = join(dir, 'audit.jsonl');
    const store = new MemoryStore(clock.date);
    const masterKey = new Uint8Array(randomBytes(32));
    const vault = await instance(store, masterKey, clock, { audit: { file } });
    await seed(vault);
    await vault.rekeyUser(USER, { settleMs: 0, now: clock.now, sleep: clock.sleep, actor: 'ops-1' });
    await ok(vault, USER, { command: 'view', path: '/memories/b.md' });
    await vault.close();
    const records = readFileSync(file, 'utf8')
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    const rekey = records.find((r) => r['type'] === 'rekey')!;
    expect(rekey).toMatchObject({ outcome: 'ok', actor: 'ops-1', counts: { keyVersion: 2, resealed: 3, dropped: 1 } });
    const commands = records.filter((r) => r['type'] === 'command');
    expect(new Set(commands.map((r) => r['uid']))).toEqual(new Set([rekey['uid']]));
    expect(JSON.stringify(records)).not.toContain(USER);
  });

  it('in KMS mode: the new version comes from GenerateDataKey with its own key-version context; an Encrypt-only principal cannot add a version', async () => {
    const kms = new KmsStandIn();
    const host = () => createKmsKeyProvider({ keyId: STAND_IN_KEY_ID, client: kms.host() });
    const store = new MemoryStore();
    const provider = await createEncryptedCodecProvider({ store, keyProvider: host() });
    const vault = await createVault({ store, codec: provider });
    await seed(vault);
    const uid = (await vault.files(USER)).uid;
    const result = await rekeyUid({
      store,
      primary: host(),
      providers: [host()],
      uid,
      settleMs: 0,
      evict: (u) => provider.evict(u),
    });
    // History is on by default: the three files and the version each keeps.
    expect(result).toMatchObject({ keyVersion: 2, resealed: 6, oldVersionsDropped: true });
    const generated = kms.calls.filter((c) => c.operation === 'GenerateDataKey' && c.context?.['memvault:uid'] === uid);
    expect(generated.map((c) => c.context?.['memvault:key-version'])).toEqual(['1', '2']);
    expect(await readAll(vault, USER)).toEqual(FILES);
    const freshCodec = () => createEncryptedCodecProvider({ store, keyProvider: host() });
    expect(await readAll(await createVault({ store, codec: await freshCodec() }), USER)).toEqual(FILES);
    // Someone with bucket write and kms:Encrypt builds a "version 3" of their own: the record MAC refuses it.
    const record = await recordOf(store, uid);
    const attacker = createKmsKeyProvider({ keyId: STAND_IN_KEY_ID, client: kms.encryptOnly() });
    const planted = await attacker.wrap(new Uint8Array(32).fill(7), {
      deploymentId: record.deployment,
      uid,
      keyVersion: 3,
    });
    const forged = {
      ...record,
      keyVersion: 3,
      wrapped: planted,
      readFrom: 2,
      older: [...record.older!, { keyVersion: 2, wrapped: record.wrapped }],
    };
    await store.put(userKeyKey(uid), encodeKeyRecord(forged));
    expectCode(
      await caught(async () => (await createVault({ store, codec: await freshCodec() })).files(USER)),
      'INTEGRITY',
    );
    expectCode(
      await caught(() => rekeyUid({ store, primary: host(), providers: [host()], uid, settleMs: 0 })),
      'INTEGRITY',
    );
    await vault.close();
  });
});

describe('re-keying a user with file history', () => {
  it('history written under the old key while a re-key waits for its settle time is re-sealed before the old version is dropped', async () => {
    const { clock, store, masterKey, vault: plain } = await seededMemory();
    const uid = (await plain.files(USER)).uid;
    // An instance that cached version 1 before the re-key started writes a file, and its version, under 1.
    const withHistory = await instance(store, masterKey, clock, { history: true });
    expect(await readAll(withHistory, USER)).toEqual(FILES);
    const started = await plain.rekeyUser(USER, {
      settleMs: 3_600_000,
      wait: false,
      now: clock.now,
      sleep: clock.sleep,
    });
    expect(started).toMatchObject({ startedVersion: true, oldVersionsDropped: false });
    await ok(withHistory, USER, {
      command: 'create',
      path: '/memories/new.md',
      file_text: 'written with history on\n',
    });
    await withHistory.close();
    const mid = await sealedVersions(store, uid);
    expect(mid.filter((o) => o.key.includes('/v/')).map((o) => [o.body, o.record])).toEqual([[1, 1]]);
    const done = await plain.rekeyUser(USER, { settleMs: 0, now: clock.now, sleep: clock.sleep });
    expect(done).toMatchObject({ oldVersionsDropped: true, failed: 0 });
    const record = decodeKeyRecord((await store.get(userKeyKey(uid)))!.body);
    expect(record.keyVersion).toBe(2);
    expect(record.older?.map((v) => v.keyVersion)).toEqual([1]);
    expect((await sealedVersions(store, uid)).every((o) => (o.body ?? 2) === 2 && (o.record ?? 2) === 2)).toBe(true);
    const fresh = await instance(store, masterKey, clock, { history: true });
    expect(await readAll(fresh, USER)).toEqual({ ...FILES, '/memories/new.md': 'written with history on\n' });
    const versions = await fresh.history(USER, '/memories/new.md');
    expect(versions.versions.map((v) => [v.actor, v.size])).toEqual([['model', 24]]);
    await fresh.close();
    await plain.close();
  });

  it('a version whose record does not describe its body is left alone and keeps the old key version (fail closed)', async () => {
    const { clock, store, masterKey, vault } = await seededMemory({ history: true });
    const uid = (await vault.files(USER)).uid;
    const versionKey = (await sealedVersions(store, uid)).find((o) => o.key.includes('/v/'))!.key;
    const other = (await sealedVersions(store, uid)).filter((o) => o.key.includes('/v/'))[1]!.key;
    const victim = (await store.get(versionKey))!;
    const donor = (await store.get(other))!;
    await store.put(versionKey, victim.body, { metadata: donor.metadata }); // another version's record
    const result = await vault.rekeyUser(USER, { settleMs: 0, now: clock.now, sleep: clock.sleep });
    expect(result).toMatchObject({ failed: 1, oldVersionsDropped: false });
    expect((await recordOf(store, uid)).readFrom).toBe(1);
    expect((await sealedVersions(store, uid)).find((o) => o.key === versionKey)).toMatchObject({ body: 1, record: 1 });
    // Everything else is re-sealed; the files read.
    expect(await readAll(await instance(store, masterKey, clock, { history: true }), USER)).toEqual(FILES);
    await vault.close();
  });
});
