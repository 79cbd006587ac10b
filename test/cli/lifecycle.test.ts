/**
 * Forget, export, key rotation and the sweeper as audited API on the vault
 * (exported from the package root), and the CLI commands that call them.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { text } from 'node:stream/consumers';
import { pathToFileURL } from 'node:url';
import tar from 'tar-stream';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';

// CLI processes (tsx) are slow to start on a loaded machine.
vi.setConfig({ testTimeout: 180_000 });
import {
  createVault,
  EXPORT_MANIFEST_NAME,
  MemoryStore,
  type ExportManifest,
  type ObjectStore,
  type Vault,
} from '../../src/index.js';
import { collectFileChains, verifyChains } from '../../src/verify.js';
import { createLocalKeyProvider } from '../../src/crypto/local-key.js';
import { FaultyStore } from '../faulty-store.js';
import { ONE_LINE, runCli } from './helpers.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'memvault-lifecycle-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const KEY = new Uint8Array(randomBytes(32));

async function vaultWithAudit(
  store: ObjectStore = new MemoryStore(),
  masterKey = KEY,
): Promise<{ vault: Vault; file: string }> {
  const file = join(dir, `${randomBytes(4).toString('hex')}.jsonl`);
  return {
    vault: await createVault({ store, encryption: { masterKey }, audit: { file }, expiry: { ttlDays: 30 } }),
    file,
  };
}

const records = (file: string) =>
  readFileSync(file, 'utf8')
    .trimEnd()
    .split('\n')
    .map((l) => JSON.parse(l) as Record<string, unknown>);

async function untar(stream: NodeJS.ReadableStream): Promise<Map<string, string>> {
  const extract = tar.extract();
  const entries = new Map<string, string>();
  extract.on('entry', (header, body, next) => {
    void text(body).then((content) => {
      entries.set(header.name, content);
      next();
    });
  });
  stream.pipe(extract);
  await new Promise((resolve, reject) => extract.on('finish', resolve).on('error', reject));
  return entries;
}

describe('vault.exportUser', () => {
  it('streams a tar of the files plus manifest.json (paths, sizes, times), and audits it', async () => {
    const { vault, file } = await vaultWithAudit();
    await vault.run('ann', { command: 'create', path: '/memories/notes/a.md', file_text: 'alpha' });
    await vault.run('ann', { command: 'create', path: '/memories/b.md', file_text: 'bravo!' });
    const exported = await vault.exportUser('ann', { actor: 'ticket-42' });
    const [entries, result] = await Promise.all([untar(exported.stream), exported.done]);
    expect(result).toMatchObject({ files: 2, bytes: 11 });
    expect(entries.get('memories/notes/a.md')).toBe('alpha');
    const manifest = JSON.parse(entries.get(EXPORT_MANIFEST_NAME)!) as ExportManifest;
    expect(manifest).toMatchObject({
      format: 'memvault-user-export',
      version: 2,
      uid: exported.uid,
      files: 2,
      bytes: 11,
      versions: 2,
    });
    expect(manifest.entries.map((e) => [e.path, e.size]).sort()).toEqual([
      ['/memories/b.md', 6],
      ['/memories/notes/a.md', 5],
    ]);
    expect(manifest.entries.every((e) => !Number.isNaN(Date.parse(e.modified)))).toBe(true);
    await vault.close();
    const record = records(file).find((r) => r['type'] === 'export');
    expect(record).toMatchObject({ actor: 'ticket-42', outcome: 'ok', counts: { objects: 2, bytes: 11, versions: 2 } });
    // The record names the user by their audit pseudonym (keyed by their own key), not the store uid.
    expect(record!['uid']).toMatch(/^[A-Za-z0-9_-]{32}$/);
    expect(record!['uid']).not.toBe(exported.uid);
    expect((await verifyChains(await collectFileChains([file]))).ok).toBe(true);
  });

  it('includes the file history: every kept version, a deleted file and its tombstone included (history is on by default)', async () => {
    const { vault } = await vaultWithAudit();
    await vault.run('kim', { command: 'create', path: '/memories/a.md', file_text: 'one\n' });
    await vault.run('kim', { command: 'str_replace', path: '/memories/a.md', old_str: 'one', new_str: 'two' });
    await vault.run('kim', { command: 'create', path: '/memories/gone.md', file_text: 'bye\n' });
    await vault.run('kim', { command: 'delete', path: '/memories/gone.md' });
    const exported = await vault.exportUser('kim');
    const [entries, result] = await Promise.all([untar(exported.stream), exported.done]);
    expect(result).toMatchObject({ files: 1, versions: 4 });
    const manifest = JSON.parse(entries.get(EXPORT_MANIFEST_NAME)!) as ExportManifest;
    const byPath = (path: string) => manifest.history.filter((h) => h.path === path);
    expect(byPath('/memories/a.md').map((h) => [h.actor, h.size])).toEqual([
      ['model', 4],
      ['model', 4],
    ]);
    // Each content version is in the archive under history/, at the entry the manifest names.
    const contents = byPath('/memories/a.md').map((h) => entries.get(h.entry!));
    expect(contents).toEqual(['two\n', 'one\n']);
    expect(byPath('/memories/a.md')[0]!.entry).toBe(`history/memories/a.md/@${byPath('/memories/a.md')[0]!.seq}`);
    // The deleted file: its content version and its tombstone (no content entry).
    expect(byPath('/memories/gone.md').map((h) => [h.end ?? 'content', h.size, h.entry === undefined])).toEqual([
      ['deleted', 0, true],
      ['content', 4, false],
    ]);
    expect(entries.get('memories/gone.md')).toBeUndefined();
    expect(manifest.history.every((h) => !Number.isNaN(Date.parse(h.time)))).toBe(true);
    await vault.close();
  });

  it('a kept version whose record does not open stops the export (INTEGRITY), like a file', async () => {
    const store = new MemoryStore();
    const { vault } = await vaultWithAudit(store);
    await vault.run('lea', { command: 'create', path: '/memories/a.md', file_text: 'one\n' });
    const versionKey = store.keys().find((k) => k.includes('/v/'))!;
    const version = (await store.get(versionKey))!;
    await store.put(versionKey, version.body, { metadata: {} });
    const exported = await vault.exportUser('lea');
    exported.stream.resume();
    await expect(exported.done).rejects.toMatchObject({ code: 'INTEGRITY' });
    await vault.close();
  });

  it("a kept version carrying another version's record (one that describes another body) stops the export too", async () => {
    const store = new MemoryStore();
    const { vault } = await vaultWithAudit(store);
    await vault.run('max', { command: 'create', path: '/memories/a.md', file_text: 'one\n' });
    await vault.run('max', { command: 'str_replace', path: '/memories/a.md', old_str: 'one', new_str: 'two' });
    const [newer, older] = store.keys().filter((k) => k.includes('/v/'));
    const newerObject = (await store.get(newer!))!;
    const olderObject = (await store.get(older!))!;
    // The older body under the newer record: it opens for this path, but its hash is another body's.
    await store.put(older!, olderObject.body, { metadata: newerObject.metadata });
    const exported = await vault.exportUser('max');
    exported.stream.resume();
    await expect(exported.done).rejects.toMatchObject({ code: 'INTEGRITY' });
    await vault.close();
  });

  it('an unknown user is NOT_FOUND before anything is streamed, and that is audited too', async () => {
    const { vault, file } = await vaultWithAudit();
    await expect(vault.exportUser('nobody')).rejects.toMatchObject({
      code: 'NOT_FOUND',
      message: expect.stringMatching(/nothing was exported/),
    });
    await vault.close();
    expect(records(file).find((r) => r['type'] === 'export')).toMatchObject({ outcome: 'error', code: 'NOT_FOUND' });
  });
});

describe('vault.forgetUser', () => {
  it('erases the user and records who asked, how many objects, the outcome', async () => {
    const { vault, file } = await vaultWithAudit();
    for (const name of ['a', 'b', 'c'])
      await vault.run('bob', { command: 'create', path: `/memories/${name}.md`, file_text: name });
    const result = await vault.forgetUser('bob', { actor: 'dpo' });
    // Three files and the version each keeps (history is on by default).
    expect(result).toMatchObject({ keyDeleted: true, objectsDeleted: 6 });
    expect((await vault.run('bob', { command: 'view', path: '/memories/a.md' })).isError).toBe(true);
    await vault.close();
    const erase = records(file).find((r) => r['type'] === 'erase');
    expect(erase).toMatchObject({ actor: 'dpo', outcome: 'ok', counts: { keys: 1, objects: 6 } });
    // The audit pseudonym of the erased user, which their command records carry too; never the store uid.
    expect(erase!['uid']).not.toBe(result.uid);
    expect(records(file).filter((r) => r['uid'] === erase!['uid']).length).toBeGreaterThan(1);
  });

  it('a failure part way is audited with what was done so far', async () => {
    const store = new FaultyStore(new MemoryStore());
    const { vault, file } = await vaultWithAudit(store);
    await vault.run('cy', { command: 'create', path: '/memories/a.md', file_text: 'a' });
    store.failAt(5); // head, delete and head of the key, the listing, then the batch delete fails
    await expect(vault.forgetUser('cy')).rejects.toBeDefined();
    await vault.close();
    const record = records(file).find((r) => r['type'] === 'erase');
    expect(record).toMatchObject({ outcome: 'error', counts: { keys: 1 } });
    expect(record!['code']).toEqual(expect.any(String));
  });
});

describe('vault.rotateKeys and vault.expire', () => {
  it('rotation re-wraps every record and is audited; the vault keeps working under the new key', async () => {
    const store = new MemoryStore();
    const { vault, file } = await vaultWithAudit(store);
    await vault.run('dee', { command: 'create', path: '/memories/a.md', file_text: 'kept' });
    const next = new Uint8Array(randomBytes(32));
    const result = await vault.rotateKeys({ to: await createLocalKeyProvider(next), actor: 'ops' });
    expect(result).toMatchObject({ total: 2, rewrapped: 2 });
    await vault.close();
    expect(records(file).find((r) => r['type'] === 'rotate')).toMatchObject({
      actor: 'ops',
      outcome: 'ok',
      counts: { records: 2, rewrapped: 2, skipped: 0 },
    });
    const reopened = await createVault({ store, encryption: { masterKey: next } });
    expect((await reopened.run('dee', { command: 'view', path: '/memories/a.md' })).content).toMatch(/kept/);
    await reopened.close();
  });

  it('expire sweeps with the vault TTL and audits the sweep', async () => {
    const store = new MemoryStore();
    const { vault, file } = await vaultWithAudit(store);
    await vault.run('eve', { command: 'create', path: '/memories/a.md', file_text: 'old' });
    const summary = await vault.expire({
      dryRun: true,
      asOf: new Date(Date.now() + 40 * 86_400_000),
      graceMs: 0,
      actor: 'cron',
    });
    expect(summary).toMatchObject({ dryRun: true, expired: 1, scanned: 1 });
    await expect(vault.expire({ asOf: new Date(Date.now() + 40 * 86_400_000) })).rejects.toMatchObject({
      code: 'CONFIG',
    });
    await vault.close();
    const sweeps = records(file).filter((r) => r['type'] === 'expire');
    expect(sweeps[0]).toMatchObject({ actor: 'cron', outcome: 'ok', counts: { scanned: 1, expired: 1 } });
    expect(sweeps[1]).toMatchObject({ outcome: 'error', code: 'CONFIG' }); // the refused run is on record too
  });

  it('a vault without its own encryption says so instead of pretending', async () => {
    const vault = await createVault({ store: new MemoryStore(), encryption: false });
    await expect(vault.forgetUser('x')).rejects.toMatchObject({ code: 'CONFIG' });
    await vault.close();
  });
});

describe('memvault user export / forget through the API', () => {
  const env = { MEMVAULT_MASTER_KEY: Buffer.from(KEY).toString('base64') };

  it('an unknown user leaves no archive (not even 0 bytes); a missing output directory is a clear error; both audited', async () => {
    const cwd = await mkdtemp(join(dir, 'cli-'));
    const store = pathToFileURL(join(cwd, 'data')).href;
    const auditFile = join(cwd, 'audit.jsonl');
    await runCli(
      ['exec', '--user', 'real', '--store', store, '{"command":"create","path":"/memories/r.md","file_text":"r"}'],
      { cwd, env },
    );
    const unknown = await runCli(
      [
        'user',
        'export',
        '--user',
        'ghost',
        '--store',
        store,
        '--audit-file',
        auditFile,
        '--out',
        join(cwd, 'ghost.tar'),
      ],
      {
        cwd,
        env,
      },
    );
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(ONE_LINE);
    expect(unknown.stderr).toMatch(/no memories are stored for this user/);
    const noDir = await runCli(
      ['user', 'export', '--user', 'real', '--store', store, '--out', join(cwd, 'missing', 'r.tar')],
      { cwd, env },
    );
    expect(noDir.code).toBe(2);
    expect(noDir.stderr).toMatch(/the output directory .*missing does not exist/);
    expect(readdirSync(cwd).filter((n) => n.endsWith('.tar') || n.includes('.partial'))).toEqual([]);
    const ok = await runCli(
      [
        'user',
        'export',
        '--user',
        'real',
        '--store',
        store,
        '--audit-file',
        auditFile,
        '--actor',
        'req-7',
        '--out',
        '-',
      ],
      { cwd, env },
    );
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.stdout).toContain('memories/r.md');
    expect(ok.stdout).toContain('"format": "memvault-user-export"');
    const forgot = await runCli(
      ['user', 'forget', '--user', 'real', '--store', store, '--audit-file', auditFile, '--json'],
      { cwd, env },
    );
    expect(JSON.parse(forgot.stdout)).toMatchObject({ keyDeleted: true, objectsDeleted: 2 }); // the file and its version
    const kinds = records(auditFile)
      .map((r) => [r['type'], r['outcome'], r['actor']])
      .filter(([t]) => t !== 'start');
    expect(kinds).toEqual([
      ['export', 'error', 'cli'],
      ['export', 'ok', 'req-7'],
      ['erase', 'ok', 'cli'],
    ]);
    const verified = await runCli(['audit', 'verify', '--data-store', store, auditFile], { cwd, env });
    expect(verified.code, verified.stderr).toBe(0);
    expect(existsSync(join(cwd, '.memvault'))).toBe(false);
    expect(existsSync(join(cwd, '.memvault.db'))).toBe(false);
  }, 180_000);
});
