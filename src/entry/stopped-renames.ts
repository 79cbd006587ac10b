/**
 * What `vault.expire` (and so `memvault expire`) hands the sweeper to finish the directory renames
 * it meets stopped part-way (src/tool/commands/stopped.ts): a user's files opened by the store uid
 * the sweep lists, as the vault opens them for a command (a codec provider's `forUid`). The sweeper
 * Lambda, which holds no key, cannot: there the user's next command finishes the rename.
 */
import type { CodecProvider } from '../crypto/user-codec.js';
import type { ExpiryService } from '../expiry/access.js';
import type { SweepOptions } from '../expiry/sweep.js';
import type { ObjectStore } from '../store/port.js';
import { DEFAULT_LIMITS, type CommandLimits } from '../tool/commands/env.js';
import { stoppedRenameFinisher } from '../tool/commands/stopped.js';
import {
  StoreUserFiles,
  type FileAccessPolicy,
  type UnreadableObjectListener,
  type versionRecordMemo,
} from '../vault/store-user-files.js';

export interface FinisherSettings {
  expiry: ExpiryService | undefined;
  onUnreadable: UnreadableObjectListener;
  keepHistory: boolean;
  knownRecords: ReturnType<typeof versionRecordMemo>;
  limits: Partial<CommandLimits> | undefined;
}

/** The finisher, or undefined when the codec cannot open a user by uid. */
export function sweepRenameFinisher(
  codecs: CodecProvider,
  store: ObjectStore,
  settings: FinisherSettings,
): SweepOptions['finishStoppedRenames'] {
  const forUid = codecs.forUid?.bind(codecs);
  if (!forUid) return undefined;
  return stoppedRenameFinisher(
    async (uid) => {
      const codec = await forUid(uid);
      // The user's recorded TTL class (its tag on every file the finishing writes); no touch: nothing is read for the model.
      const stored = settings.expiry ? await settings.expiry.forStoredUser(codec.filesPrefix) : undefined;
      const access: FileAccessPolicy | undefined = stored && {
        ...stored,
        afterRead: async () => undefined,
        beforeWrite: async () => undefined,
      };
      return new StoreUserFiles(store, codec, access, settings.onUnreadable, {
        actor: 'sweeper',
        keepHistory: settings.keepHistory,
        knownRecords: settings.knownRecords,
      });
    },
    { ...DEFAULT_LIMITS, ...settings.limits },
  );
}
