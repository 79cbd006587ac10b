/**
 * Telemetry for the chain (docs/observability.md): a `memvault.command` span and the command
 * metrics around each run, a `memvault.stage.<stage>` span around each middleware (active while it
 * runs, so the stages below and the store calls nest inside it), `memvault.stage.execute` around
 * the commands, and the quota and PII decisions of ctx.decisions counted once the chain settled.
 */
import {
  activeTracer,
  ATTRS,
  boundedCommand,
  inSpan,
  instruments,
  markResult,
  observeCommand,
  recordDecisions,
  SPANS,
} from '../telemetry/index.js';
import type { CommandContext, CommandResult, Middleware } from './context.js';
import { errorResult } from './error-result.js';

const stageNames = new WeakMap<object, string>();

/** Names a middleware's stage for its span (e.g. 'audit'); returns the same middleware. */
export function namedStage<M extends Middleware>(name: string, middleware: M): M {
  stageNames.set(middleware, name);
  return middleware;
}

/**
 * The command name of an untrusted input for metrics, without running its code: only an own data
 * property counts (a getter or a proxy trap is not invoked twice behind the validator's back), and
 * only one of the six names; anything else is 'unknown'.
 */
export function commandNameOfInput(input: unknown): string {
  try {
    if (typeof input !== 'object' || input === null) return 'unknown';
    const descriptor = Object.getOwnPropertyDescriptor(input, 'command');
    return descriptor && 'value' in descriptor ? boundedCommand(descriptor.value) : 'unknown';
  } catch {
    return 'unknown';
  }
}

/** Wraps a vault's run(userId, input): the command span and metrics; the user id is never recorded. */
export function observeCommands(
  run: (userId: string, input: unknown) => Promise<CommandResult>,
): (userId: string, input: unknown) => Promise<CommandResult> {
  return (userId, input) => {
    // Nothing registered: not even the input's command name is looked at.
    if (!activeTracer() && !instruments()) return run(userId, input);
    return observeCommand(commandNameOfInput(input), () => run(userId, input));
  };
}

function observeStage(name: string, position: number, middleware: Middleware, outermost: boolean): Middleware {
  const spanName = `${SPANS.stagePrefix}${name}`;
  const attributes = { [ATTRS.stage]: name, [ATTRS.stagePosition]: position };
  return (ctx, next) => {
    // Nothing registered: the middleware runs as if uncomposed with telemetry.
    if (!activeTracer() && (!outermost || !instruments())) return middleware(ctx, next);
    return inSpan(spanName, attributes, async (span) => {
      try {
        const result = await middleware(ctx, next);
        markResult(span, result);
        return result;
      } catch (error) {
        // Marked as the answer the error boundary will give.
        markResult(span, errorResult(error));
        throw error;
      } finally {
        // Every stage below has settled: the decisions are final.
        if (outermost) recordDecisions(ctx.decisions);
      }
    });
  };
}

/**
 * The chain's middlewares, each in its stage span; names from `namedStage`, else 'middleware' (the
 * host's own; their position tells them apart). The result is composed as before.
 */
export function observeStages(middlewares: readonly Middleware[]): Middleware[] {
  return middlewares.map((middleware, i) =>
    observeStage(stageNames.get(middleware) ?? 'middleware', i, middleware, i === 0),
  );
}

/** The innermost step (the six commands) in its `memvault.stage.execute` span. */
export function observeExecute(
  execute: (ctx: CommandContext) => Promise<CommandResult>,
): (ctx: CommandContext) => Promise<CommandResult> {
  const attributes = { [ATTRS.stage]: 'execute' };
  return (ctx) => {
    if (!activeTracer()) return execute(ctx);
    return inSpan(`${SPANS.stagePrefix}execute`, attributes, async (span) => {
      try {
        const result = await execute(ctx);
        markResult(span, result);
        return result;
      } catch (error) {
        markResult(span, errorResult(error));
        throw error;
      }
    });
  };
}
