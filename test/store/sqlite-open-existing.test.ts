/**
 * Opening a SQLite store that must exist (src/store/sqlite/database.ts): `create: false` (the
 * service or a command opening an existing deployment to use it) never makes a store of an empty
 * file, but moves an older schema; `onlyReads` (doctor, backup, audit verify and export) writes
 * nothing at all: an older schema or a journal mode other than WAL is CONFIG and the file is left
 * byte for byte as it was.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { openStore } from '../../src/store/open.js';
import { SqliteStore } from '../../src/store/sqlite.js';
import { writeVersion1Database } from '../kit/sqlite-v1.js';

const sandboxes: string[] = [];
async function sandbox(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'memvault-sqlite-existing-'));
  sandboxes.push(dir);
  return dir;
}
afterAll(async () => {
  for (const dir of sandboxes) await rm(dir, { recursive: true, force: true });
});

/** A version 1 database (the body second), as earlier builds of this release wrote it. */
const version1 = (path: string): Promise<void> => writeVersion1Database(path, [['a/1', Buffer.from('one')]]);

async function pragma(path: string, name: string): Promise<unknown> {
  const { DatabaseSync } = await import('node:sqlite');
  const probe = new DatabaseSync(path, { readOnly: true });
  try {
    return (probe.prepare(`PRAGMA ${name}`).get() as Record<string, unknown>)[name];
  } finally {
    probe.close();
  }
}

describe('sqlite: a store that must exist', () => {
  it('an empty file is no store: create: false and onlyReads refuse it (CONFIG) and write nothing into it', async () => {
    const path = join(await sandbox(), 'empty.db');
    writeFileSync(path, '');
    for (const options of [{ create: false }, { onlyReads: true }]) {
      await expect(SqliteStore.open(path, options), JSON.stringify(options)).rejects.toMatchObject({
        code: 'CONFIG',
        message: expect.stringMatching(/there is no store at .*empty\.db.*Nothing was created/),
      });
      expect(readFileSync(path).length).toBe(0);
    }
  });

  it('onlyReads leaves a version 1 database as it is (CONFIG says to start the service); create: false moves it', async () => {
    const path = join(await sandbox(), 'v1.db');
    await version1(path);
    const before = readFileSync(path);
    await expect(SqliteStore.open(path, { onlyReads: true })).rejects.toMatchObject({
      code: 'CONFIG',
      message: expect.stringMatching(/schema version 1, and this command only reads.*start the service on it once/),
    });
    await expect(openStore(`sqlite:${path}`, { onlyReads: true })).rejects.toMatchObject({ code: 'CONFIG' });
    expect(readFileSync(path).equals(before)).toBe(true);
    expect(await pragma(path, 'user_version')).toBe(1);

    // The service (or a command that uses the deployment) opens an existing store and upgrades it.
    const store = await SqliteStore.open(path, { create: false });
    expect(Buffer.from((await store.get('a/1'))!.body).toString()).toBe('one');
    await store.close();
    expect(await pragma(path, 'user_version')).toBe(2);
  });

  it('onlyReads refuses a store not in WAL mode and leaves its journal mode; create: false sets WAL', async () => {
    const path = join(await sandbox(), 'rollback.db');
    const made = await SqliteStore.open(path);
    await made.put('a/1', new Uint8Array([1]));
    await made.close();
    const { DatabaseSync } = await import('node:sqlite');
    const db = new DatabaseSync(path);
    db.exec('PRAGMA journal_mode = DELETE');
    db.close();
    await expect(SqliteStore.open(path, { onlyReads: true })).rejects.toMatchObject({
      code: 'CONFIG',
      message: expect.stringMatching(/not in WAL mode/),
    });
    expect(await pragma(path, 'journal_mode')).toBe('delete');
    const store = await SqliteStore.open(path, { create: false });
    await store.close();
    expect(await pragma(path, 'journal_mode')).toBe('wal');
  });

  it('onlyReads opens a current store and reads it; a missing file or directory is CONFIG and nothing is created', async () => {
    const dir = await sandbox();
    const path = join(dir, 'current.db');
    const made = await SqliteStore.open(path);
    await made.put('a/1', new Uint8Array([7]));
    await made.close();
    const reader = await openStore(`sqlite:${path}`, { onlyReads: true });
    expect(Array.from((await reader.get('a/1'))!.body)).toEqual([7]);
    await reader.close();
    await expect(openStore(`sqlite:${join(dir, 'typo.db')}`, { onlyReads: true })).rejects.toMatchObject({
      code: 'CONFIG',
    });
    await expect(openStore(pathToFileURL(join(dir, 'nodir')).href, { onlyReads: true })).rejects.toMatchObject({
      code: 'CONFIG',
    });
    const { readdirSync } = await import('node:fs');
    expect(readdirSync(dir).sort()).toEqual(['current.db']);
  });
});
