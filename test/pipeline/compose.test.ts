import { describe, expect, it } from 'vitest';
import { compose } from '../../src/pipeline/compose.js';
import type { CommandContext, CommandResult, Middleware } from '../../src/pipeline/context.js';

// A host middleware records its own decision by adding a field to CommandDecisions (module augmentation).
declare module '../../src/pipeline/decisions.js' {
  interface CommandDecisions {
    seen?: string;
    id?: string;
  }
}

function context(): CommandContext {
  return {
    requestId: 'r1',
    uid: 'u1',
    input: {},
    pathsCanonical: false,
    files: undefined as never,
    stats: { bytesRead: 0, bytesWritten: 0, requests: {} },
    decisions: {},
  };
}

const ok = (content: string): CommandResult => ({ content, isError: false });

describe('compose (Koa style)', () => {
  it('runs middlewares in order, onion-wise: before in order, after in reverse', async () => {
    const trace: string[] = [];
    const layer =
      (name: string): Middleware =>
      async (_ctx, next) => {
        trace.push(`${name}:before`);
        const result = await next();
        trace.push(`${name}:after`);
        return result;
      };
    const chain = compose([layer('a'), layer('b'), layer('c')]);
    const result = await chain(context(), async () => {
      trace.push('terminal');
      return ok('done');
    });
    expect(result).toEqual(ok('done'));
    expect(trace).toEqual(['a:before', 'b:before', 'c:before', 'terminal', 'c:after', 'b:after', 'a:after']);
  });

  it('an empty chain runs the terminal', async () => {
    expect(await compose([])(context(), async () => ok('t'))).toEqual(ok('t'));
  });

  it('a middleware may rewrite the result on the way out and share state through ctx', async () => {
    const chain = compose([
      async (ctx, next) => {
        const r = await next();
        return { ...r, content: `${String(r.content)}+${String(ctx.decisions['seen'])}` };
      },
      async (ctx, next) => {
        ctx.decisions['seen'] = 'inner';
        return next();
      },
    ]);
    expect(await chain(context(), async () => ok('t'))).toEqual(ok('t+inner'));
  });

  it('short-circuits: a middleware that answers without next() stops the chain and the terminal', async () => {
    const trace: string[] = [];
    const chain = compose([
      async (_ctx, next) => {
        trace.push('outer');
        const r = await next();
        trace.push('outer:after');
        return r;
      },
      async () => {
        trace.push('reject');
        return { content: 'Error: no', isError: true, code: 'INVALID_PATH' };
      },
      async (_ctx, next) => {
        trace.push('never');
        return next();
      },
    ]);
    const result = await chain(context(), async () => {
      trace.push('terminal');
      return ok('t');
    });
    expect(result).toEqual({ content: 'Error: no', isError: true, code: 'INVALID_PATH' });
    expect(trace).toEqual(['outer', 'reject', 'outer:after']);
  });

  it('rejects next() called twice, and the terminal runs once', async () => {
    let terminalRuns = 0;
    const chain = compose([
      async (_ctx, next) => {
        await next();
        return next();
      },
    ]);
    await expect(
      chain(context(), async () => {
        terminalRuns += 1;
        return ok('t');
      }),
    ).rejects.toThrow('next() called more than once');
    expect(terminalRuns).toBe(1);
  });

  it('propagates errors: async rejections and synchronous throws reach the caller, and outer layers can catch them', async () => {
    const boom = new Error('boom');
    const throwsSync: Middleware = () => {
      throw boom;
    };
    await expect(compose([throwsSync])(context(), async () => ok('t'))).rejects.toBe(boom);
    await expect(compose([async (_c, next) => next()])(context(), () => Promise.reject(boom))).rejects.toBe(boom);
    const catching: Middleware = async (_ctx, next) => {
      try {
        return await next();
      } catch (error) {
        return { content: `caught ${(error as Error).message}`, isError: true, code: 'INTERNAL' };
      }
    };
    expect(await compose([catching, throwsSync])(context(), async () => ok('t'))).toEqual({
      content: 'caught boom',
      isError: true,
      code: 'INTERNAL',
    });
  });

  it('one composed chain serves concurrent commands independently', async () => {
    const chain = compose([
      async (ctx, next) => {
        ctx.decisions['id'] = ctx.requestId;
        await new Promise((resolve) => setImmediate(resolve));
        return next();
      },
    ]);
    const results = await Promise.all(
      ['a', 'b', 'c'].map((id) => {
        const ctx = { ...context(), requestId: id };
        return chain(ctx, async () => ok(String(ctx.decisions['id'])));
      }),
    );
    expect(results.map((r) => r.content)).toEqual(['a', 'b', 'c']);
  });
});
