/**
 * A directory delete killed (kill -9 of its process) part-way while another instance creates files
 * at its paths, on any store several processes share. Each round kills the delete
 * a little later; then a fresh instance checks that what the crash left never breaks a read, a
 * listing, a file's history or the export, that the delete run again finishes the job, and that the
 * export still works after it.
 */
import { fileURLToPath } from 'node:url';
import { expect } from 'vitest';
import { createVault, type Vault } from '../../src/memvault.js';
import type { ObjectStore } from '../../src/store/port.js';
import { forEachLimit } from '../../src/util/concurrency.js';
import { StoreWrapper } from './stores.js';
import { startWorker } from './worker-process.js';

const masterKey = Buffer.alloc(32, 11).toString('base64');
const USER = 'killed-delete';
const FILES = 40;
const PATHS = Array.from({ length: FILES }, (_, i) => `/memories/src/f${String(i).padStart(2, '0')}.md`);
const worker = fileURLToPath(new URL('./fixtures/command-worker.ts', import.meta.url));
const INTEGRITY = /integrity|did not open|older version|tamper/i;

export interface KilledDeleteTarget {
  /** A fresh store (its own directory or prefix) and its URL, for the worker process to open too. */
  open(): Promise<{ store: ObjectStore; url: string }>;
  /** The worker's environment (S3 settings). */
  env?: NodeJS.ProcessEnv;
}

/** The store as one of several vaults on it sees it: closing that vault leaves it open. */
class Shared extends StoreWrapper {
  override async close(): Promise<void> {}
}

function vaultOf(store: ObjectStore, restarted = false): Promise<Vault> {
  // A restarted instance resumes whatever journal it meets at once (the killed process is gone).
  return createVault({
    store: new Shared(store),
    encryption: { masterKey },
    pii: false,
    ...(restarted ? { limits: { resumeAfterMs: 0 } } : {}),
  });
}

/**
 * Starts the delete in a process of its own; resolves once it has begun. `stopped` resolves when it
 * reached its stop point (`stopAt`, e.g. `fence:30`: see fixtures/command-worker.ts), `finished`
 * when it answered; `kill` reports whether it had answered first.
 */
async function startDelete(
  url: string,
  env: NodeJS.ProcessEnv | undefined,
  stopAt: string,
): Promise<{ kill(): Promise<boolean>; stopped: Promise<void>; finished: Promise<void>; exited: Promise<void> }> {
  const command = JSON.stringify({ command: 'delete', path: '/memories/src' });
  const child = await startWorker(worker, [url, USER, command, stopAt], {
    ready: 'started',
    env: { ...(env ?? process.env), MEMVAULT_TEST_MASTER_KEY: masterKey },
  });
  return {
    stopped: child.printed('stopped'),
    finished: child.printed('finished'),
    exited: child.exited,
    async kill() {
      return (await child.kill()).includes('finished');
    },
  };
}

async function expectReadable(vault: Vault, context: string): Promise<void> {
  await forEachLimit(PATHS, 8, async (path) => {
    const shown = await vault.run(USER, { command: 'view', path });
    expect(String(shown.content), `${context}: view ${path}`).not.toMatch(INTEGRITY);
    await expect(vault.history(USER, path), `${context}: history of ${path}`).resolves.toBeDefined();
  });
  const listing = await vault.run(USER, { command: 'view', path: '/memories' });
  expect(listing.isError, `${context}: listing ${String(listing.content)}`).toBe(false);
  const exported = await vault.exportUser(USER);
  exported.stream.resume();
  await expect(exported.done, `${context}: export`).resolves.toBeDefined();
}

/**
 * One round per stop point (`fence:30`, `version:20`: the delete is killed right after that
 * request landed), while 8 creates at a time go at its paths from another instance. Returns how
 * many deletes were killed part-way (a stop point the delete never reached lets it finish).
 */
export async function killedDeleteRounds(target: KilledDeleteTarget, kills: string[]): Promise<number> {
  let killedPartWay = 0;
  for (const [round, kill] of kills.entries()) {
    const { store, url } = await target.open();
    const seeder = await vaultOf(store);
    await forEachLimit(PATHS, 8, async (path) => {
      expect(await seeder.run(USER, { command: 'create', path, file_text: `seed ${path}\n` })).toMatchObject({
        isError: false,
      });
    });
    await seeder.run(USER, { command: 'create', path: '/memories/keep.md', file_text: 'not involved\n' });
    const creator = await vaultOf(store);
    await creator.run(USER, { command: 'view', path: '/memories' });
    const remove = await startDelete(url, target.env, kill);
    const killed = Promise.race([remove.stopped, remove.finished, remove.exited]).then(() => remove.kill());
    const acknowledged: string[] = [];
    await forEachLimit(PATHS, 8, async (path) => {
      const created = await creator.run(USER, { command: 'create', path, file_text: `racing ${path}\n` });
      if (!created.isError) acknowledged.push(path);
    });
    const finished = await killed;
    if (!finished) killedPartWay += 1;
    const context = `round ${round} (killed after ${kill}${finished ? ', after it finished' : ''})`;
    await creator.close();
    await seeder.close();

    const fresh = await vaultOf(store, true);
    await expectReadable(fresh, `${context}, after the kill`);
    // Every create that answered success is there (the killed delete had begun before them, but a
    // create acknowledged after its fence is a file the delete no longer takes).
    for (const path of acknowledged) {
      const text = String((await fresh.run(USER, { command: 'view', path })).content);
      expect(
        [`racing ${path}`, `seed ${path}`].some((want) => text.includes(want)) || /does not exist/.test(text),
        `${context}: ${path} ${text}`,
      ).toBe(true);
    }
    // The delete run again takes the directory whole; reads, listings and the export still work.
    const again = await fresh.run(USER, { command: 'delete', path: '/memories/src' });
    expect(
      again.isError === false || again.code === 'NOT_FOUND',
      `${context}: delete again ${String(again.content)}`,
    ).toBe(true);
    await expectReadable(fresh, `${context}, after the delete ran again`);
    const left = await fresh.files(USER);
    const paths: string[] = [];
    for await (const file of left.listFiles('/memories')) paths.push(file.path);
    expect(paths, context).toEqual(['/memories/keep.md']);
    // Created again over whatever the crash left (a file, a marker, nothing): every name works.
    await forEachLimit(PATHS, 8, async (path) => {
      expect(
        await fresh.run(USER, { command: 'create', path, file_text: `again ${path}\n` }),
        `${context}: create ${path}`,
      ).toMatchObject({ isError: false });
    });
    await expectReadable(fresh, `${context}, after creating again`);
    const exported = await fresh.exportUser(USER);
    exported.stream.resume();
    await expect(exported.done, `${context}: export`).resolves.toMatchObject({ files: FILES + 1 });
    await fresh.close();
    await store.close();
    console.log(
      `[killed-delete] ${context}: ${acknowledged.length} racing creates acknowledged; reads, listings, histories and the export held`,
    );
  }
  return killedPartWay;
}
