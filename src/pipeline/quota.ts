import { isMemvaultError } from '../errors.js';
import type { MemoryCommand } from '../tool/types.js';
import type { TreeFiles } from '../vault/tree-files.js';
import type { Middleware } from './context.js';
import type { QuotaDecision } from './decisions.js';
import { QuotaFiles } from './quota-files.js';
import { capViewOutput, quotaMessages } from './quota-messages.js';
import { resolveQuota, type QuotaOptions, type ResolvedQuota } from './quota-options.js';
import { QuotaRun } from './quota-run.js';
import { UsageCache, type UsageSnapshot } from './quota-usage.js';

export type { QuotaDecision, QuotaRule } from './decisions.js';
export { capViewOutput, QuotaExceededError, quotaMessages } from './quota-messages.js';
export {
  DEFAULT_QUOTA,
  quotaCommandLimits,
  resolveQuota,
  type QuotaOptions,
  type ResolvedQuota,
} from './quota-options.js';
export type { UsageSnapshot } from './quota-usage.js';

/**
 * The quota middleware. Size quotas: bytes per file, bytes and files per user, and the characters one view returns.
 *
 * How a write is checked. The middleware hands the command a view of the user's files that checks
 * each write at the moment it is made, with exact numbers: the new size is the bytes being written,
 * the old size is the size of the version the command read (an edit's conditional write replaces
 * exactly that version), or one HEAD when the command did not read the file (create). The check and
 * the reservation of the delta happen in one synchronous step, so concurrent writes of one process
 * can never together pass a limit; the reservation is released when the write fails and turned into
 * usage when it succeeds. A refused write throws before anything is written, so the command changes
 * nothing. Deletes and renames adjust usage by the sizes the command itself listed, read or stat'ed.
 *
 * Usage per user (bytes, files) is listed once per process (one LIST per 1,000 files), kept exact
 * in-process from then on, and listed again every `refreshEveryWrites` writes or `refreshAfterMs`,
 * so that what other processes wrote is seen. See docs/paths-and-quotas.md ("Quotas") for the
 * cross-process bound and the requests a check costs.
 *
 * Files: options and defaults (quota-options.ts), the model's messages and the refusal error
 * (quota-messages.ts), the usage cache and its refresh (quota-usage.ts), the checks and the
 * decision of one command (quota-run.ts), the TreeFiles view that meters writes (quota-files.ts),
 * and here the middleware that puts them together.
 */
const WRITING_COMMANDS = new Set<MemoryCommand['command']>(['create', 'str_replace', 'insert']);

export interface QuotaMiddleware extends Middleware {
  readonly limits: ResolvedQuota;
  /** This process's view of a user's usage, by uid (undefined until a write listed it). */
  usage(uid: string): UsageSnapshot | undefined;
}

/** The quota middleware. It sits between the path guard (and PII redaction) and the commands. */
export function quota(options: QuotaOptions = {}): QuotaMiddleware {
  const limits = resolveQuota(options);
  const now = options.now ?? Date.now;
  const users = new UsageCache(limits, now);

  const middleware: Middleware = async (ctx, next) => {
    const command = ctx.command;
    if (!command || !ctx.pathsCanonical) return next();

    if (command.command === 'view') {
      const result = await next();
      if (result.isError || typeof result.content !== 'string') return result;
      const truncated = result.content.length > limits.maxViewOutputChars;
      ctx.decisions.quota = {
        checked: true,
        rule: 'view_chars',
        limit: limits.maxViewOutputChars,
        used: result.content.length,
        delta: 0,
        allowed: true,
        truncated,
      } satisfies QuotaDecision;
      return truncated ? { ...result, content: capViewOutput(result.content, limits.maxViewOutputChars) } : result;
    }

    // Refused from the input alone, before any request: a create bigger than a file may be.
    if (command.command === 'create') {
      const bytes = Buffer.byteLength(command.file_text, 'utf8');
      if (bytes > limits.maxFileBytes) {
        const decision: QuotaDecision = {
          checked: true,
          rule: 'file_bytes',
          limit: limits.maxFileBytes,
          used: 0,
          delta: bytes,
          allowed: false,
        };
        ctx.decisions.quota = decision;
        return {
          content: quotaMessages.fileBytes(command.path, bytes, null, limits.maxFileBytes),
          isError: true,
          code: 'QUOTA_EXCEEDED',
        };
      }
    }

    const writes = WRITING_COMMANDS.has(command.command);
    const usage = users.of(ctx.uid);
    if (writes) {
      try {
        await users.refresh(ctx, usage);
      } catch (error) {
        // The boundary answers it; a host that composed its own quota hears of the fault here.
        if (!isMemvaultError(error)) options.onInternalError?.(error, ctx);
        throw error;
      }
    }
    ctx.decisions.quota = { checked: false } satisfies QuotaDecision;
    const release = await usage.gate.acquire(false);
    // A delete or rename before this process knows the user's usage needs no accounting: the first
    // listing will see its outcome, since it waits for the gate this command holds (shared): run
    // beside a listing, the command could be counted by it as not yet done.
    if (!usage.loaded) {
      try {
        return await next();
      } finally {
        release();
      }
    }
    const mutable = ctx as { files: TreeFiles };
    const original = mutable.files;
    // The command's files, seen through the quota: the only way to check a write with its exact size.
    const run = new QuotaRun(usage, limits, ctx, command);
    const files = new QuotaFiles(original, run);
    mutable.files = files;
    try {
      // A rename keeps versions the history cannot drop: it needs their room before it starts (quota-run.ts).
      if (command.command === 'rename') await run.admitRename(original);
      return await next();
    } finally {
      files.finish();
      mutable.files = original;
      release();
    }
  };

  return Object.assign(middleware, {
    limits,
    usage: (uid: string): UsageSnapshot | undefined => users.snapshot(uid),
  });
}
