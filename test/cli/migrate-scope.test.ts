/**
 * migrateStore (src/lifecycle/migrate.ts) checks and verifies every object of its scope, and a
 * --user scope (k/<uid> exactly, u/<uid>/) holds only that user's objects: one only at the
 * destination (a file deleted at the source since an earlier run, anything else written there)
 * refuses the run before anything is written, or fails the verification, as for a whole store.
 * A resumed run (the destination holding part of the same migration) and another user's objects
 * beside the scope still pass. A deployment record changed at the source during the run (a key
 * rotation) stops it before the stale one is written. (The CLI round trips are in migrate.test.ts.)
 */
import { describe, expect, it } from 'vitest';
import { migrateStore } from '../../src/lifecycle/migrate.js';
import { DEPLOYMENT_RECORD_KEY, KEYS_PREFIX, userPrefix } from '../../src/store/layout.js';
import { MemoryStore } from '../../src/store/memory.js';
import { snapshot } from '../kit/stores.js';

const UID = 'a'.repeat(32);
const OTHER = 'b'.repeat(32);
const bytes = (s: string) => new TextEncoder().encode(s);

async function source(): Promise<MemoryStore> {
  const from = new MemoryStore();
  await from.put(DEPLOYMENT_RECORD_KEY, bytes('deployment'));
  for (const uid of [UID, OTHER]) {
    await from.put(`${KEYS_PREFIX}${uid}`, bytes(`key record ${uid}`));
    await from.put(`${userPrefix(uid)}f/kept`, bytes('kept file'));
    await from.put(`${userPrefix(uid)}f/deleted-later`, bytes('old file'));
  }
  return from;
}

describe('migrate --user: an object of the user only at the destination fails closed', () => {
  it('refuses a second run after the user deleted a file at the source, writing nothing', async () => {
    const from = await source();
    const to = new MemoryStore();
    await migrateStore(from, to, { uid: UID });
    await from.delete(`${userPrefix(UID)}f/deleted-later`);
    await from.put(`${userPrefix(UID)}f/new`, bytes('new file'));
    const before = await snapshot(to);
    await expect(migrateStore(from, to, { uid: UID })).rejects.toMatchObject({
      code: 'STORE_INCONSISTENT',
      message: expect.stringMatching(/holds objects of this user that the source does not have.*Nothing was written/),
    });
    expect(await snapshot(to)).toEqual(before);
  });

  it('refuses a key record of the user at the destination that the source does not have', async () => {
    const from = await source();
    const to = new MemoryStore();
    await migrateStore(from, to, { uid: UID });
    await from.delete(`${KEYS_PREFIX}${UID}`);
    await expect(migrateStore(from, to, { uid: UID })).rejects.toMatchObject({ code: 'STORE_INCONSISTENT' });
  });

  it('fails the verification when an object of the user appears at the destination during the copy', async () => {
    const from = await source();
    const to = new MemoryStore();
    let planted = false;
    const run = migrateStore(from, to, {
      uid: UID,
      onProgress: (p) => {
        if (p.phase !== 'copy' || planted) return;
        planted = true;
        void to.put(`${userPrefix(UID)}f/planted`, bytes('not the source'));
      },
    });
    await expect(run).rejects.toMatchObject({ code: 'STORE_INCONSISTENT', message: /differs at the destination/ });
    expect(planted).toBe(true);
    // The deployment record is written last, so the stopped destination is never a whole deployment.
    expect(await to.head(DEPLOYMENT_RECORD_KEY)).toBeNull();
  });

  it('resumes a run stopped part-way, and leaves another user beside the scope alone', async () => {
    const from = await source();
    const to = new MemoryStore();
    // An earlier run of another user, and the first of this user's objects, are there already.
    await migrateStore(from, to, { uid: OTHER });
    await to.put(`${KEYS_PREFIX}${UID}`, bytes(`key record ${UID}`));
    await expect(migrateStore(from, to, { uid: UID })).resolves.toEqual({
      objects: 4,
      copied: 2,
      kept: 2, // the key record and the deployment record
      bytes: `key record ${UID}`.length + 'kept file'.length + 'old file'.length,
      verified: 4,
    });
    expect([...(await snapshot(to)).keys()]).toEqual([...(await snapshot(from)).keys()]);
  });
});

describe('migrate: the deployment record is verified against the source as it is at the end', () => {
  it('stops, writing no record, when the source record changed during the copy (a key rotation)', async () => {
    const from = await source();
    const to = new MemoryStore();
    let rotated = false;
    const run = migrateStore(from, to, {
      onProgress: (p) => {
        if (p.phase !== 'copy' || rotated) return;
        rotated = true;
        void from.put(DEPLOYMENT_RECORD_KEY, bytes('deployment, re-wrapped'));
      },
    });
    await expect(run).rejects.toMatchObject({
      code: 'STORE_INCONSISTENT',
      message: expect.stringMatching(/deployment record changed during the migration/),
    });
    expect(rotated).toBe(true);
    expect(await to.head(DEPLOYMENT_RECORD_KEY)).toBeNull();
    // Run again once the source is still: the new record is copied and verified.
    await expect(migrateStore(from, to)).resolves.toMatchObject({ kept: 6, copied: 1, verified: 7 });
    expect(new TextDecoder().decode((await to.get(DEPLOYMENT_RECORD_KEY))!.body)).toBe('deployment, re-wrapped');
  });
});
