/**
 * The vault's memo of checked version records (VersionWriting.knownRecords): a read that meets a
 * version this vault sealed or checked takes its number from the memo instead of opening its record
 * again, and nothing the record check refuses gets through it. On S3 an object copied onto itself
 * with other metadata keeps its ETag (the MD5 of the body), so "same key and ETag" alone would let
 * a stripped or swapped record pass: the memo also holds the sealed record it checked. The store
 * view below serves such an object: the body and ETag of one version with the metadata of another.
 */
import { describe, expect, it } from 'vitest';
import type { UserCodec } from '../../src/crypto/user-codec.js';
import { versionRecordPath, VERSION_METADATA } from '../../src/crypto/version-record-format.js';
import { MemoryStore } from '../../src/store/memory.js';
import type { StoredObject } from '../../src/store/port.js';
import { createPlainCodecProvider } from '../../src/vault/plain-codec.js';
import { StoreUserFiles, versionRecordMemo, type KnownRecord } from '../../src/vault/store-user-files.js';
import type { LruMap } from '../../src/util/lru.js';

const PATH = '/memories/notes.md';
const text = (s: string) => new TextEncoder().encode(s);

/** The plain codec, counting how often a version record is opened. */
async function countingCodec(): Promise<{ codec: UserCodec; recordOpens: () => number }> {
  const inner = await createPlainCodecProvider().forUser('memo-user');
  let opens = 0;
  const codec = Object.create(inner) as UserCodec;
  codec.open = (path: string, stored: Uint8Array) => {
    if (path === versionRecordPath(PATH)) opens += 1;
    return inner.open(path, stored);
  };
  return { codec, recordOpens: () => opens };
}

/** A memory store whose GET of one key can be made to answer with a forged object (S3's copy-in-place keeps the ETag). */
function forgingStore(): { store: MemoryStore; forge: (key: string, object: StoredObject | null) => void } {
  const store = new MemoryStore();
  const forged = new Map<string, StoredObject>();
  const view = Object.create(store) as MemoryStore;
  view.get = async (key: string) => forged.get(key) ?? store.get(key);
  return { store: view, forge: (key, object) => (object ? forged.set(key, object) : forged.delete(key)) };
}

async function setUp() {
  const { store, forge } = forgingStore();
  const { codec, recordOpens } = await countingCodec();
  const memo = versionRecordMemo();
  const files = (knownRecords: LruMap<string, KnownRecord> | undefined = memo) =>
    new StoreUserFiles(store, codec, undefined, undefined, {
      actor: 'model',
      keepHistory: true,
      ...(knownRecords ? { knownRecords } : {}),
    });
  const key = codec.keyFor(PATH);
  return { store, forge, codec, recordOpens, memo, files, key };
}

describe('the memo of checked version records', () => {
  it('a version this vault wrote or checked is read without opening its record again, by any of its commands', async () => {
    const { recordOpens, files } = await setUp();
    const written = await files().write(PATH, text('one\n'), { ifNoneMatch: true });
    expect((await files().read(PATH))?.etag).toBe(written.etag);
    expect(recordOpens()).toBe(0);

    // A vault without the memo (another process) opens it once, then knows it too.
    const other = versionRecordMemo();
    await files(other).read(PATH);
    await files(other).read(PATH);
    expect(recordOpens()).toBe(1);
    expect(other.size).toBe(1);
  });

  it('an edit numbers its version one past the version its If-Match names, from the memo, across commands', async () => {
    const { files, store, key, memo } = await setUp();
    const first = await files().write(PATH, text('one\n'), { ifNoneMatch: true });
    const second = await files().write(PATH, text('two\n'), { ifMatch: first.etag });
    const seqOf = (etag: string) => memo.peek(`${key}\n${etag}`)!.seq;
    expect(seqOf(second.etag)).toBe(seqOf(first.etag) + 1);
    // The number in the memo is the one the stored record carries.
    const stored = (await store.get(key))!;
    expect(stored.metadata[VERSION_METADATA]).toBe(memo.peek(`${key}\n${second.etag}`)!.sealed);
    expect(JSON.parse(Buffer.from(stored.metadata[VERSION_METADATA]!, 'base64url').toString()).s).toBe(
      seqOf(second.etag),
    );
  });

  it('a known older version put back (its own ETag, body and record) is still refused: the memo keeps its old number', async () => {
    const { files, store, forge, key, recordOpens } = await setUp();
    await files().write(PATH, text('one\n'), { ifNoneMatch: true });
    const v1 = (await store.get(key))!;
    await files().write(PATH, text('two\n'), { ifMatch: v1.etag });
    forge(key, v1);
    await expect(files().read(PATH)).rejects.toMatchObject({ code: 'INTEGRITY' });
    expect(recordOpens()).toBe(0);
  });

  it('the current body and ETag with its record stripped, or with another version’s record, is opened and refused', async () => {
    const { files, store, forge, key, recordOpens } = await setUp();
    await files().write(PATH, text('one\n'), { ifNoneMatch: true });
    const v1 = (await store.get(key))!;
    await files().write(PATH, text('two\n'), { ifMatch: v1.etag });
    const v2 = (await store.get(key))!;

    forge(key, { ...v2, metadata: {} });
    await expect(files().read(PATH)).rejects.toMatchObject({ code: 'INTEGRITY' });

    forge(key, { ...v2, metadata: { ...v2.metadata, [VERSION_METADATA]: v1.metadata[VERSION_METADATA]! } });
    await expect(files().read(PATH)).rejects.toMatchObject({ code: 'INTEGRITY' });
    expect(recordOpens()).toBe(1); // the swapped record was opened (and did not match the body)

    forge(key, null);
    expect(new TextDecoder().decode((await files().read(PATH))!.data)).toBe('two\n');
  });

  it('is bounded: the least recently used records leave past 10,000', async () => {
    const memo = versionRecordMemo();
    for (let i = 0; i < 10_050; i++) memo.set(`k${i}`, { seq: i + 1, sealed: 's' });
    expect(memo.size).toBe(10_000);
    expect(memo.peek('k0')).toBeUndefined();
    expect(memo.peek('k10049')?.seq).toBe(10_050);
  });
});
