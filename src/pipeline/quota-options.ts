import { MemvaultError } from '../errors.js';
import { DEFAULT_LIMITS, type CommandLimits } from '../tool/commands/env.js';
import type { CommandContext } from './context.js';
import { VERSION_FLOOR_BYTES } from '../vault/history-usage.js';

/** The quota's options, their defaults and their checks (the middleware is quota.ts). */
export interface QuotaOptions {
  /** Bytes one file may hold (plaintext). Also the command layer's `limits.maxFileBytes`. */
  maxFileBytes?: number;
  /** Bytes all of a user's files may hold together (plaintext). */
  maxUserBytes?: number;
  /** Files a user may have. */
  maxUserFiles?: number;
  /**
   * With file history on (docs/versions.md, "Quotas"): bytes the user's kept versions may hold, the
   * current versions included, each version counted at its plaintext size and at least
   * VERSION_FLOOR_BYTES (512: a tombstone and an empty file's version are stored objects too).
   * Default: 4 x what the user's files can count as versions (maxUserBytes + 512 x maxUserFiles).
   * A write that would pass it drops the oldest versions first; it is refused only when the newest
   * versions alone leave no room.
   */
  maxHistoryBytes?: number;
  /**
   * With file history on: versions the user's history may hold, tombstones included (default 20 x
   * maxUserFiles), enforced like maxHistoryBytes: the oldest go first, and a write is refused only
   * when the newest versions alone fill it.
   */
  maxHistoryVersions?: number;
  /** Characters of file text one view returns before it says how to page. Also `limits.viewChars`. */
  viewChars?: number;
  /** Hard cap on everything one view returns (line numbers and notices included). */
  maxViewOutputChars?: number;
  /** List a user's files again after this long, to see other processes' writes. */
  refreshAfterMs?: number;
  /** ... or after this many admitted writes in this process, whichever comes first. */
  refreshEveryWrites?: number;
  /** Users whose usage this process keeps (least recently used beyond that are forgotten). */
  maxCachedUsers?: number;
  /** Clock for the refresh interval (tests inject one). */
  now?: () => number;
  /** Unexpected faults while listing usage (never shown to the model). */
  onInternalError?: (error: unknown, ctx: CommandContext) => void;
}

/**
 * The history's default allowance, in multiples of the most the user's files can count as kept
 * versions: their bytes, and the floor for each (docs/versions.md, "Quotas").
 */
export const HISTORY_ALLOWANCE_FACTOR = 4;
/** The history's default count of versions, in multiples of the files a user may have. */
export const HISTORY_VERSIONS_FACTOR = 20;
/** Pruning brings the history down to this share of its allowance, so that the next writes do not prune again at once. */
export const HISTORY_PRUNE_TO = 0.75;

export type ResolvedQuota = Required<Omit<QuotaOptions, 'now' | 'onInternalError'>>;

export const DEFAULT_QUOTA: ResolvedQuota = {
  maxFileBytes: DEFAULT_LIMITS.maxFileBytes,
  maxUserBytes: 64 * 1024 * 1024,
  maxUserFiles: 5_000,
  maxHistoryBytes: 4 * (64 * 1024 * 1024 + VERSION_FLOOR_BYTES * 5_000),
  maxHistoryVersions: 20 * 5_000,
  viewChars: DEFAULT_LIMITS.viewChars,
  maxViewOutputChars: 2 * DEFAULT_LIMITS.viewChars,
  refreshAfterMs: 60_000,
  refreshEveryWrites: 20,
  maxCachedUsers: 10_000,
};

/** Options filled in with defaults and checked; a bad value is a start-up error (CONFIG). */
export function resolveQuota(options: QuotaOptions = {}): ResolvedQuota {
  const resolved: ResolvedQuota = { ...DEFAULT_QUOTA };
  for (const key of Object.keys(DEFAULT_QUOTA) as Array<keyof ResolvedQuota>) {
    const value = options[key];
    if (value === undefined) continue;
    if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < (key === 'refreshAfterMs' ? 0 : 1)) {
      throw new MemvaultError(
        'CONFIG',
        `memvault: quota option ${key} must be a positive whole number, not ${String(value)}`,
      );
    }
    resolved[key] = value;
  }
  if (options.viewChars !== undefined && options.maxViewOutputChars === undefined)
    resolved.maxViewOutputChars = 2 * resolved.viewChars;
  if (options.maxHistoryBytes === undefined) {
    resolved.maxHistoryBytes =
      HISTORY_ALLOWANCE_FACTOR * (resolved.maxUserBytes + VERSION_FLOOR_BYTES * resolved.maxUserFiles);
  }
  if (options.maxHistoryVersions === undefined)
    resolved.maxHistoryVersions = HISTORY_VERSIONS_FACTOR * resolved.maxUserFiles;
  if (resolved.maxViewOutputChars < resolved.viewChars + 200) {
    throw new MemvaultError(
      'CONFIG',
      'memvault: quota option maxViewOutputChars must leave room for viewChars of text plus line numbers',
    );
  }
  return resolved;
}

/**
 * The command-layer limits that the quota options own: createVault passes these into `limits`, so
 * that one option sets both the quota check and the command layer's own guard of the same limit.
 */
export function quotaCommandLimits(options: QuotaOptions = {}): Pick<CommandLimits, 'maxFileBytes' | 'viewChars'> {
  const q = resolveQuota(options);
  return { maxFileBytes: q.maxFileBytes, viewChars: q.viewChars };
}
