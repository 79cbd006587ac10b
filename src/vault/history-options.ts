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

/** Environment switches (the CLI, containers): MEMVAULT_HISTORY=0 (off; 1 is the default), MEMVAULT_HISTORY_DAYS, MEMVAULT_HISTORY_VERSIONS. */
export const HISTORY_ENV = { on: 'MEMVAULT_HISTORY', days: 'MEMVAULT_HISTORY_DAYS', versions: 'MEMVAULT_HISTORY_VERSIONS' } as const;

/**
 * The history option the environment asks for: false for MEMVAULT_HISTORY=0/off/false; otherwise
 * the retention knobs given (undefined when none is: the vault's default, history on).
 */
export function historyFromEnv(env: NodeJS.ProcessEnv = process.env): boolean | HistoryOptions | undefined {
  const on = env[HISTORY_ENV.on]?.trim().toLowerCase();
  if (on !== undefined && on !== '') {
    if (['0', 'off', 'false', 'no'].includes(on)) return false;
    if (!['1', 'on', 'true', 'yes'].includes(on)) throw new MemvaultError('CONFIG', `memvault: ${HISTORY_ENV.on} must be 1 or 0 (got '${on}')`);
  }
  const number = (name: string): number | undefined => {
    const raw = env[name]?.trim();
    if (raw === undefined || raw === '') return undefined;
    const value = Number(raw);
    if (!Number.isFinite(value)) throw new MemvaultError('CONFIG', `memvault: ${name} must be a number (got '${raw}')`);
    return value;
  };
  const retentionDays = number(HISTORY_ENV.days);
  const maxVersions = number(HISTORY_ENV.versions);
  const options: HistoryOptions = { ...(retentionDays !== undefined ? { retentionDays } : {}), ...(maxVersions !== undefined ? { maxVersions } : {}) };
  resolveHistoryOptions(options); // refuse bad numbers at start-up
  return retentionDays === undefined && maxVersions === undefined ? undefined : options;
}

/**
 * The history retention a standalone sweeper (`memvault expire`, the Lambda sweeper) enforces: the
 * defaults, or the environment's knobs, unless MEMVAULT_HISTORY=0 turns history off (undefined).
 * History is on by default, so a sweep of a deployment keeps its versions within retention without
 * being asked to.
 */
export function historyRetentionFromEnv(env: NodeJS.ProcessEnv = process.env): ResolvedHistory | undefined {
  return resolveHistoryOptions(historyFromEnv(env));
}
