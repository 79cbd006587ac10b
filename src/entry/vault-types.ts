/**
 * The public types of createVault (moved out of memvault.ts, which keeps the implementation): its
 * options, the Vault it returns, and the options of the vault's lifecycle methods. memvault.ts
 * re-exports them all; src/entry/arguments.ts and vault-options.ts check them at run time.
 */
import type { betaMemoryTool, MemoryToolHandlers } from '@anthropic-ai/sdk/helpers/beta/memory';
import type { S3ClientConfigLike, S3ClientLike } from '../store/s3/client-shape.js';
import type { AuditLogger, AuditOptions } from '../pipeline/audit-logger.js';
import type {
  RekeyUserResult,
  RekeyAllResult,
  VerifyKeysResult,
  EncryptionConfig,
  ForgetProgress,
  ForgetResult,
  KeyProvider,
  KeySourceConfig,
  RotationProgress,
  RotationResult,
} from '../crypto/index.js';
import type { ExportProgress } from '../lifecycle/export-archive.js';
import type { VersionContent } from '../lifecycle/read-version.js';
import type { ExpireOptions, LifecycleOptions, RekeyCallOptions, UserExport } from '../lifecycle/types.js';
import type { ExpiryOptions } from '../expiry/config.js';
import type { SweepSummary } from '../expiry/sweep.js';
import type { CommandResult, Middleware, Precondition } from '../pipeline/context.js';
import type { QuotaOptions } from '../pipeline/quota.js';
import type { PiiMiddlewareOptions } from '../pipeline/pii-redactor.js';
import type { OpenStoreOptions } from '../store/open.js';
import type { ObjectStore } from '../store/port.js';
import type { CommandLimits } from '../tool/commands/env.js';
import type { CodecProvider } from '../crypto/user-codec.js';
import type { RestoreResult, VersionInfo } from '../vault/history.js';
import type { HistoryOptions } from '../vault/history-options.js';
import type { TreeFiles } from '../vault/tree-files.js';
import type { UserRecords } from './host-records.js';
import type { VaultLogger } from './logger.js';

export interface VaultOptions {
  /** 'sqlite:/abs/file.db' (default: ./.memvault.db), 'file:///abs/dir', 's3://bucket/prefix', 'memory:', or an adapter. */
  store?: string | ObjectStore;
  /**
   * For s3:// stores: your S3Client (it sends every request, with its credentials, middleware and
   * retries; recognised by shape, so any copy of @aws-sdk/client-s3 v3 works), or its config.
   */
  s3?: S3ClientLike | S3ClientConfigLike;
  /**
   * For s3:// stores: `conditionChecks: 'native'` on AWS S3 (which enforces conditional copies and
   * deletes itself); the default 'check-first' adds a HEAD where Ceph RGW 16 ignores the condition.
   */
  s3Options?: OpenStoreOptions['s3Options'];
  /** Operational logs (never file content, keys or raw user ids): pino, console, or anything of that shape. */
  logger?: VaultLogger;
  /**
   * Client-side encryption (on by default for file and S3 stores; the in-memory test store defaults
   * to plain). Keys: `masterKey`, `masterKeyFile`, or `kms: { keyId }`, else the environment
   * (MEMVAULT_MASTER_KEY, MEMVAULT_MASTER_KEY_FILE, MEMVAULT_KMS_KEY_ID); with none of them, a new
   * deployment gets a key file created and announced (see defaultMasterKeyFileFor).
   * `false` stores names and bytes as they are.
   */
  encryption?: EncryptionConfig | false;
  /** Advanced: a codec of your own (overrides `encryption`). */
  codec?: CodecProvider;
  /**
   * The PII redactor (on by default: every type redacted to [REDACTED:TYPE] before it is written).
   * Policies per type ('redact' | 'reject' | 'allow'), an allow-list, phone regions; `false` turns it off.
   */
  pii?: PiiMiddlewareOptions | false;
  /**
   * Quotas (on by default): bytes per file (1 MiB), bytes per user (64 MiB), files per user (5,000),
   * characters per view (16,000 of file text). A write over a limit is refused, naming the limit,
   * what is used and what is left. `false` turns quotas off.
   */
  quota?: QuotaOptions | false;
  /** Middlewares between the path guard and the commands (they see canonical paths). */
  middlewares?: Middleware[];
  /** Middlewares outside validation and the path guard (audit goes here: it sees rejected commands). */
  outerMiddlewares?: Middleware[];
  limits?: Partial<CommandLimits>;
  /**
   * Audit records, one per command (also rejected ones), hash-chained: `{ file: PATH }` writes JSON
   * lines to PATH. Paths are recorded as pseudonymous ids (`#` + a keyed hash of uid and path)
   * unless `redactPath` says otherwise: file names are user data.
   */
  audit?: AuditOptions;
  /** 'overwrite' (default: the model is told create "creates or overwrites") or 'fail' (reference error). */
  createMode?: 'overwrite' | 'fail';
  /**
   * Idle expiry (docs/expiry.md): files idle past their class's TTL are absent, reads touch
   * a file at most once per interval, writes carry the TTL-class tag. Off when not given.
   */
  expiry?: ExpiryOptions;
  /**
   * File history (docs/versions.md): every change keeps the version it made, for restore and undo,
   * and a put-back older version is refused on read. On by default (30 days, 100 versions per file;
   * retention settings change that); `false` turns it off (MEMVAULT_HISTORY=0 in the CLI).
   */
  history?: boolean | HistoryOptions;
  /**
   * true (default): a really empty store becomes a new deployment (a file store's directory, the
   * deployment record and, with no key configured, the default key file are created). false: open
   * an existing deployment only and create nothing, so a mistyped store URL is an error instead of
   * a fresh empty store (what tools that only read or erase want). Either way, a store that holds
   * user data but no deployment record stops start-up with STORE_INCONSISTENT.
   */
  create?: boolean;
}

/** What `betaMemoryTool(handlers, extraProps)` takes besides the handlers: cache_control, defer_loading, ... */
export type MemoryToolExtraProps = NonNullable<Parameters<typeof betaMemoryTool>[1]>;

/** How the host runs one command (vault.run's third argument). */
export interface RunOptions {
  /**
   * `{ ifMatch }`: the hex SHA-256 (64 lowercase hex digits) of the file's current plaintext, as
   * serve's ETag carries it; the create or delete lands only on exactly that version.
   * `{ ifNoneMatch: '*' }`: create only when no file is at the path.
   */
  precondition?: Precondition;
  /** Who sent the command, recorded on its audit record: 1-128 of A-Z a-z 0-9 . _ : - (e.g. a service key id). */
  actor?: string;
  /**
   * Whose change this is, kept in the file's history: 'model' (the default: the agent, through the
   * tool), 'person' (the person remembered, e.g. on the memory page) or 'host' (the application or an
   * operator). A paused memory refuses only the model's writes.
   */
  writer?: 'model' | 'person' | 'host';
  /**
   * Cancels the command if it fires before the command's first change (while it waits for its lock or
   * reads): the answer is an ABORTED error and nothing changed. A command that has written finishes.
   */
  signal?: AbortSignal;
}

export interface Vault {
  /** Handlers for `betaMemoryTool` from '@anthropic-ai/sdk/helpers/beta/memory'. */
  handlers(userId: string): MemoryToolHandlers;
  /** `betaMemoryTool(vault.handlers(userId), extraProps)`, ready for `client.beta.messages.toolRunner`. */
  tool(userId: string, extraProps?: MemoryToolExtraProps): ReturnType<typeof betaMemoryTool>;
  /**
   * Runs one tool input for a user and returns the result without throwing (the CLI and serve use it).
   * `options.precondition` makes a create or delete conditional (a mismatch is VERSION_MISMATCH and
   * changes nothing); `options.actor` is recorded on the command's audit record, `options.writer` in
   * the file's history; `options.signal` cancels a command that has not written yet. Invalid options are
   * an INVALID_INPUT result, never a default.
   */
  run(userId: string, input: unknown, options?: RunOptions): Promise<CommandResult>;
  /** Host-side access to a user's files (import, export), bypassing the model-facing chain. */
  files(userId: string): Promise<TreeFiles>;
  /**
   * Records a host keeps beside a user's files (serve's idempotency records): named by a keyed hash,
   * sealed under the user's own key, erased with the user. `kind` is [a-z-]{1,32}.
   */
  userRecords(userId: string, kind: string): Promise<UserRecords>;
  /**
   * Readiness (serve's /readyz): throws unless the store answers and the configured key opens this
   * deployment's record now (one read and one unwrap: a KMS call with KMS; callers cache it).
   */
  checkReady(): Promise<void>;
  readonly store: ObjectStore;
  /** The audit logger, when configured (the expiry sweeper and erasure append their records to it). */
  readonly audit: AuditLogger | undefined;
  /**
   * Erasure: destroys the user's wrapped data key first (nothing of theirs can be decrypted after
   * that, even from backups), then deletes their objects. Idempotent: running it again finishes an
   * interrupted run. Writes an `erase` audit record (also when it fails part way). Needs encryption.
   */
  forgetUser(
    userId: string,
    options?: LifecycleOptions & { onProgress?: (progress: ForgetProgress) => void },
  ): Promise<ForgetResult>;
  /**
   * Access and portability: a tar archive of the user's files, decrypted, at `memories/...`, their
   * kept versions (file history) at `history/memories/.../@<seq>`, and a last entry `manifest.json`
   * (format `memvault-user-export` v2: every path, size and modification time, and every version
   * with who made it and when). Resolves once the user is known (an unknown user is NOT_FOUND and nothing is streamed);
   * `done` settles when the archive is complete. Writes an `export` audit record. Needs encryption.
   */
  exportUser(
    userId: string,
    options?: LifecycleOptions & { onProgress?: (progress: ExportProgress) => void },
  ): Promise<UserExport>;
  /**
   * Re-wraps the deployment record and every user's data key under `to`, without re-encrypting
   * content; resumable and safe beside running instances. Writes a `rotate` audit record.
   */
  rotateKeys(
    options: LifecycleOptions & {
      to: KeySourceConfig | KeyProvider;
      onProgress?: (progress: RotationProgress) => void;
    },
  ): Promise<RotationResult>;
  /**
   * Opens every key record with the configured key alone (no previous keys): each must pass its
   * MAC and unwrap. Run it after a rotation, before the old key is destroyed; `failed` lists every
   * record that did not open. Only reads.
   */
  verifyKeys(options?: { onProgress?: (progress: { done: number; total: number }) => void }): Promise<VerifyKeysResult>;
  /**
   * Replaces a user's data key (docs/encryption.md, "Re-keying"): a new key version, every object
   * under an older one re-sealed in place (If-Match), the older versions dropped once no object
   * needs them and every instance has re-read the record (`settleMs`, default the key-cache age plus
   * a minute; `wait: false` returns before that). Resumable, safe while the service runs. Writes a
   * `rekey` audit record. Needs encryption.
   */
  rekeyUser(userId: string, options?: LifecycleOptions & RekeyCallOptions): Promise<RekeyUserResult>;
  /** rekeyUser for every user with a key record (one shared settle wait). Writes one `rekey` audit record. */
  rekeyAll(options?: LifecycleOptions & RekeyCallOptions): Promise<RekeyAllResult>;
  /**
   * The expiry sweeper (docs/expiry.md): deletes files idle past their TTL (default: the vault's
   * `expiry` settings). Each deletion, and the sweep itself, is audited.
   */
  expire(options?: ExpireOptions): Promise<SweepSummary>;
  /** The versions of the file at `path` and of every file below it (docs/versions.md). Needs history on; audited. */
  history(
    userId: string,
    path: string,
    options?: LifecycleOptions,
  ): Promise<{ versions: VersionInfo[]; truncated: boolean }>;
  /**
   * One kept version of the file at `path` (`seq` as history lists it): its record and content, or
   * null when no such version is kept. Needs history on; audited as a read of history.
   */
  readVersion(userId: string, path: string, seq: number, options?: LifecycleOptions): Promise<VersionContent | null>;
  /** Whether the user paused their memory (docs/page.md). An unknown user is not paused (nothing is created). */
  memoryPaused(userId: string, options?: LifecycleOptions): Promise<boolean>;
  /**
   * Pause or resume a user's memory: while paused, the model's writes (vault.run with writer 'model',
   * the default, and every tool call) are refused with PAUSED in every process on the store; views,
   * and writes by the person or the host, go on. Audited (`pause`).
   */
  setMemoryPaused(userId: string, paused: boolean, options?: LifecycleOptions): Promise<void>;
  /** Restore a file, a directory or (no path) the whole user as of `asOf`; each file restored is a new version. Audited. */
  restore(
    userId: string,
    options: LifecycleOptions & { path?: string; asOf: Date; dryRun?: boolean },
  ): Promise<RestoreResult>;
  /** Drop one version for good (it holds what must not be kept). False when there was no such version. Audited. */
  dropVersion(userId: string, path: string, seq: number, options?: LifecycleOptions): Promise<boolean>;
  close(): Promise<void>;
}

export type { ExpireOptions, LifecycleOptions, RekeyCallOptions, UserExport } from '../lifecycle/types.js';
