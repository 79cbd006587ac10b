import type { CommandContext, CommandResult, Middleware, Next } from './context.js';

/**
 * Folds middlewares into one, Koa style: each gets `next` to call the rest of the chain at most once,
 * and may act before and after it, or answer without calling it (a rejection).
 */
export function compose(middlewares: readonly Middleware[]): Middleware {
  return (ctx: CommandContext, last: Next): Promise<CommandResult> => {
    let calledUpTo = -1;
    const dispatch = (i: number): Promise<CommandResult> => {
      if (i <= calledUpTo) return Promise.reject(new Error('next() called more than once'));
      calledUpTo = i;
      const middleware = middlewares[i];
      if (!middleware) return last();
      try {
        return middleware(ctx, () => dispatch(i + 1));
      } catch (error) {
        // Koa's compose: a middleware's synchronous throw becomes the rejection, whatever was thrown.
        // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors
        return Promise.reject(error);
      }
    };
    return dispatch(0);
  };
}
