import { randomUUID } from 'node:crypto';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { betaMemoryTool, type MemoryToolHandlers } from '@anthropic-ai/sdk/helpers/beta/memory';
import { ToolError } from '@anthropic-ai/sdk/lib/tools/ToolError';
import type { Logger } from 'pino';
import { createAuditLogger, type AuditLogger, type AuditOptions } from './audit/index.js';
import { createEncryptionFromConfig, type EncryptionConfig } from './crypto/index.js';
import { INTERNAL_ERROR_MESSAGE, isMemvaultError, MemvaultError } from './errors.js';
import type { ExpiryOptions } from './expiry/config.js';
import { createExpiryService } from './expiry/access.js';
import { compose } from './pipeline/compose.js';
import type { CommandContext, CommandResult, Middleware } from './pipeline/context.js';
import { defaultChain } from './pipeline/index.js';
import type { QuotaOptions } from './pipeline/quota.js';
import { piiRedactor, type PiiMiddlewareOptions } from './pipeline/pii-redactor.js';
import { namedStage, observeCommands, observeExecute, observeStages } from './pipeline/telemetry.js';
import { terminal } from './pipeline/terminal.js';
import { withRequestCounter } from './store/accounting.js';
import { defaultStoreUrl, openStore, type OpenStoreOptions } from './store/open.js';
import type { ObjectStore } from './store/port.js';
import { DEFAULT_LIMITS, type CommandLimits } from './tool/commands/env.js';
import type { ResultContent } from './tool/types.js';
import type { CodecProvider } from './crypto/user-codec.js';
import { VaultLocks } from './vault/locks.js';
import { createPlainCodecProvider } from './vault/plain-codec.js';
import { observeStore } from './telemetry/index.js';
import { StoreUserFiles } from './vault/store-user-files.js';
import type { UserFiles } from './vault/user-files.js';

export interface VaultOptions {
  /** 'file:///abs/dir' (default: ./.memvault), 's3://bucket/prefix', 'memory:', or an adapter. */
  store?: string | ObjectStore;
  /** For s3:// stores: your S3Client, or its config (region, endpoint, forcePathStyle, credentials). */
  s3?: unknown;
  /**
   * For s3:// stores: `conditionChecks: 'native'` on AWS S3 (which enforces conditional copies and
   * deletes itself); the default 'check-first' adds a HEAD where Ceph RGW 16 ignores the condition.
   */
  s3Options?: OpenStoreOptions['s3Options'];
  /** Operational logs (never file content, keys or raw user ids). */
  logger?: Logger;
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
}

export interface Vault {
  /** Handlers for `betaMemoryTool` from '@anthropic-ai/sdk/helpers/beta/memory'. */
  handlers(userId: string): MemoryToolHandlers;
  /** `betaMemoryTool(vault.handlers(userId))`, ready for `client.beta.messages.toolRunner`. */
  tool(userId: string): ReturnType<typeof betaMemoryTool>;
  /** Runs one tool input for a user and returns the result without throwing (the CLI uses it). */
  run(userId: string, input: unknown): Promise<CommandResult>;
  /** Host-side access to a user's files (import, export), bypassing the model-facing chain. */
  files(userId: string): Promise<UserFiles>;
  readonly store: ObjectStore;
  /** The audit logger, when configured (the expiry sweeper and erasure append their records to it). */
  readonly audit: AuditLogger | undefined;
  close(): Promise<void>;
}

const MAX_USER_ID_LENGTH = 256;

/** User ids come from the host application; an empty or absurd one is a host bug, refused loudly. */
export function validateUserId(userId: unknown): string {
  if (typeof userId !== 'string' || userId.trim().length === 0) {
    throw new MemvaultError('INVALID_USER', 'memvault: the user id must be a non-empty string');
  }
  if (userId.length > MAX_USER_ID_LENGTH) {
    throw new MemvaultError('INVALID_USER', `memvault: the user id is longer than ${MAX_USER_ID_LENGTH} characters`);
  }
  if (/[\u0000-\u001f\u007f-\u009f]/.test(userId)) {
    throw new MemvaultError('INVALID_USER', 'memvault: the user id contains control characters');
  }
  return userId;
}

function toHandlerResult(result: CommandResult): ResultContent {
  // ToolError content reaches the model verbatim with is_error: true, so spec strings stay exact.
  if (result.isError) throw new ToolError(result.content);
  return result.content;
}

/**
 * Where a master key is created when none is configured. A file store: beside its data directory
 * (`<dir>.key`), so that a copy of the data alone does not carry its key. Any other store (S3, an
 * adapter object): `~/.memvault/master.key` (or `$MEMVAULT_HOME/master.key`), announced loudly,
 * because memories written under it can be read only with that file. A key created for a store that
 * already has a deployment record never matches it, and start-up stops with a clear error instead.
 */
export function defaultMasterKeyFileFor(storeUrl: string | undefined, env: NodeJS.ProcessEnv = process.env): string {
  if (storeUrl?.startsWith('file:')) {
    try {
      return `${fileURLToPath(storeUrl).replace(/[/\\]+$/, '')}.key`;
    } catch {
      // not a valid file URL: fall through to the per-user default
    }
  }
  return join(env['MEMVAULT_HOME'] ?? join(homedir(), '.memvault'), 'master.key');
}

async function openCodec(options: VaultOptions, store: ObjectStore, storeUrl: string | undefined): Promise<{ codec: CodecProvider; close(): Promise<void> }> {
  if (options.codec) return { codec: options.codec, close: () => options.codec!.close() };
  const encrypt = options.encryption ?? (store.kind === 'memory' ? false : {});
  if (encrypt === false) {
    const codec = createPlainCodecProvider();
    return { codec, close: () => codec.close() };
  }
  const encryption = await createEncryptionFromConfig({
    store,
    config: { ...(store.maxKeyBytes !== undefined ? { maxKeyBytes: store.maxKeyBytes } : {}), ...encrypt },
    defaultMasterKeyFile: defaultMasterKeyFileFor(storeUrl),
  });
  for (const notice of encryption.notices) {
    const isNew = /\bcreated\b/.test(notice);
    options.logger?.[isNew ? 'warn' : 'info'](notice);
    // A new key file must be backed up, or the memories are lost with it: say it even without a logger.
    if (isNew && encryption.createdMasterKeyFile && !options.logger) process.emitWarning(notice, 'MemvaultNotice');
  }
  return { codec: encryption.codecProvider, close: () => encryption.close() };
}

export async function createVault(options: VaultOptions = {}): Promise<Vault> {
  const storeUrl = typeof options.store === 'object' ? undefined : (options.store ?? defaultStoreUrl());
  const store = typeof options.store === 'object' ? options.store : await openStore(storeUrl!, { s3: options.s3, ...(options.s3Options ? { s3Options: options.s3Options } : {}) });
  // What commands, key loads and idle expiry do to the store, with spans and metrics (vault.store stays the raw adapter).
  const observedStore = observeStore(store);
  let opened: { codec: CodecProvider; close(): Promise<void> };
  try {
    opened = await openCodec(options, observedStore, storeUrl);
  } catch (error) {
    await store.close();
    throw error;
  }
  const codec = opened.codec;
  const logger = options.logger;
  const locks = new VaultLocks();
  const rawUserIds = new WeakMap<CommandContext, string>();
  let audit: AuditLogger | undefined;
  try {
    audit = options.audit
      ? await createAuditLogger({
          redactPath: (path, ctx) => `#${codec.pathId(ctx.uid, path)}`,
          rawUserIdOf: (ctx) => rawUserIds.get(ctx),
          ...options.audit,
        })
      : undefined;
  } catch (error) {
    await opened.close();
    await store.close();
    throw error;
  }
  // Order: audit (sees everything, rejected commands too), the host's outer middlewares,
  // validation, the path guard, then the middlewares that need canonical paths (PII, quota).
  const planned = defaultChain({
    outer: [...(audit ? [namedStage('audit', audit.middleware())] : []), ...(options.outerMiddlewares ?? [])],
    ...(options.pii === false ? {} : { pii: piiRedactor(options.pii) }),
    quota: options.quota === false ? false : { ...options.quota, onInternalError: (error: unknown) => logger?.error({ err: error instanceof Error ? { name: error.name } : undefined }, 'memvault quota accounting failed') },
    inner: options.middlewares ?? [],
    ...(options.limits ? { limits: options.limits } : {}),
  });
  const chain = compose(observeStages(planned.middlewares));
  const limits: CommandLimits = { ...DEFAULT_LIMITS, ...planned.limits };
  const execute = observeExecute(terminal({
    env: { locks, limits, createMode: options.createMode ?? 'overwrite' },
    onInternalError: (error, ctx) =>
      logger?.error({ requestId: ctx.requestId, uid: ctx.uid, err: error instanceof Error ? { name: error.name, code: (error as { code?: unknown }).code } : undefined }, 'memvault command failed'),
  }));
  logger?.info({ store: store.kind, codec: codec.mode }, 'memvault vault opened');

  const expiry = options.expiry ? createExpiryService(observedStore, options.expiry) : undefined;
  const userFiles = async (userId: string): Promise<StoreUserFiles> => {
    const userCodec = await codec.forUser(validateUserId(userId));
    return new StoreUserFiles(observedStore, userCodec, undefined, expiry ? await expiry.forUser(userId, userCodec) : undefined);
  };

  const run = observeCommands(async (userId: string, input: unknown): Promise<CommandResult> => {
    const stats = { bytesRead: 0, bytesWritten: 0, requests: {} };
    // Loading the user's key (GET, and PUT the very first time) is part of this command's cost:
    // count it into the command's stats, which metrics and the audit record read.
    let files: StoreUserFiles;
    try {
      files = await withRequestCounter(stats.requests, () => userFiles(userId));
    } catch (error) {
      // The user's key could not be loaded (the store is unavailable, the key record is damaged):
      // the command did not run. run() answers with a result, never a throw.
      if (isMemvaultError(error)) return { content: error.message, isError: true, code: error.code };
      logger?.error({ err: error instanceof Error ? { name: error.name } : undefined }, 'memvault user key load failed');
      return { content: INTERNAL_ERROR_MESSAGE, isError: true, code: 'INTERNAL' };
    }
    const ctx: CommandContext = {
      requestId: randomUUID(),
      uid: files.uid,
      input,
      pathsCanonical: false,
      files: files.withStats(stats),
      startedAt: performance.now(),
      stats,
      decisions: {},
    };
    rawUserIds.set(ctx, userId);
    try {
      return await withRequestCounter(stats.requests, () => chain(ctx, () => execute(ctx)));
    } catch (error) {
      // A middleware refused to go on (e.g. the audit sink failed): the command did not run.
      if (isMemvaultError(error)) return { content: error.message, isError: true, code: error.code };
      logger?.error({ requestId: ctx.requestId, uid: ctx.uid, err: error instanceof Error ? { name: error.name } : undefined }, 'memvault middleware failed');
      return { content: INTERNAL_ERROR_MESSAGE, isError: true, code: 'INTERNAL' };
    }
  });

  const handlers = (userId: string): MemoryToolHandlers => {
    validateUserId(userId);
    const call = async (input: unknown) => toHandlerResult(await run(userId, input));
    return { view: call, create: call, str_replace: call, insert: call, delete: call, rename: call };
  };

  return {
    store,
    handlers,
    tool: (userId) => betaMemoryTool(handlers(userId)),
    run,
    files: userFiles,
    audit,
    close: async () => {
      await audit?.close();
      await opened.close();
      await store.close();
    },
  };
}
