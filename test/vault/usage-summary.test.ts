/**
 * The quota's usage summed by the store (ObjectStore.summarize, the SQLite store): the same files
 * and plaintext bytes as adding up the listing, with fence and reaping markers and expired files
 * left out, in one LIST however many files there are; and a quota on SQLite that frees an expired
 * file's room as the listing did.
 */
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createEncryptedCodecProvider } from '../../src/crypto/codec.js';
import { createLocalKeyProvider } from '../../src/crypto/local-key.js';
import { createExpiryService } from '../../src/expiry/access.js';
import { createVault, type VaultOptions } from '../../src/memvault.js';
import { FENCE_METADATA, REAPING_BODY_BYTES } from '../../src/store/fence.js';
import { SqliteStore } from '../../src/store/sqlite.js';
import { meterHistory } from '../../src/vault/history-usage.js';
import { StoreUserFiles } from '../../src/vault/store-user-files.js';
import { listedUsage } from '../../src/vault/tree-files.js';
import { ManualClock } from '../kit/clock.js';
import { counted } from '../kit/expiry.js';
import { StoreWrapper } from '../kit/stores.js';
import { tempDir } from '../kit/temp.js';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function sqliteStore(clock: ManualClock): Promise<SqliteStore> {
  const temp = tempDir('usage-summary');
  const store = await SqliteStore.open(join(temp.dir, 'store.db'), { now: clock.now });
  cleanups.push(temp.cleanup, () => store.close());
  return store;
}

async function aliceFiles(store: SqliteStore, clock: ManualClock) {
  const keyProvider = await createLocalKeyProvider(new Uint8Array(randomBytes(32)));
  const codecs = await createEncryptedCodecProvider({ store, keyProvider });
  const codec = await codecs.forUser('alice');
  const expiry = createExpiryService(store, { ttlDays: 30, now: clock.now });
  return { codec, files: new StoreUserFiles(store, codec, await expiry.forUser('alice', codec)) };
}

/** alice's create on a vault over a new SQLite store, with the options given (a master key added). */
async function aliceCreates(clock: ManualClock, options: Omit<VaultOptions, 'store'>) {
  const store = await sqliteStore(clock);
  const vault = await createVault({ store, encryption: { masterKey: randomBytes(32).toString('base64') }, ...options });
  cleanups.push(() => vault.close());
  return { store, create: (path: string) => vault.run('alice', { command: 'create', path, file_text: 'x' }) };
}

const listed = (files: StoreUserFiles) => listedUsage(files);

describe('usage summed by the SQLite store', () => {
  it('equals the listing added up, markers and expired files left out, in one LIST for 1,200 files', async () => {
    const clock = new ManualClock();
    const store = await sqliteStore(clock);
    const { codec, files } = await aliceFiles(store, clock);
    await files.write('/memories/a.md', new Uint8Array(10));
    await files.write('/memories/d/empty.md', new Uint8Array(0));
    await files.write('/memories/d/c.md', new Uint8Array(5000));
    // A fence marker (0 bytes) and a reaping marker (its size tells) are no files.
    await store.put(codec.keyFor('/memories/fenced.md'), new Uint8Array(0), { metadata: { [FENCE_METADATA]: 'x' } });
    await store.put(codec.keyFor('/memories/reaped.md'), new Uint8Array(REAPING_BODY_BYTES));
    expect(await listed(files)).toEqual({ files: 3, bytes: 5010 });
    const first = await counted(() => files.usage());
    expect(first.result).toEqual({ files: 3, bytes: 5010 });
    expect(first.requests).toEqual({ LIST: 1 });

    clock.advanceDays(20);
    for (let i = 0; i < 1200; i++) await files.write(`/memories/many/n${i}.md`, new Uint8Array(i % 7));
    clock.advanceDays(15); // the first three are idle 35 days: expired (30)
    const expected = { files: 1200, bytes: Array.from({ length: 1200 }, (_, i) => i % 7).reduce((a, b) => a + b) };
    expect(await listed(files)).toEqual(expected);
    const later = await counted(() => files.usage());
    expect(later.result).toEqual(expected);
    expect(later.requests).toEqual({ LIST: 1 }); // the listing takes two pages
  });

  it('counts the history as its listing does: tombstones and small versions at the floor, in one LIST', async () => {
    const clock = new ManualClock();
    const store = await sqliteStore(clock);
    const keyProvider = await createLocalKeyProvider(new Uint8Array(randomBytes(32)));
    const codec = await (await createEncryptedCodecProvider({ store, keyProvider })).forUser('alice');
    const files = new StoreUserFiles(store, codec, undefined, undefined, { actor: 'model', keepHistory: true });
    for (let i = 0; i < 30; i++) await files.write(`/memories/h${i % 6}.md`, new Uint8Array(i * 97));
    const last = await files.stat('/memories/h0.md');
    const fenced = await files.fence('/memories/h0.md', last!.etag, 'deleted', 'op-1'); // a tombstone
    await fenced.settled;
    const listedHistory = await meterHistory(new StoreWrapper(store), codec); // no summarize: listed
    expect(listedHistory.versions).toBe(31);
    const summed = await counted(() => meterHistory(store, codec));
    expect(summed.result).toEqual(listedHistory);
    expect(summed.requests).toEqual({ LIST: 1 });
  });

  it('counts an object whose name does not open, which listings skip (it takes room until removed)', async () => {
    const clock = new ManualClock();
    const store = await sqliteStore(clock);
    const { codec, files } = await aliceFiles(store, clock);
    await files.write('/memories/a.md', new Uint8Array(10));
    await store.put(`${codec.filesPrefix}planted-name`, new Uint8Array(500));
    expect(await listed(files)).toEqual({ files: 1, bytes: 10 });
    const summed = await files.usage();
    expect(summed.files).toBe(2);
    expect(summed.bytes).toBeGreaterThan(10);
  });

  it('is what the quota counts on SQLite: a planted object takes room there', async () => {
    const { store, create } = await aliceCreates(new ManualClock(), {
      quota: { maxUserFiles: 2, refreshEveryWrites: 1 },
    });
    expect((await create('/memories/a.md')).isError).toBe(false);
    // The user's files prefix, as her first file's key shows it.
    const [key] = (await store.list('u/')).objects.map((o) => o.key).filter((k) => k.includes('/f/'));
    await store.put(`${key!.slice(0, key!.indexOf('/f/') + 3)}planted-name`, new Uint8Array(500));
    expect((await create('/memories/b.md')).code).toBe('QUOTA_EXCEEDED');
  });

  it('frees an expired file’s room for the quota, as the listing did', async () => {
    const clock = new ManualClock();
    const { create } = await aliceCreates(clock, {
      expiry: { ttlDays: 30, now: clock.now },
      quota: { maxUserFiles: 2, now: () => clock.now().getTime() },
    });
    expect((await create('/memories/a.md')).isError).toBe(false);
    expect((await create('/memories/b.md')).isError).toBe(false);
    const refused = await create('/memories/c.md');
    expect(refused.code).toBe('QUOTA_EXCEEDED');
    clock.advanceDays(31); // a and b expire; the usage is listed again (refreshAfterMs)
    expect((await create('/memories/c.md')).isError).toBe(false);
    expect((await create('/memories/d.md')).isError).toBe(false);
    expect((await create('/memories/e.md')).code).toBe('QUOTA_EXCEEDED');
  });
});
