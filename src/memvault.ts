import { randomUUID } from 'node:crypto';
import { PassThrough } from 'node:stream';
import { betaMemoryTool, type MemoryToolHandlers } from '@anthropic-ai/sdk/helpers/beta/memory';
import { ToolError } from '@anthropic-ai/sdk/lib/tools/ToolError';
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
  type Encryption,
  type EncryptedCodecProvider,
  type KeyProvider,
  type KeySourceConfig,
} from './crypto/index.js';
import type { AuditEntry } from './audit/record.js';
import type { TtlSettings } from './expiry/config.js';
import { keyHash, sweep } from './expiry/sweep.js';
import { isMemvaultError, loggableError, MemvaultError } from './errors.js';
import { createExpiryService } from './expiry/access.js';
import type { CommandContext, CommandResult } from './pipeline/context.js';
import { withErrorBoundary } from './pipeline/error-result.js';
import { observeCommands } from './pipeline/telemetry.js';
import { withCommandStats, withRequestCounter, type CommandStats } from './store/accounting.js';
import type { ResultContent } from './tool/types.js';
import { VaultLocks } from './vault/locks.js';
import { observeStore } from './store/observed.js';
import { StoreUserFiles, versionRecordMemo, type UnreadableObjectListener } from './vault/store-user-files.js';
import { resolveHistoryOptions } from './vault/history-options.js';
import type { VersionActor } from './vault/version-record.js';
import { resolveAudit, type CommandIdentities } from './entry/audit.js';
import { resolveCommandChain } from './entry/chain.js';
import { Closers } from './entry/closers.js';
import { resolveCodec } from './entry/encryption.js';
import { resolveStore } from './entry/store.js';
import {
  checkExpireArgs,
  checkExportArgs,
  checkForgetArgs,
  checkRekeyAllArgs,
  checkRekeyUserArgs,
  checkRotateArgs,
  checkToolArgs,
  checkVerifyKeysArgs,
} from './entry/arguments.js';
import { createHistoryApi } from './entry/history-api.js';
import { sweepRenameFinisher } from './entry/stopped-renames.js';
import { checkVaultOptions } from './entry/vault-options.js';
import type { LifecycleOptions, RekeyCallOptions, Vault, VaultOptions } from './entry/vault-types.js';

export type { ExpireOptions, LifecycleOptions, MemoryToolExtraProps, RekeyCallOptions, UserExport, Vault, VaultOptions } from './entry/vault-types.js';

export type { VaultLogger } from './entry/logger.js';

/** User ids come from the host application; the one check of them lives with the codec that hashes them. */
export { validateUserId };

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

  // The sweep finishes the directory renames it meets stopped part-way (src/entry/stopped-renames.ts).
  const finisher = sweepRenameFinisher(codec, observedStore, { expiry, onUnreadable, keepHistory: !!history, knownRecords, limits: vaultOptions.limits });
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
          ...(finisher ? { finishStoppedRenames: finisher } : {}),
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

  // ---- history (docs/versions.md): src/entry/history-api.ts, over src/vault/history.ts -----
  const historyApi = createHistoryApi({
    open: async (userId) => {
      validateUserId(userId);
      if (!history) throw new MemvaultError('CONFIG', 'memvault: file history is turned off for this vault (history: false, or MEMVAULT_HISTORY=0)');
      // Reading or restoring never creates a user: an unknown user is NOT_FOUND (encrypted stores).
      const userCodec = encryption ? await encryption.codecProvider.forUid(encryption.codecProvider.uidOf(userId)) : await codec.forUser(userId);
      const files = new StoreUserFiles(observedStore, userCodec, expiry ? await expiry.forUser(userId, userCodec) : undefined, onUnreadable, {
        actor: 'restore',
        keepHistory: true,
        knownRecords,
      });
      return { ctx: { store: observedStore, codec: userCodec, files }, auditUid: auditPseudonymsOf(userCodec, codec).uid };
    },
    appendAudit: (entry) => void audit?.append(entry),
    audited: (entry, work, countsOf) => audited(entry, work, countsOf),
  });

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

function isKeyProvider(value: KeySourceConfig | KeyProvider): value is KeyProvider {
  return typeof (value as KeyProvider).wrap === 'function' && typeof (value as KeyProvider).unwrap === 'function';
}
