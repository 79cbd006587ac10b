/**
 * A retired key coming back, and a stale instance meeting a re-key, run on every store: memory and file
 * (test/crypto/key-rollback.test.ts) and radosgw (test/s3/key-rollback.test.ts).
 *
 * - A retired key record put back (the pre-re-key record, or the record from before the drop) is
 *   refused, or uses none of the dropped versions, by a fresh instance, by the instance that ran the
 *   re-key, and by the re-key itself: the evidence lives in the store (key state marks).
 * - An instance that cached the record before another instance re-keyed meets content under the new
 *   version in every kind of command and re-reads the record instead of failing.
 */
import { randomBytes } from 'node:crypto';
import { expect } from 'vitest';
import { createEncryptedCodecProvider } from '../../src/crypto/codec.js';
import { contentKeyVersion } from '../../src/crypto/format.js';
import { decodeKeyRecord } from '../../src/crypto/key-provider.js';
import { keyStateMarkPrefix } from '../../src/crypto/key-state.js';
import { userKeyKey } from '../../src/crypto/layout.js';
import { createLocalKeyProvider } from '../../src/crypto/local-key.js';
import type { Vault } from '../../src/memvault.js';
import { withRequestCounter, type RequestCounter } from '../../src/store/accounting.js';
import { listAll, type ObjectStore } from '../../src/store/port.js';
import { KEY_RECORD_ROLLED_BACK_MESSAGE } from '../../src/crypto/wrapped-secret.js';
import { Clock, FILES, instance, ok, rawObjects, readAll, seed, USER } from './rekey-scenarios.js';

type MakeStore = (clock: Clock) => Promise<ObjectStore>;

async function failsWith(vault: Vault, input: Record<string, unknown>, code: string): Promise<string> {
  const result = await vault.run(USER, input);
  const text = JSON.stringify(result.content);
  expect(result.isError, `${JSON.stringify(input)} -> ${text}`).toBe(true);
  expect(result.code, text).toBe(code);
  return text;
}

async function putBack(store: ObjectStore, key: string, body: Uint8Array): Promise<void> {
  await store.put(key, body);
}

async function marks(store: ObjectStore, uid: string): Promise<string[]> {
  const keys: string[] = [];
  for await (const o of listAll(store, keyStateMarkPrefix(uid))) keys.push(o.key);
  return keys;
}

/** A seeded user, re-keyed to version 2 with version 1 dropped; what the store held before, kept to put back. */
async function rekeyedUser(makeStore: MakeStore) {
  const clock = new Clock();
  const store = await makeStore(clock);
  const masterKey = new Uint8Array(randomBytes(32));
  const vault = await instance(store, masterKey, clock);
  await seed(vault);
  const uid = (await vault.files(USER)).uid;
  const recordV1 = (await store.get(userKeyKey(uid)))!.body;
  const objectsV1 = await rawObjects(store, uid);
  // Version 2 started, every object re-sealed, not dropped yet: the record of the pending re-key.
  await vault.rekeyUser(USER, { settleMs: 3_600_000, wait: false, now: clock.now, sleep: clock.sleep });
  const recordPending = (await store.get(userKeyKey(uid)))!.body;
  expect(decodeKeyRecord(recordPending)).toMatchObject({ keyVersion: 2, readFrom: 1 });
  clock.t += 3_600_000;
  const done = await vault.rekeyUser(USER, { settleMs: 3_600_000, now: clock.now, sleep: clock.sleep });
  expect(done).toMatchObject({ keyVersion: 2, oldVersionsDropped: true });
  expect(decodeKeyRecord((await store.get(userKeyKey(uid)))!.body)).toMatchObject({ keyVersion: 2, readFrom: 2 });
  return { clock, store, masterKey, vault, uid, recordV1, recordPending, objectsV1 };
}

/** (a) The pre-re-key record put back is INTEGRITY everywhere: fresh instance, the re-keying instance, the re-key. */
export async function retiredRecordScenario(makeStore: MakeStore): Promise<void> {
  const { clock, store, masterKey, vault, uid, recordV1, objectsV1 } = await rekeyedUser(makeStore);
  await putBack(store, userKeyKey(uid), recordV1);
  // Old objects put back too: with the old record they would open again.
  for (const o of objectsV1) await putBack(store, o.key, o.body);

  const fresh = await instance(store, masterKey, clock); // a restart, or another instance
  for (const input of [
    { command: 'view', path: '/memories' },
    { command: 'view', path: '/memories/b.md' },
    { command: 'create', path: '/memories/new.md', file_text: 'new\n' },
  ]) {
    const text = await failsWith(fresh, input, 'INTEGRITY');
    expect(text).toContain(KEY_RECORD_ROLLED_BACK_MESSAGE.slice(7, 60));
  }
  // The instance that re-keyed (its cache was evicted by the re-key) refuses it too.
  await failsWith(vault, { command: 'view', path: '/memories/b.md' }, 'INTEGRITY');
  // A re-key does not start a version from it either.
  await expect(vault.rekeyUser(USER, { settleMs: 0, now: clock.now, sleep: clock.sleep })).rejects.toMatchObject({
    code: 'INTEGRITY',
  });
  // Nothing was sealed under version 1: every object is the one put back, none newer.
  expect((await rawObjects(store, uid)).map((o) => o.version)).toEqual(objectsV1.map(() => 1));
  // The evidence: the two states the record reached (version 2 pending, version 1 dropped), which
  // putting the record back did not take away.
  expect(await marks(store, uid)).toHaveLength(2);
  await fresh.close();
}

/**
 * (b) The record from before the drop put back (a genuine record that still lists version 1): an
 * object under the dropped version does not open, new content is sealed under version 2.
 */
export async function droppedVersionScenario(makeStore: MakeStore): Promise<void> {
  const { clock, store, masterKey, uid, recordPending, objectsV1 } = await rekeyedUser(makeStore);
  await putBack(store, userKeyKey(uid), recordPending);
  const planted = objectsV1[0]!; // a genuine object of before the re-key, under version 1
  await putBack(store, planted.key, planted.body);
  expect(contentKeyVersion((await store.get(planted.key))!.body)).toBe(1);

  const fresh = await instance(store, masterKey, clock);
  const files = await fresh.files(USER);
  let refused = 0;
  for await (const file of files.listFiles('/memories')) {
    const error = await files.read(file.path).then(
      () => null,
      (e: { code?: string }) => e,
    );
    if (error) {
      expect(error.code).toBe('INTEGRITY');
      refused += 1;
    }
  }
  expect(refused).toBe(1); // the planted version-1 object, and only it
  await ok(fresh, USER, { command: 'create', path: '/memories/after.md', file_text: 'after\n' });
  const after = (await rawObjects(store, uid)).filter((o) => o.key !== planted.key);
  expect(after.every((o) => o.version === 2)).toBe(true);
  // A re-key run on that record (it still looks pending) does not re-seal the planted object into a
  // current one: it cannot open it under the versions the marks allow, and says so (fail closed).
  const rerun = await fresh.rekeyUser(USER, { settleMs: 0, now: clock.now, sleep: clock.sleep });
  expect(rerun).toMatchObject({ keyVersion: 2, failed: 1, oldVersionsDropped: false });
  expect(contentKeyVersion((await store.get(planted.key))!.body)).toBe(1);
  await fresh.close();
}

/** Many files in one directory: a directory rename reads several at once (DIRECTORY_MOVE_CONCURRENCY). */
const DIRECTORY: Record<string, string> = Object.fromEntries(
  Array.from({ length: 12 }, (_, i) => [`/memories/dir/f${i}.md`, `line ${i}\n`]),
);

type StaleCommand = { name: string; input: Record<string, unknown>; expect?: (vault: Vault) => Promise<void> };

const STALE_COMMANDS: StaleCommand[] = [
  { name: 'view of a file', input: { command: 'view', path: '/memories/b.md' } },
  { name: 'view of a directory', input: { command: 'view', path: '/memories/dir' } },
  { name: 'create over a file', input: { command: 'create', path: '/memories/b.md', file_text: 'bravo 2\n' } },
  {
    name: 'str_replace',
    input: { command: 'str_replace', path: '/memories/b.md', old_str: 'bravo', new_str: 'BRAVO' },
  },
  { name: 'insert', input: { command: 'insert', path: '/memories/b.md', insert_line: 1, insert_text: 'more\n' } },
  { name: 'delete of a file', input: { command: 'delete', path: '/memories/b.md' } },
  { name: 'delete of a directory', input: { command: 'delete', path: '/memories/dir' } },
  { name: 'rename of a file', input: { command: 'rename', old_path: '/memories/b.md', new_path: '/memories/c.md' } },
  {
    name: 'rename of a directory',
    input: { command: 'rename', old_path: '/memories/dir', new_path: '/memories/moved' },
  },
];

/**
 * (c) For each kind of command: an instance that cached the record before another instance re-keyed
 * (every object re-sealed under version 2, version 1 still in the record) runs it on version-2
 * content, succeeds, and a fresh instance reads the result.
 */
export async function staleInstanceScenario(makeStore: MakeStore, history: boolean): Promise<void> {
  for (const command of STALE_COMMANDS) {
    const clock = new Clock();
    const store = await makeStore(clock);
    const masterKey = new Uint8Array(randomBytes(32));
    const extra = { history };
    const rekeying = await instance(store, masterKey, clock, extra);
    await seed(rekeying, USER, { ...FILES, ...DIRECTORY });
    const stale = await instance(store, masterKey, clock, extra);
    await ok(stale, USER, { command: 'view', path: '/memories' }); // caches the version-1 record
    await rekeying.rekeyUser(USER, { settleMs: 3_600_000, wait: false, now: clock.now, sleep: clock.sleep });
    const uid = (await rekeying.files(USER)).uid;
    expect((await rawObjects(store, uid)).every((o) => o.version === 2)).toBe(true);

    const result = await stale.run(USER, command.input);
    expect(result.isError, `${command.name} on a stale instance: ${JSON.stringify(result.content)}`).toBe(false);
    const fresh = await instance(store, masterKey, clock, extra);
    const all = await readAll(fresh, USER);
    if (command.name === 'rename of a directory') {
      expect(Object.keys(all).filter((p) => p.startsWith('/memories/moved/'))).toHaveLength(12);
      expect(Object.keys(all).filter((p) => p.startsWith('/memories/dir/'))).toHaveLength(0);
    }
    if (command.name === 'str_replace') expect(all['/memories/b.md']).toBe('BRAVO\n');
    for (const vault of [rekeying, stale, fresh]) await vault.close();
  }
}

/**
 * The cost of the check, counted as the S3 suite counts (test/s3/requests.test.ts): a key load (a
 * user's first command in a process, or the first after the key-cache age) is one GET of the record
 * and, sent beside it, one LIST of one key of the marks' folder; a cached key costs nothing. A PUT is
 * added once per state the record reaches (by the re-key, or by the first load that finds its mark
 * missing, with a HEAD that the record is still there: an erasure must not leave the mark behind),
 * and a second LIST only when a key that is no genuine mark was planted before the newest.
 * A user's very first key: the same two, then the LIST of one key that proves the user has no
 * objects, then the record's PUT.
 */
export async function keyLoadCostScenario(makeStore: MakeStore): Promise<void> {
  const { store, masterKey, uid } = await rekeyedUser(makeStore);
  const keyProvider = await createLocalKeyProvider(masterKey);
  const load = async (): Promise<RequestCounter> => {
    const provider = await createEncryptedCodecProvider({ store, keyProvider, createDeployment: false });
    const counted: RequestCounter = {};
    await withRequestCounter(counted, () => provider.forUser(USER));
    const cached: RequestCounter = {};
    await withRequestCounter(cached, () => provider.forUser(USER));
    expect(cached).toEqual({});
    await provider.close();
    return counted;
  };
  expect(await load()).toEqual({ GET: 1, LIST: 1 });
  const provider = await createEncryptedCodecProvider({ store, keyProvider, createDeployment: false });
  const first: RequestCounter = {};
  await withRequestCounter(first, () => provider.forUser('a-new-user@example.com'));
  expect(first).toEqual({ GET: 1, LIST: 2, PUT: 1 });
  await provider.close();

  // A record ahead of its marks (a record of before the marks existed, or a crash between a new
  // version and its mark): the first load writes the mark, the next costs the usual two.
  for (const key of await marks(store, uid)) await store.delete(key);
  expect(await load()).toEqual({ GET: 1, LIST: 1, PUT: 1, HEAD: 1 });
  expect(await marks(store, uid)).toHaveLength(1);
  expect(await load()).toEqual({ GET: 1, LIST: 1 });

  // A planted key where the newest mark would be (no valid MAC): listed past, never believed.
  const planted = `${keyStateMarkPrefix(uid)}0000000000-0000000000-${'A'.repeat(22)}`;
  await store.put(planted, new Uint8Array(0));
  expect(await load()).toEqual({ GET: 1, LIST: 2 });
  await store.delete(planted);
}
