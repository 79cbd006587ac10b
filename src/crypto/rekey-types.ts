/** The options, progress and results of a re-key (src/crypto/rekey.ts), and the context its passes share. */
import type { ObjectStore } from '../store/port.js';
import type { KeyProvider } from './key-provider.js';
import type { DeploymentBinding } from './wrapped-secret.js';

export interface RekeyProgress {
  uid: string;
  phase: 'version' | 'reseal' | 'settle' | 'drop' | 'done';
  /** The version new content is sealed under. */
  keyVersion: number;
  /** Objects looked at in the current pass. */
  scanned: number;
  /** Objects re-sealed so far (all passes). */
  resealed: number;
  /** Set in phase 'settle': when the old versions may be dropped. */
  settlesAt?: string;
}

export interface RekeyOptions {
  store: ObjectStore;
  /** Wraps the new version; the record must be wrapped with it (finish a rotation first). */
  primary: KeyProvider;
  /** Every provider that may open records (primary and previous keys). */
  providers: readonly KeyProvider[];
  /**
   * The longest key-cache age of any instance serving this store, plus grace. Older versions are
   * dropped only by a pass that started this long after the record's last write. Default 11 minutes.
   */
  settleMs?: number;
  /** Wait out the settle time in this call (default true); false returns with `oldVersionsDropped: false` and `settlesAt`. */
  wait?: boolean;
  /** Only continue a re-key that is under way; never start a new version (a rerun of `--all` after a crash). */
  continueOnly?: boolean;
  /**
   * Idle expiry for one user: the tags their writes carry (the TTL class; re-sealed objects keep
   * them) and whether a file is expired (left as it is: re-sealing would resurrect it; it keeps its
   * version, and so the old version, until swept).
   */
  accessFor?: (uid: string) => Promise<RekeyAccess | undefined>;
  /** Drop this process's cached keys of the user when the record changes. */
  evict?: (uid: string) => void;
  onProgress?: (progress: RekeyProgress) => void;
  /** Conditional-put attempts per object before it counts as a conflict (default 5). */
  maxAttemptsPerObject?: number;
  now?: () => number;
  sleep?: (ms: number) => Promise<void>;
}

export interface RekeyUserResult {
  uid: string;
  /** The version new content is sealed under now. */
  keyVersion: number;
  /** True when this run wrote the new version (false: it continued one under way, or continueOnly found none). */
  startedVersion: boolean;
  /** Objects re-sealed under the new version. */
  resealed: number;
  /** Objects already under the new version (written by the service since, or re-sealed by an earlier run). */
  current: number;
  /** Objects under the prefix that are not the user's files (fence markers, names that do not decrypt); untouched. */
  skipped: number;
  /** Expired objects left as they were (they keep an older version until the sweeper removes them). */
  expired: number;
  /** Objects that name a version the record does not hold, or do not open under theirs (INTEGRITY); untouched. */
  failed: number;
  /** Objects that kept changing during the pass (each change is an edit already under the new version: run again). */
  conflicts: number;
  /** True when the record holds no older content version any more. */
  oldVersionsDropped: boolean;
  /** When older versions remain only because instances may still cache the old record: when they may be dropped. */
  settlesAt?: string;
}

export interface RekeyAllResult {
  users: number;
  /** Users whose older versions are dropped. */
  completed: number;
  resealed: number;
  failed: number;
  conflicts: number;
  expired: number;
  results: RekeyUserResult[];
}

export interface RekeyAccess {
  writeTags?: Record<string, string>;
  isExpired?(lastModified: Date): boolean;
}

export interface Context extends RekeyOptions {
  binding: DeploymentBinding;
  wipe: (bytes: Uint8Array) => void;
}

/** What one pass over a user's objects counts. */
export type PassCounts = Pick<RekeyUserResult, 'resealed' | 'current' | 'skipped' | 'expired' | 'failed' | 'conflicts'>;
