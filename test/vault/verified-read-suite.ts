/**
 * One verified read for every reader: two kept versions swapped in
 * the store, or an older object put back in place of the current file (a raw PUT), are refused with
 * INTEGRITY by every path that reads stored data: the vault's read, history, restore, the user
 * export (which fails closed: no archive that files a version's content under another's number, or
 * serves a rolled-back file as current) and re-keying (which leaves them alone and keeps the old
 * key: fail closed). Run on the memory and file stores (test/vault/verified-read.test.ts) and on
 * radosgw (test/s3/verified-read.test.ts).
 */
import { describe, expect, it } from 'vitest';
import { createVault, type Vault } from '../../src/index.js';
import { USERS_PREFIX } from '../../src/store/layout.js';
import { listAll, type ObjectStore, type StoredObject } from '../../src/store/port.js';
import { isKeptVersionKey } from '../kit/stores.js';
import { suiteVaults } from '../kit/vault.js';
import { decode } from '../kit/text.js';

const PATH = '/memories/k.md';

/** What an export produced: its error (none when it succeeded) and the archive's entry names (from the tar headers). */
async function exported(vault: Vault, user: string): Promise<{ error: unknown; entries: Map<string, string> }> {
  const { stream, done } = await vault.exportUser(user);
  const chunks: Buffer[] = [];
  stream.on('data', (c: Buffer) => chunks.push(c));
  stream.on('error', () => undefined); // the same failure as `done`'s
  const error = await done.then(
    () => undefined,
    (e: unknown) => e,
  );
  return { error, entries: tarEntries(Buffer.concat(chunks)) };
}

/** The entries of a (possibly cut short) ustar archive: name to content. */
function tarEntries(archive: Buffer): Map<string, string> {
  const entries = new Map<string, string>();
  for (let at = 0; at + 512 <= archive.length;) {
    const header = archive.subarray(at, at + 512);
    const name = header.subarray(0, 100).toString('utf8').replace(/\0.*$/s, '');
    if (name === '') break;
    const prefix = header.subarray(345, 500).toString('utf8').replace(/\0.*$/s, '');
    const size = parseInt(header.subarray(124, 136).toString('utf8').replace(/\0.*$/s, '').trim() || '0', 8);
    entries.set(prefix ? `${prefix}/${name}` : name, archive.subarray(at + 512, at + 512 + size).toString('utf8'));
    at += 512 + Math.ceil(size / 512) * 512;
  }
  return entries;
}

async function keysOf(store: ObjectStore): Promise<string[]> {
  const keys: string[] = [];
  for await (const o of listAll(store, USERS_PREFIX)) keys.push(o.key);
  return keys;
}

export function verifiedReadSuite(
  name: string,
  makeStore: () => Promise<ObjectStore>,
  options: { timeoutMs?: number } = {},
): void {
  const { masterKey, opened } = suiteVaults();
  const timeout = options.timeoutMs ?? 30_000;

  async function ok(vault: Vault, user: string, input: Record<string, unknown>): Promise<void> {
    const result = await vault.run(user, input);
    expect(result.isError, JSON.stringify(result.content)).toBe(false);
  }

  /** A file written three times (versions 1, 2, 3, each an edit of the one before), the objects of each. */
  async function threeVersions(): Promise<{
    vault: Vault;
    store: ObjectStore;
    fileKey: string;
    versionKeys: string[];
    current: StoredObject[];
  }> {
    const store = await makeStore();
    const vault = await createVault({ store, encryption: { masterKey }, history: true });
    opened.push(vault);
    const current: StoredObject[] = [];
    await ok(vault, 'u', { command: 'create', path: PATH, file_text: 'version 1\n' });
    const fileKey = (await keysOf(store)).find((k) => k.split('/')[2] === 'f')!;
    current.push((await store.get(fileKey))!);
    for (const n of [2, 3]) {
      await ok(vault, 'u', {
        command: 'str_replace',
        path: PATH,
        old_str: `version ${n - 1}`,
        new_str: `version ${n}`,
      });
      current.push((await store.get(fileKey))!);
    }
    // Newest first (the keys count down).
    const versionKeys = (await keysOf(store)).filter(isKeptVersionKey);
    expect(versionKeys).toHaveLength(3);
    return { vault, store, fileKey, versionKeys, current };
  }

  /** The stored objects at `keys`, as they are now (body, metadata). */
  async function objects(store: ObjectStore, keys: string[]): Promise<string[]> {
    return Promise.all(
      keys.map(async (k) =>
        JSON.stringify([Buffer.from((await store.get(k))!.body).toString('base64'), (await store.get(k))!.metadata]),
      ),
    );
  }

  describe(`one verified read for every reader on ${name}`, () => {
    it(
      'two kept versions swapped in the store: history, restore, the export and re-keying each refuse them (INTEGRITY); the current file still reads',
      async () => {
        const { vault, store, versionKeys } = await threeVersions();
        // Before: the export files each version's content under its own number.
        const clean = await exported(vault, 'u');
        expect(clean.error).toBeUndefined();
        const history = (await vault.history('u', PATH)).versions;
        expect(history.map((v) => clean.entries.get(`history/memories/k.md/@${v.seq}`))).toEqual([
          'version 3\n',
          'version 2\n',
          'version 1\n',
        ]);

        // Swap the newest two kept versions (body and metadata, each a whole object memvault wrote).
        const [newest, middle] = [versionKeys[0]!, versionKeys[1]!];
        const [a, b] = [(await store.get(newest))!, (await store.get(middle))!];
        await store.put(newest, b.body, { metadata: b.metadata });
        await store.put(middle, a.body, { metadata: a.metadata });
        const swapped = await objects(store, [newest, middle]);

        await expect(vault.history('u', PATH)).rejects.toMatchObject({ code: 'INTEGRITY' });
        await expect(vault.history('u', '/memories')).rejects.toMatchObject({ code: 'INTEGRITY' });
        await expect(vault.restore('u', { asOf: new Date(), dryRun: true })).rejects.toMatchObject({
          code: 'INTEGRITY',
        });
        const after = await exported(vault, 'u');
        expect(after.error).toMatchObject({ code: 'INTEGRITY' });
        expect(after.entries.has('manifest.json')).toBe(false); // no complete-looking archive
        // Whatever went out before it stopped holds no version's content under another's number.
        for (const [entry, content] of after.entries)
          if (entry.startsWith('history/')) expect(content).toBe(clean.entries.get(entry));

        // The current file is its own newest version: it is read as before.
        expect(decode((await (await vault.files('u')).read(PATH))!.data)).toBe('version 3\n');

        // Re-keying leaves both alone and keeps the old key (fail closed), re-sealing the rest.
        const rekeyed = await vault.rekeyUser('u', { settleMs: 0 });
        expect(rekeyed, JSON.stringify(rekeyed)).toMatchObject({ failed: 2, oldVersionsDropped: false });
        expect(await objects(store, [newest, middle])).toEqual(swapped);
      },
      timeout,
    );

    it(
      'an older object put back in place of the current file (a raw PUT): the read, the export and re-keying each refuse it (INTEGRITY)',
      async () => {
        const { vault, store, fileKey, current } = await threeVersions();
        const v2 = current[1]!;
        await store.put(fileKey, v2.body, { metadata: v2.metadata });
        const putBack = await objects(store, [fileKey]);

        expect(await vault.run('u', { command: 'view', path: PATH })).toMatchObject({ isError: true });
        await expect((await vault.files('u')).read(PATH)).rejects.toMatchObject({ code: 'INTEGRITY' });
        const after = await exported(vault, 'u');
        expect(after.error).toMatchObject({ code: 'INTEGRITY' });
        expect(after.entries.has('memories/k.md')).toBe(false); // never served as current
        expect(after.entries.has('manifest.json')).toBe(false);

        const rekeyed = await vault.rekeyUser('u', { settleMs: 0 });
        expect(rekeyed, JSON.stringify(rekeyed)).toMatchObject({ failed: 1, oldVersionsDropped: false });
        expect(await objects(store, [fileKey])).toEqual(putBack);

        // The operator's repair: a restore puts the newest kept version back; then every reader agrees again.
        await vault.restore('u', { asOf: new Date() });
        expect(decode((await (await vault.files('u')).read(PATH))!.data)).toBe('version 3\n');
        const repaired = await exported(vault, 'u');
        expect(repaired.error).toBeUndefined();
        expect(repaired.entries.get('memories/k.md')).toBe('version 3\n');
        expect(await vault.rekeyUser('u', { settleMs: 0 })).toMatchObject({ failed: 0, oldVersionsDropped: true });
      },
      timeout,
    );
  });
}
