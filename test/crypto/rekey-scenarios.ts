/**
 * Re-keying scenarios run on every store: memory and file (test/crypto/rekey.test.ts) and radosgw
 * (test/s3/rekey.test.ts).
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect } from 'vitest';
import { auditPseudonymsOf } from '../../src/audit/pseudonyms.js';
import { createEncryptedCodecProvider } from '../../src/crypto/codec.js';
import { contentKeyVersion } from '../../src/crypto/format.js';
import { decodeKeyRecord } from '../../src/crypto/key-provider.js';
import { userKeyKey, userPrefix } from '../../src/crypto/layout.js';
import { createLocalKeyProvider } from '../../src/crypto/local-key.js';
import { createVault, type Vault } from '../../src/memvault.js';
import { MemoryStore } from '../../src/store/memory.js';
import { openStore } from '../../src/store/open.js';
import { listAll, type ObjectStore } from '../../src/store/port.js';
import { VERSION_METADATA } from '../../src/crypto/version-record-format.js';
import { HookedStore } from './helpers.js';
import { decode } from '../kit/text.js';

export const USER = 'rita.rekey@example.com';
export const FILES: Record<string, string> = {
  '/memories/notes/todo.md': 'buy oat milk\n',
  '/memories/notes/deep/a.md': 'alpha\n',
  '/memories/b.md': 'bravo\n',
};

/** One clock for the store's LastModified, every instance's key cache and the re-key. */
export class Clock {
  // Starts at the real time: the file store's LastModified is the file's mtime.
  t = Date.now();
  now = () => this.t;
  date = () => new Date(this.t);
  sleep = async (ms: number) => {
    this.t += Math.max(ms, 1);
  };
}

/**
 * A vault on the shared store. History off unless `extra` turns it on: the scenarios count the files'
 * objects; the history's re-sealing has scenarios of its own (historyScenario, the crash run with
 * history, "re-keying a user with file history").
 */
export async function instance(
  store: ObjectStore,
  masterKey: Uint8Array,
  clock: Clock,
  extra: Record<string, unknown> = {},
): Promise<Vault> {
  return createVault({
    store,
    history: false,
    encryption: {
      masterKey: Buffer.from(masterKey).toString('base64'),
      cache: { maxAgeMs: 60_000, wipeGraceMs: 0, now: clock.now },
    },
    ...extra,
  } as Parameters<typeof createVault>[0]);
}

export async function ok(vault: Vault, user: string, input: Record<string, unknown>): Promise<string> {
  const result = await vault.run(user, input);
  const out = JSON.stringify(result.content);
  expect(result.isError, `${JSON.stringify(input)} -> ${out}`).toBe(false);
  return out;
}

export async function readAll(vault: Vault, user: string): Promise<Record<string, string>> {
  const files = await vault.files(user);
  const out: Record<string, string> = {};
  for await (const file of files.listFiles('/memories')) {
    const read = await files.read(file.path);
    if (read) out[file.path] = decode(read.data);
  }
  return out;
}

export async function seed(vault: Vault, user = USER, files = FILES): Promise<void> {
  for (const [path, content] of Object.entries(files))
    await ok(vault, user, { command: 'create', path, file_text: content });
}

export async function rawObjects(
  store: ObjectStore,
  uid: string,
): Promise<Array<{ key: string; body: Uint8Array; version: number | null }>> {
  const out = [];
  for await (const o of listAll(store, `${userPrefix(uid)}f/`)) {
    const got = (await store.get(o.key))!;
    out.push({ key: o.key, body: got.body, version: contentKeyVersion(got.body) });
  }
  return out;
}

export async function recordOf(store: ObjectStore, uid: string) {
  return decodeKeyRecord((await store.get(userKeyKey(uid)))!.body);
}

export async function resealScenario(makeStore: (clock: Clock) => Promise<ObjectStore>): Promise<void> {
  const clock = new Clock();
  const store = await makeStore(clock);
  const masterKey = new Uint8Array(randomBytes(32));
  const vault = await instance(store, masterKey, clock);
  await seed(vault);
  const provider = await createEncryptedCodecProvider({
    store,
    keyProvider: await createLocalKeyProvider(masterKey),
    createDeployment: false,
  });
  const uid = provider.uidOf(USER);
  const before = await rawObjects(store, uid);
  expect(before.map((o) => o.version)).toEqual([1, 1, 1]);
  const auditBefore = auditPseudonymsOf(await provider.forUser(USER), provider);

  const phases: string[] = [];
  const result = await vault.rekeyUser(USER, {
    settleMs: 0,
    now: clock.now,
    sleep: clock.sleep,
    onProgress: (p) => phases.push(p.phase),
  });
  expect(result).toMatchObject({
    keyVersion: 2,
    startedVersion: true,
    resealed: 3,
    failed: 0,
    conflicts: 0,
    oldVersionsDropped: true,
  });
  expect(phases[0]).toBe('version');
  expect(phases).toContain('reseal');
  expect(phases.at(-1)).toBe('done');

  const after = await rawObjects(store, uid);
  // Same keys (names stay on the first version), new bytes, all under version 2.
  expect(after.map((o) => o.key)).toEqual(before.map((o) => o.key));
  expect(after.map((o) => o.version)).toEqual([2, 2, 2]);
  for (let i = 0; i < after.length; i++)
    expect(Buffer.from(after[i]!.body).equals(Buffer.from(before[i]!.body))).toBe(false);
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
  expect(await readAll(await instance(store, masterKey, clock), USER)).toEqual({
    ...FILES,
    '/memories/new.md': 'new\n',
  });
  await vault.close();
  await fresh.close();
  await provider.close();
}

export async function concurrentEditsScenario(makeStore: (clock: Clock) => Promise<ObjectStore>): Promise<void> {
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

  const provider = await createEncryptedCodecProvider({
    store: inner,
    keyProvider: await createLocalKeyProvider(masterKey),
    createDeployment: false,
  });
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
      await ok(b, USER, {
        command: 'str_replace',
        path: '/memories/notes/deep/a.md',
        old_str: 'alpha',
        new_str: 'alpha edited',
      });
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
}

/** The key version of every sealed value under a user's files and history: bodies, and version records (metadata). */
export async function sealedVersions(
  store: ObjectStore,
  uid: string,
): Promise<Array<{ key: string; body: number | null; record: number | null }>> {
  const out = [];
  for (const part of ['f/', 'v/']) {
    for await (const o of listAll(store, `${userPrefix(uid)}${part}`)) {
      const got = (await store.get(o.key))!;
      const record = got.metadata[VERSION_METADATA];
      out.push({
        key: o.key,
        body: got.body.byteLength === 0 ? null : contentKeyVersion(got.body),
        record: record === undefined ? null : contentKeyVersion(Buffer.from(record, 'base64url')),
      });
    }
  }
  return out;
}

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A moment strictly between what was written before and after, on the store's clock (the manual one, or the real one: S3 counts whole seconds). */
async function moment(clock: Clock): Promise<Date> {
  await pause(1100);
  clock.t = Math.max(clock.t + 1100, Date.now());
  const at = clock.date();
  await pause(1100);
  clock.t = Math.max(clock.t + 1100, Date.now());
  return at;
}

/**
 * A user with file history: every kept version (tombstones too) and every version record is
 * re-sealed under the new key, the old content version is dropped, and the history reads as before
 * (same numbers, actors, times); a restore to a time before the re-key still finds its versions
 * (the rewrite moved their LastModified; the record keeps when they were first kept).
 */
export async function historyScenario(makeStore: (clock: Clock) => Promise<ObjectStore>): Promise<void> {
  const clock = new Clock();
  const store = await makeStore(clock);
  const masterKey = new Uint8Array(randomBytes(32));
  const vault = await instance(store, masterKey, clock, { history: true });
  await seed(vault);
  const asSeeded = await moment(clock);
  await ok(vault, USER, {
    command: 'str_replace',
    path: '/memories/notes/todo.md',
    old_str: 'buy oat milk',
    new_str: 'buy nothing',
  });
  await ok(vault, USER, { command: 'delete', path: '/memories/b.md' });
  const uid = (await vault.files(USER)).uid;
  const before = await sealedVersions(store, uid);
  expect(before.filter((o) => o.key.includes('/v/')).length).toBe(5); // 3 creates, 1 edit, the delete's tombstone
  expect(before.filter((o) => o.key.includes('/f/')).length).toBe(2);
  expect(before.every((o) => (o.body ?? 1) === 1 && (o.record ?? 1) === 1)).toBe(true);
  expect(before.filter((o) => o.body === null && o.record !== null)).toHaveLength(1); // the tombstone: a record alone
  const historyBefore = await vault.history(USER, '/memories');

  const result = await vault.rekeyUser(USER, { settleMs: 0, now: clock.now, sleep: clock.sleep });
  expect(result).toMatchObject({ keyVersion: 2, failed: 0, conflicts: 0, oldVersionsDropped: true });
  expect(result.resealed).toBe(before.length); // 2 files and 5 versions
  const after = await sealedVersions(store, uid);
  expect(after.map((o) => o.key)).toEqual(before.map((o) => o.key));
  expect(after.every((o) => (o.body ?? 2) === 2 && (o.record ?? 2) === 2)).toBe(true);
  expect(after.filter((o) => o.record !== null)).toHaveLength(before.filter((o) => o.record !== null).length);
  const record = await recordOf(store, uid);
  expect(record.readFrom).toBe(2);
  expect(record.older?.map((o) => o.keyVersion)).toEqual([1]); // the name root only: no content needs version 1

  // A fresh instance reads every file (the freshness check passes on the re-sealed records) and the same history.
  const fresh = await instance(store, masterKey, clock, { history: true });
  const expected = { '/memories/notes/todo.md': 'buy nothing\n', '/memories/notes/deep/a.md': 'alpha\n' };
  expect(await readAll(fresh, USER)).toEqual(expected);
  expect(await ok(fresh, USER, { command: 'view', path: '/memories/notes/todo.md' })).toContain('buy nothing');
  expect(await fresh.history(USER, '/memories')).toEqual(historyBefore);
  // The re-sealed versions carry the history tag still (the lifecycle rule's filter), and no TTL class.
  const versionKey = after.find((o) => o.key.includes('/v/'))!.key;
  // (the memory and file stores show an object's tags; on S3 the radosgw suite's raw scan covers them)
  if (store.kind !== 's3') {
    const tags = await (
      store as {
        tagsOf?: (key: string) => Record<string, string> | undefined | Promise<Record<string, string> | undefined>;
      }
    ).tagsOf?.(versionKey);
    expect(tags).toEqual({ 'memvault-history': 'version' });
  }

  // Undo to before the edit and the delete, after the re-key: the versions are found by when they were first kept.
  const restored = await fresh.restore(USER, { asOf: asSeeded });
  expect(restored).toMatchObject({ restored: 2, deleted: 0, conflicts: 0 });
  expect(await readAll(fresh, USER)).toEqual(FILES);
  // Edits go on numbering past the re-sealed versions.
  await ok(fresh, USER, { command: 'str_replace', path: '/memories/b.md', old_str: 'bravo', new_str: 'bravo 2' });
  const b = (await fresh.history(USER, '/memories/b.md')).versions;
  expect(b[0]!.seq).toBe(b[1]!.seq + 1);
  expect((await sealedVersions(store, uid)).every((o) => (o.body ?? 2) === 2 && (o.record ?? 2) === 2)).toBe(true);
  await vault.close();
  await fresh.close();
}

/**
 * The stores the re-key suites run on, by name: a MemoryStore on the scenario's clock, and a file
 * store in a fresh directory (removed after each test). Call at a test file's top level.
 */
export function rekeyStores(label: string): Array<[string, (clock: Clock) => Promise<ObjectStore>]> {
  const dirs: string[] = [];
  afterEach(async () => {
    for (const d of dirs.splice(0)) await rm(d, { recursive: true, force: true });
  });
  return [
    ['memory', async (clock) => new MemoryStore(clock.date)],
    [
      'file',
      async () => {
        const dir = await mkdtemp(join(tmpdir(), `memvault-${label}-`));
        dirs.push(dir);
        return openStore(`file:${join(dir, 'data')}`);
      },
    ],
  ];
}
