/**
 * History settings (docs/versions.md): on or off, and how long versions are kept. Retention is
 * enforced by the sweeper (src/expiry/history-retention.ts) and, on S3, by the lifecycle rule of
 * the CDK construct (infra/), which can only bound age.
 */
import { MemvaultError } from '../errors.js';

export interface HistoryOptions {
  /** Versions older than this are dropped by the sweeper (default 30); the newest version of a live file is always kept. */
  retentionDays?: number;
  /** At most this many versions per file (default 100; the newest are kept). */
  maxVersions?: number;
}

export interface ResolvedHistory {
  retentionDays: number;
  maxVersions: number;
}

export const DEFAULT_HISTORY: ResolvedHistory = { retentionDays: 30, maxVersions: 100 };

/**
 * On unless turned off: undefined (not configured) and `true` both mean the defaults, `false` is the
 * off switch (docs/versions.md, "On by default").
 */
export function resolveHistoryOptions(option: boolean | HistoryOptions | undefined): ResolvedHistory | undefined {
  if (option === false) return undefined;
  const given = option === undefined || option === true ? {} : option;
  const retentionDays = given.retentionDays ?? DEFAULT_HISTORY.retentionDays;
  const maxVersions = given.maxVersions ?? DEFAULT_HISTORY.maxVersions;
  if (!(retentionDays > 0) || !Number.isFinite(retentionDays))
    throw new MemvaultError('CONFIG', 'memvault: history.retentionDays must be a positive number of days');
  if (!Number.isSafeInteger(maxVersions) || maxVersions < 1 || maxVersions > 1000) {
    throw new MemvaultError('CONFIG', 'memvault: history.maxVersions must be a whole number from 1 to 1,000');
  }
  return { retentionDays, maxVersions };
}

/** The environment's history option (MEMVAULT_HISTORY, _DAYS, _VERSIONS), read through the one table. */
export { historyFromEnv } from '../config/from-env.js';
