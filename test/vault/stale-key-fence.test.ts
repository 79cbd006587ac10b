/**
 * A fence's look at the current file's record (a delete numbers its tombstone one past the version
 * it ends) from an instance that has not seen the key version another instance re-keyed the user
 * to: the key record is read again first, as a read does, so the tombstone is numbered one past the
 * ended version, not by the clock (docs/versions.md, "Sequence numbers"). The same for dropping the
 * versions older than the current one (a redacting edit): its look at the current record.
 * (A rename reads its source before its fence, which loads the key already: a guard, not a fix.)
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createVault } from '../../src/index.js';
import { FileStore } from '../../src/store/file.js';
import { MemoryStore } from '../../src/store/memory.js';
import type { ObjectStore } from '../../src/store/port.js';
import { StoreWrapper } from '../kit/stores.js';

const stores: Array<[string, () => Promise<ObjectStore>]> = [
  ['memory store', async () => new MemoryStore()],
  ['file store', async () => FileStore.open(await mkdtemp(join(tmpdir(), 'memvault-stale-key-')))],
];

describe.each(stores)('an instance that has not seen a re-key (%s)', (_name, makeStore) => {
  it.each([
    ['a delete of the file', { command: 'delete', path: '/memories/d/f.md' }],
    ['a delete of its directory', { command: 'delete', path: '/memories/d' }],
    ['a rename of the file away', { command: 'rename', old_path: '/memories/d/f.md', new_path: '/memories/g.md' }],
  ])('numbers the tombstone of %s one past the version it ends', async (_label, command) => {
    const shared = await makeStore();
    const options = { encryption: { masterKey: randomBytes(32).toString('base64') } };
    const stale = await createVault({ store: new StoreWrapper(shared), ...options });
    expect(await stale.run('u', { command: 'create', path: '/memories/d/f.md', file_text: 'one\n' })).toMatchObject({
      isError: false,
    });
    const other = await createVault({ store: new StoreWrapper(shared), ...options });
    expect(await other.rekeyUser('u', { settleMs: 0 })).toMatchObject({ failed: 0 });
    const [ended] = (await other.history('u', '/memories/d/f.md')).versions;
    expect(ended?.end).toBeUndefined();

    expect(await stale.run('u', command)).toMatchObject({ isError: false });
    const [tombstone] = (await other.history('u', '/memories/d/f.md')).versions;
    expect(tombstone?.end).toBeDefined();
    expect(tombstone?.seq).toBe(ended!.seq + 1);
    await Promise.all([stale.close(), other.close()]);
  });

  it('drops the versions older than the current one, whose record is sealed under the new key version', async () => {
    const shared = await makeStore();
    const options = { encryption: { masterKey: randomBytes(32).toString('base64') } };
    const stale = await createVault({ store: new StoreWrapper(shared), ...options });
    const path = '/memories/f.md';
    expect(await stale.run('u', { command: 'create', path, file_text: 'one\n' })).toMatchObject({ isError: false });
    expect(await stale.run('u', { command: 'str_replace', path, old_str: 'one', new_str: 'two' })).toMatchObject({
      isError: false,
    });
    const staleFiles = await stale.files('u');
    const other = await createVault({ store: new StoreWrapper(shared), ...options });
    expect(await other.rekeyUser('u', { settleMs: 0 })).toMatchObject({ failed: 0 });
    const current = (await (await other.files('u')).read(path))!;
    expect((await other.history('u', path)).versions).toHaveLength(2);

    await staleFiles.dropVersionsBefore!(path, current.etag);
    const kept = (await other.history('u', path)).versions;
    expect(kept).toHaveLength(1);
    expect(Buffer.from((await (await other.files('u')).read(path))!.data).toString()).toBe('two\n');
    await Promise.all([stale.close(), other.close()]);
  });
});
