/**
 * What the lifecycle operations share, given once by createVault (src/memvault.ts): the store, the
 * encryption, the audit wrapper and the vault's settings. Each operation is a function of it.
 */
import { auditPseudonymsOf } from '../audit/index.js';
import type { EncryptedCodecProvider, Encryption, EncryptionConfig } from '../crypto/index.js';
import type { CodecProvider, UserCodec } from '../crypto/user-codec.js';
import { MemvaultError } from '../errors.js';
import type { ExpiryService } from '../expiry/access.js';
import type { ExpiryOptions } from '../expiry/config.js';
import type { SweepOptions } from '../expiry/sweep.js';
import type { ObjectStore } from '../store/port.js';
import type { ResolvedHistory } from '../vault/history-options.js';
import type { StoreUserFiles } from '../vault/store-user-files.js';
import type { Audited, AuditSink } from './audited.js';

export interface LifecycleContext {
  /** The raw adapter: erasure, export, rotation, re-key and the sweep. */
  store: ObjectStore;
  /** The store with spans and metrics: history reads and restores, as commands do. */
  observedStore: ObjectStore;
  codec: CodecProvider;
  /** The vault's own encryption; undefined with `encryption: false` or a custom codec. */
  encryption: Encryption | undefined;
  audit: AuditSink | undefined;
  audited: Audited;
  /** The vault's options as given (read when an operation runs). */
  options: { encryption?: EncryptionConfig | false; expiry?: ExpiryOptions };
  expiry: ExpiryService | undefined;
  /** Resolved history settings; undefined when history is off. */
  history: ResolvedHistory | undefined;
  /** Finishes the directory renames a sweep meets stopped part-way. */
  finishStoppedRenames: SweepOptions['finishStoppedRenames'];
  /** A user's files over `userCodec` that write history as `restore`. */
  restoreFiles(userId: string, userCodec: UserCodec): Promise<StoreUserFiles>;
}

export function needsEncryption(ctx: LifecycleContext, what: string): Encryption {
  if (!ctx.encryption)
    throw new MemvaultError(
      'CONFIG',
      `memvault: ${what} needs the vault's own encryption (encryption: false or a custom codec has no user keys to destroy or re-wrap).`,
    );
  return ctx.encryption;
}

/** The audit pseudonym of a stored user, or undefined without a readable key (erased before, damaged). */
export async function auditUidOf(codecProvider: EncryptedCodecProvider, uid: string): Promise<string | undefined> {
  try {
    return auditPseudonymsOf(await codecProvider.forUid(uid), codecProvider).uid;
  } catch {
    return undefined;
  }
}
