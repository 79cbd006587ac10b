/**
 * What the chain's middlewares decide, one typed field each, on `ctx.decisions`. The audit record
 * (pipeline/command-record.ts) and the metrics (telemetry/signals.ts) read them; they hold counts,
 * flags and rule names, never content, paths or ids.
 *
 * A host's own middleware records its decision by adding a field to `CommandDecisions` (TypeScript
 * module augmentation: `declare module '<this module>' { interface CommandDecisions { mine?: MyDecision } }`);
 * its values must be numbers, booleans, enum-like strings or nestings of them to reach the audit
 * record (audit/record.ts drops anything else).
 */
import type { PiiType } from '../pii/types.js';

/** Stable identifiers of the rule that rejected a path (for audit records and tests). */
export type PathRule =
  | 'not-a-string'
  | 'empty'
  | 'too-long'
  | 'segment-too-long'
  | 'ill-formed-unicode'
  | 'control-character'
  | 'backslash'
  | 'outside-root'
  | 'empty-segment'
  | 'dot-segment'
  | 'dots-and-spaces'
  | 'encoded-separator'
  | 'encoded-traversal'
  | 'overlong-utf8'
  | 'too-deeply-encoded'
  | 'drive-or-scheme'
  | 'device-name'
  | 'invisible-name'
  | 'reserved';

/** What the path guard decided (`pathGuard`): never the path itself. */
export interface PathGuardDecision {
  blocked: boolean;
  rule?: PathRule;
}

/** What the input-size check decided (`validate`). Never the text. */
export interface InputSizeDecision {
  refused: boolean;
  field?: 'file_text' | 'old_str' | 'new_str' | 'insert_text';
  bytes?: number;
  limit?: number;
}

/** What the PII redactor decided (`pii`): counts only, never values. */
export interface PiiDecision {
  action: 'none' | 'redacted' | 'rejected';
  /** Findings by type in the text that would be written (for an edit: in the file near the change). */
  findings: Partial<Record<PiiType, number>>;
  /** Findings by type in the paths of the command (written paths and paths it looks up). */
  pathFindings?: Partial<Record<PiiType, number>>;
  /** Types refused by policy (only when action is 'rejected'). */
  rejected?: PiiType[];
  /** An edit redacted text the file already held: its earlier kept versions were dropped with it (docs/pii.md). */
  redactedStored?: true;
}

export type QuotaRule =
  'file_bytes' | 'user_bytes' | 'user_files' | 'history_bytes' | 'history_versions' | 'view_chars';

/** What the quota decided for one command (`quota`). */
export type QuotaDecision =
  | { checked: false }
  | {
      checked: true;
      rule: QuotaRule;
      limit: number;
      used: number;
      delta: number;
      allowed: boolean;
      truncated?: boolean;
    };

/** `ctx.decisions`: each middleware's decision under its name, absent when it did not run or decide. */
export interface CommandDecisions {
  validate?: InputSizeDecision;
  pathGuard?: PathGuardDecision;
  pii?: PiiDecision;
  quota?: QuotaDecision;
}
