import { ToolError } from '@anthropic-ai/sdk/lib/tools/ToolError';
import fc from 'fast-check';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { INTERNAL_ERROR_MESSAGE } from '../../src/errors.js';
import { createVault } from '../../src/memvault.js';
import { quota } from '../../src/pipeline/quota.js';
import { MemoryStore } from '../../src/store/memory.js';
import { listAll } from '../../src/store/port.js';
import { SqliteStore } from '../../src/store/sqlite.js';
import { COMMAND_NAMES } from '../../src/tool/types.js';
import { userSpaceOf } from './helpers.js';

/**
 * Bad input against the whole chain (validation, path guard, quota, commands): every input gets a
 * result (or, through the handlers, a ToolError), nothing else escapes, nothing hangs, nothing is
 * written outside the user's space, and no answer carries a stack trace or the internal-fault text.
 */
const USER = 'fuzz-user';
const PER_RUN_TIMEOUT_MS = 10_000;

function withinTimeout<T>(promise: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`hung: ${what}`)), PER_RUN_TIMEOUT_MS);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

const HUGE = 'x'.repeat(2_000_000);
const weirdNumber = fc.constantFrom(
  Number.NaN,
  Infinity,
  -Infinity,
  -0,
  1e308,
  -1e308,
  0,
  -1,
  1.5,
  2 ** 53,
  Number.MAX_SAFE_INTEGER + 2,
  Number.MIN_VALUE,
);
const oddString = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 200 }),
  fc.string({ unit: 'grapheme-composite', maxLength: 50 }),
  fc.constantFrom(
    '',
    ' ',
    '\u0000',
    '\ud800',
    '\u202e',
    '../../etc/passwd',
    '/memories',
    '/memories/',
    '/memories/a',
    '/memories/.memvault/x',
    HUGE,
    `/memories/${HUGE}`,
    '/memories/%c0%ae%c0%ae',
  ),
  fc.string({ maxLength: 20 }).map((s) => `/memories/${s}`),
);
const anyValue: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 4, arbitrary: oddString },
  { weight: 2, arbitrary: weirdNumber },
  { weight: 1, arbitrary: fc.integer() },
  { weight: 1, arbitrary: fc.double() },
  { weight: 1, arbitrary: fc.constantFrom(null, undefined, true, false) },
  { weight: 1, arbitrary: fc.array(fc.oneof(weirdNumber, fc.integer(), oddString), { maxLength: 4 }) },
  { weight: 1, arbitrary: fc.anything({ maxDepth: 3 }) },
);
const commandObject = fc.record(
  {
    command: fc.oneof({ weight: 5, arbitrary: fc.constantFrom(...COMMAND_NAMES) }, { weight: 1, arbitrary: anyValue }),
    path: anyValue,
    file_text: anyValue,
    old_str: anyValue,
    new_str: anyValue,
    insert_line: fc.oneof(weirdNumber, fc.integer({ min: -3, max: 5 }), anyValue),
    insert_text: anyValue,
    view_range: fc.oneof(
      fc.tuple(
        fc.oneof(weirdNumber, fc.integer({ min: -2, max: 5 })),
        fc.oneof(weirdNumber, fc.integer({ min: -2, max: 5 })),
      ),
      anyValue,
    ),
    old_path: anyValue,
    new_path: anyValue,
    extra: fc.dictionary(fc.string({ maxLength: 8 }), anyValue, { maxKeys: 3 }),
  },
  { requiredKeys: [] },
);
// Well-formed commands on real paths with odd contents, so that the fuzzer also reaches the
// commands and the store (a random record is rarely a valid create).
const goodPath = fc.constantFrom(
  '/memories/a.md',
  '/memories/dir/b.txt',
  '/memories/dir',
  '/memories',
  '/memories/caf\u00e9.md',
  '/memories/x/y/z.md',
);
const textValue = fc.oneof(oddString, fc.string({ unit: 'grapheme', maxLength: 300 }));
const wellFormed = fc.oneof(
  fc.record({ command: fc.constant('create'), path: goodPath, file_text: textValue }),
  fc.record({
    command: fc.constant('str_replace'),
    path: goodPath,
    old_str: textValue,
    new_str: fc.option(textValue, { nil: undefined }),
  }),
  fc.record({
    command: fc.constant('insert'),
    path: goodPath,
    insert_line: fc.oneof(weirdNumber, fc.integer({ min: -2, max: 10 })),
    insert_text: textValue,
  }),
  fc.record({
    command: fc.constant('view'),
    path: goodPath,
    view_range: fc.option(fc.tuple(fc.integer({ min: -2, max: 10 }), fc.integer({ min: -2, max: 10 })), {
      nil: undefined,
    }),
  }),
  fc.record({ command: fc.constant('rename'), old_path: goodPath, new_path: goodPath }),
  fc.record({ command: fc.constant('delete'), path: goodPath }),
);
const input = fc.oneof(
  { weight: 6, arbitrary: commandObject },
  { weight: 3, arbitrary: wellFormed },
  { weight: 1, arbitrary: fc.anything({ maxDepth: 2 }) },
);

function checkContent(content: unknown): void {
  const text = typeof content === 'string' ? content : JSON.stringify(content);
  expect(text).not.toContain('    at ');
  expect(text).not.toBe(INTERNAL_ERROR_MESSAGE);
}

describe('bad-input fuzzing against the whole chain', () => {
  it('vault.run: every input gets a result, never an internal fault, and writes stay in the user space', async () => {
    const store = new MemoryStore();
    const vault = await createVault({ store, middlewares: [quota({ maxUserBytes: 5_000_000 })] });
    const inUserSpace = await userSpaceOf(USER);
    // Successful creates, counted as they happen: the store itself may be empty at the end (a later
    // delete or rename of the same few paths), so the final key count proves nothing.
    let created = 0;
    await fc.assert(
      fc.asyncProperty(input, async (value) => {
        const result = await withinTimeout(vault.run(USER, value), 'vault.run');
        expect(typeof result.isError).toBe('boolean');
        expect(typeof result.content === 'string' || Array.isArray(result.content)).toBe(true);
        if (result.isError) expect(result.code).not.toBe('INTERNAL');
        checkContent(result.content);
        if (!result.isError && (value as { command?: unknown } | null)?.command === 'create') created += 1;
        // Checked after every command, not only at the end: a stray write later deleted still counts.
        expect(store.keys().filter((key) => !inUserSpace(key))).toEqual([]);
      }),
      { numRuns: 1500 },
    );
    expect(created).toBeGreaterThan(0); // the fuzzer reached the store
  });

  // The same on the SQLite store (one transaction per command): fewer runs, its own database file.
  it('vault.run on the SQLite store: every input gets a result, never an internal fault, writes stay in the user space', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'memvault-fuzz-'));
    const store = await SqliteStore.open(join(dir, 'fuzz.db'));
    // Plain names, as the memory store's run has them (the user space is then known by prefix).
    const vault = await createVault({ store, encryption: false, middlewares: [quota({ maxUserBytes: 5_000_000 })] });
    const inUserSpace = await userSpaceOf(USER);
    const strayKeys = async () => {
      const stray: string[] = [];
      for await (const o of listAll(store, '')) if (!inUserSpace(o.key)) stray.push(o.key);
      return stray;
    };
    let created = 0;
    try {
      await fc.assert(
        fc.asyncProperty(input, async (value) => {
          const result = await withinTimeout(vault.run(USER, value), 'vault.run');
          if (result.isError) expect(result.code).not.toBe('INTERNAL');
          checkContent(result.content);
          if (!result.isError && (value as { command?: unknown } | null)?.command === 'create') created += 1;
          expect(await strayKeys()).toEqual([]);
        }),
        { numRuns: 1000 },
      );
      expect(created).toBeGreaterThan(0);
    } finally {
      await vault.close();
      await store.close();
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('handlers: every input resolves or throws a ToolError, nothing else', async () => {
    const store = new MemoryStore();
    const vault = await createVault({ store, middlewares: [quota()] });
    const handlers = vault.handlers(USER);
    const inUserSpace = await userSpaceOf(USER);
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...COMMAND_NAMES), input, async (method, value) => {
        try {
          const content = await withinTimeout(Promise.resolve(handlers[method](value as never)), `handlers.${method}`);
          checkContent(content);
        } catch (error) {
          expect(error).toBeInstanceOf(ToolError);
          checkContent((error as ToolError).content);
        }
      }),
      { numRuns: 1000 },
    );
    expect(store.keys().filter((key) => !inUserSpace(key))).toEqual([]);
  });

  // Values a JSON tool input cannot carry (BigInt, cycles, throwing getters) are still the input's
  // fault: validation answers INVALID_INPUT instead of throwing.
  it('non-JSON values (BigInt, cycles, throwing getters) get an INVALID_INPUT result too', async () => {
    const vault = await createVault({ store: new MemoryStore() });
    const cycle: Record<string, unknown> = {};
    cycle['self'] = cycle;
    for (const value of [
      { command: 10n },
      { command: 'view', path: '/memories', view_range: [1n, 2n] },
      { command: cycle },
      Object.defineProperty({}, 'command', {
        get: () => {
          throw new Error('getter');
        },
      }),
    ]) {
      const result = await vault.run(USER, value);
      expect(result.code).toBe('INVALID_INPUT');
    }
  });
});
