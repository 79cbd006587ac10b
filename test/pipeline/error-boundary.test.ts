// One error boundary (pipeline/error-result.ts withErrorBoundary): middlewares and commands throw, the
// vault's run() turns what they throw into the model's answer in one place, and one serializer
// (errors.ts loggableError) decides what the log line shows.
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { INTERNAL_ERROR_MESSAGE, loggableError, MemvaultError } from '../../src/errors.js';
import { createVault, type VaultLogger } from '../../src/memvault.js';
import type { Middleware } from '../../src/pipeline/context.js';
import { errorResult, withErrorBoundary } from '../../src/pipeline/error-result.js';
import { pathGuard } from '../../src/pipeline/path-guard.js';
import { terminal } from '../../src/pipeline/terminal.js';
import { validateInputWithin } from '../../src/pipeline/validate.js';
import { MemoryStore } from '../../src/store/memory.js';
import { DEFAULT_LIMITS } from '../../src/tool/commands/env.js';
import { VaultLocks } from '../../src/vault/locks.js';
import { readRecords, tempDir } from '../audit/helpers.js';
import { fakeContext } from '../kit/context.js';

const SECRET =
  'arn:aws:kms:eu-west-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab at /srv/app/keys/master.key';

function recordingLogger(): VaultLogger & { lines: Array<{ fields: unknown; message?: string }> } {
  const lines: Array<{ fields: unknown; message?: string }> = [];
  const push = (fields: object | string, message?: string) =>
    void lines.push({ fields, ...(message !== undefined ? { message } : {}) });
  return { lines, debug: () => {}, info: () => {}, warn: () => {}, error: push };
}

function ctxFor(input: unknown) {
  return fakeContext({ input, files: undefined as never });
}

let cleanups: Array<() => void> = [];
afterEach(() => {
  for (const c of cleanups) c();
  cleanups = [];
});

describe('middlewares and commands throw; the boundary answers', () => {
  it('validation and the path guard throw their MemvaultError (with their decision recorded) instead of answering', async () => {
    const validate = validateInputWithin({ maxFileBytes: 4 });
    const next = async () => ({ content: 'passed', isError: false });
    await expect(
      validate(ctxFor({ command: 'create', path: '/memories/a', file_text: 'too long' }), next),
    ).rejects.toMatchObject({ code: 'TOO_LARGE' });
    await expect(validate(ctxFor({ command: 'nope' }), next)).rejects.toMatchObject({ code: 'INVALID_INPUT' });
    const hostile = new Proxy(
      {},
      {
        get: () => {
          throw new Error(SECRET);
        },
      },
    );
    await expect(validate(ctxFor(hostile), next)).rejects.toMatchObject({
      code: 'INVALID_INPUT',
      message: 'Error: The tool input could not be read as a memory command object.',
    });
    const ctx = { ...ctxFor({}), command: { command: 'view' as const, path: '/memories/../x' } };
    await expect(pathGuard(ctx, next)).rejects.toMatchObject({ code: 'INVALID_PATH' });
    expect(ctx.decisions).toEqual({ pathGuard: { blocked: true, rule: 'dot-segment' } });
  });

  it('the terminal throws on a command whose paths were never made canonical (a chain without the guard)', async () => {
    const execute = terminal({ env: { locks: new VaultLocks(), limits: DEFAULT_LIMITS, createMode: 'overwrite' } });
    await expect(execute({ ...ctxFor({}), command: { command: 'view', path: '/memories' } })).rejects.toThrow(
      'without a canonical path',
    );
  });

  it('withErrorBoundary: a MemvaultError becomes its own (scrubbed) answer and is not reported; anything else the generic one, reported once', async () => {
    const reported: unknown[] = [];
    const own = await withErrorBoundary(
      async () => {
        throw new MemvaultError('NOT_FOUND', 'Error: no such file');
      },
      (e) => reported.push(e),
    );
    expect(own).toEqual({ content: 'Error: no such file', isError: true, code: 'NOT_FOUND' });
    const infra = await withErrorBoundary(
      async () => {
        throw new MemvaultError('STORE_UNAVAILABLE', `Error: store down (${SECRET})`);
      },
      (e) => reported.push(e),
    );
    expect(infra.code).toBe('STORE_UNAVAILABLE');
    expect(String(infra.content)).not.toMatch(/123456789012|arn:aws|\/srv\/app/);
    expect(reported).toHaveLength(0);
    const fault = new TypeError(SECRET);
    expect(
      await withErrorBoundary(
        async () => {
          throw fault;
        },
        (e) => reported.push(e),
      ),
    ).toEqual({ content: INTERNAL_ERROR_MESSAGE, isError: true, code: 'INTERNAL' });
    expect(reported).toEqual([fault]);
    expect(
      await withErrorBoundary(
        async () => ({ content: 'fine', isError: false }),
        (e) => reported.push(e),
      ),
    ).toEqual({ content: 'fine', isError: false });
    expect(errorResult(fault)).toEqual({ content: INTERNAL_ERROR_MESSAGE, isError: true, code: 'INTERNAL' });
  });
});

describe('the vault: one boundary, one log line, the audit records the answer given', () => {
  const throwing =
    (error: unknown): Middleware =>
    async () => {
      throw error;
    };

  it('a host middleware that throws a MemvaultError: the model reads its text, the audit records its code (not INTERNAL), nothing is logged', async () => {
    const { dir, cleanup } = tempDir();
    cleanups.push(cleanup);
    const file = join(dir, 'audit.log');
    const logger = recordingLogger();
    const vault = await createVault({
      store: new MemoryStore(),
      audit: { file },
      logger,
      middlewares: [throwing(new MemvaultError('PII_REJECTED', 'Error: refused by policy'))],
    });
    const result = await vault.run('u', { command: 'create', path: '/memories/a.md', file_text: 'x' });
    await vault.close();
    expect(result).toEqual({ content: 'Error: refused by policy', isError: true, code: 'PII_REJECTED' });
    expect(logger.lines).toEqual([]);
    const commands = readRecords(file).filter((r) => r.type === 'command');
    expect(commands).toHaveLength(1);
    expect(commands[0]).toMatchObject({ outcome: 'error', code: 'PII_REJECTED' });
  });

  it('a middleware around one that throws sees an error result from next(), never a throw (the stages below throw)', async () => {
    const seen: unknown[] = [];
    const outer: Middleware = async (_ctx, next) => {
      try {
        const result = await next();
        seen.push(result.code ?? 'ok');
        return result;
      } catch (error) {
        seen.push(error);
        throw error;
      }
    };
    const logger = recordingLogger();
    const vault = await createVault({
      store: new MemoryStore(),
      logger,
      outerMiddlewares: [outer],
      middlewares: [throwing(new TypeError(SECRET))],
    });
    expect((await vault.run('u', { command: 'view', path: '/memories/../x' })).code).toBe('INVALID_PATH');
    expect((await vault.run('u', { command: 'create', path: '/memories/a', file_text: 5 })).code).toBe('INVALID_INPUT');
    expect((await vault.run('u', { command: 'view', path: '/memories' })).code).toBe('INTERNAL');
    expect(seen).toEqual(['INVALID_PATH', 'INVALID_INPUT', 'INTERNAL']);
    // The fault was reported once, by the innermost boundary, not once per middleware it passed.
    expect(logger.lines).toHaveLength(1);
    await vault.close();
  });

  it('an unexpected fault in a middleware or a command: the generic answer, one log line with the error class only', async () => {
    const logger = recordingLogger();
    const vault = await createVault({
      store: new MemoryStore(),
      logger,
      middlewares: [throwing(Object.assign(new Error(SECRET), { code: 'EACCES' }))],
    });
    const result = await vault.run('u', { command: 'view', path: '/memories' });
    expect(result).toEqual({ content: INTERNAL_ERROR_MESSAGE, isError: true, code: 'INTERNAL' });
    expect(logger.lines).toHaveLength(1);
    expect(logger.lines[0]!.message).toBe('memvault command failed');
    expect(logger.lines[0]!.fields).toMatchObject({
      requestId: expect.any(String),
      uid: expect.any(String),
      err: { name: 'Error', code: 'EACCES' },
    });
    expect(JSON.stringify(logger.lines)).not.toMatch(/123456789012|arn:aws|\/srv\/app|"u"/);
    await vault.close();

    class BrokenStore extends MemoryStore {
      override get(): never {
        throw new RangeError(SECRET);
      }
    }
    const storeLogger = recordingLogger();
    const broken = await createVault({ store: new BrokenStore(), logger: storeLogger });
    expect(await broken.run('u', { command: 'view', path: '/memories/a.md' })).toMatchObject({
      code: 'INTERNAL',
      content: INTERNAL_ERROR_MESSAGE,
    });
    expect(storeLogger.lines).toHaveLength(1);
    expect(storeLogger.lines[0]!.fields).toMatchObject({ err: { name: 'RangeError' } });
    expect(JSON.stringify(storeLogger.lines)).not.toContain('123456789012');
    await broken.close();
  });
});

describe('loggableError: the one serializer for errors in logs', () => {
  it('keeps a bounded class name and a code-shaped code, never the message, stack or cause', () => {
    const error = Object.assign(new TypeError(SECRET, { cause: new Error(SECRET) }), { code: 'ERR_X' });
    expect(loggableError(error)).toEqual({ name: 'TypeError', code: 'ERR_X' });
    expect(loggableError(new MemvaultError('KEY_UNAVAILABLE', SECRET))).toEqual({
      name: 'MemvaultError',
      code: 'KEY_UNAVAILABLE',
    });
    const named = new Error('x');
    named.name = `Error for ${SECRET}`;
    expect(loggableError(named)).toEqual({ name: 'Error' });
    expect(loggableError(Object.assign(new Error('x'), { code: SECRET }))).toEqual({ name: 'Error' });
    expect(loggableError(Object.assign(new Error('x'), { code: 42 }))).toEqual({ name: 'Error' });
    expect(loggableError(SECRET)).toBeUndefined();
    expect(loggableError({ name: 'FakeError', message: SECRET })).toBeUndefined();
  });
});
