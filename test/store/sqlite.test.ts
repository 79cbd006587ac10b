import { mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { localStoreBase, openStore } from '../../src/store/open.js';
import { SqliteStore } from '../../src/store/sqlite.js';
import { parseSqliteUrl } from '../../src/store/sqlite/url.js';
import { runStoreContract } from './contract.js';
import { writeVersion1Database } from '../kit/sqlite-v1.js';

const sandboxes: string[] = [];
async function sandbox(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'memvault-sqlite-store-'));
  sandboxes.push(dir);
  return dir;
}
afterAll(async () => {
  for (const dir of sandboxes) await rm(dir, { recursive: true, force: true });
});

runStoreContract('sqlite', async () => {
  const dir = await sandbox();
  return {
    store: await SqliteStore.open(join(dir, 'store.db')),
    cleanup: () => rm(dir, { recursive: true, force: true }),
  };
});

describe('sqlite: store URLs and the database file', () => {
  it('parses sqlite:<path> with its durability, and refuses anything else as CONFIG', () => {
    expect(parseSqliteUrl('sqlite:/var/lib/m.db')).toEqual({ path: '/var/lib/m.db', durability: 'full' });
    expect(parseSqliteUrl('sqlite:///var/lib/m.db?durability=normal')).toEqual({
      path: '/var/lib/m.db',
      durability: 'normal',
    });
    expect(parseSqliteUrl('sqlite:m.db').path).toBe(join(process.cwd(), 'm.db'));
    for (const bad of [
      'sqlite:',
      'sqlite://host/m.db',
      'sqlite:/m.db?durability=off',
      'sqlite:/m.db?mode=ro',
      'sqlite:/d/',
    ])
      expect(() => parseSqliteUrl(bad), bad).toThrow(expect.objectContaining({ code: 'CONFIG' }));
  });

  it('names the default key file after the store: <dir>.key, <file without .db>.key', () => {
    expect(localStoreBase('sqlite:/srv/.memvault.db')).toBe('/srv/.memvault');
    expect(localStoreBase('file:///srv/.memvault/')).toBe('/srv/.memvault');
    expect(localStoreBase('s3://bucket/prefix')).toBeUndefined();
    expect(localStoreBase('sqlite:')).toBeUndefined();
  });

  it('opens owner-only in WAL mode, never creates what it only reads, and refuses another program’s database', async () => {
    const dir = await sandbox();
    const path = join(dir, 'new', 'store.db');
    await expect(openStore(`sqlite:${path}`, { create: false })).rejects.toMatchObject({ code: 'CONFIG' });
    await expect(stat(path)).rejects.toMatchObject({ code: 'ENOENT' });
    const store = await openStore(`sqlite:${path}?durability=normal`);
    await store.put('k', new TextEncoder().encode('v'));
    expect((await stat(path)).mode & 0o077).toBe(0);
    expect((await stat(`${path}-wal`)).isFile()).toBe(true);
    await store.close();
    const { DatabaseSync } = await import('node:sqlite');
    const foreign = new DatabaseSync(join(dir, 'foreign.db'));
    foreign.exec('CREATE TABLE t (x)');
    foreign.close();
    const refused = SqliteStore.open(join(dir, 'foreign.db'));
    await expect(refused).rejects.toMatchObject({ code: 'CONFIG' });
    await expect(refused).rejects.toThrow(/not a memvault store/);
    // A file that is no database: a store error with SQLite's code, no path.
    await writeFile(join(dir, 'garbage.db'), 'x'.repeat(4096));
    const garbage = SqliteStore.open(join(dir, 'garbage.db'));
    await expect(garbage).rejects.toMatchObject({ code: 'STORE_UNAVAILABLE' });
    await expect(garbage).rejects.not.toThrow(dir);
  });
});

describe('sqlite: schema versions', () => {
  it('moves a version 1 database (the body second) to version 2 (the body last) as it opens, every object intact', async () => {
    const dir = await sandbox();
    const path = join(dir, 'v1.db');
    await writeVersion1Database(path, [
      ['a/1', Buffer.from('one'), '{"m":"1"}', '{"t":"x"}'],
      ['a/2', Buffer.alloc(5000, 7)],
    ]);

    const store = await SqliteStore.open(path);
    const one = await store.get('a/1');
    expect(one && { body: Buffer.from(one.body).toString(), etag: one.etag, metadata: one.metadata }).toEqual({
      body: 'one',
      etag: 'e1',
      metadata: { m: '1' },
    });
    expect(one?.lastModified.getTime()).toBe(1000);
    expect(await store.readTags('a/1')).toEqual({ t: 'x' });
    expect((await store.get('a/2'))?.body).toEqual(new Uint8Array(5000).fill(7));
    expect((await store.list('a/')).objects.map((o) => [o.key, o.size, o.etag])).toEqual([
      ['a/1', 3, 'e1'],
      ['a/2', 5000, 'e2'],
    ]);
    await store.put('a/3', new Uint8Array([1]));
    await store.close();
    const { DatabaseSync } = await import('node:sqlite');
    const check = new DatabaseSync(path, { readOnly: true });
    expect(check.prepare('PRAGMA user_version').get()).toEqual({ user_version: 2 });
    const columns = (check.prepare('PRAGMA table_info(objects)').all() as Array<{ name: string }>).map((c) => c.name);
    expect(columns.at(-1)).toBe('body');
    check.close();
  });

  it('opens a database already at this version without writing to it (a check or a read changes nothing)', async () => {
    const path = join(await sandbox(), 'current.db');
    const first = await SqliteStore.open(path);
    await first.put('a/1', new Uint8Array([1]));
    await first.close();
    const { DatabaseSync } = await import('node:sqlite');
    const contents = () => {
      const probe = new DatabaseSync(path, { readOnly: true });
      try {
        return {
          size: probe.prepare('PRAGMA page_count').get(),
          objects: probe.prepare('SELECT count(*) AS n FROM objects').get(),
        };
      } finally {
        probe.close();
      }
    };
    const before = contents();
    const again = await SqliteStore.open(path);
    // Nothing committed: the WAL SQLite keeps beside the file has no frame.
    expect((await stat(`${path}-wal`)).size).toBe(0);
    expect((await again.get('a/1'))?.body).toEqual(new Uint8Array([1]));
    await again.close();
    expect(contents()).toEqual(before);
  });
});

describe('SqliteStore transactions', () => {
  it('commits all or nothing; others read the committed state meanwhile, and their writes wait', async () => {
    const dir = await sandbox();
    const store = await SqliteStore.open(join(dir, 'tx.db'));
    const other = await SqliteStore.open(join(dir, 'tx.db')); // another vault of the process: one connection
    const text = (s: string) => new TextEncoder().encode(s);
    const body = async (key: string) => {
      const object = await other.get(key);
      return object ? Buffer.from(object.body).toString() : null;
    };
    await store.put('a', text('old'));
    let opened!: () => void;
    const written = new Promise<void>((resolve) => (opened = resolve));
    // Started outside the transaction, awaited inside it (as a key load another command began):
    // the read sees what was committed, and does not wait for the transaction that waits for it.
    const readOutside = written.then(() => body('a'));
    const committed = store.transaction(async () => {
      await store.put('a', text('new'));
      await store.put('b', text('new'));
      opened();
      expect(await readOutside).toBe('old');
      expect(await store.get('a').then((o) => Buffer.from(o!.body).toString())).toBe('new');
    });
    await written;
    // A write from outside waits for the commit, then lands over it.
    const outsideWrite = other.put('a', text('after'));
    await committed;
    await outsideWrite;
    expect(await body('a')).toBe('after');
    expect(await body('b')).toBe('new');
    // A transaction that throws leaves nothing of itself.
    await expect(
      store.transaction(async () => {
        await store.put('c', text('never'));
        await store.delete('b');
        throw new Error('stop');
      }),
    ).rejects.toThrow('stop');
    expect(await body('c')).toBeNull();
    expect(await body('b')).toBe('new');
    await other.close();
    await store.close();
  });

  it('runs waiting transactions one at a time, in the order they asked; a failed one passes its turn on', async () => {
    const store = await SqliteStore.open(join(await sandbox(), 'turns.db'));
    const text = (s: string) => new TextEncoder().encode(s);
    const steps: string[] = [];
    let inside = 0;
    let most = 0;
    const transaction = (name: string, fails = false) =>
      store.transaction(async () => {
        most = Math.max(most, (inside += 1));
        steps.push(`${name} begins`);
        await store.put(name, text(name));
        await new Promise((resolve) => setImmediate(resolve)); // let the others ask meanwhile
        steps.push(`${name} ends`);
        inside -= 1;
        if (fails) throw new Error(`${name} fails`);
      });
    const outcomes = await Promise.allSettled([
      transaction('a'),
      transaction('b', true),
      transaction('c'),
      transaction('d'),
    ]);
    expect(steps).toEqual(['a', 'b', 'c', 'd'].flatMap((n) => [`${n} begins`, `${n} ends`]));
    expect(most).toBe(1);
    expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'rejected', 'fulfilled', 'fulfilled']);
    expect(await store.get('b')).toBeNull();
    expect((await store.list('')).objects.map((o) => o.key)).toEqual(['a', 'c', 'd']);
    // The slot is free again: a transaction after them all runs at once.
    await store.transaction(() => store.put('e', text('e')));
    expect(await store.head('e')).not.toBeNull();
    await store.close();
  });
});
