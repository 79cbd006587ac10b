import { randomBytes } from 'node:crypto';
import { expect, it, vi } from 'vitest';
import * as format from '../../src/crypto/format.js';
import { createEncryptionFromConfig } from '../../src/crypto/index.js';
import { MemoryStore } from '../../src/store/memory.js';

// Count the HMACs behind uidOf.
vi.mock('../../src/crypto/format.js', async (importOriginal) => {
  const actual = await importOriginal<typeof format>();
  return { ...actual, computeUid: vi.fn(actual.computeUid) };
});

it('derives a user id once while it is remembered, the same uid as a fresh provider derives, and none after close', async () => {
  const store = new MemoryStore();
  const masterKey = randomBytes(32).toString('base64');
  const a = (await createEncryptionFromConfig({ store, config: { masterKey } })).codecProvider;
  const b = (await createEncryptionFromConfig({ store, config: { masterKey } })).codecProvider;
  const computeUid = vi.mocked(format.computeUid);

  computeUid.mockClear();
  const first = a.uidOf('alice');
  for (let i = 0; i < 10; i++) expect(a.uidOf('alice')).toBe(first);
  expect(computeUid).toHaveBeenCalledTimes(1);
  expect(b.uidOf('alice')).toBe(first);
  expect(a.uidOf('bob')).not.toBe(first);
  // Past the memo's bound every uid is still right: forgotten ones are derived again, never mixed up.
  const uids = new Map<string, string>();
  for (let i = 0; i < 4200; i++) uids.set(`user-${i}`, a.uidOf(`user-${i}`));
  expect(new Set(uids.values()).size).toBe(4200);
  for (const [user, uid] of [...uids].filter((_, i) => i % 97 === 0)) expect(b.uidOf(user)).toBe(uid);
  for (const [user, uid] of uids) expect(a.uidOf(user)).toBe(uid);
  // A refused user id is refused before the memo is asked, every time.
  expect(() => a.uidOf('')).toThrow();
  expect(() => a.uidOf('')).toThrow();

  await a.close();
  expect(() => a.uidOf('alice')).toThrow(/closed/);
  await b.close();
});
