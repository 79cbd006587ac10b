import { describe, expect, it } from 'vitest';
import type { Middleware } from '../../src/pipeline/context.js';
import { defaultChain, pathGuard } from '../../src/pipeline/index.js';
import { compose } from '../../src/pipeline/compose.js';
import { terminal } from '../../src/pipeline/terminal.js';
import { withErrorBoundary } from '../../src/pipeline/error-result.js';
import { DEFAULT_LIMITS } from '../../src/tool/commands/env.js';
import { VaultLocks } from '../../src/vault/locks.js';
import { createPlainCodecProvider } from '../../src/vault/plain-codec.js';
import { StoreUserFiles } from '../../src/vault/store-user-files.js';
import { MemoryStore } from '../../src/store/memory.js';

describe('defaultChain', () => {
  it('orders outer, validate, guard, pii, quota, inner', () => {
    const outer: Middleware = async (_c, next) => next();
    const pii: Middleware = async (_c, next) => next();
    const inner: Middleware = async (_c, next) => next();
    const chain = defaultChain({ outer: [outer], pii, inner: [inner] });
    // The validator is built with the chain's limits (below), so it is a new function per chain.
    expect(chain.middlewares).toEqual([outer, expect.any(Function), pathGuard, pii, chain.quota, inner]);
    expect(defaultChain({ quota: false }).middlewares).toEqual([expect.any(Function), pathGuard]);
  });

  it("validates input sizes against the limit the commands get: the quota's, else the host's, else the default", async () => {
    const sizeAnswer = async (chain: ReturnType<typeof defaultChain>, bytes: number) => {
      const validate = chain.middlewares[0]!;
      const ctx = {
        requestId: 'r',
        uid: 'u',
        input: { command: 'create', path: '/memories/x', file_text: 'y'.repeat(bytes) },
        pathsCanonical: false,
        files: undefined as never,
        stats: { bytesRead: 0, bytesWritten: 0, requests: {} },
        decisions: {} as Record<string, unknown>,
      };
      const result = await withErrorBoundary(
        () => validate(ctx, async () => ({ content: 'passed', isError: false })),
        () => {},
      );
      return result.code ?? result.content;
    };
    for (const [chain, limit] of [
      [defaultChain({ quota: { maxFileBytes: 10 } }), 10],
      [defaultChain({ quota: false, limits: { maxFileBytes: 20 } }), 20],
      [defaultChain({ quota: false }), DEFAULT_LIMITS.maxFileBytes],
      [defaultChain(), DEFAULT_LIMITS.maxFileBytes],
    ] as const) {
      expect(chain.limits.maxFileBytes ?? DEFAULT_LIMITS.maxFileBytes).toBe(limit);
      expect(await sizeAnswer(chain, limit)).toBe('passed');
      expect(await sizeAnswer(chain, limit + 1)).toBe('TOO_LARGE');
    }
  });

  it('the quota owns maxFileBytes and viewChars; a disagreeing limit is a start-up error', () => {
    expect(
      defaultChain({ quota: { maxFileBytes: 10, viewChars: 300 }, limits: { maxWriteAttempts: 3 } }).limits,
    ).toEqual({
      maxFileBytes: 10,
      viewChars: 300,
      maxWriteAttempts: 3,
    });
    expect(defaultChain().limits).toEqual({
      maxFileBytes: DEFAULT_LIMITS.maxFileBytes,
      viewChars: DEFAULT_LIMITS.viewChars,
    });
    expect(() => defaultChain({ quota: { maxFileBytes: 10 }, limits: { maxFileBytes: 20 } })).toThrow(
      expect.objectContaining({ code: 'CONFIG' }),
    );
    expect(defaultChain({ quota: false, limits: { maxFileBytes: 20 } }).limits).toEqual({ maxFileBytes: 20 });
  });

  it('runs end to end: a traversal is refused before the quota, a write over the quota after the guard', async () => {
    const store = new MemoryStore();
    const chain = defaultChain({ quota: { maxUserBytes: 10 } });
    const run = compose(chain.middlewares);
    const execute = terminal({
      env: { locks: new VaultLocks(), limits: { ...DEFAULT_LIMITS, ...chain.limits }, createMode: 'overwrite' },
    });
    const files = new StoreUserFiles(store, await createPlainCodecProvider().forUser('u'));
    const go = async (input: unknown) => {
      const stats = { bytesRead: 0, bytesWritten: 0, requests: {} };
      const ctx = {
        requestId: 'r',
        uid: files.uid,
        input,
        pathsCanonical: false,
        files,
        stats,
        decisions: {} as Record<string, unknown>,
      };
      const result = await withErrorBoundary(
        () => run(ctx, () => execute(ctx)),
        () => {},
      );
      return { result, decisions: ctx.decisions };
    };
    const traversal = await go({ command: 'create', path: '/memories/../x', file_text: 'y'.repeat(100) });
    expect(traversal.result.code).toBe('INVALID_PATH');
    expect(traversal.decisions).toEqual({ pathGuard: { blocked: true, rule: 'dot-segment' } });
    const over = await go({ command: 'create', path: '/memories/x', file_text: 'y'.repeat(11) });
    expect(over.result.code).toBe('QUOTA_EXCEEDED');
    expect((await go({ command: 'create', path: '/memories/x', file_text: 'y'.repeat(10) })).result.isError).toBe(
      false,
    );
    expect(store.keys()).toHaveLength(1);
  });
});
