import { MemvaultError } from '../errors.js';
import { DEFAULT_LIMITS, type CommandLimits } from '../tool/commands/env.js';
import type { Middleware } from './context.js';
import { pathGuard } from './path-guard.js';
import { quota, quotaCommandLimits, type QuotaMiddleware, type QuotaOptions } from './quota.js';
import { namedStage } from './telemetry.js';
import { validateInputWithin } from './validate.js';

export { compose } from './compose.js';
export type { CommandContext, CommandResult, CommandStats, Middleware, Next } from './context.js';
export {
  canonicalizePath,
  canonicalizeCommand,
  InvalidPathError,
  MAX_PATH_BYTES,
  MAX_SEGMENT_BYTES,
  pathGuard,
  showPath,
  type PathGuardDecision,
  type PathRule,
} from './path-guard.js';
export {
  capViewOutput,
  DEFAULT_QUOTA,
  quota,
  quotaCommandLimits,
  QuotaExceededError,
  quotaMessages,
  resolveQuota,
  type QuotaDecision,
  type QuotaMiddleware,
  type QuotaOptions,
  type QuotaRule,
  type ResolvedQuota,
  type UsageSnapshot,
} from './quota.js';
export { validateInput, validateInputWithin, type InputLimits, type InputSizeDecision } from './validate.js';

/**
 * The chain, outermost first, and why in this order:
 *
 *   1. outer     audit: records every command, also those the layers below reject.
 *   2. validate  always on: the untrusted input becomes a typed command or an INVALID_INPUT answer;
 *                a text no file within the per-file limit can hold is refused here (TOO_LARGE), before
 *                any work that grows with the input (the redactor's scan above all).
 *   3. guard     always on: every path canonical, or an INVALID_PATH answer; nothing below sees a raw path.
 *   4. pii       rewrites file_text / new_str / insert_text before they are measured or stored.
 *   5. pause     the model's writes refused while the person paused their memory (read at the first
 *                change, under the quota's own checks: a write the quota refuses reads nothing).
 *   6. quota     measures what will really be written (after redaction), caps what view returns.
 *   7. inner     the host's own middlewares; they see canonical paths and redacted text.
 *   -> terminal  the six commands.
 */
export interface ChainOptions {
  /** Outside validation and the guard (audit). */
  outer?: Middleware[];
  /** The PII redactor, if configured. */
  pii?: Middleware;
  /** The pause guard (pause.ts), when the vault keeps users' settings. */
  pause?: Middleware;
  /** Quota options; `false` turns quotas off (not recommended for model-facing use). Default: on, defaults. */
  quota?: QuotaOptions | false;
  /** Between the quota and the commands. */
  inner?: Middleware[];
  /** The command layer's limits as configured by the host (checked against the quota). */
  limits?: Partial<CommandLimits>;
}

export interface Chain {
  middlewares: Middleware[];
  /** Limits for the command layer: the host's, with the quota-owned ones (maxFileBytes, viewChars) from the quota. */
  limits: Partial<CommandLimits>;
  quota?: QuotaMiddleware;
}

/** The documented default chain, and the command limits that go with it (one source of truth). */
export function defaultChain(options: ChainOptions = {}): Chain {
  const quotaMiddleware = options.quota === false ? undefined : quota(options.quota ?? {});
  const limits: Partial<CommandLimits> = { ...options.limits };
  if (options.quota !== false) {
    const owned = quotaCommandLimits(options.quota ?? {});
    for (const key of ['maxFileBytes', 'viewChars'] as const) {
      const given = options.limits?.[key];
      if (given !== undefined && given !== owned[key]) {
        throw new MemvaultError(
          'CONFIG',
          `memvault: limits.${key} (${given}) and quota.${key} (${owned[key]}) disagree; set it once, in quota`,
        );
      }
      limits[key] = owned[key];
    }
  }
  const middlewares: Middleware[] = [
    ...(options.outer ?? []),
    // The same per-file limit the commands (and the quota) apply: one source of truth.
    namedStage('validate', validateInputWithin({ maxFileBytes: limits.maxFileBytes ?? DEFAULT_LIMITS.maxFileBytes })),
    namedStage('path_guard', pathGuard),
    ...(options.pii ? [namedStage('pii', options.pii)] : []),
    ...(options.pause ? [namedStage('pause', options.pause)] : []),
    ...(quotaMiddleware ? [namedStage('quota', quotaMiddleware)] : []),
    ...(options.inner ?? []),
  ];
  return { middlewares, limits, ...(quotaMiddleware ? { quota: quotaMiddleware } : {}) };
}
