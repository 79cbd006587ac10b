/**
 * The host records' re-key scenario, run on every store: memory and SQLite
 * (test/serve/rekey-records.test.ts) and radosgw (test/s3/rekey.test.ts).
 */
import { randomBytes } from 'node:crypto';
import { expect } from 'vitest';
import { contentKeyVersion } from '../../src/crypto/format.js';
import { createVault, type Vault } from '../../src/memvault.js';
import { IDEMPOTENCY_RECORD_KIND, IdempotencyRecords } from '../../src/serve/idempotency.js';
import { SessionEnds } from '../../src/serve/page/session-ends.js';
import { userPrefix } from '../../src/store/layout.js';
import { listAll, type ObjectStore } from '../../src/store/port.js';
import { Clock } from '../crypto/rekey-scenarios.js';
import { decode, encode } from '../kit/text.js';

export const RECORDS_USER = 'rhea.records@example.com';
const KEY = 'retry-after-rekey-0123456789';
const RACED_KEY = 'rekeyed-while-running-0123456789';

export function vaultOn(store: ObjectStore, masterKey: string, clock: Clock): Promise<Vault> {
  return createVault({
    store,
    history: false,
    encryption: { masterKey, cache: { maxAgeMs: 60_000, wipeGraceMs: 0, now: clock.now } },
  });
}

/** Each object under the user's i/, p/ and r/ folders (a record's name shown as {hash}), and its bytes. */
export async function recordObjects(store: ObjectStore, uid: string): Promise<Map<string, Uint8Array>> {
  const objects = new Map<string, Uint8Array>();
  for (const folder of ['i/', 'p/', 'r/'])
    for await (const object of listAll(store, `${userPrefix(uid)}${folder}`))
      objects.set(
        object.key.slice(userPrefix(uid).length).replace(/[0-9a-f]{64}$/, '{hash}'),
        (await store.get(object.key))!.body,
      );
  return objects;
}

const HOST_RECORDS = ['i/{hash}', 'p/{hash}', 'r/host-notes/{hash}'];

/**
 * A full re-key (old version dropped) leaves every host record open: a retried Idempotency-Key
 * replays its first result and runs nothing, also for a command a re-key started during (its
 * pending record re-sealed under it); a logged-out session stays out and a later one in; a host's own kind
 * of record opens; the pause settings beside the page's record are not touched.
 */
export async function hostRecordsScenario(makeStore: (clock: Clock) => Promise<ObjectStore>): Promise<void> {
  const clock = new Clock();
  const store = await makeStore(clock);
  const masterKey = randomBytes(32).toString('base64');
  const vault = await vaultOn(store, masterKey, clock);
  let runs = 0;
  const run = async () => ({ content: `run ${(runs += 1)}`, is_error: false });
  const idempotency = new IdempotencyRecords(store, { now: clock.now });
  const records = await vault.userRecords(RECORDS_USER, IDEMPOTENCY_RECORD_KIND);
  const first = await idempotency.once(records, KEY, 'request', run);
  const loggedOutAt = clock.t;
  await new SessionEnds(vault, 0).endAll(RECORDS_USER, loggedOutAt);
  const notes = await vault.userRecords(RECORDS_USER, 'host-notes');
  const note = notes.nameOf('note');
  await store.put(notes.keyOf(note), notes.seal(note, encode('kept')));
  await vault.setMemoryPaused(RECORDS_USER, true);
  const before = await recordObjects(store, records.uid);
  expect([...before.keys()]).toEqual(['i/{hash}', 'p/{hash}', 'p/settings', 'r/host-notes/{hash}']);
  for (const key of HOST_RECORDS) expect(contentKeyVersion(before.get(key)!)).toBe(1);

  // `memvault keys rekey` (another process) starts while a command with another key runs: its
  // pending record is re-sealed under the new version, and the command's result replaces that one.
  const rekeyer = await vaultOn(store, masterKey, clock);
  const settle = { settleMs: 60_000, now: clock.now, sleep: clock.sleep };
  clock.t += 1_000;
  const raced = await idempotency.once(records, RACED_KEY, 'raced', async () => {
    expect(await rekeyer.rekeyUser(RECORDS_USER, { ...settle, wait: false })).toMatchObject({
      keyVersion: 2,
      resealed: 4,
      oldVersionsDropped: false,
    });
    return run();
  });
  // After the settle time (the instances' key-cache age), the last pass drops version 1.
  clock.t += 61_000;
  expect(await rekeyer.rekeyUser(RECORDS_USER, settle)).toMatchObject({
    keyVersion: 2,
    failed: 0,
    conflicts: 0,
    oldVersionsDropped: true,
  });
  const after = await recordObjects(store, records.uid);
  expect([...after.keys()]).toEqual([...before.keys()]);
  for (const key of HOST_RECORDS) expect(contentKeyVersion(after.get(key)!)).toBe(2);
  // The settings are no host record (sealed under a key of their own that a re-key keeps): as they were.
  expect(after.get('p/settings')).toEqual(before.get('p/settings'));

  // A new instance, whose key cache never held the old version, and the one that served all along.
  const other = await vaultOn(store, masterKey, clock);
  for (const instance of [other, vault]) {
    const retry = async (key: string, request: string) =>
      idempotency.once(await instance.userRecords(RECORDS_USER, IDEMPOTENCY_RECORD_KIND), key, request, run);
    expect(await retry(KEY, 'request')).toEqual({ result: first.result, replayed: true });
    expect(await retry(RACED_KEY, 'raced')).toEqual({ result: raced.result, replayed: true });
    const sessions = new SessionEnds(instance, 0);
    expect(await sessions.ended(RECORDS_USER, loggedOutAt - 1, clock.t)).toBe(true);
    expect(await sessions.ended(RECORDS_USER, loggedOutAt + 1, clock.t)).toBe(false);
    const own = await instance.userRecords(RECORDS_USER, 'host-notes');
    expect(decode(await own.open(note, (await store.get(own.keyOf(note)))!.body))).toBe('kept');
    expect(await instance.memoryPaused(RECORDS_USER)).toBe(true);
  }
  expect(runs).toBe(2);
  for (const instance of [rekeyer, other, vault]) await instance.close();
}
