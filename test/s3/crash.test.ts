/**
 * Crash safety of directory rename and delete over many objects, on a real S3 server (RGW).
 *
 * The S3 store is wrapped so that its k-th request throws (test/faulty-store.ts: the request has no
 * effect, and the command stops there, as if the process died; a batch delete is split into single
 * deletes so that a crash can fall inside it). For every k up to the number of requests a clean run
 * makes: every file must be whole at its old place, its new place or both (a delete: whole or gone),
 * the error must be clear, and running the same command again from a fresh vault (a restarted
 * process) must complete it, leaving no journal behind.
 *
 * Each step works under a prefix of its own, so steps run a few at a time against the server.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { createVault, type Vault } from '../../src/index.js';
import type { CommandResult } from '../../src/pipeline/context.js';
import type { S3Store } from '../../src/store/s3.js';
import { RESERVED_DIR } from '../../src/tool/commands/tree.js';
import { FaultyStore } from '../faulty-store.js';
import { emptyStore, makeS3Store, recordS3SuiteRun, s3Available, s3SkipReason } from './helpers.js';
import { seedSource, textAt } from '../kit/vault.js';

recordS3SuiteRun(import.meta.url);

const U = 'crash-user';
// Every store request of the command is a crash point, so the cost grows with the files (a rename of
// n files makes 4n + 10 requests, each crash point a freshly seeded store). CI runs 8 files (six at
// the top, two one level deeper): every step kind (journal, copy, fence, clean-up, nested directory)
// still crashes at every position of its own, and the run fits CI's budget (12 files took 190 s on
// radosgw, 8 take 115); MEMVAULT_CRASH_FILES=30 (or more) runs the long version.
const FILES = Math.max(3, Number(process.env.MEMVAULT_CRASH_FILES ?? 8));
const TOP_LEVEL = Math.ceil((FILES * 2) / 3);
const PARALLEL_STEPS = 6;
const masterKey = randomBytes(32).toString('base64');
const stores: S3Store[] = [];
let prefixes = 0;

/** FILES files: two thirds at the top of /memories/src, the rest one level deeper, of different sizes. */
const SOURCE: Record<string, string> = Object.fromEntries(
  Array.from({ length: FILES }, (_, i) => {
    const name = i < TOP_LEVEL ? `note-${String(i).padStart(2, '0')}.md` : `sub/deep-${i}.md`;
    return [name, `file ${i}\n${'x'.repeat(i * 37)}\n`];
  }),
);

function freshStore(): S3Store {
  const store = makeS3Store(`crash/${++prefixes}`);
  stores.push(store);
  return store;
}

function openVault(store: FaultyStore | S3Store, options: { restarted?: boolean } = {}): Promise<Vault> {
  // A restarted process knows the crashed one is gone: it resumes its journal at once (by default
  // another instance's journal waits `limits.resumeAfterMs`, as its runner may still be alive).
  return createVault({
    store,
    encryption: { masterKey },
    ...(options.restarted ? { limits: { resumeAfterMs: 0 } } : {}),
  });
}

async function seed(store: S3Store): Promise<void> {
  const vault = await openVault(store);
  await seedSource(vault, U, SOURCE);
  await vault.close();
}

/** Every file of the user, decrypted (reserved bookkeeping included, under its own name). */
async function allFiles(vault: Vault): Promise<Map<string, string>> {
  const files = await vault.files(U);
  const paths: string[] = [];
  for await (const f of files.listFiles('/memories')) paths.push(f.path);
  const texts = await Promise.all(paths.map((p) => textAt(vault, U, p)));
  return new Map(paths.map((p, i) => [p, texts[i]!]));
}

function expectCleanError(result: CommandResult, context: string): void {
  expect(typeof result.content, context).toBe('string');
  expect(result.content as string, context).not.toMatch(/injected|\n\s+at |node_modules|\/work\/|\/tmp\//);
}

/** Runs `step` for k = 1, 2, ... with a few steps in flight, until a step's fault no longer fires. */
async function everyStep(total: number, step: (k: number) => Promise<void>, stride = 1): Promise<void> {
  let next = 1;
  const worker = async (): Promise<void> => {
    while (next <= total) {
      const k = next;
      next += stride;
      await step(k);
    }
  };
  await Promise.all(Array.from({ length: PARALLEL_STEPS }, worker));
}

/** How many store requests the command makes on a clean run (the crash points to try). */
async function requestsOf(input: Record<string, unknown>): Promise<number> {
  const store = freshStore();
  await seed(store);
  const faulty = new FaultyStore(store);
  const vault = await openVault(faulty);
  await vault.run(U, { command: 'view', path: '/memories/keep.md' }); // load the key: not part of the command
  const before = faulty.calls;
  const result = await vault.run(U, input);
  expect(result, JSON.stringify(result.content)).toMatchObject({ isError: false });
  await vault.close();
  return faulty.calls - before;
}

/**
 * One crashed run: a freshly seeded store, a vault whose k-th store request (after the user's key is
 * loaded) throws, and the command run once. The crash must have happened and come back as a clean
 * error; the caller then checks what was left and runs the command again.
 */
async function crashedRun(command: Record<string, unknown>, k: number, total: number) {
  const store = freshStore();
  await seed(store);
  const faulty = new FaultyStore(store);
  const vault = await openVault(faulty);
  await vault.run(U, { command: 'view', path: '/memories/keep.md' });
  faulty.failAt(k);
  const first = await vault.run(U, command);
  faulty.disarm();
  const context = `crash at request ${k} of ${total}`;
  expect(faulty.fired, context).toBe(true);
  // A fault in the clean-up of a fence marker comes after the file moved (or was deleted): the
  // command has done its work and says so; a leftover marker is no file to anyone. So does one in a
  // history write (history is on by default): the version or tombstone is then missing from the
  // history, the files are whole (docs/versions.md, "Failed commands").
  if (!first.isError) {
    // Only a marker's clean-up (on RGW: the reaping PUT or the DELETE after it) or a kept version's
    // PUT may be absorbed.
    expect(faulty.firedAbsorbably, `${context}: absorbed (${JSON.stringify(faulty.firedOn)})`).toBe(true);
    return { store, vault, context, absorbed: true };
  }
  expectCleanError(first, context);
  return { store, vault, context, absorbed: false };
}

describe.skipIf(!s3Available())(
  `crash at every step of a ${FILES}-file directory command on S3${s3Available() ? '' : ` (skipped: ${s3SkipReason()})`}`,
  () => {
    afterAll(async () => {
      for (const store of stores) {
        await emptyStore(store);
        await store.close();
      }
    }, 300_000);

    it(
      'rename of a directory: each file whole at its old place, its new place or both; running it again completes it',
      { timeout: 1_200_000 },
      async () => {
        const rename = { command: 'rename', old_path: '/memories/src', new_path: '/memories/dst' };
        const total = await requestsOf(rename);
        // Journal, a read and a write per file, a fence (PUT If-Match) and its clean-up per file, the journal's delete.
        expect(total).toBeGreaterThanOrEqual(3 * FILES + 4);
        let failedRuns = 0;
        let absorbedRuns = 0;
        await everyStep(total, async (k) => {
          const { store, vault, context, absorbed } = await crashedRun(rename, k, total);
          if (absorbed) {
            absorbedRuns += 1;
            const done = await allFiles(vault);
            expect(done, `${context}: absorbed`).toEqual(
              new Map([
                ['/memories/keep.md', 'not involved\n'],
                ...Object.entries(SOURCE).map(([name, text]) => [`/memories/dst/${name}`, text] as [string, string]),
              ]),
            );
            await vault.close();
            return;
          }
          failedRuns += 1;

          const state = await allFiles(vault);
          for (const [name, text] of Object.entries(SOURCE)) {
            const old = state.get(`/memories/src/${name}`);
            const moved = state.get(`/memories/dst/${name}`);
            expect(old !== undefined || moved !== undefined, `${context}: ${name} lost`).toBe(true);
            if (old !== undefined) expect(old, `${context}: ${name} at its old place`).toBe(text);
            if (moved !== undefined) expect(moved, `${context}: ${name} at its new place`).toBe(text);
          }
          expect(state.get('/memories/keep.md'), context).toBe('not involved\n');
          const unexpected = [...state.keys()].filter(
            (p) =>
              !p.startsWith('/memories/src/') &&
              !p.startsWith('/memories/dst/') &&
              p !== '/memories/keep.md' &&
              !p.startsWith(`${RESERVED_DIR}/renames/`),
          );
          expect(unexpected, context).toEqual([]);
          await vault.close();

          // A restarted process runs the same rename again: it completes.
          const restarted = await openVault(store, { restarted: true });
          const again = await restarted.run(U, rename);
          expect(again, `${context}: again`).toMatchObject({ isError: false });
          const after = await allFiles(restarted);
          const expected = new Map([
            ['/memories/keep.md', 'not involved\n'],
            ...Object.entries(SOURCE).map(([name, text]) => [`/memories/dst/${name}`, text] as [string, string]),
          ]);
          expect(after, `${context}: after the rerun`).toEqual(expected);
          const listing = await restarted.run(U, { command: 'view', path: '/memories' });
          expect(listing.content as string).not.toContain('.memvault');
          await restarted.close();
        });
        expect(failedRuns + absorbedRuns).toBe(total);
        // Files move eight at once, so which request is the k-th varies from run to run: the number of
        // crash points that fell on a clean-up is not fixed, but each absorbed one was a clean-up (above).
        expect(absorbedRuns).toBeLessThan(total);
        console.info(
          `[crash] directory rename of ${FILES} files: crashed at each of its ${total} store requests (${absorbedRuns} in a marker clean-up or a history write, absorbed), every rerun completed`,
        );
      },
    );

    it(
      'delete of a directory: each file whole or gone; running it again completes it',
      { timeout: 600_000 },
      async () => {
        const remove = { command: 'delete', path: '/memories/src' };
        // The fault wrapper deletes a batch key by key, so that a crash can fall inside a DeleteObjects.
        const total = await requestsOf(remove);
        expect(total).toBeGreaterThanOrEqual(FILES + 2);
        console.info(`[crash] directory delete of ${FILES} files: crashing at each of its ${total} store requests`);
        await everyStep(total, async (k) => {
          const { store, vault, context, absorbed } = await crashedRun(remove, k, total);
          const state = await allFiles(vault);
          if (absorbed) {
            expect([...state.keys()], `${context}: absorbed`).toEqual(['/memories/keep.md']);
            await vault.close();
            return;
          }
          for (const [name, text] of Object.entries(SOURCE)) {
            const left = state.get(`/memories/src/${name}`);
            if (left !== undefined) expect(left, `${context}: ${name}`).toBe(text);
          }
          expect(state.get('/memories/keep.md'), context).toBe('not involved\n');
          expect(state.size, context).toBeGreaterThan(1); // the crash left something to finish
          await vault.close();

          const restarted = await openVault(store, { restarted: true });
          expect(await restarted.run(U, remove), `${context}: again`).toMatchObject({ isError: false });
          expect([...(await allFiles(restarted)).keys()], `${context}: after the rerun`).toEqual(['/memories/keep.md']);
          await restarted.close();
        });
      },
    );

    it(
      'delete of a directory while creates run, then creates at its paths: what the crash left never breaks reads, listings, the history or the export',
      { timeout: 600_000 },
      async () => {
        const remove = { command: 'delete', path: '/memories/src' };
        const total = await requestsOf(remove);
        const again = Object.keys(SOURCE).map((name) => `/memories/src/${name}`);
        await everyStep(
          total,
          async (k) => {
            const store = freshStore();
            await seed(store);
            const faulty = new FaultyStore(store);
            const vault = await openVault(faulty);
            const racing = await openVault(store);
            await vault.run(U, { command: 'view', path: '/memories/keep.md' });
            await racing.run(U, { command: 'view', path: '/memories/keep.md' });
            faulty.failAt(k);
            // Another process creates the names while the delete runs and crashes.
            await Promise.all([
              vault.run(U, remove),
              ...again.map((path) => racing.run(U, { command: 'create', path, file_text: `racing ${path}\n` })),
            ]);
            faulty.disarm();
            await vault.close();
            await racing.close();
            const context = `crash at request ${k} of ${total}`;
            const reader = await openVault(store, { restarted: true });
            for (const path of again)
              expect(
                String((await reader.run(U, { command: 'view', path })).content),
                `${context}: ${path}`,
              ).not.toMatch(/integrity|did not open|older version/i);
            await reader.close();
            // Another process makes every name again over whatever the crash left (a file, a fence marker, nothing).
            const creator = await openVault(store, { restarted: true });
            for (const path of again)
              expect(
                await creator.run(U, { command: 'create', path, file_text: `again ${path}\n` }),
                `${context}: create ${path}`,
              ).toMatchObject({
                isError: false,
              });
            const state = await allFiles(creator);
            for (const path of again) expect(state.get(path), `${context}: ${path}`).toBe(`again ${path}\n`);
            for (const path of again)
              expect((await creator.history(U, path)).versions[0]?.size, `${context}: history of ${path}`).toBe(
                `again ${path}\n`.length,
              );
            const exported = await creator.exportUser(U);
            exported.stream.resume();
            await expect(exported.done, `${context}: export`).resolves.toMatchObject({ files: FILES + 1 });
            // The delete run again takes them; the export still works.
            expect(await creator.run(U, remove), `${context}: delete again`).toMatchObject({ isError: false });
            expect([...(await allFiles(creator)).keys()], `${context}: after the rerun`).toEqual(['/memories/keep.md']);
            const last = await creator.exportUser(U);
            last.stream.resume();
            await expect(last.done, `${context}: export after`).resolves.toMatchObject({ files: 1 });
            await creator.close();
          },
          3, // every third crash point: the delete case above crashes at every one; this one adds the racing creates
        );
      },
    );
  },
);
