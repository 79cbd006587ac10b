/**
 * How the vault opens one user's files: `StoreUserFiles` (src/vault/) over the observed store and the
 * user's codec, with idle expiry and file history as configured, and one memo of checked version
 * records shared by all the vault's commands.
 */
import { auditPseudonymsOf, type AuditPseudonyms } from '../audit/index.js';
import { validateUserId } from '../crypto/codec.js';
import type { CodecProvider } from '../crypto/user-codec.js';
import type { UserCodec } from '../crypto/user-codec.js';
import type { ExpiryService } from '../expiry/access.js';
import { keyHash } from '../expiry/sweep.js';
import type { ObjectStore } from '../store/port.js';
import type { ResolvedHistory } from '../vault/history-options.js';
import {
  StoreUserFiles,
  versionRecordMemo,
  type KnownRecord,
  type UnreadableObjectListener,
} from '../vault/store-user-files.js';
import type { VersionActor } from '../vault/version-record.js';
import type { LruMap } from '../util/lru.js';
import type { VaultLogger } from './logger.js';

export interface UserFilesOpener {
  /** One user's files under the given actor, keeping versions or not. */
  filesOf: (userId: string, userCodec: UserCodec, actor: VersionActor, keepHistory: boolean) => Promise<StoreUserFiles>;
  /** What a command needs of its user: the files (history as configured) and the audit pseudonyms. */
  openUser: (userId: string, actor?: VersionActor) => Promise<{ files: StoreUserFiles; pseudonyms: AuditPseudonyms }>;
  onUnreadable: UnreadableObjectListener;
  knownRecords: LruMap<string, KnownRecord>;
}

export function userFilesOpener(deps: {
  store: ObjectStore;
  codec: CodecProvider;
  expiry: ExpiryService | undefined;
  history: ResolvedHistory | undefined;
  logger: VaultLogger | undefined;
}): UserFilesOpener {
  const { store, codec, expiry, history, logger } = deps;
  // An object under a user's prefix that is not one of their files is skipped by listings; the
  // operator hears of it by uid and the key's hash (the key itself may hold a plaintext folder name).
  const onUnreadable: UnreadableObjectListener = ({ uid, key, reason }) =>
    logger?.warn(
      { uid, object: `sha256:${keyHash(key)}`, reason },
      "memvault listing skipped an object that is not one of the user's files",
    );
  const knownRecords = versionRecordMemo();
  const filesOf = async (userId: string, userCodec: UserCodec, actor: VersionActor, keepHistory: boolean) =>
    new StoreUserFiles(store, userCodec, expiry ? await expiry.forUser(userId, userCodec) : undefined, onUnreadable, {
      actor,
      keepHistory,
      knownRecords,
    });
  const openUser = async (userId: string, actor: VersionActor = 'model') => {
    const userCodec = await codec.forUser(validateUserId(userId));
    return {
      files: await filesOf(userId, userCodec, actor, history !== undefined),
      pseudonyms: auditPseudonymsOf(userCodec, codec),
    };
  };
  return { filesOf, openUser, onUnreadable, knownRecords };
}
