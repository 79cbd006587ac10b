import { randomUUID } from 'node:crypto';
import { PassThrough, type Readable } from 'node:stream';
import { betaMemoryTool, type MemoryToolHandlers } from '@anthropic-ai/sdk/helpers/beta/memory';
import { ToolError } from '@anthropic-ai/sdk/lib/tools/ToolError';
import type { S3Client, S3ClientConfig } from '@aws-sdk/client-s3';
import type { AuditLogger, AuditOptions } from './pipeline/audit-logger.js';
import { auditPseudonymsOf, type AuditPseudonyms } from './audit/index.js';
import { validateUserId } from './crypto/codec.js';
import {
  exportUser as exportUserArchive,
  forgetUser as forgetUserData,
  keyProviderFromConfig,
  rotateKeys as rotateAllKeys,
  verifyKeys as verifyAllKeys,
  rekeyUid,
  rekeyAll as rekeyAllUsers,
  type RekeyOptions,
  type RekeyProgress,
  type RekeyUserResult,
  type RekeyAllResult,
  type VerifyKeysResult,
  type Encryption,
  type EncryptedCodecProvider,
  type EncryptionConfig,
  type ExportProgress,
  type ExportResult,
  type ForgetProgress,
  type ForgetResult,
  type KeyProvider,
  type KeySourceConfig,
  type RotationProgress,
  type RotationResult,
} from './crypto/index.js';
import type { AuditEntry } from './audit/record.js';
import type { TtlSettings } from './expiry/config.js';
import { keyHash, sweep, type SweepProgress, type SweepSummary } from './expiry/sweep.js';
import type { ConditionalDeleter } from './expiry/deleter.js';
import { isMemvaultError, loggableError, MemvaultError } from './errors.js';
import type { ExpiryOptions } from './expiry/config.js';
import { createExpiryService } from './expiry/access.js';
import type { CommandContext, CommandResult, Middleware } from './pipeline/context.js';
import { withErrorBoundary } from './pipeline/error-result.js';
import type { QuotaOptions } from './pipeline/quota.js';
import type { PiiMiddlewareOptions } from './pipeline/pii-redactor.js';
import { observeCommands } from './pipeline/telemetry.js';
import { withCommandStats, withRequestCounter, type CommandStats } from './store/accounting.js';
import type { OpenStoreOptions } from './store/open.js';
import type { ObjectStore } from './store/port.js';
import type { CommandLimits } from './tool/commands/env.js';
import type { ResultContent } from './tool/types.js';
import type { CodecProvider } from './crypto/user-codec.js';
import { VaultLocks } from './vault/locks.js';
import { observeStore } from './store/observed.js';
import { StoreUserFiles, versionRecordMemo, type UnreadableObjectListener } from './vault/store-user-files.js';
import { dropVersion, listHistory, restore as restoreHistory, type RestoreResult, type VersionInfo } from './vault/history.js';
import { resolveHistoryOptions, type HistoryOptions } from './vault/history-options.js';
import type { VersionActor } from './vault/version-record.js';
import type { UserFiles } from './vault/user-files.js';
import { resolveAudit, type CommandIdentities } from './entry/audit.js';
import { resolveCommandChain } from './entry/chain.js';
import { Closers } from './entry/closers.js';
import { resolveCodec } from './entry/encryption.js';
import type { VaultLogger } from './entry/logger.js';
import { resolveStore } from './entry/store.js';
import {
  checkDropVersionArgs,
  checkExpireArgs,
  checkExportArgs,
  checkForgetArgs,
  checkHistoryArgs,
  checkRekeyAllArgs,
  checkRekeyUserArgs,
  checkRestoreArgs,
  checkRotateArgs,
  checkToolArgs,
  checkVerifyKeysArgs,
} from './entry/arguments.js';
import { checkVaultOptions } from './entry/vault-options.js';

export interface VaultOptions {
  /** 'file:///abs/dir' (default: ./.memvault), 's3://bucket/prefix', 'memory:', or an adapter. */
  store?: string | ObjectStore;
  /**
   * For s3:// stores: your S3Client (it sends every request, with its credentials, middleware and
   * retries; recognised by shape, so any copy of @aws-sdk/client-s3 v3 works), or its config.
   */
  s3?: S3Client | S3ClientConfig;
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

export type { VaultLogger } from './entry/logger.js';

/** What `betaMemoryTool(handlers, extraProps)` takes besides the handlers: cache_control, defer_loading, ... */
export type MemoryToolExtraProps = NonNullable<Parameters<typeof betaMemoryTool>[1]>;

export interface Vault {
  /** Handlers for `betaMemoryTool` from '@anthropic-ai/sdk/helpers/beta/memory'. */
  handlers(userId: string): MemoryToolHandlers;
  /** `betaMemoryTool(vault.handlers(userId), extraProps)`, ready for `client.beta.messages.toolRunner`. */
  tool(userId: string, extraProps?: MemoryToolExtraProps): ReturnType<typeof betaMemoryTool>;
  /** Runs one tool input for a user and returns the result without throwing (the CLI uses it). */
  run(userId: string, input: unknown): Promise<CommandResult>;
  /** Host-side access to a user's files (import, export), bypassing the model-facing chain. */
  files(userId: string): Promise<UserFiles>;
  readonly store: ObjectStore;
  /** The audit logger, when configured (the expiry sweeper and erasure append their records to it). */
  readonly audit: AuditLogger | undefined;
  /**
   * Erasure: destroys the user's wrapped data key first (nothing of theirs can be decrypted after
   * that, even from backups), then deletes their objects. Idempotent: running it again finishes an
   * interrupted run. Writes an `erase` audit record (also when it fails part way). Needs encryption.
   */
  forgetUser(userId: string, options?: LifecycleOptions & { onProgress?: (progress: ForgetProgress) => void }): Promise<ForgetResult>;
  /**
   * Access and portability: a tar archive of the user's files, decrypted, at `memories/...`, their
   * kept versions (file history) at `history/memories/.../@<seq>`, and a last entry `manifest.json`
   * (format `memvault-user-export` v2: every path, size and modification time, and every version
   * with who made it and when). Resolves once the user is known (an unknown user is NOT_FOUND and nothing is streamed);
   * `done` settles when the archive is complete. Writes an `export` audit record. Needs encryption.
   */
  exportUser(userId: string, options?: LifecycleOptions & { onProgress?: (progress: ExportProgress) => void }): Promise<UserExport>;
  /**
   * Re-wraps the deployment record and every user's data key under `to`, without re-encrypting
   * content; resumable and safe beside running instances. Writes a `rotate` audit record.
   */
  rotateKeys(options: LifecycleOptions & { to: KeySourceConfig | KeyProvider; onProgress?: (progress: RotationProgress) => void }): Promise<RotationResult>;
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
  history(userId: string, path: string, options?: LifecycleOptions): Promise<{ versions: VersionInfo[]; truncated: boolean }>;
  /** Restore a file, a directory or (no path) the whole user as of `asOf`; each file restored is a new version. Audited. */
  restore(userId: string, options: LifecycleOptions & { path?: string; asOf: Date; dryRun?: boolean }): Promise<RestoreResult>;
  /** Drop one version for good (it holds what must not be kept). False when there was no such version. Audited. */
  dropVersion(userId: string, path: string, seq: number, options?: LifecycleOptions): Promise<boolean>;
  close(): Promise<void>;
}

/** User ids come from the host application; the one check of them lives with the codec that hashes them. */
export { validateUserId };

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

function toHandlerResult(result: CommandResult): ResultContent {
  // ToolError content reaches the model verbatim with is_error: true, so spec strings stay exact.
  if (result.isError) throw new ToolError(result.content);
  return result.content;
}

export { CREATE_KEY_FILE_ENV, defaultMasterKeyFileFor, keyFileBesideData } from './entry/encryption.js';
/** Opens the store behind a URL without creating it (a file store's directory must exist already); its options checked. */
export { openExistingStore } from './entry/functions.js';

export async function createVault(options: VaultOptions = {}): Promise<Vault> {
  // Everything opened here is closed by vault.close(), last first; a failure part way through
  // start-up closes what was opened before it (store, codec, audit) and rethrows.
  checkVaultOptions(options); // before anything is opened: a misspelt or mistyped option is CONFIG
  const closers = new Closers();
  const logger = options.logger;
  const identities: CommandIdentities = { rawUserIds: new WeakMap(), pseudonyms: new WeakMap() };
  const { store, observedStore, codec, encryption, audit } = await closers.opening(async () => {
    const { store, url: storeUrl } = closers.add(await resolveStore(options), (opened) => opened.store.close());
    // What commands, key loads and idle expiry do to the store, with spans and metrics (vault.store stays the raw adapter).
    const observedStore = observeStore(store);
    const { codec, encryption } = closers.add(await resolveCodec(options, observedStore, storeUrl), (opened) => opened.close());
    const audit = await resolveAudit(options.audit, codec, identities);
    if (audit) closers.add(audit, (opened) => opened.close());
    return { store, observedStore, codec, encryption, audit };
  });
  const locks = new VaultLocks();
  const runChain = resolveCommandChain({ ...options, audit }, locks);
  logger?.info({ store: store.kind, codec: codec.mode }, 'memvault vault opened');

  const expiry = options.expiry ? createExpiryService(observedStore, options.expiry) : undefined;
  // An object under a user's prefix that is not one of their files is skipped by listings; the
  // operator hears of it by uid and the key's hash (the key itself may hold a plaintext folder name).
  const onUnreadable: UnreadableObjectListener = ({ uid, key, reason }) =>
    logger?.warn({ uid, object: `sha256:${keyHash(key)}`, reason }, "memvault listing skipped an object that is not one of the user's files");
  const history = resolveHistoryOptions(options.history);
  // One memo of checked version records for all the vault's commands (src/vault/store-user-files.ts).
  const knownRecords = versionRecordMemo();
  const openUser = async (userId: string, actor: VersionActor = 'model'): Promise<{ files: StoreUserFiles; pseudonyms: AuditPseudonyms }> => {
    const userCodec = await codec.forUser(validateUserId(userId));
    const files = new StoreUserFiles(observedStore, userCodec, expiry ? await expiry.forUser(userId, userCodec) : undefined, onUnreadable, {
      actor,
      keepHistory: history !== undefined,
      knownRecords,
    });
    return { files, pseudonyms: auditPseudonymsOf(userCodec, codec) };
  };
  const userFiles = async (userId: string): Promise<StoreUserFiles> => (await openUser(userId, 'host')).files;

  const run = observeCommands(async (userId: string, input: unknown): Promise<CommandResult> => {
    const stats: CommandStats = { bytesRead: 0, bytesWritten: 0, requests: {} };
    const requestId = randomUUID();
    let uid: string | undefined;
    // The one error boundary: whatever the key load, a middleware or a command throws becomes the
    // model's answer here (run() answers with a result, never a throw); faults are logged by name only.
    return withErrorBoundary(
      async () => {
        // Loading the user's key (GET, and PUT the very first time) is part of this command's cost:
        // count it into the command's stats, which metrics and the audit record read.
        const { files, pseudonyms } = await withRequestCounter(stats.requests, () => openUser(userId));
        uid = files.uid;
        const ctx: CommandContext = { requestId, uid, input, pathsCanonical: false, files, stats, decisions: {} };
        identities.rawUserIds.set(ctx, userId);
        identities.pseudonyms.set(ctx, pseudonyms);
        return withCommandStats(stats, () => runChain(ctx));
      },
      (error) => logger?.error({ requestId, ...(uid !== undefined ? { uid } : {}), err: loggableError(error) }, 'memvault command failed'),
    );
  });

  const handlers = (userId: string): MemoryToolHandlers => {
    validateUserId(userId);
    const call = async (input: unknown) => toHandlerResult(await run(userId, input));
    return { view: call, create: call, str_replace: call, insert: call, delete: call, rename: call };
  };

  // ---- lifecycle operations: each leaves one audit record, whatever its outcome -------------
  const vaultOptions = options;
  const needsEncryption = (what: string): Encryption => {
    if (!encryption)
      throw new MemvaultError(
        'CONFIG',
        `memvault: ${what} needs the vault's own encryption (encryption: false or a custom codec has no user keys to destroy or re-wrap).`,
      );
    return encryption;
  };
  const audited = async <T>(
    entry: AuditEntry,
    run: (counts: Record<string, number>) => Promise<T>,
    countsOf: (result: T) => Record<string, number>,
  ): Promise<T> => {
    const counts: Record<string, number> = {};
    try {
      const result = await run(counts);
      audit?.append({ ...entry, outcome: 'ok', counts: { ...counts, ...countsOf(result) } });
      return result;
    } catch (error) {
      audit?.append({ ...entry, outcome: 'error', code: isMemvaultError(error) ? error.code : 'INTERNAL', counts });
      throw error;
    }
  };
  const auditUidOf = async (codecProvider: EncryptedCodecProvider, uid: string): Promise<string | undefined> => {
    try {
      return auditPseudonymsOf(await codecProvider.forUid(uid), codecProvider).uid;
    } catch {
      return undefined;
    }
  };
  const actorOf = (options: LifecycleOptions | undefined) => (options?.actor !== undefined ? { actor: options.actor } : {});

  // Each method checks its arguments first (src/entry/arguments.ts): an invalid one changes nothing.
  const forgetUser: Vault['forgetUser'] = async (userId, options) => {
    checkForgetArgs(userId, options);
    const { codecProvider } = needsEncryption('forgetUser');
    // The erase record names the user by their audit pseudonym, taken while the key still exists: it
    // closes that pseudonym's history, and like it cannot be linked to the id once the key is gone.
    // Without a readable key (erased before, damaged) it names no one.
    const auditUid = await auditUidOf(codecProvider, codecProvider.uidOf(userId));
    return audited(
      { type: 'erase', ...(auditUid !== undefined ? { uid: auditUid } : {}), ...actorOf(options) },
      (counts) =>
        forgetUserData({
          store,
          codecProvider,
          userId,
          onProgress: (p) => {
            if (p.phase === 'key') counts['keys'] = p.deleted;
            else counts['objects'] = p.deleted;
            options?.onProgress?.(p);
          },
        }),
      (r) => ({ keys: r.keyDeleted ? 1 : 0, objects: r.objectsDeleted }),
    );
  };

  const exportUser: Vault['exportUser'] = async (userId, options) => {
    checkExportArgs(userId, options);
    const { codecProvider } = needsEncryption('exportUser');
    const uid = codecProvider.uidOf(userId);
    let entry: AuditEntry = { type: 'export', ...actorOf(options) };
    try {
      // An unknown user is NOT_FOUND here, before any byte is streamed.
      entry = { ...entry, uid: auditPseudonymsOf(await codecProvider.forUid(uid), codecProvider).uid };
    } catch (error) {
      audit?.append({ ...entry, outcome: 'error', code: isMemvaultError(error) ? error.code : 'INTERNAL', counts: { objects: 0 } });
      if (isMemvaultError(error, 'NOT_FOUND'))
        throw new MemvaultError('NOT_FOUND', 'memvault: no memories are stored for this user; nothing was exported.', { cause: error });
      throw error;
    }
    const stream = new PassThrough();
    const done = audited(
      entry,
      (counts) =>
        exportUserArchive({
          store,
          codecProvider,
          userId,
          out: stream,
          onProgress: (p) => {
            counts['objects'] = p.files;
            counts['bytes'] = p.bytes;
            options?.onProgress?.(p);
          },
        }),
      (r) => ({ objects: r.files, bytes: r.bytes, versions: r.versions }),
    );
    done.catch(() => undefined); // the failure also reaches the reader as a stream error
    return { uid, stream, done };
  };

  const rotateKeys: Vault['rotateKeys'] = async (options) => {
    checkRotateArgs(options);
    const { keyProvider, previousKeyProviders } = needsEncryption('rotateKeys');
    const to = isKeyProvider(options.to) ? options.to : (await keyProviderFromConfig(options.to)).keyProvider;
    return audited(
      { type: 'rotate', ...actorOf(options) },
      (counts) =>
        rotateAllKeys({
          store,
          from: [keyProvider, ...previousKeyProviders],
          to,
          onProgress: (p) => {
            counts['records'] = p.done;
            options.onProgress?.(p);
          },
        }),
      (r) => ({ records: r.total, rewrapped: r.rewrapped, skipped: r.skipped }),
    );
  };

  const verifyKeys: Vault['verifyKeys'] = async (options = {}) => {
    checkVerifyKeysArgs(options);
    const { keyProvider } = needsEncryption('verifyKeys');
    return verifyAllKeys({ store, providers: keyProvider, ...(options.onProgress ? { onProgress: options.onProgress } : {}) });
  };

  const rekeyOptions = (options: RekeyCallOptions | undefined, counts: Record<string, number>): RekeyOptions => {
    const { keyProvider, previousKeyProviders, codecProvider } = needsEncryption('rekey');
    const { onProgress, ...rest } = options ?? {};
    return {
      ...rest,
      settleMs:
        options?.settleMs ??
        (vaultOptions.encryption && typeof vaultOptions.encryption === 'object' ? (vaultOptions.encryption.cache?.maxAgeMs ?? 600_000) + 60_000 : undefined),
      store,
      primary: keyProvider,
      providers: [keyProvider, ...previousKeyProviders],
      evict: (uid) => codecProvider.evict(uid),
      ...(expiry ? { accessFor: (uid: string) => expiry.forStoredUser(`u/${uid}/f/`) } : {}),
      onProgress: (p) => {
        counts['resealed'] = p.resealed;
        onProgress?.(p);
      },
    };
  };

  const rekeyUser: Vault['rekeyUser'] = async (userId, options) => {
    checkRekeyUserArgs(userId, options);
    const { codecProvider } = needsEncryption('rekeyUser');
    const uid = codecProvider.uidOf(userId);
    // The audit pseudonym derives from the user's first key version: the same before and after.
    const auditUid = await auditUidOf(codecProvider, uid);
    return audited(
      { type: 'rekey', ...(auditUid !== undefined ? { uid: auditUid } : {}), ...actorOf(options) },
      (counts) => rekeyUid({ ...rekeyOptions(options, counts), uid }),
      (r) => ({
        keyVersion: r.keyVersion,
        resealed: r.resealed,
        failed: r.failed,
        conflicts: r.conflicts,
        expired: r.expired,
        dropped: r.oldVersionsDropped ? 1 : 0,
      }),
    );
  };

  const rekeyAll: Vault['rekeyAll'] = async (options) => {
    checkRekeyAllArgs(options);
    return audited(
      { type: 'rekey', ...actorOf(options) },
      (counts) => rekeyAllUsers(rekeyOptions(options, counts)),
      (r) => ({ users: r.users, completed: r.completed, resealed: r.resealed, failed: r.failed, conflicts: r.conflicts, expired: r.expired }),
    );
  };

  const expire: Vault['expire'] = async (options = {}) => {
    checkExpireArgs(options);
    const fromVault = vaultOptions.expiry;
    const ttl: TtlSettings | undefined =
      options.ttl ??
      (fromVault
        ? {
            ttlDays: fromVault.ttlDays,
            ...(fromVault.classes ? { classes: fromVault.classes } : {}),
            ...(fromVault.defaultClass ? { defaultClass: fromVault.defaultClass } : {}),
          }
        : undefined);
    // With history on, a sweep also enforces its retention (and may run for that alone, without TTLs).
    if (!ttl && !history) throw new MemvaultError('CONFIG', 'memvault: expire needs TTL settings (the expiry option, or expire({ ttl }))');
    return audited(
      { type: 'expire', ...actorOf(options) },
      (counts) =>
        sweep({
          store,
          ...(ttl ? { ttl } : {}),
          ...(history ? { history } : {}),
          ...(options.dryRun !== undefined ? { dryRun: options.dryRun } : {}),
          ...(options.asOf ? { asOf: options.asOf } : {}),
          ...(options.graceMs !== undefined ? { graceMs: options.graceMs } : {}),
          ...(options.deleter ? { deleter: options.deleter } : {}),
          ...(audit && !options.dryRun ? { audit } : {}),
          onProgress: (p) => {
            counts['scanned'] = p.scanned;
            counts['expired'] = p.expired;
            counts['errors'] = p.errors;
            options.onProgress?.(p);
          },
        }),
      (r) => ({
        scanned: r.scanned,
        expired: r.expired,
        kept: r.kept,
        errors: r.errors,
        ...(r.versionsDropped !== undefined ? { versionsDropped: r.versionsDropped } : {}),
      }),
    );
  };

  // ---- history (docs/versions.md): src/vault/history.ts does the work ----------------------
  const historyOf = async (userId: string, entry: AuditEntry) => {
    validateUserId(userId);
    if (!history) throw new MemvaultError('CONFIG', 'memvault: file history is turned off for this vault (history: false, or MEMVAULT_HISTORY=0)');
    // Reading or restoring never creates a user: an unknown user is NOT_FOUND (encrypted stores).
    const userCodec = encryption ? await encryption.codecProvider.forUid(encryption.codecProvider.uidOf(userId)) : await codec.forUser(userId);
    const files = new StoreUserFiles(observedStore, userCodec, expiry ? await expiry.forUser(userId, userCodec) : undefined, onUnreadable, {
      actor: 'restore',
      keepHistory: true,
      knownRecords,
    });
    return { ctx: { store: observedStore, codec: userCodec, files }, entry: { ...entry, uid: auditPseudonymsOf(userCodec, codec).uid } };
  };
  const withHistory = async <T>(
    userId: string,
    entry: AuditEntry,
    work: (ctx: Awaited<ReturnType<typeof historyOf>>['ctx']) => Promise<T>,
    countsOf: (r: T) => Record<string, number>,
  ) => {
    let opened: Awaited<ReturnType<typeof historyOf>>;
    try {
      opened = await historyOf(userId, entry);
    } catch (error) {
      audit?.append({ ...entry, outcome: 'error', code: isMemvaultError(error) ? error.code : 'INTERNAL' });
      throw error;
    }
    return audited(opened.entry, () => work(opened.ctx), countsOf);
  };
  const historyApi: Pick<Vault, 'history' | 'restore' | 'dropVersion'> = {
    history: async (userId, path, options) => {
      const canonical = checkHistoryArgs(userId, path, options);
      return withHistory(
        userId,
        { type: 'history', ...actorOf(options) },
        (ctx) => listHistory(ctx, canonical),
        (r) => ({ versions: r.versions.length }),
      );
    },
    restore: async (userId, options) => {
      const checked = checkRestoreArgs(userId, options);
      return withHistory(
        userId,
        { type: 'restore', ...actorOf(options) },
        (ctx) => restoreHistory(ctx, checked),
        (r) => ({ restored: r.restored, deleted: r.deleted, unchanged: r.unchanged, conflicts: r.conflicts, dryRun: r.dryRun ? 1 : 0 }),
      );
    },
    dropVersion: async (userId, path, seq, options) => {
      const canonical = checkDropVersionArgs(userId, path, seq, options);
      return withHistory(
        userId,
        { type: 'restore', ...actorOf(options) },
        (ctx) => dropVersion(ctx, canonical, seq),
        (dropped) => ({ dropped: dropped ? 1 : 0 }),
      );
    },
  };

  return {
    ...historyApi,
    store,
    forgetUser,
    exportUser,
    rotateKeys,
    verifyKeys,
    rekeyUser,
    rekeyAll,
    expire,
    handlers,
    tool: (userId, extraProps) => {
      checkToolArgs(userId, extraProps);
      return betaMemoryTool(handlers(userId), extraProps);
    },
    run,
    files: userFiles,
    audit,
    close: () => closers.closeAll(),
  };
}

export type RekeyCallOptions = Pick<RekeyOptions, 'settleMs' | 'wait' | 'continueOnly' | 'now' | 'sleep'> & { onProgress?: (progress: RekeyProgress) => void };

function isKeyProvider(value: KeySourceConfig | KeyProvider): value is KeyProvider {
  return typeof (value as KeyProvider).wrap === 'function' && typeof (value as KeyProvider).unwrap === 'function';
}
