/**
 * The option and result types of the lifecycle operations (src/lifecycle/), shared by the modules
 * here and by the Vault interface (src/entry/vault-types.ts re-exports them).
 */
import type { Readable } from 'node:stream';
import type { RekeyOptions, RekeyProgress } from '../crypto/index.js';
import type { TtlSettings } from '../expiry/config.js';
import type { SweepProgress } from '../expiry/sweep.js';
import type { ConditionalDeleter } from '../expiry/deleter.js';
import type { ExportResult } from './export-archive.js';

/** What every lifecycle operation takes: who asked (recorded in the audit record). */
export interface LifecycleOptions {
  /** An operator or ticket id, `[A-Za-z0-9._:-]{1,128}` (no e-mail addresses: records hold no PII). */
  actor?: string;
}

export interface UserExport {
  uid: string;
  /** The tar archive; read it to the end (it is produced as it is read). */
  stream: Readable;
  /** Settles when the archive is complete (or failed; the stream then errors too). */
  done: Promise<ExportResult>;
}

export interface ExpireOptions extends LifecycleOptions {
  /** TTL settings; default: the vault's `expiry` option. */
  ttl?: TtlSettings;
  dryRun?: boolean;
  asOf?: Date;
  graceMs?: number;
  deleter?: ConditionalDeleter;
  onProgress?: (progress: SweepProgress) => void;
}

export type RekeyCallOptions = Pick<RekeyOptions, 'settleMs' | 'wait' | 'continueOnly' | 'now' | 'sleep'> & {
  onProgress?: (progress: RekeyProgress) => void;
};
