import { describe, expect, it } from 'vitest';
import { createVault } from '../../src/memvault.js';
import type { CommandContext, Middleware } from '../../src/pipeline/context.js';
import { withErrorBoundary } from '../../src/pipeline/error-result.js';
import { validateInputWithin } from '../../src/pipeline/validate.js';
import { MemoryStore } from '../../src/store/memory.js';
import { DEFAULT_LIMITS } from '../../src/tool/commands/env.js';
import { fakeContext } from '../kit/context.js';

const MiB = 1024 * 1024;

/**
 * A vault with the default chain (PII redactor on, quota on) and a recorder outside it: what the
 * chain decided, which requests it made, and whether anything below validation ran at all.
 */
async function setup(options: { maxFileBytes?: number } = {}) {
  const store = new MemoryStore();
  let last: CommandContext | undefined;
  let reachedInner = 0;
  const recorder: Middleware = async (ctx, next) => {
    const result = await next();
    last = ctx;
    return result;
  };
  const inner: Middleware = async (_ctx, next) => {
    reachedInner += 1;
    return next();
  };
  const vault = await createVault({
    store,
    // 'reject' makes the redactor's work visible in the answer: had it scanned the text, the
    // command would be PII_REJECTED, not TOO_LARGE.
    pii: { policy: { EMAIL: 'reject' } },
    ...(options.maxFileBytes ? { quota: { maxFileBytes: options.maxFileBytes } } : {}),
    outerMiddlewares: [recorder],
    middlewares: [inner],
  });
  const run = (input: Record<string, unknown>) => vault.run('alice', input);
  return { vault, store, run, last: () => last!, reachedInner: () => reachedInner };
}

const emails = (bytes: number) => 'a@example.com '.repeat(Math.ceil(bytes / 14)).slice(0, bytes);

describe('oversized input is refused first, from its size alone', () => {
  it('10 MiB of file_text, old_str, new_str or insert_text: TOO_LARGE, before the path guard, the redactor or any request', async () => {
    const { run, last, store, reachedInner } = await setup();
    await run({ command: 'create', path: '/memories/f.md', file_text: 'hello\n' });
    const keys = store.keys();
    const big = emails(10 * MiB);
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ command: 'create', path: '/memories/big.md', file_text: big }, 'file_text'],
      [{ command: 'str_replace', path: '/memories/f.md', old_str: big, new_str: 'x' }, 'old_str'],
      [{ command: 'str_replace', path: '/memories/f.md', old_str: 'hello', new_str: big }, 'new_str'],
      [{ command: 'insert', path: '/memories/f.md', insert_line: 0, insert_text: big }, 'insert_text'],
    ];
    const innerBefore = reachedInner();
    for (const [input, field] of cases) {
      const result = await run(input);
      expect(result.code, field).toBe('TOO_LARGE');
      expect(result.content).toContain(`\`${field}\` is 10,485,760 bytes`);
      expect(result.content).toContain(`1,048,576 bytes per file`);
      // Only validation decided anything: the guard, the redactor and the quota never saw it.
      expect(last().decisions).toEqual({
        validate: { refused: true, field, bytes: 10 * MiB, limit: DEFAULT_LIMITS.maxFileBytes },
      });
      expect(last().stats.requests).toEqual({});
    }
    expect(reachedInner()).toBe(innerBefore);
    expect(store.keys()).toEqual(keys);
  });

  it('the limit is the configured one (quota.maxFileBytes): exactly at it passes validation, one byte over does not, for every field', async () => {
    const limit = 300;
    const { run, read } = await (async () => {
      const s = await setup({ maxFileBytes: limit });
      return { ...s, read: async (path: string) => String((await s.run({ command: 'view', path })).content) };
    })();
    // create
    expect((await run({ command: 'create', path: '/memories/a.md', file_text: 'x'.repeat(limit) })).isError).toBe(
      false,
    );
    expect((await run({ command: 'create', path: '/memories/a.md', file_text: 'x'.repeat(limit + 1) })).code).toBe(
      'TOO_LARGE',
    );
    // multi-byte text is measured in UTF-8 bytes, not in characters
    expect((await run({ command: 'create', path: '/memories/e.md', file_text: 'é'.repeat(limit / 2) })).isError).toBe(
      false,
    );
    expect(
      (await run({ command: 'create', path: '/memories/e.md', file_text: 'é'.repeat(limit / 2) + 'x' })).code,
    ).toBe('TOO_LARGE');
    expect((await run({ command: 'create', path: '/memories/e.md', file_text: '😀'.repeat(limit / 4 + 1) })).code).toBe(
      'TOO_LARGE',
    );
    // str_replace: an old_str longer than any file, a new_str no file could hold
    await run({ command: 'create', path: '/memories/s.md', file_text: 'abc' });
    const longOld = await run({
      command: 'str_replace',
      path: '/memories/s.md',
      old_str: 'q'.repeat(limit + 1),
      new_str: '',
    });
    expect(longOld.code).toBe('TOO_LARGE');
    expect(longOld.content).toMatch(
      /^Error: `old_str` is 301 bytes, longer than any file can be \(the limit is 300 bytes per file\)/,
    );
    expect(
      (await run({ command: 'str_replace', path: '/memories/s.md', old_str: 'q'.repeat(limit), new_str: '' })).code,
    ).toBe('NO_MATCH');
    expect(
      (await run({ command: 'str_replace', path: '/memories/s.md', old_str: 'abc', new_str: 'n'.repeat(limit + 1) }))
        .code,
    ).toBe('TOO_LARGE');
    expect(
      (await run({ command: 'str_replace', path: '/memories/s.md', old_str: 'abc', new_str: 'n'.repeat(limit) }))
        .isError,
    ).toBe(false);
    // insert
    await run({ command: 'create', path: '/memories/i.md', file_text: '' });
    expect(
      (await run({ command: 'insert', path: '/memories/i.md', insert_line: 0, insert_text: 'y'.repeat(limit + 2) }))
        .code,
    ).toBe('TOO_LARGE');
    expect(
      (await run({ command: 'insert', path: '/memories/i.md', insert_line: 0, insert_text: 'y'.repeat(limit) }))
        .isError,
    ).toBe(false);
    expect(await read('/memories/i.md')).toContain('y'.repeat(limit));
  });

  it('never refuses what could be stored: CRLF insert text that is stored with LF endings under the limit passes', async () => {
    const limit = 300;
    const { run } = await setup({ maxFileBytes: limit });
    await run({ command: 'create', path: '/memories/lf.md', file_text: '' });
    // 80 lines of 'ab\r\n' = 320 bytes as sent; stored in an LF file as 'ab\n' x 80 = 240 bytes.
    const result = await run({
      command: 'insert',
      path: '/memories/lf.md',
      insert_line: 0,
      insert_text: 'ab\r\n'.repeat(80),
    });
    expect(result).toEqual({ content: 'The file /memories/lf.md has been edited.', isError: false });
    // The same text into a CRLF file stays 320 bytes: the quota/command layer refuses it when written.
    await run({ command: 'create', path: '/memories/crlf.md', file_text: 'x\r\n' });
    expect(
      (await run({ command: 'insert', path: '/memories/crlf.md', insert_line: 1, insert_text: 'ab\r\n'.repeat(80) }))
        .isError,
    ).toBe(true);
  });

  it('the size check comes before the redactor: a text over the limit full of rejected PII is TOO_LARGE, under it PII_REJECTED', async () => {
    const { run } = await setup({ maxFileBytes: 1000 });
    expect((await run({ command: 'create', path: '/memories/p.md', file_text: emails(1001) })).code).toBe('TOO_LARGE');
    expect((await run({ command: 'create', path: '/memories/p.md', file_text: emails(1000) })).code).toBe(
      'PII_REJECTED',
    );
  });

  it('a bad command is still answered as such; other commands have no size to check', async () => {
    const validate = validateInputWithin({ maxFileBytes: 10 });
    const answer = async (input: unknown) => {
      const ctx = fakeContext({ input, files: undefined as never });
      return withErrorBoundary(
        () => validate(ctx, async () => ({ content: 'passed', isError: false })),
        () => {},
      );
    };
    expect((await answer({ command: 'create', path: '/memories/x', file_text: 5 })).code).toBe('INVALID_INPUT');
    expect((await answer({ command: 'view', path: `/memories/${'x'.repeat(100)}` })).content).toBe('passed');
    expect((await answer({ command: 'rename', old_path: '/memories/a', new_path: '/memories/b' })).content).toBe(
      'passed',
    );
    expect((await answer({ command: 'str_replace', path: '/memories/a', old_str: 'x'.repeat(10) })).content).toBe(
      'passed',
    );
  });
});
