import { validateUserId } from './crypto/codec.js';
import { createExpiryService } from './expiry/access.js';
import { createLifecycle } from './lifecycle/index.js';
import { VaultLocks } from './vault/locks.js';
import { treeOperationsOf } from './vault/tree/transactional.js';
import { observeStore } from './store/observed.js';
import { resolveHistoryOptions } from './vault/history-options.js';
import { resolveAudit, type CommandIdentities } from './entry/audit.js';
import { resolveCommandChain } from './entry/chain.js';
import { settingsKeysOf, UserSettings } from './pipeline/pause.js';
import { Closers } from './entry/closers.js';
import { resolveCodec } from './entry/encryption.js';
import { readinessCheck, userRecordsOf } from './entry/host-records.js';
import { lifecycleMethods } from './entry/lifecycle-methods.js';
import { commandRunner, handlersOver, memoryToolOver } from './entry/run.js';
import { userFilesOpener } from './entry/user-files.js';
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
export type { UserRecords } from './entry/host-records.js';

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
  const userSettings = new UserSettings(observedStore, settingsKeysOf(codec));
  const runChain = resolveCommandChain(
    { ...options, audit, userSettings, ...(tree ? { tree } : {}) },
    new VaultLocks(),
  );
  logger?.info({ store: store.kind, codec: codec.mode }, 'memvault vault opened');

  const expiry = options.expiry ? createExpiryService(observedStore, options.expiry) : undefined;
  const history = resolveHistoryOptions(options.history);
  const users = userFilesOpener({ store: observedStore, codec, expiry, history, logger });
  const { openUser, onUnreadable, knownRecords } = users;
  const run = commandRunner({ openUser, runChain, identities, logger });
  const handlers = handlersOver(run);

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
    restoreFiles: (userId, userCodec) => users.filesOf(userId, userCodec, 'restore', true),
  });

  return {
    ...lifecycleMethods(lifecycle),
    store,
    handlers,
    tool: memoryToolOver(run),
    run,
    files: async (userId) => (await openUser(userId, 'host')).files,
    userRecords: userRecordsOf(codec),
    checkReady: readinessCheck(store, encryption),
    audit,
    close: () => closers.closeAll(),
  };
}
