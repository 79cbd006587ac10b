/**
 * Fail closed: a store holding user data but no deployment record
 * never becomes a new deployment; commands that only read or erase never create a store, a
 * deployment or a key file.
 */
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';

// CLI processes (tsx) are slow to start on a loaded machine.
vi.setConfig({ testTimeout: 180_000 });
import { createVault, MemvaultError } from '../../src/index.js';
import { FileStore } from '../../src/store/file.js';
import { MemoryStore } from '../../src/store/memory.js';
import { listAll, type ObjectStore } from '../../src/store/port.js';
import { ONE_LINE, runCli } from './helpers.js';

let root: string;
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'memvault-deploy-'));
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

const KEY = Buffer.alloc(32, 9).toString('base64');

async function keys(store: ObjectStore): Promise<string[]> {
  const out: string[] = [];
  for await (const o of listAll(store, '')) out.push(o.key);
  return out.sort();
}

async function rejection(promise: Promise<unknown>): Promise<MemvaultError> {
  try {
    await promise;
  } catch (e) {
    if (e instanceof MemvaultError) return e;
    throw e;
  }
  throw new Error('expected a MemvaultError');
}

async function seeded(name: string): Promise<{ dir: string; url: string }> {
  const dir = join(root, name);
  const url = pathToFileURL(dir).href;
  const vault = await createVault({ store: url, encryption: { masterKey: KEY } });
  expect((await vault.run('alice', { command: 'create', path: '/memories/a.md', file_text: 'kept' })).isError).toBe(
    false,
  );
  await vault.close();
  return { dir, url };
}

describe('a store with user data but no deployment record', () => {
  it('stops start-up with STORE_INCONSISTENT and changes nothing (file store)', async () => {
    const { dir, url } = await seeded('lost-record');
    const raw = await FileStore.open(dir);
    await raw.delete('k/_deployment');
    const before = await keys(raw);
    expect(before.some((k) => k.startsWith('u/'))).toBe(true);
    const e = await rejection(createVault({ store: url, encryption: { masterKey: KEY } }));
    expect(e.code).toBe('STORE_INCONSISTENT');
    expect(e.message).toMatch(/holds user data but no deployment record \(k\/_deployment\)/);
    expect(e.message).toMatch(/Recovery: restore k\/_deployment from a backup/);
    // No new record was written over the orphaned data, on this start or any later one.
    expect(await keys(raw)).toEqual(before);
    expect((await rejection(createVault({ store: url, encryption: { masterKey: KEY } }))).code).toBe(
      'STORE_INCONSISTENT',
    );
    await raw.close();
  });

  it('with no key configured, creates no key file either (the default key file would belong to nothing)', async () => {
    const { dir, url } = await seeded('lost-record-nokey');
    const raw = await FileStore.open(dir);
    await raw.delete('k/_deployment');
    const saved = {
      key: process.env['MEMVAULT_MASTER_KEY'],
      file: process.env['MEMVAULT_MASTER_KEY_FILE'],
      kms: process.env['MEMVAULT_KMS_KEY_ID'],
    };
    delete process.env['MEMVAULT_MASTER_KEY'];
    delete process.env['MEMVAULT_MASTER_KEY_FILE'];
    delete process.env['MEMVAULT_KMS_KEY_ID'];
    try {
      expect((await rejection(createVault({ store: url }))).code).toBe('STORE_INCONSISTENT');
      expect(existsSync(`${dir}.key`)).toBe(false);
    } finally {
      for (const [k, v] of Object.entries({
        MEMVAULT_MASTER_KEY: saved.key,
        MEMVAULT_MASTER_KEY_FILE: saved.file,
        MEMVAULT_KMS_KEY_ID: saved.kms,
      }))
        if (v !== undefined) process.env[k] = v;
    }
    await raw.close();
  });

  it('counts a user key record alone, and user objects alone, as user data', async () => {
    const onlyKey = new MemoryStore();
    await onlyKey.put('k/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA', new Uint8Array([1]));
    expect((await rejection(createVault({ store: onlyKey, encryption: { masterKey: KEY } }))).code).toBe(
      'STORE_INCONSISTENT',
    );
    // A store written without encryption, opened with it: its files would silently vanish.
    const plain = new MemoryStore();
    const plainVault = await createVault({ store: plain, encryption: false });
    await plainVault.run('bob', { command: 'create', path: '/memories/p.md', file_text: 'x' });
    await plainVault.close();
    expect((await rejection(createVault({ store: plain, encryption: { masterKey: KEY } }))).code).toBe(
      'STORE_INCONSISTENT',
    );
    expect(await plain.head('k/_deployment')).toBeNull();
  });

  it('still starts a new deployment on a really empty store (a stray doctor probe under k/_ is not user data)', async () => {
    const store = new MemoryStore();
    await store.put('k/_doctor-probe', new Uint8Array([1]));
    await store.put('audit/i/000000000001.jsonl', new Uint8Array([1]));
    const vault = await createVault({ store, encryption: { masterKey: KEY } });
    expect(await store.head('k/_deployment')).not.toBeNull();
    await vault.close();
  });

  it('two processes starting together on an empty store share one deployment', async () => {
    const store = new MemoryStore();
    const [a, b] = await Promise.all([
      createVault({ store, encryption: { masterKey: KEY } }),
      createVault({ store, encryption: { masterKey: KEY } }),
    ]);
    await a.run('carol', { command: 'create', path: '/memories/c.md', file_text: 'shared' });
    expect((await b.run('carol', { command: 'view', path: '/memories/c.md' })).content).toMatch(/shared/);
    await a.close();
    await b.close();
  });
});

describe('createVault({ create: false }): open an existing deployment only', () => {
  it('refuses a file store directory that does not exist, and does not create it', async () => {
    const dir = join(root, 'typo');
    const e = await rejection(
      createVault({ store: pathToFileURL(dir).href, encryption: { masterKey: KEY }, create: false }),
    );
    expect(e.code).toBe('CONFIG');
    expect(e.message).toMatch(/there is no store at .*typo: check the store URL\. Nothing was created\./);
    expect(existsSync(dir)).toBe(false);
  });

  it('refuses an empty store (no deployment) and writes nothing to it, not even a key file', async () => {
    const dir = join(root, 'empty');
    await mkdir(dir);
    const saved = process.env['MEMVAULT_MASTER_KEY'];
    delete process.env['MEMVAULT_MASTER_KEY'];
    try {
      // No key configured and no default key file: that alone is the error, nothing is created.
      const noKey = await rejection(createVault({ store: pathToFileURL(dir).href, create: false }));
      expect(noKey.code).toBe('CONFIG');
      expect(noKey.message).toMatch(/this command does not create one/);
      expect(existsSync(`${dir}.key`)).toBe(false);
    } finally {
      if (saved !== undefined) process.env['MEMVAULT_MASTER_KEY'] = saved;
    }
    const e = await rejection(
      createVault({ store: pathToFileURL(dir).href, encryption: { masterKey: KEY }, create: false }),
    );
    expect(e.code).toBe('CONFIG');
    expect(e.message).toMatch(/no memvault deployment in this store/);
    expect(await readdir(dir)).toEqual([]);
    const memory = new MemoryStore();
    expect((await rejection(createVault({ store: memory, encryption: { masterKey: KEY }, create: false }))).code).toBe(
      'CONFIG',
    );
    expect(await keys(memory)).toEqual([]);
  });

  it('opens an existing deployment and reads its users', async () => {
    const { url } = await seeded('existing');
    const vault = await createVault({ store: url, encryption: { masterKey: KEY }, create: false });
    expect((await vault.run('alice', { command: 'view', path: '/memories/a.md' })).content).toMatch(/kept/);
    await vault.close();
  });
});

describe('CLI commands that read or erase never create a store or a deployment', () => {
  const env = { MEMVAULT_MASTER_KEY: KEY };

  it('user forget / user export / keys rotate / expire / audit export --user on a mistyped --store: exit 2, one line, nothing created', async () => {
    const cwd = await mkdtemp(join(root, 'cwd-'));
    const typo = join(root, 'no-such-store');
    const url = pathToFileURL(typo).href;
    const runs = [
      ['user', 'forget', '--user', 'alice', '--store', url],
      ['user', 'export', '--user', 'alice', '--store', url, '--out', join(cwd, 'alice.tar')],
      ['keys', 'rotate', '--store', url, '--to-master-key-file', join(cwd, 'next.key')],
      ['expire', '--store', url, '--ttl-days', '30'],
      [
        'audit',
        'export',
        '--from',
        '2026-01-01',
        '--to',
        '2026-12-31',
        '--user',
        'alice',
        '--data-store',
        url,
        '--out',
        join(cwd, 'a.jsonl'),
        join(cwd, 'none.jsonl'),
      ],
    ];
    for (const args of runs) {
      const r = await runCli(args, { cwd, env });
      expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(2);
      expect(r.stderr, args.join(' ')).toMatch(ONE_LINE);
      expect(r.stderr).toMatch(/no store at .*no-such-store|no memvault deployment/);
      expect(r.stdout).toBe('');
    }
    expect(existsSync(typo)).toBe(false);
    expect(await readdir(cwd)).toEqual([]); // no .memvault, no archive, no export, no key file
  });

  it('user forget on an existing but empty store directory says there is no deployment (not "0 objects deleted")', async () => {
    const cwd = await mkdtemp(join(root, 'cwd-'));
    const dir = join(root, 'empty-cli');
    await mkdir(dir);
    const r = await runCli(['user', 'forget', '--user', 'alice', '--store', pathToFileURL(dir).href], { cwd, env });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/no memvault deployment in this store/);
    expect(await readdir(dir)).toEqual([]);
  });

  it('exec and user forget on a store whose deployment record was deleted stop with the recovery, exit 3', async () => {
    const cwd = await mkdtemp(join(root, 'cwd-'));
    const { dir, url } = await seeded('lost-cli');
    const raw = await FileStore.open(dir);
    await raw.delete('k/_deployment');
    await raw.close();
    for (const args of [
      ['exec', '--user', 'alice', '--store', url, '{"command":"view","path":"/memories"}'],
      ['user', 'forget', '--user', 'alice', '--store', url],
    ]) {
      const r = await runCli(args, { cwd, env });
      expect(r.code, r.stderr).toBe(3);
      expect(r.stderr).toMatch(ONE_LINE);
      expect(r.stderr).toMatch(/holds user data but no deployment record/);
      expect(r.stdout).toBe('');
    }
  });
});
