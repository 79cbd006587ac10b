/**
 * `memvault migrate` and `memvault backup`, as an operator runs them (separate processes): a round
 * trip SQLite -> radosgw -> directory -> SQLite keeps every file, version, key and audit segment
 * (a user's export is byte-identical but for the stores' own times, the audit verifies), a resumed run copies only what is
 * missing, a foreign destination is refused before anything is written, and a backup taken while
 * the store is open is a store of its own.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { createVault, type Vault } from '../../src/index.js';
import { DEPLOYMENT_RECORD_KEY } from '../../src/store/layout.js';
import { SqliteStore } from '../../src/store/sqlite.js';
import { s3Connection, RUN_PREFIX } from '../s3/helpers.js';
import { snapshot } from '../kit/stores.js';
import { runCli } from './helpers.js';

const dirs: string[] = [];
afterAll(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

async function workspace(): Promise<{ dir: string; env: Record<string, string> }> {
  const dir = await mkdtemp(join(tmpdir(), 'memvault-migrate-'));
  dirs.push(dir);
  const keyFile = join(dir, 'master.key');
  await writeFile(keyFile, randomBytes(32).toString('base64'), { mode: 0o600 });
  return { dir, env: { MEMVAULT_MASTER_KEY_FILE: keyFile } };
}

const ALICE = 'alice@example.com';
const BOB = 'bob@example.com';

/** Two users with files, edits (kept versions), a directory rename and a deletion. */
async function fill(vault: Vault): Promise<void> {
  const steps: [string, Parameters<Vault['run']>[1]][] = [
    [ALICE, { command: 'create', path: '/memories/notes/a.md', file_text: 'alpha\nbeta\n' }],
    [ALICE, { command: 'create', path: '/memories/notes/b.md', file_text: 'bravo\n' }],
    [ALICE, { command: 'str_replace', path: '/memories/notes/a.md', old_str: 'beta', new_str: 'gamma' }],
    [ALICE, { command: 'rename', old_path: '/memories/notes', new_path: '/memories/kept' }],
    [BOB, { command: 'create', path: '/memories/todo.md', file_text: 'one\n' }],
    [BOB, { command: 'insert', path: '/memories/todo.md', insert_line: 1, insert_text: 'two' }],
    [BOB, { command: 'create', path: '/memories/gone.md', file_text: 'x\n' }],
    [BOB, { command: 'delete', path: '/memories/gone.md' }],
  ];
  for (const [user, command] of steps)
    expect((await vault.run(user, command)).isError, JSON.stringify(command)).toBe(false);
}

async function exportOf(url: string, env: Record<string, string>, user: string): Promise<Buffer> {
  const vault = await createVault({
    store: url,
    create: false,
    encryption: { masterKeyFile: env['MEMVAULT_MASTER_KEY_FILE']! },
  });
  // The archive states when it was made: one fixed time, so that two exports can be compared byte for byte.
  vi.useFakeTimers({ toFake: ['Date'] });
  vi.setSystemTime(new Date('2026-12-01T09:30:00Z'));
  try {
    const exported = await vault.exportUser(user);
    const chunks: Buffer[] = [];
    for await (const chunk of exported.stream) chunks.push(Buffer.from(chunk as Uint8Array));
    await exported.done;
    return Buffer.concat(chunks);
  } finally {
    vi.useRealTimers();
    await vault.close();
  }
}

/**
 * The export's entries, names and bytes, with the store's own times taken out: an object's time is
 * the store's (S3 sets LastModified itself), so the manifest's `modified` and `exportedAt` fields and
 * the tar headers' mtimes are left out; every other byte is compared.
 */
async function exportEntries(url: string, env: Record<string, string>, user: string): Promise<[string, string][]> {
  const { default: tar } = await import('tar-stream');
  const extract = tar.extract();
  const entries: [string, string][] = [];
  const read = new Promise<void>((resolve, reject) => {
    extract.on('entry', (header, stream, next) => {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        let text = Buffer.concat(chunks).toString('base64');
        if (header.name === 'manifest.json')
          text = Buffer.concat(chunks)
            .toString('utf8')
            .replace(/"(modified|exportedAt)": "[^"]*"/g, '"$1": "-"');
        entries.push([header.name, text]);
        next();
      });
      stream.on('error', reject);
    });
    extract.on('finish', resolve);
    extract.on('error', reject);
  });
  extract.end(await exportOf(url, env, user));
  await read;
  return entries;
}

describe('memvault migrate', () => {
  // The run's radosgw, or (this file run alone) the server MEMVAULT_S3_ENDPOINT names.
  const connection =
    s3Connection() ??
    (process.env.MEMVAULT_S3_ENDPOINT
      ? {
          endpoint: process.env.MEMVAULT_S3_ENDPOINT,
          bucket: process.env.MEMVAULT_S3_BUCKET ?? 'memvault-test',
          region: process.env.MEMVAULT_S3_REGION ?? 'us-east-1',
          accessKeyId: process.env.MEMVAULT_S3_ACCESS_KEY_ID ?? 'test',
          secretAccessKey: process.env.MEMVAULT_S3_SECRET_ACCESS_KEY ?? 'test',
        }
      : null);
  // Without an S3 server (a local run without radosgw), the middle hop is a second directory store.
  it(`SQLite -> ${connection ? 'radosgw' : 'directory'} -> directory -> SQLite: every object as it was, exports byte-identical, the audit verifies`, async () => {
    const { dir, env } = await workspace();
    const s3Env = connection
      ? {
          ...env,
          MEMVAULT_S3_ENDPOINT: connection.endpoint,
          MEMVAULT_S3_REGION: connection.region,
          MEMVAULT_S3_ACCESS_KEY_ID: connection.accessKeyId,
          MEMVAULT_S3_SECRET_ACCESS_KEY: connection.secretAccessKey,
        }
      : env;
    const first = `sqlite:${join(dir, 'first.db')}`;
    const s3 = connection
      ? `s3://${connection.bucket}/${RUN_PREFIX}/migrate-${randomBytes(4).toString('hex')}`
      : pathToFileURL(join(dir, 'middle')).href;
    const directory = pathToFileURL(join(dir, 'directory')).href;
    const last = `sqlite:${join(dir, 'last.db')}`;
    // The source's audit segments are sealed into the store itself (audit/{instance}/...).
    const source = await SqliteStore.open(join(dir, 'first.db'));
    const vault = await createVault({
      store: source,
      history: true,
      encryption: { masterKeyFile: env.MEMVAULT_MASTER_KEY_FILE },
      audit: { file: join(dir, 'service-audit.jsonl'), upload: { store: source } },
    });
    await fill(vault);
    await vault.close();
    await source.close();
    const before = { alice: await exportEntries(first, env, ALICE), bob: await exportEntries(first, env, BOB) };
    expect(before.alice.length).toBeGreaterThan(3); // files, kept versions, the manifest
    const audit = join(dir, 'migrate-audit.jsonl');

    const hops: [string, string][] = [
      [first, s3],
      [s3, directory],
      [directory, last],
    ];
    for (const [from, to] of hops) {
      const r = await runCli(
        ['migrate', '--from', from, '--to', to, '--audit-file', audit, '--actor', 'ops-1', '--json'],
        {
          cwd: dir,
          env: s3Env,
        },
      );
      expect(r.code, r.stderr).toBe(0);
      const result = JSON.parse(r.stdout) as { objects: number; copied: number; kept: number; verified: number };
      expect(result.copied).toBe(result.objects);
      expect(result.verified).toBe(result.objects);
    }

    // Every key, and every object's bytes and metadata, as in the first store.
    const a = await SqliteStore.open(join(dir, 'first.db'), { create: false });
    const b = await SqliteStore.open(join(dir, 'last.db'), { create: false });
    const keys = [...(await snapshot(a)).keys()];
    expect([...(await snapshot(b)).keys()]).toEqual(keys);
    expect(keys.some((k) => k.startsWith('audit/'))).toBe(true);
    for (const key of keys) {
      const [x, y] = [await a.get(key), await b.get(key)];
      expect(Buffer.from(y!.body).equals(Buffer.from(x!.body)), key).toBe(true);
      expect(y!.metadata).toEqual(x!.metadata);
      expect(await b.readTags(key)).toEqual(await a.readTags(key));
    }
    await a.close();
    await b.close();
    expect(await exportEntries(last, env, ALICE)).toEqual(before.alice);
    expect(await exportEntries(last, env, BOB)).toEqual(before.bob);

    // The service's segments, carried to the last store, and the migrations' own records verify.
    const segments = await runCli(['audit', 'verify', '--store', last, '--data-store', last], { cwd: dir, env });
    expect(segments.code, segments.stderr).toBe(0);
    const records = await runCli(['audit', 'verify', audit, '--data-store', last], { cwd: dir, env });
    expect(records.code, records.stderr).toBe(0);
    // The file just verified: one `migrate` record per hop.
    const migrations = (await readFile(audit, 'utf8'))
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as { type: string; outcome: string; actor: string })
      .filter((record) => record.type === 'migrate');
    expect(migrations.map((m) => [m.outcome, m.actor])).toEqual(hops.map(() => ['ok', 'ops-1']));
  }, 120_000);

  it('resumes a stopped run, refuses a foreign destination and a missing source, and creates nothing it only reads', async () => {
    const { dir, env } = await workspace();
    const from = `sqlite:${join(dir, 'from.db')}`;
    const to = `sqlite:${join(dir, 'to.db')}`;
    const vault = await createVault({ store: from, encryption: { masterKeyFile: env.MEMVAULT_MASTER_KEY_FILE } });
    await fill(vault);
    await vault.close();

    // A run stopped part-way: half the objects there, and no deployment record yet.
    const source = await SqliteStore.open(join(dir, 'from.db'), { create: false });
    const target = await SqliteStore.open(join(dir, 'to.db'));
    const all = [...(await snapshot(source)).keys()].filter((k) => k !== DEPLOYMENT_RECORD_KEY);
    for (const key of all.slice(0, Math.floor(all.length / 2))) {
      const object = (await source.get(key))!;
      await target.put(key, object.body, { metadata: object.metadata, tags: (await source.readTags(key))! });
    }
    await source.close();
    await target.close();
    const resumed = await runCli(['migrate', '--from', from, '--to', to, '--json'], { cwd: dir, env });
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(JSON.parse(resumed.stdout)).toMatchObject({
      kept: Math.floor(all.length / 2),
      copied: all.length - Math.floor(all.length / 2) + 1,
      verified: all.length + 1,
    });

    // Another deployment at the destination: refused, and that store is left as it was.
    const other = `sqlite:${join(dir, 'other.db')}`;
    const otherVault = await createVault({
      store: other,
      encryption: { masterKey: randomBytes(32).toString('base64') },
    });
    await otherVault.run(BOB, { command: 'create', path: '/memories/x.md', file_text: 'x\n' });
    await otherVault.close();
    const otherStore = await SqliteStore.open(join(dir, 'other.db'), { create: false });
    const otherBefore = await snapshot(otherStore);
    const refused = await runCli(['migrate', '--from', from, '--to', other], { cwd: dir, env });
    expect(refused.code).toBe(3);
    expect(refused.stderr).toMatch(/another deployment.*Nothing was written/);
    expect(await snapshot(otherStore)).toEqual(otherBefore);
    await otherStore.close();

    // A mistyped source is an error, and no store is created there.
    const missing = await runCli(['migrate', '--from', `sqlite:${join(dir, 'typo.db')}`, '--to', to], {
      cwd: dir,
      env,
    });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/there is no store at/);
    await expect(SqliteStore.open(join(dir, 'typo.db'), { create: false })).rejects.toThrow(/no store/);
  }, 60_000);
});

describe('memvault backup', () => {
  it('copies a SQLite store while it is open into a new file that opens as a store, and never overwrites', async () => {
    const { dir, env } = await workspace();
    const url = `sqlite:${join(dir, 'live.db')}`;
    const vault = await createVault({ store: url, encryption: { masterKeyFile: env.MEMVAULT_MASTER_KEY_FILE } });
    await fill(vault);
    // The service stays open (its connection, its WAL) while the backup runs.
    const backup = await runCli(['backup', '--store', url, '--out', join(dir, 'copy.db'), '--json'], { cwd: dir, env });
    expect(backup.code, backup.stderr).toBe(0);
    const again = await runCli(['backup', '--store', url, '--out', join(dir, 'copy.db')], { cwd: dir, env });
    expect(again.code).toBe(2);
    expect(again.stderr).toMatch(/exists already/);
    const live = await SqliteStore.open(join(dir, 'live.db'), { create: false });
    const copy = await SqliteStore.open(join(dir, 'copy.db'), { create: false });
    expect(await snapshot(copy)).toEqual(await snapshot(live));
    await live.close();
    await copy.close();
    await vault.close();
    const copied = await exportOf(`sqlite:${join(dir, 'copy.db')}`, env, ALICE);
    expect(copied).toEqual(await exportOf(url, env, ALICE));
  }, 60_000);
});
