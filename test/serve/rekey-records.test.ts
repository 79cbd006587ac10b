/**
 * A user's host records (vault.userRecords: serve's idempotency records, the page's ended-sessions
 * record, a host's own kind) are re-sealed by a re-key and open after its old key version is
 * dropped; one that does not open keeps the old version (fail closed); their places and names.
 */
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadSodium } from '../../src/crypto/sodium.js';
import { IDEMPOTENCY_RECORD_KIND, IdempotencyRecords } from '../../src/serve/idempotency.js';
import { parseUserRecordKey, userRecordKey } from '../../src/store/layout.js';
import { MemoryStore } from '../../src/store/memory.js';
import type { ObjectStore } from '../../src/store/port.js';
import { SqliteStore } from '../../src/store/sqlite.js';
import { caught, caughtSync, expectCode } from '../crypto/helpers.js';
import { Clock } from '../crypto/rekey-scenarios.js';
import { tempDir } from '../kit/temp.js';
import { encode } from '../kit/text.js';
import { hostRecordsScenario, RECORDS_USER, recordObjects, vaultOn } from './rekey-records-scenario.js';

const temp = tempDir('memvault-rekey-records');
beforeAll(() => loadSodium());
afterAll(() => temp.cleanup());

const stores: Array<[string, (clock: Clock) => Promise<ObjectStore>]> = [
  ['memory', async (clock) => new MemoryStore(clock.date)],
  ['sqlite', (clock) => SqliteStore.open(join(temp.dir, `${randomBytes(4).toString('hex')}.db`), { now: clock.date })],
];

describe.each(stores)('host records and a re-key on the %s store', (_name, makeStore) => {
  it('a retried Idempotency-Key replays, a logged-out session stays out, a host kind opens, after the drop', () =>
    hostRecordsScenario(makeStore));
});

describe('host records that do not open, and where records live', () => {
  it('a record that does not open keeps the old version and is not taken as no record', async () => {
    const clock = new Clock();
    const store = new MemoryStore(clock.date);
    const vault = await vaultOn(store, randomBytes(32).toString('base64'), clock);
    const idempotency = new IdempotencyRecords(store, { now: clock.now });
    const records = await vault.userRecords(RECORDS_USER, IDEMPOTENCY_RECORD_KIND);
    const key = 'damaged-record-0123456789';
    await idempotency.once(records, key, 'request', async () => ({ content: 'ran', is_error: false }));
    const { objectKey } = idempotency.objectKey(records, key);
    const sealed = (await store.get(objectKey))!.body;
    sealed[sealed.length - 1]! ^= 1;
    await store.put(objectKey, sealed);

    const options = { settleMs: 0, now: clock.now, sleep: clock.sleep };
    expect(await vault.rekeyUser(RECORDS_USER, options)).toMatchObject({ failed: 1, oldVersionsDropped: false });
    expect((await recordObjects(store, records.uid)).get('i/{hash}')).toEqual(sealed);
    const again = await vault.userRecords(RECORDS_USER, IDEMPOTENCY_RECORD_KIND);
    const retried = idempotency.once(again, key, 'request', async () => ({ content: 'twice', is_error: false }));
    await expect(retried).rejects.toMatchObject({
      problem: { type: 'urn:memvault:problem:idempotency-record-unreadable' },
    });
    // Once the record is gone (an operator's decision), the old version is dropped.
    await store.delete(objectKey);
    expect(await vault.rekeyUser(RECORDS_USER, options)).toMatchObject({ failed: 0, oldVersionsDropped: true });
    await vault.close();
  });

  it('a command that fails after a re-key re-sealed its pending record frees its key: a retry runs it', async () => {
    const clock = new Clock();
    const store = new MemoryStore(clock.date);
    const masterKey = randomBytes(32).toString('base64');
    const [vault, rekeyer] = [await vaultOn(store, masterKey, clock), await vaultOn(store, masterKey, clock)];
    const idempotency = new IdempotencyRecords(store, { now: clock.now });
    const records = await vault.userRecords(RECORDS_USER, IDEMPOTENCY_RECORD_KIND);
    const key = 'fails-while-rekeyed-0123456789';
    const failing = idempotency.once(records, key, 'request', async () => {
      const options = { settleMs: 60_000, now: clock.now, sleep: clock.sleep, wait: false };
      expect(await rekeyer.rekeyUser(RECORDS_USER, options)).toMatchObject({ resealed: 1 });
      throw new Error('the command failed');
    });
    await expect(failing).rejects.toThrow('the command failed');
    expect(await recordObjects(store, records.uid)).toEqual(new Map());
    const retried = await idempotency.once(records, key, 'request', async () => ({ content: 'ran', is_error: false }));
    expect(retried).toEqual({ result: { content: 'ran', is_error: false }, replayed: false });
    await rekeyer.close();
    await vault.close();
  });

  it('each kind has its place; a name is the 64 hex digits nameOf gives; nothing else parses as a record', async () => {
    const vault = await vaultOn(new MemoryStore(), randomBytes(32).toString('base64'), new Clock());
    const records = await vault.userRecords(RECORDS_USER, 'host-notes');
    const name = records.nameOf('a');
    expect(name).toMatch(/^[0-9a-f]{64}$/);
    expect(records.keyOf(name)).toBe(`u/${records.uid}/r/host-notes/${name}`);
    for (const bad of ['a', name.toUpperCase(), `${name}0`, `../${name.slice(3)}`, 7 as unknown as string]) {
      expectCode(
        caughtSync(() => records.keyOf(bad)),
        'INVALID_INPUT',
      );
      expectCode(
        caughtSync(() => records.seal(bad, encode('x'))),
        'INVALID_INPUT',
      );
      expectCode(await caught(() => records.open(bad, encode('x'))), 'INVALID_INPUT');
    }
    for (const bad of ['', 'Upper', '-lead', 'a'.repeat(33), 'with/slash'])
      expectCode(await caught(() => vault.userRecords(RECORDS_USER, bad)), 'INVALID_INPUT');
    const uid = records.uid;
    expect(userRecordKey(uid, 'idempotency', name)).toBe(`u/${uid}/i/${name}`);
    expect(userRecordKey(uid, 'page-sessions', name)).toBe(`u/${uid}/p/${name}`);
    for (const kind of ['idempotency', 'page-sessions', 'host-notes'])
      expect(parseUserRecordKey(uid, userRecordKey(uid, kind, name))).toEqual({ kind, name });
    for (const key of [
      `u/${uid}/p/settings`,
      `u/${uid}/r/idempotency/${name}`, // a known kind lives in its own folder
      `u/${uid}/r/a/b/${name}`,
      `u/${uid}/r/Bad/${name}`,
      `u/${uid}/f/${name}`,
      `u/${uid}/i/${name.slice(1)}`,
      `u/other/i/${name}`,
      `u/${uid}/${name}`,
    ])
      expect(parseUserRecordKey(uid, key), key).toBeNull();
    await vault.close();
  });
});
