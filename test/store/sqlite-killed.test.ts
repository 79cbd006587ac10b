/**
 * kill -9 at every step of a directory rename and of a directory delete on the SQLite store: each
 * runs as one transaction, so the process killed before any write, between two, or before its
 * commit leaves every file whole at its old place; one that finished leaves every file at its new
 * place (or none, deleted). There is no journal, no fence marker, nothing to resume, and the next
 * command sees a consistent tree. kill -9 at every write of a re-key (files re-sealed in place) and
 * of a migration into another SQLite file: every file reads as before, and running it again finishes.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { copyFile, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createVault } from '../../src/index.js';
import { FENCE_METADATA } from '../../src/store/fence.js';
import { DEPLOYMENT_RECORD_KEY } from '../../src/store/layout.js';
import { listAll } from '../../src/store/port.js';
import { SqliteStore } from '../../src/store/sqlite.js';
import { mapLimit } from '../../src/util/concurrency.js';

const run = promisify(execFile);
const worker = fileURLToPath(new URL('./fixtures/sqlite-kill-worker.ts', import.meta.url));
const tsx = fileURLToPath(new URL('../../node_modules/.bin/tsx', import.meta.url));
const USER = 'kill-user';
const FILES: Record<string, string> = { 'a.md': 'alpha\n', 'b.md': 'bravo\n', 'sub/c.md': 'charlie\n' };

let dir: string;
let keyFile: string;
/** A store with /memories/src holding FILES, closed (checkpointed): each kill point starts from a copy. */
let template: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'memvault-sqlite-kill-'));
  keyFile = join(dir, 'master.key');
  await writeFile(keyFile, randomBytes(32).toString('base64'), { mode: 0o600 });
  template = join(dir, 'template.db');
  const vault = await createVault({
    store: `sqlite:${template}`,
    encryption: { masterKeyFile: keyFile },
    history: true,
  });
  for (const [name, text] of Object.entries(FILES))
    expect((await vault.run(USER, { command: 'create', path: `/memories/src/${name}`, file_text: text })).isError).toBe(
      false,
    );
  await vault.close();
});
afterAll(() => rm(dir, { recursive: true, force: true }));

/**
 * Runs the worker on a fresh copy of the template (or again on `again`, the database a killed run
 * left); resolves with its report, or null when it was killed.
 */
async function runKilled(
  op: string,
  killAt: number,
  again?: string,
): Promise<{ db: string; report: { writes: number; isError: boolean } | null }> {
  const db = again ?? join(dir, `${op}-${killAt}.db`);
  if (again === undefined) await copyFile(template, db);
  try {
    const { stdout } = await run(tsx, [worker, db, keyFile, op, String(killAt)], { timeout: 60_000 });
    return { db, report: JSON.parse(stdout) as { writes: number; isError: boolean } };
  } catch (error) {
    // Killed: tsx (the launcher) passes the signal on as its exit status, 128 + 9.
    const { signal, code } = error as { signal?: string | null; code?: number };
    expect(signal === 'SIGKILL' || code === 137, String(error)).toBe(true);
    return { db, report: null };
  }
}

/** The user's files, path -> text, and whether anything but files and their history is stored. */
async function treeOf(db: string): Promise<Record<string, string>> {
  const store = await SqliteStore.open(db, { create: false });
  for await (const object of listAll(store, '')) {
    const stored = await store.get(object.key);
    expect(stored?.metadata[FENCE_METADATA], 'a fence marker').toBeUndefined();
  }
  const vault = await createVault({ store, encryption: { masterKeyFile: keyFile }, history: true });
  const files = await vault.files(USER);
  const tree: Record<string, string> = {};
  for await (const file of files.listFiles('/memories'))
    tree[file.path] = Buffer.from((await files.read(file.path))!.data).toString('utf8');
  // Nothing to resume: the next command runs at once and sees the same tree.
  expect((await vault.run(USER, { command: 'view', path: '/memories' })).isError).toBe(false);
  await vault.close();
  await store.close();
  return tree;
}

const at = (place: string): Record<string, string> =>
  Object.fromEntries(Object.entries(FILES).map(([name, text]) => [`/memories/${place}/${name}`, text]));

describe('kill -9 at every step of a directory rename and delete on SQLite', () => {
  for (const op of ['rename', 'delete'])
    it(`${op}: each file whole at its old place until the commit, at its new place after`, async () => {
      const full = await runKilled(op, 0);
      expect(full.report).not.toBeNull();
      const writes = full.report!.writes;
      expect(writes).toBeGreaterThanOrEqual(Object.keys(FILES).length * (op === 'rename' ? 2 : 1));
      expect(await treeOf(full.db)).toEqual(op === 'rename' ? at('dst') : {});
      const killed = await mapLimit(
        Array.from({ length: writes }, (_, i) => i + 1),
        2,
        (killAt) => runKilled(op, killAt),
      );
      for (const [i, { db, report }] of killed.entries()) {
        expect(report, `killed before write ${i + 1}`).toBeNull();
        expect(await treeOf(db), `killed before write ${i + 1}`).toEqual(at('src'));
      }
    }, 120_000);
});

describe('kill -9 at every write of a re-key and of a migration on SQLite', () => {
  it('rekey: every file whole (old or new key) at every kill point, the next command runs, a rerun finishes', async () => {
    const full = await runKilled('rekey', 0);
    expect(full.report?.isError).toBe(false);
    const writes = full.report!.writes;
    expect(writes).toBeGreaterThanOrEqual(Object.keys(FILES).length * 2); // each file and its kept version
    expect(await treeOf(full.db)).toEqual(at('src'));
    const killed = await mapLimit(
      Array.from({ length: writes }, (_, i) => i + 1),
      2,
      (killAt) => runKilled('rekey', killAt),
    );
    for (const [i, { db, report }] of killed.entries()) {
      expect(report, `killed before write ${i + 1}`).toBeNull();
      expect(await treeOf(db), `killed before write ${i + 1}`).toEqual(at('src'));
    }
    // Run again after the kill that left the most to do and after the last one: each finishes.
    for (const { db } of [killed[0]!, killed[killed.length - 1]!]) {
      expect((await runKilled('rekey', 0, db)).report?.isError).toBe(false);
      expect(await treeOf(db)).toEqual(at('src'));
    }
  }, 120_000);

  it('migrate: a destination killed part-way holds no deployment record; a rerun finishes and verifies, every file whole', async () => {
    const full = await runKilled('migrate', 0);
    const writes = full.report!.writes;
    expect(writes).toBeGreaterThanOrEqual(Object.keys(FILES).length * 2 + 2); // files, versions, key record, deployment
    expect(await treeOf(`${full.db}.to.db`)).toEqual(at('src'));
    const killed = await mapLimit(
      Array.from({ length: writes }, (_, i) => i + 1),
      2,
      (killAt) => runKilled('migrate', killAt),
    );
    for (const [i, { db, report }] of killed.entries()) {
      expect(report, `killed before write ${i + 1}`).toBeNull();
      // The deployment record goes last: a destination without it is never taken for a whole one
      // (every start-up refuses users without a deployment record).
      const destination = await SqliteStore.open(`${db}.to.db`, { create: false });
      expect(await destination.head(DEPLOYMENT_RECORD_KEY), `killed before write ${i + 1}`).toBeNull();
      await destination.close();
      const rerun = await runKilled('migrate', 0, db);
      expect(rerun.report, `rerun after write ${i + 1}`).not.toBeNull();
      expect(await treeOf(`${db}.to.db`), `killed before write ${i + 1}`).toEqual(at('src'));
    }
  }, 120_000);
});
