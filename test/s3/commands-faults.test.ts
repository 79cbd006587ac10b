/**
 * Fault injection at each request of each command, through the whole memvault path (validation,
 * path guard, commands, vault, encryption, S3Store) onto an S3Client mocked with
 * aws-sdk-client-mock over a faithful in-memory S3 (fixtures/fake-s3.ts).
 *
 * For every command: run it once on the initial state and count its requests n; then for each k in
 * 1..n, from the same initial state, make the k-th request answer 500, 503 SlowDown, ECONNRESET, a
 * timeout, 412 or 409 ConditionalRequestConflict (the request has no effect), and, for conditional
 * requests, also apply it and lose the answer (a timeout, or the 412 an SDK retry meets after its
 * first attempt landed). After each run:
 * - the command succeeded, or returned a clear error: a typed code, no stack, no bucket, no key,
 *   nothing of the injected error's text;
 * - the store holds the old or the new state, compared path by path on decrypted contents. A
 *   single-file edit, create, file delete and view hold exactly one of the two; a rename (file or
 *   directory) and a directory delete hold each file whole at its old place, its new place, or both
 *   (the README's promise), and running the command again completes them.
 *
 * The mock replaces the client's send(), so the SDK's retry middleware does not run: a single 500
 * is a failed request here (real retries: test/s3/retry.test.ts).
 */
import { randomBytes } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { createVault, type Vault } from '../../src/index.js';
import type { CommandResult } from '../../src/pipeline/context.js';
import { createS3Store, type ConditionChecks } from '../../src/store/s3.js';
import { RESERVED_DIR } from '../../src/tool/commands/tree.js';
import { runStoreContract } from '../store/contract.js';
import { FakeS3, s3Error, type FakeObject, type RequestInfo } from './fixtures/fake-s3.js';

const BUCKET = 'bucket-name-that-must-not-leak';
const PREFIX = 'prefix-that-must-not-leak';
const U = 'fault-user';
const masterKey = randomBytes(32).toString('base64');

type State = Map<string, string>;

interface Fault {
  label: string;
  /** Whether the request is applied before the error is answered (a lost answer). */
  applied: boolean;
  /** Only for requests that carry a condition. */
  conditionalOnly?: boolean;
  error(): Error;
}

/** The injected errors carry the bucket and a key in their text, as real SDK errors do. */
const leakyText = `${BUCKET}/${PREFIX}/some-key`;
const FAULTS: Fault[] = [
  {
    label: '500 InternalError',
    applied: false,
    error: () => s3Error('InternalError', 500, `We encountered an internal error (${leakyText})`),
  },
  {
    label: '503 SlowDown',
    applied: false,
    error: () => s3Error('SlowDown', 503, `Please reduce your request rate (${leakyText})`),
  },
  {
    label: 'ECONNRESET',
    applied: false,
    error: () => Object.assign(new Error(`read ECONNRESET http://10.1.2.3/${leakyText}`), { code: 'ECONNRESET' }),
  },
  {
    label: 'timeout',
    applied: false,
    error: () => Object.assign(new Error(`Request to ${leakyText} timed out`), { name: 'TimeoutError' }),
  },
  {
    label: '412 PreconditionFailed',
    applied: false,
    error: () => s3Error('PreconditionFailed', 412, `At least one of the pre-conditions failed (${leakyText})`),
  },
  {
    label: '409 ConditionalRequestConflict',
    applied: false,
    error: () => s3Error('ConditionalRequestConflict', 409, `A conflicting operation occurred (${leakyText})`),
  },
  {
    label: 'applied, then timeout',
    applied: true,
    conditionalOnly: true,
    error: () => Object.assign(new Error(`Request to ${leakyText} timed out`), { name: 'TimeoutError' }),
  },
  {
    label: 'applied, then 412 (SDK retry met its own write)',
    applied: true,
    conditionalOnly: true,
    error: () => s3Error('PreconditionFailed', 412, leakyText),
  },
];

const INITIAL: Record<string, string> = {
  '/memories/notes.md': 'alpha\nbeta\ngamma\n',
  '/memories/other.md': 'other file\n',
  '/memories/dir/a.md': 'file a\n',
  '/memories/dir/b.md': 'file b\n',
  '/memories/dir/sub/c.md': 'file c\n',
};

interface Case {
  name: string;
  input: Record<string, unknown>;
  /** 'atomic': old or new state as a whole; 'per-file': each file at old, new place or both. */
  kind: 'atomic' | 'per-file';
  /** For renames: source path prefix -> destination path prefix (each file must survive somewhere). */
  move?: { from: string; to: string };
}

const CASES: Case[] = [
  { name: 'view file', input: { command: 'view', path: '/memories/notes.md' }, kind: 'atomic' },
  { name: 'view directory', input: { command: 'view', path: '/memories/dir' }, kind: 'atomic' },
  {
    name: 'create',
    input: { command: 'create', path: '/memories/dir/new.md', file_text: 'new file\n' },
    kind: 'atomic',
  },
  {
    name: 'create (overwrite)',
    input: { command: 'create', path: '/memories/other.md', file_text: 'replaced\n' },
    kind: 'atomic',
  },
  {
    name: 'str_replace',
    input: { command: 'str_replace', path: '/memories/notes.md', old_str: 'beta', new_str: 'BETA' },
    kind: 'atomic',
  },
  {
    name: 'insert',
    input: { command: 'insert', path: '/memories/notes.md', insert_line: 1, insert_text: 'inserted' },
    kind: 'atomic',
  },
  { name: 'delete file', input: { command: 'delete', path: '/memories/other.md' }, kind: 'atomic' },
  { name: 'delete directory', input: { command: 'delete', path: '/memories/dir' }, kind: 'per-file' },
  {
    name: 'rename file',
    input: { command: 'rename', old_path: '/memories/notes.md', new_path: '/memories/moved/notes.md' },
    kind: 'per-file',
    move: { from: '/memories/notes.md', to: '/memories/moved/notes.md' },
  },
  {
    name: 'rename directory',
    input: { command: 'rename', old_path: '/memories/dir', new_path: '/memories/dir2' },
    kind: 'per-file',
    move: { from: '/memories/dir', to: '/memories/dir2' },
  },
];

/** A vault over a fresh S3Store on the fake's mocked client (a fresh key cache: the key load counts too). */
async function openVault(fake: FakeS3, conditionChecks: ConditionChecks): Promise<Vault> {
  return createVault({
    store: createS3Store({ url: `s3://${BUCKET}/${PREFIX}`, s3: fake.client, conditionChecks }),
    encryption: { masterKey },
  });
}

/** The user's files, decrypted, by path (memvault's reserved bookkeeping directory left out). */
async function decryptedState(vault: Vault): Promise<State> {
  const files = await vault.files(U);
  const state: State = new Map();
  for await (const file of files.listFiles('/memories')) {
    if (file.path.startsWith(`${RESERVED_DIR}/`)) continue;
    const read = await files.read(file.path);
    if (read) state.set(file.path, Buffer.from(read.data).toString('utf8'));
  }
  return state;
}

/** Open rename journals (memvault's bookkeeping while a directory rename is under way). */
async function journalEntries(vault: Vault): Promise<string[]> {
  const entries: string[] = [];
  for await (const file of (await vault.files(U)).listFiles(`${RESERVED_DIR}/renames`)) entries.push(file.path);
  return entries;
}

function expectClearError(result: CommandResult, fake: FakeS3, context: string): void {
  expect(typeof result.content, context).toBe('string');
  const text = result.content as string;
  expect(result.code, `${context}: ${text}`).toBeDefined();
  expect(result.code, `${context}: ${text}`).not.toBe('INTERNAL');
  expect(text, context).not.toMatch(/\n\s+at |node_modules|\/work\/|\/tmp\//);
  for (const secret of [BUCKET, PREFIX, 'some-key', '10.1.2.3', 'fake-secret', 'AKIDFAKE'])
    expect(text, context).not.toContain(secret);
  for (const key of fake.objects.keys()) expect(text, context).not.toContain(key.slice(PREFIX.length + 1));
}

function movedPath(path: string, move: { from: string; to: string }): string | undefined {
  if (path === move.from) return move.to;
  if (path.startsWith(`${move.from}/`)) return move.to + path.slice(move.from.length);
  return undefined;
}

function describeState(state: State): string {
  return JSON.stringify(Object.fromEntries(state));
}

function expectOldOrNew(state: State, old: State, next: State, c: Case, context: string): void {
  if (c.kind === 'atomic') {
    const s = describeState(state);
    expect([describeState(old), describeState(next)], `${context}: ${s}`).toContain(s);
    return;
  }
  // Per path: what it held before or what it holds after the command; nothing else anywhere.
  for (const path of new Set([...state.keys(), ...old.keys(), ...next.keys()])) {
    const allowed = new Set([old.get(path), next.get(path)]);
    expect(allowed.has(state.get(path)), `${context}: ${path} holds ${JSON.stringify(state.get(path))}`).toBe(true);
  }
  // A moved file is whole at its old place, its new place or both: never lost.
  if (c.move) {
    for (const path of old.keys()) {
      const target = movedPath(path, c.move);
      if (target) expect(state.has(path) || state.has(target), `${context}: ${path} lost`).toBe(true);
    }
  }
}

// The fake is only as good as its semantics: it must pass the adapter contract (through S3Store, in
// 'native' mode, i.e. with every condition left to the fake) like RGW and the other stores do.
runStoreContract('S3Store over the in-memory fake S3 of the fault tests', async () => {
  const fake = new FakeS3(BUCKET);
  const store = createS3Store({ url: `s3://${BUCKET}`, s3: fake.client, conditionChecks: 'native' });
  return { store, cleanup: () => store.close() };
});

// Both condition modes: the fake enforces every condition, as AWS does, so 'native' is sound here.
describe.each(['check-first', 'native'] as const)(
  'each command, with a fault at each of its requests (mocked S3, %s)',
  (mode) => {
    const tally = { runs: 0, failed: 0 };
    afterAll(() => {
      console.info(
        `[commands-faults ${mode}] ${tally.runs} runs with one injected fault, ${tally.failed} of them answered with an error`,
      );
    });

    it.each(CASES)(
      '$name: succeeds or fails clearly, and leaves the old or the new state',
      { timeout: 120_000 },
      async (c) => {
        const fake = new FakeS3(BUCKET);
        const setup = await openVault(fake, mode);
        for (const [path, text] of Object.entries(INITIAL))
          expect((await setup.run(U, { command: 'create', path, file_text: text })).isError).toBe(false);
        const old = await decryptedState(setup);
        await setup.close();
        const initial: Map<string, FakeObject> = fake.save();

        // The clean run: the new state and the number of requests the command makes.
        const clean = await openVault(fake, mode);
        fake.resetCount();
        const cleanResult = await clean.run(U, c.input);
        const n = fake.requests;
        expect(cleanResult.isError, JSON.stringify(cleanResult.content)).toBe(false);
        const next = await decryptedState(clean);
        await clean.close();
        expect(n).toBeGreaterThan(0);
        if (c.input.command !== 'view') expect(describeState(next)).not.toBe(describeState(old));

        let failures = 0;
        let injected = 0;
        for (let k = 1; k <= n; k++) {
          for (const fault of FAULTS) {
            fake.restore(initial);
            const vault = await openVault(fake, mode);
            let fired = false;
            const hits = (r: RequestInfo): boolean => r.n === k && (!fault.conditionalOnly || r.conditional);
            fake.hook = fault.applied
              ? {
                  after: (r) => {
                    if (hits(r)) {
                      fired = true;
                      throw fault.error();
                    }
                  },
                }
              : {
                  before: (r) => {
                    if (hits(r)) {
                      fired = true;
                      throw fault.error();
                    }
                  },
                };
            fake.resetCount();
            const result = await vault.run(U, c.input);
            fake.hook = undefined;
            if (!fired) {
              await vault.close();
              continue; // a conditional-only fault where request k carries no condition
            }
            injected += 1;
            tally.runs += 1;
            const context = `${c.name}, request ${k} of ${n}: ${fault.label}`;
            const state = await decryptedState(vault);
            if (result.isError) {
              failures += 1;
              tally.failed += 1;
              expectClearError(result, fake, context);
              expectOldOrNew(state, old, next, c, context);
              // Running the command again completes it. Not needed when every file is already in place
              // and no journal is open (the failed request was a file rename's last and had landed:
              // the source is rightly gone, and renaming it again would say so).
              if (
                c.kind === 'per-file' &&
                (describeState(state) !== describeState(next) || (await journalEntries(vault)).length > 0)
              ) {
                const again = await vault.run(U, c.input);
                expect(again, `${context}: again`).toMatchObject({ isError: false });
                expect(describeState(await decryptedState(vault)), `${context}: again`).toBe(describeState(next));
              }
            } else {
              // A success means the command's whole effect is there.
              expect(describeState(state), context).toBe(describeState(next));
            }
            // Once the command has succeeded (at first or when run again), no rename journal is left.
            expect(await journalEntries(vault), context).toEqual([]);
            await vault.close();
          }
        }
        // Every fault kind was injected at every request (the conditional-only ones where they apply).
        expect(injected).toBeGreaterThanOrEqual(n * 6);
        // Reads and single writes cannot absorb an outage: some of these faults must surface.
        expect(failures).toBeGreaterThan(0);
      },
    );
  },
);
