/**
 * Issue 20 item 3: re-keying a user's data key. A new key version in the record, every object
 * re-sealed in place under it (If-Match), the old versions dropped once nothing needs them; reads pick
 * the key by the header's version; names and audit pseudonyms stay on the first version.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readFileSync } from 'node:fs';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { auditPseudonymsOf } from '../../src/audit/pseudonyms.js';
import { createEncryptedCodecProvider } from '../../src/crypto/codec.js';
import { contentKeyVersion, FORMAT_VERSION } from '../../src/crypto/format.js';
import { decodeKeyRecord, encodeKeyRecord } from '../../src/crypto/key-provider.js';
import { userKeyKey, userPrefix } from '../../src/crypto/layout.js';
import { createLocalKeyProvider } from '../../src/crypto/local-key.js';
import { rotateKeys, verifyKeys } from '../../src/crypto/operations.js';
import { loadSodium } from '../../src/crypto/sodium.js';
import { createVault, type Vault } from '../../src/memvault.js';
import { MemoryStore } from '../../src/store/memory.js';
import { openStore } from '../../src/store/open.js';
import { listAll, type ObjectStore } from '../../src/store/port.js';
import { FaultyStore } from '../faulty-store.js';
import { caught, expectCode, HookedStore, text, utf8 } from './helpers.js';

beforeAll(async () => {
  await loadSodium();
});

const USER = 'rita.rekey@example.com';
const FILES: Record<string, string> = {
  '/memories/notes/todo.md': 'buy oat milk\n',
  '/memories/notes/deep/a.md': 'alpha\n',
  '/memories/b.md': 'bravo\n',
};

/** One clock for the store's LastModified, every instance's key cache and the re-key. */
class Clock {
  // Starts at the real time: the file store's LastModified is the file's mtime.
  t = Date.now();
  now = () => this.t;
  date = () => new Date(this.t);
  sleep = async (ms: number) => {
    this.t += Math.max(ms, 1);
  };
}

async function instance(store: ObjectStore, masterKey: Uint8Array, clock: Clock, extra: Record<string, unknown> = {}): Promise<Vault> {
  return createVault({
    store,
    encryption: { masterKey: Buffer.from(masterKey).toString('base64'), cache: { maxAgeMs: 60_000, wipeGraceMs: 0, now: clock.now } },
    ...extra,
  } as Parameters<typeof createVault>[0]);
}

async function ok(vault: Vault, user: string, input: Record<string, unknown>): Promise<string> {
  const result = await vault.run(user, input);
  const out = JSON.stringify(result.content);
  expect(result.isError, `${JSON.stringify(input)} -> ${out}`).toBe(false);
  return out;
}

async function readAll(vault: Vault, user: string): Promise<Record<string, string>> {
  const files = await vault.files(user);
  const out: Record<string, string> = {};
  for await (const file of files.listFiles('/memories')) {
    const read = await files.read(file.path);
    if (read) out[file.path] = text(read.data);
  }
  return out;
}

async function seed(vault: Vault, user = USER, files = FILES): Promise<void> {
  for (const [path, content] of Object.entries(files)) await ok(vault, user, { command: 'create', path, file_text: content });
}

async function rawObjects(store: ObjectStore, uid: string): Promise<Array<{ key: string; body: Uint8Array; version: number | null }>> {
  const out = [];
  for await (const o of listAll(store, `${userPrefix(uid)}f/`)) {
    const got = (await store.get(o.key))!;
    out.push({ key: o.key, body: got.body, version: contentKeyVersion(got.body) });
  }
  return out;
}

async function recordOf(store: ObjectStore, uid: string) {
  return decodeKeyRecord((await store.get(userKeyKey(uid)))!.body);
}

const dirs: string[] = [];
afterEach(async () => {
  for (const d of dirs.splice(0)) await rm(d, { recursive: true, force: true });
});

const stores: Array<[string, (clock: Clock) => Promise<ObjectStore>]> = [
  ['memory', async (clock) => new MemoryStore(clock.date)],
  [
    'file',
    async () => {
      const dir = await mkdtemp(join(tmpdir(), 'memvault-rekey-'));
      dirs.push(dir);
      return openStore(`file:${join(dir, 'data')}`);
    },
  ],
];

describe.each(stores)('re-keying on the %s store', (_name, makeStore) => {
  it('re-seals every object in place under a new version, drops the old one, keeps names and audit pseudonyms', async () => {
    const clock = new Clock();
    const store = await makeStore(clock);
    const masterKey = new Uint8Array(randomBytes(32));
    const vault = await instance(store, masterKey, clock);
    await seed(vault);
    const provider = await createEncryptedCodecProvider({ store, keyProvider: await createLocalKeyProvider(masterKey), createDeployment: false });
    const uid = provider.uidOf(USER);
    const before = await rawObjects(store, uid);
    expect(before.map((o) => o.version)).toEqual([1, 1, 1]);
    const auditBefore = auditPseudonymsOf(await provider.forUser(USER), provider);

    const phases: string[] = [];
    const result = await vault.rekeyUser(USER, { settleMs: 0, now: clock.now, sleep: clock.sleep, onProgress: (p) => phases.push(p.phase) });
    expect(result).toMatchObject({ keyVersion: 2, startedVersion: true, resealed: 3, failed: 0, conflicts: 0, oldVersionsDropped: true });
    expect(phases[0]).toBe('version');
    expect(phases).toContain('reseal');
    expect(phases.at(-1)).toBe('done');

    const after = await rawObjects(store, uid);
    // Same keys (names stay on the first version), new bytes, all under version 2.
    expect(after.map((o) => o.key)).toEqual(before.map((o) => o.key));
    expect(after.map((o) => o.version)).toEqual([2, 2, 2]);
    for (let i = 0; i < after.length; i++) expect(Buffer.from(after[i]!.body).equals(Buffer.from(before[i]!.body))).toBe(false);
    const record = await recordOf(store, uid);
    expect(record.keyVersion).toBe(2);
    expect(record.readFrom).toBe(2);
    expect(record.older?.map((o) => o.keyVersion)).toEqual([1]);

    // The vault itself (its cache evicted by the re-key) and a fresh instance read everything.
    expect(await readAll(vault, USER)).toEqual(FILES);
    const fresh = await instance(store, masterKey, clock);
    expect(await readAll(fresh, USER)).toEqual(FILES);
    await ok(fresh, USER, { command: 'create', path: '/memories/new.md', file_text: 'new\n' });
    expect((await rawObjects(store, uid)).every((o) => o.version === 2)).toBe(true);

    // The audit pseudonym key derives from version 1: unchanged.
    provider.evict(uid);
    const auditAfter = auditPseudonymsOf(await provider.forUser(USER), provider);
    expect(auditAfter.uid).toBe(auditBefore.uid);
    expect(auditAfter.pathId('/memories/b.md')).toBe(auditBefore.pathId('/memories/b.md'));

    // A second re-key makes version 3 and keeps only version 1 (name root) as older.
    const again = await vault.rekeyUser(USER, { settleMs: 0, now: clock.now, sleep: clock.sleep });
    expect(again).toMatchObject({ keyVersion: 3, startedVersion: true, resealed: 4, oldVersionsDropped: true });
    expect((await recordOf(store, uid)).older?.map((o) => o.keyVersion)).toEqual([1]);
    expect(await readAll(await instance(store, masterKey, clock), USER)).toEqual({ ...FILES, '/memories/new.md': 'new\n' });
    await vault.close();
    await fresh.close();
    await provider.close();
  });

  it('under concurrent edits from another instance (stale key cache) loses nothing; the old version is dropped only after the settle time', async () => {
    const clock = new Clock();
    const inner = await makeStore(clock);
    const store = new HookedStore(inner as MemoryStore);
    const masterKey = new Uint8Array(randomBytes(32));
    const a = await instance(store, masterKey, clock);
    const b = await instance(store, masterKey, clock);
    await seed(a);
    expect(await readAll(b, USER)).toEqual(FILES); // b caches version 1
    const uid = (await a.files(USER)).uid;
    const expected = { ...FILES };

    const provider = await createEncryptedCodecProvider({ store: inner, keyProvider: await createLocalKeyProvider(masterKey), createDeployment: false });
    const codec = await provider.forUser(USER);
    const pathOfKey = new Map(Object.keys(FILES).map((p) => [codec.keyFor(p), p]));

    // Right before the first two re-seal puts, b edits that very file (b still seals under version 1),
    // so the re-seal's If-Match fails and it must read again.
    let raced = 0;
    let inEdit = false;
    let racing = true;
    store.beforePut = async (key, options) => {
      if (!racing || inEdit || raced >= 2 || options?.ifMatch === undefined || !pathOfKey.has(key)) return;
      raced += 1;
      inEdit = true;
      try {
        const path = pathOfKey.get(key)!;
        await ok(b, USER, { command: 'insert', path, insert_line: 0, insert_text: `raced edit ${raced}` });
        expected[path] = `raced edit ${raced}\n${expected[path]}`;
      } finally {
        inEdit = false;
      }
    };
    // During the settle wait b, still on version 1, writes a new file and edits another. The settle
    // time covers b's key-cache age (60 s), as the docs require.
    const settleMs = 61_000;
    let lateWrites = false;
    const sleep = async (ms: number) => {
      racing = false;
      if (!lateWrites) {
        lateWrites = true;
        await ok(b, USER, { command: 'create', path: '/memories/during-settle.md', file_text: 'late\n' });
        await ok(b, USER, { command: 'str_replace', path: '/memories/notes/deep/a.md', old_str: 'alpha', new_str: 'alpha edited' });
        expected['/memories/during-settle.md'] = 'late\n';
        expected['/memories/notes/deep/a.md'] = expected['/memories/notes/deep/a.md']!.replace('alpha', 'alpha edited');
        // b's create sealed under version 1, its cached current key (its edit read a re-sealed file
        // first, re-read the record for the unknown version and wrote version 2).
        const raw = await rawObjects(inner, uid);
        expect(raw.find((o) => o.key === codec.keyFor('/memories/during-settle.md'))?.version).toBe(1);
        expect(raw.find((o) => o.key === codec.keyFor('/memories/notes/deep/a.md'))?.version).toBe(2);
      }
      await clock.sleep(ms);
    };
    const result = await a.rekeyUser(USER, { settleMs, now: clock.now, sleep });
    expect(raced).toBe(2);
    expect(result.oldVersionsDropped).toBe(true);
    expect(result.failed).toBe(0);
    expect(result.resealed).toBe(Object.keys(FILES).length + 1); // each file once (a raced one read again), and b's late version-1 file
    expect((await rawObjects(inner, uid)).map((o) => o.version)).toEqual(Object.keys(expected).map(() => 2));
    expect((await recordOf(inner, uid)).readFrom).toBe(2);
    await provider.close();

    // Past its key-cache age b re-reads the record; every edit is there for everyone.
    clock.t += 60_000;
    expect(await readAll(b, USER)).toEqual(expected);
    expect(await readAll(await instance(inner, masterKey, clock), USER)).toEqual(expected);
    await a.close();
    await b.close();
  });
});

describe('key versions', () => {
  it('old objects open only with the version they name; a planted old-version object after the drop is an integrity error', async () => {
    const clock = new Clock();
    const store = new MemoryStore(clock.date);
    const masterKey = new Uint8Array(randomBytes(32));
    const vault = await instance(store, masterKey, clock);
    await seed(vault);
    const uid = (await vault.files(USER)).uid;
    const provider = await createEncryptedCodecProvider({ store, keyProvider: await createLocalKeyProvider(masterKey), createDeployment: false });
    const target = '/memories/notes/todo.md';
    const targetKey = (await provider.forUser(USER)).keyFor(target);
    const v1 = (await rawObjects(store, uid)).find((o) => o.key === targetKey)!;
    expect(v1.version).toBe(1);

    // Pending: the record holds versions 1 and 2 (settle not reached, wait: false).
    const pending = await vault.rekeyUser(USER, { settleMs: 3_600_000, wait: false, now: clock.now, sleep: clock.sleep });
    expect(pending).toMatchObject({ keyVersion: 2, oldVersionsDropped: false, resealed: 3 });
    expect(pending.settlesAt).toBeDefined();
    const record = await recordOf(store, uid);
    expect(record.readFrom).toBe(1);
    const v2 = (await rawObjects(store, uid)).find((o) => o.key === v1.key)!;
    expect(v2.version).toBe(2);

    const files = async () => (await instance(store, masterKey, clock)).files(USER);
    // While pending, the genuine version-1 bytes still open (an object not yet re-sealed).
    await store.put(v1.key, v1.body);
    expect(text((await (await files()).read(target))!.data)).toBe(FILES[target]);

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
    const clock = new Clock();
    const store = new MemoryStore(clock.date);
    const masterKey = new Uint8Array(randomBytes(32));
    const vault = await instance(store, masterKey, clock);
    await seed(vault);
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
    const json = JSON.parse(text(original)) as Record<string, unknown>;
    for (const bad of [
      { ...json, older: [] },
      { ...json, readFrom: 0 },
      { ...json, readFrom: 3 },
      { ...json, older: [...(json['older'] as unknown[]), { keyVersion: 5, wrapped: json['wrapped'] }] },
      (({ readFrom: _r, ...rest }) => rest)(json),
    ]) {
      expect(() => decodeKeyRecord(utf8(JSON.stringify(bad)))).toThrow(/damaged/);
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
    const result = await rotateKeys({ store, from: await createLocalKeyProvider(oldKey), to: await createLocalKeyProvider(newKey) });
    expect(result.rewrapped).toBe(2);
    const verified = await verifyKeys({ store, providers: await createLocalKeyProvider(newKey) });
    expect(verified.failed).toEqual([]);
    const after = await instance(store, newKey, clock);
    expect(await readAll(after, USER)).toEqual(FILES);
    // The re-key continues under the new master key and drops version... once settled.
    clock.t += 3_600_000;
    expect(await after.rekeyUser(USER, { settleMs: 3_600_000, now: clock.now, sleep: clock.sleep })).toMatchObject({ oldVersionsDropped: true });
    expect(await readAll(await instance(store, newKey, clock), USER)).toEqual(FILES);
    await after.close();
  });

  it('a crash at every request of a re-key leaves every file readable, and a rerun completes', async () => {
    const clock = new Clock();
    const masterKey = new Uint8Array(randomBytes(32));
    const setup = async () => {
      const faulty = new FaultyStore(new MemoryStore(clock.date));
      const vault = await instance(faulty, masterKey, clock);
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
      expect(await readAll(await instance(faulty, masterKey, clock), USER), `crash at request ${n}`).toEqual(FILES);
      // The rerun continues the version under way, or starts it when the crash came first: version 2 either way.
      const rerun = await vault.rekeyUser(USER, { settleMs: 0, now: clock.now, sleep: clock.sleep });
      expect(rerun, `rerun after crash at ${n}`).toMatchObject({ keyVersion: 2, oldVersionsDropped: true });
      const uid = (await vault.files(USER)).uid;
      expect((await rawObjects(faulty, uid)).every((o) => o.version === 2), `crash at ${n}`).toBe(true);
      expect(await readAll(await instance(faulty, masterKey, clock), USER)).toEqual(FILES);
      await vault.close();
    }
    expect(crashed).toBe(total);
  });

  it('forget after a re-key shreds every version: no record, no object, nothing readable (raw scan)', async () => {
    const clock = new Clock();
    const store = new MemoryStore(clock.date);
    const masterKey = new Uint8Array(randomBytes(32));
    const vault = await instance(store, masterKey, clock);
    await seed(vault);
    await seed(vault, 'other@example.com', { '/memories/keep.md': 'keep\n' });
    const uid = (await vault.files(USER)).uid;
    await vault.rekeyUser(USER, { settleMs: 3_600_000, wait: false, now: clock.now, sleep: clock.sleep });
    const erased = await vault.forgetUser(USER);
    expect(erased.keyDeleted).toBe(true);
    const left = store.keys();
    expect(left.filter((k) => k.includes(uid))).toEqual([]);
    expect(left.some((k) => k.startsWith('u/'))).toBe(true); // the other user's file is still there
    const haystack = (await Promise.all(left.map(async (k) => Buffer.from((await store.get(k))!.body).toString('latin1')))).join('\n');
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
});
