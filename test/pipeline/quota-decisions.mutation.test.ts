/**
 * What the quota middleware records and returns around views, refused creates and commands that
 * need no check (the quota target's survivors): the view cap at its exact edge with its `view_chars`
 * decision, error views passed through untouched, the decision of a create refused from its input
 * alone, and `checked: false` for a delete before and after the user's usage is known.
 */
import { describe, expect, it } from 'vitest';
import { createVault } from '../../src/memvault.js';
import type { CommandContext, Middleware } from '../../src/pipeline/context.js';
import { quota, type QuotaOptions } from '../../src/pipeline/quota.js';
import { MemoryStore } from '../../src/store/memory.js';

const USER = 'alice';

async function setup(options: QuotaOptions, store = new MemoryStore()) {
  let last: CommandContext | undefined;
  const recorder: Middleware = async (ctx, next) => {
    const result = await next();
    last = ctx;
    return result;
  };
  const vault = await createVault({ store, quota: false, middlewares: [quota(options)], outerMiddlewares: [recorder] });
  return {
    vault,
    run: (input: Record<string, unknown>) => vault.run(USER, input),
    decision: () => last!.decisions['quota'],
  };
}

const FILE = Array.from({ length: 30 }, (_, i) => `line number ${String(i + 1).padStart(2, '0')} here`).join('\n');

describe('the view cap', () => {
  it('output of exactly the cap is returned whole with its decision; one character less of cap truncates it', async () => {
    const store = new MemoryStore();
    const wide = await setup({ viewChars: 100, maxViewOutputChars: 100_000 }, store);
    await wide.run({ command: 'create', path: '/memories/f.md', file_text: FILE });
    const full = await wide.run({ command: 'view', path: '/memories/f.md' });
    const length = (full.content as string).length;
    expect(length).toBeGreaterThan(300);
    expect(wide.decision()).toEqual({
      checked: true,
      rule: 'view_chars',
      limit: 100_000,
      used: length,
      delta: 0,
      allowed: true,
      truncated: false,
    });

    const exact = await setup({ viewChars: 100, maxViewOutputChars: length }, store);
    expect(await exact.run({ command: 'view', path: '/memories/f.md' })).toEqual(full);
    expect(exact.decision()).toEqual({
      checked: true,
      rule: 'view_chars',
      limit: length,
      used: length,
      delta: 0,
      allowed: true,
      truncated: false,
    });

    const short = await setup({ viewChars: 100, maxViewOutputChars: length - 1 }, store);
    const capped = await short.run({ command: 'view', path: '/memories/f.md' });
    expect(capped.isError).toBe(false);
    expect((capped.content as string).length).toBeLessThanOrEqual(length - 1);
    expect(capped.content).not.toBe(full.content);
    expect(short.decision()).toEqual({
      checked: true,
      rule: 'view_chars',
      limit: length - 1,
      used: length,
      delta: 0,
      allowed: true,
      truncated: true,
    });
  });

  it('an error view is passed through untouched and records no view decision', async () => {
    const { run, decision } = await setup({ viewChars: 100, maxViewOutputChars: 300 });
    const missing = await run({ command: 'view', path: '/memories/none.md' });
    expect(missing.isError).toBe(true);
    expect(missing.content).toBe('The path /memories/none.md does not exist. Please provide a valid path.');
    expect(decision()).toBeUndefined();
  });
});

describe('decisions of commands the quota does not meter', () => {
  it('a create bigger than a file may be: refused from its input, with its file_bytes decision', async () => {
    const { run, decision } = await setup({ maxFileBytes: 10 });
    const refused = await run({ command: 'create', path: '/memories/big.md', file_text: 'é'.repeat(6) });
    expect(refused).toMatchObject({ isError: true, code: 'QUOTA_EXCEEDED' });
    expect(decision()).toEqual({ checked: true, rule: 'file_bytes', limit: 10, used: 0, delta: 12, allowed: false });
  });

  it('an edit that would grow a file past its limit: refused when its result is known, with the sizes in its decision', async () => {
    const { run, decision } = await setup({ maxFileBytes: 10 });
    expect(await run({ command: 'create', path: '/memories/e.md', file_text: 'abcdefgh' })).toMatchObject({
      isError: false,
    });
    const refused = await run({ command: 'insert', path: '/memories/e.md', insert_line: 0, insert_text: 'xyz' });
    expect(refused).toMatchObject({ isError: true, code: 'QUOTA_EXCEEDED' });
    expect(decision()).toEqual({ checked: true, rule: 'file_bytes', limit: 10, used: 8, delta: 4, allowed: false });
  });

  it("a file that would pass the user's file count: refused with the count in its decision", async () => {
    const { run, decision } = await setup({ maxUserFiles: 2 });
    for (const name of ['a', 'b'])
      expect(await run({ command: 'create', path: `/memories/${name}.md`, file_text: name })).toMatchObject({
        isError: false,
      });
    expect(await run({ command: 'create', path: '/memories/c.md', file_text: 'c' })).toMatchObject({
      isError: true,
      code: 'QUOTA_EXCEEDED',
    });
    expect(decision()).toEqual({ checked: true, rule: 'user_files', limit: 2, used: 2, delta: 1, allowed: false });
  });

  it('a delete is not checked, before and after the user usage is known; a write is', async () => {
    const { run, decision } = await setup({});
    await run({ command: 'delete', path: '/memories/none.md' });
    expect(decision()).toEqual({ checked: false });
    await run({ command: 'create', path: '/memories/a.md', file_text: 'abc' });
    expect(decision()).toMatchObject({ checked: true, rule: 'user_bytes', delta: 3, allowed: true });
    await run({ command: 'delete', path: '/memories/a.md' });
    expect(decision()).toEqual({ checked: false });
  });
});
