import { betaMemoryTool } from '@anthropic-ai/sdk/helpers/beta/memory';
import { auditPseudonymsOf, type AuditPseudonyms } from './audit/index.js';
import { validateUserId } from './crypto/codec.js';
import type { UserCodec } from './crypto/user-codec.js';
import { keyHash } from './expiry/sweep.js';
import { createExpiryService } from './expiry/access.js';
import { createLifecycle } from './lifecycle/index.js';
import { VaultLocks } from './vault/locks.js';
import { treeOperationsOf } from './vault/tree/transactional.js';
import { observeStore } from './store/observed.js';
import { StoreUserFiles, versionRecordMemo, type UnreadableObjectListener } from './vault/store-user-files.js';
import { resolveHistoryOptions } from './vault/history-options.js';
import type { VersionActor } from './vault/version-record.js';
import { resolveAudit, type CommandIdentities } from './entry/audit.js';
import { resolveCommandChain } from './entry/chain.js';
import { Closers } from './entry/closers.js';
import { resolveCodec } from './entry/encryption.js';
import { checkToolArgs } from './entry/arguments.js';
import { lifecycleMethods } from './entry/lifecycle-methods.js';
import { commandRunner, handlersOver, toolCallOver } from './entry/run.js';
import { resolveStore } from './entry/store.js';
import { sweepRenameFinisher } from './entry/stopped-renames.js';
import { checkVaultOptions } from './entry/vault-options.js';
import type { Vault, VaultOptions } from './entry/vault-types.js';

export type {
  ExpireOptions,
  LifecycleOptions,
  MemoryToolExtraProps,
  RekeyCallOptions,
  UserExport,
  Vault,
  VaultOptions,
} from './entry/vault-types.js';

export type { VaultLogger } from './entry/logger.js';

/** User ids come from the host application; the one check of them lives with the codec that hashes them. */
export { validateUserId };

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
    const { codec, encryption } = closers.add(await resolveCodec(options, observedStore, storeUrl), (opened) =>
      opened.close(),
    );
    const audit = await resolveAudit(options.audit, codec, identities);
    if (audit) closers.add(audit, (opened) => opened.close());
    return { store, observedStore, codec, encryption, audit };
  });
  // A store that runs transactions (SQLite) renames and deletes a directory in one.
  const tree = treeOperationsOf(store);
  const runChain = resolveCommandChain({ ...options, audit, ...(tree ? { tree } : {}) }, new VaultLocks());
  logger?.info({ store: store.kind, codec: codec.mode }, 'memvault vault opened');

  const expiry = options.expiry ? createExpiryService(observedStore, options.expiry) : undefined;
  // An object under a user's prefix that is not one of their files is skipped by listings; the
  // operator hears of it by uid and the key's hash (the key itself may hold a plaintext folder name).
  const onUnreadable: UnreadableObjectListener = ({ uid, key, reason }) =>
    logger?.warn(
      { uid, object: `sha256:${keyHash(key)}`, reason },
      "memvault listing skipped an object that is not one of the user's files",
    );
  const history = resolveHistoryOptions(options.history);
  // One memo of checked version records for all the vault's commands (src/vault/store-user-files.ts).
  const knownRecords = versionRecordMemo();
  const filesOf = async (userId: string, userCodec: UserCodec, actor: VersionActor, keepHistory: boolean) =>
    new StoreUserFiles(
      observedStore,
      userCodec,
      expiry ? await expiry.forUser(userId, userCodec) : undefined,
      onUnreadable,
      {
        actor,
        keepHistory,
        knownRecords,
      },
    );
  const openUser = async (
    userId: string,
    actor: VersionActor = 'model',
  ): Promise<{ files: StoreUserFiles; pseudonyms: AuditPseudonyms }> => {
    const userCodec = await codec.forUser(validateUserId(userId));
    return {
      files: await filesOf(userId, userCodec, actor, history !== undefined),
      pseudonyms: auditPseudonymsOf(userCodec, codec),
    };
  };
  const run = commandRunner({ openUser, runChain, identities, logger });
  const handlers = handlersOver(run);
  const toolCall = toolCallOver(run);

  // Lifecycle operations (src/lifecycle/): each leaves one audit record, whatever its outcome.
  const lifecycle = createLifecycle({
    store,
    observedStore,
    codec,
    encryption,
    audit,
    options,
    expiry,
    history,
    // The sweep finishes the directory renames it meets stopped part-way (src/entry/stopped-renames.ts).
    finishStoppedRenames: sweepRenameFinisher(codec, observedStore, {
      expiry,
      onUnreadable,
      keepHistory: !!history,
      knownRecords,
      limits: options.limits,
    }),
    restoreFiles: (userId, userCodec) => filesOf(userId, userCodec, 'restore', true),
  });

  return {
    ...lifecycleMethods(lifecycle),
    store,
    handlers,
    tool: (userId, extraProps) => {
      checkToolArgs(userId, extraProps);
      // Every input goes through the chain, whatever its command: betaMemoryTool's own dispatch
      // answers an unknown command with "chmod not implemented", and looks a command such as
      // "toString" up on Object.prototype, where the protocol's answer is memvault's INVALID_INPUT.
      return { ...betaMemoryTool(handlers(userId), extraProps), run: toolCall(userId) };
    },
    run,
    files: async (userId) => (await openUser(userId, 'host')).files,
    audit,
    close: () => closers.closeAll(),
  };
}
