/**
 * The encrypted codec: implements src/crypto/user-codec.ts with per-user data keys (docs/format.md).
 *
 * - uid: keyed hash of the user id under the deployment secret (k/_deployment), so user ids never
 *   reach the store; the secret is re-wrapped (never replaced) by rotation, so uids never change.
 * - keys: u/{uid}/f/ + each path segment encrypted deterministically (SIV), joined by '/'.
 * - bodies: XChaCha20-Poly1305 with a committed key; AD binds format version, key version, uid, path.
 */
import { MemvaultError } from '../errors.js';
import type { ObjectStore } from '../store/port.js';
import type { CodecProvider, UserCodec } from './user-codec.js';
import {
  computeUid,
  computePathId,
  computeAuditMacKey,
  computeDeploymentFingerprint,
  deriveKeyring,
  deriveRecordMacKey,
  wipeKeyring,
  type UserKeyring,
} from './format.js';
import { constantTimeEqual } from './bytes.js';
import { contentVersionsOf, type KeyProvider } from './key-provider.js';
import { KeyCache, type CachedKeys, type KeyCacheOptions } from './key-cache.js';
import { DEPLOYMENT_RECORD_KEY, isUid } from './layout.js';
import { loadSodium, type Sodium } from './sodium.js';
import {
  readDeployment,
  readOrCreateDeployment,
  readOrCreateUserSecret,
  readUserSecret,
  type DeploymentBinding,
  type OpenedSecret,
} from './wrapped-secret.js';
import { EncryptedUserCodec } from './encrypted-user-codec.js';
import { validateUserId } from './user-id.js';
import {
  assertNoDeploymentIsExpected,
  DEPLOYMENT_CHANGED_MESSAGE,
  explainDeploymentFailure,
} from './deployment-checks.js';

export { MEMORIES_ROOT } from './encrypted-user-codec.js';
export { validateUserId } from './user-id.js';
export { DEPLOYMENT_CHANGED_MESSAGE, DEPLOYMENT_MISSING_MESSAGE } from './deployment-checks.js';
/** S3's key limit; a store adapter that adds its own prefix passes a smaller `maxKeyBytes`. */
export { MAX_STORE_KEY_BYTES } from '../store/layout.js';
import { MAX_STORE_KEY_BYTES } from '../store/layout.js';
/** Longest user id accepted, in UTF-16 units (user ids are opaque strings from the host application). */
export { MAX_USER_ID_LENGTH } from '../store/layout.js';
import { LruMap } from '../util/lru.js';

export interface EncryptedCodecOptions {
  store: ObjectStore;
  /** Wraps new keys; also opens records wrapped with it. */
  keyProvider: KeyProvider;
  /**
   * Providers that only open records (the old master key or KMS key while a rotation runs, so
   * that users already re-wrapped and users not yet re-wrapped both keep working).
   */
  previousKeyProviders?: KeyProvider[];
  cache?: KeyCacheOptions;
  /** Longest store key this codec may produce. Default 1,024 (S3). */
  maxKeyBytes?: number;
  /**
   * true (default): a store with no deployment at all gets a new deployment record. false: only an
   * existing deployment is opened (commands that read or erase never create one).
   */
  createDeployment?: boolean;
  /**
   * The deployment fingerprint (`{id}.{check}`, printed at creation and by `memvault keys verify`).
   * When set, start-up refuses a deployment record with any other: the defence against a replaced
   * deployment record by someone who can write the bucket and call kms:Encrypt.
   */
  deploymentFingerprint?: string;
}

export interface EncryptedCodecProvider extends CodecProvider {
  /** Key id of the provider that wraps new keys (for start-up logs). */
  readonly keyId: string;
  /** True when this start-up created the deployment record (a new, empty deployment). */
  readonly createdDeployment: boolean;
  /** The deployment's id (bound into every associated data and KMS context). */
  readonly deploymentId: string;
  /** The fingerprint a host pins (encryption.deploymentFingerprint); a one-way hash, safe to log. */
  readonly deploymentFingerprint: string;
  /** The deployment's audit MAC key (a fresh copy; the caller may wipe it). */
  auditMacKey(): Uint8Array;
  /** Pseudonymous uid of a user id (pure: no store access). */
  uidOf(userId: string): string;
  /** Codec of an existing user by uid (sweeper, export); NOT_FOUND when the user has no key. */
  forUid(uid: string): Promise<UserCodec>;
  /** Drop a user's cached key at once (erasure). */
  evict(uid: string): void;
  /** Number of users whose keys are cached. */
  readonly cachedUsers: number;
}

/** User ids whose uid the provider remembers. */
const UID_MEMO_LIMIT = 4096;

class EncryptedCodecProviderImpl implements EncryptedCodecProvider {
  readonly mode: string;
  readonly keyId: string;
  private readonly cache: KeyCache;
  private readonly inFlight = new Map<string, Promise<CachedKeys>>();
  /**
   * uid of each recent user id: an HMAC every command computed several times over (the vault, the
   * quota, the audit record). A pseudonym, not key material; bounded by the one LRU rule.
   */
  private readonly uids = new LruMap<string, string>(UID_MEMO_LIMIT);
  /** Evictions so far (any user's): a key load that saw one happen is not cached (loadKeys). */
  private evictions = 0;
  private readonly providers: KeyProvider[];
  private readonly maxKeyBytes: number;
  private closed = false;
  private readonly deploymentSecret: Uint8Array;
  private readonly binding: DeploymentBinding;
  readonly deploymentId: string;
  readonly deploymentFingerprint: string;
  /** ETag of k/_deployment when it was last seen as this instance's; re-checked every key-cache age. */
  private deploymentEtag: string;
  private deploymentCheckedAt: number;
  private deploymentCheck: Promise<void> | undefined;
  private readonly maxAgeMs: number;
  private readonly now: () => number;

  constructor(
    private readonly sodium: Sodium,
    private readonly store: ObjectStore,
    private readonly primary: KeyProvider,
    previous: KeyProvider[],
    deployment: OpenedSecret,
    readonly createdDeployment: boolean,
    cacheOptions: KeyCacheOptions | undefined,
    maxKeyBytes: number | undefined,
  ) {
    this.mode = primary.kind === 'kms' ? 'kms' : 'local-master-key';
    this.keyId = primary.keyId;
    this.providers = [primary, ...previous];
    this.cache = new KeyCache(cacheOptions);
    this.maxKeyBytes = maxKeyBytes ?? MAX_STORE_KEY_BYTES;
    this.deploymentSecret = deployment.secret;
    this.deploymentId = deployment.record.deployment;
    this.binding = { deploymentId: this.deploymentId, macKey: deriveRecordMacKey(deployment.secret) };
    this.deploymentFingerprint = computeDeploymentFingerprint(deployment.secret, this.deploymentId);
    this.deploymentEtag = deployment.etag;
    this.now = cacheOptions?.now ?? Date.now;
    this.maxAgeMs = cacheOptions?.maxAgeMs ?? 10 * 60_000;
    this.deploymentCheckedAt = this.now();
  }

  get cachedUsers(): number {
    return this.cache.size;
  }

  uidOf(userId: string): string {
    validateUserId(userId);
    this.assertOpen();
    let uid = this.uids.get(userId);
    if (uid === undefined) {
      uid = computeUid(this.deploymentSecret, userId);
      this.uids.set(userId, uid);
    }
    return uid;
  }

  pathId(uid: string, path: string): string {
    this.assertOpen();
    return computePathId(this.deploymentSecret, uid, path);
  }

  auditMacKey(): Uint8Array {
    this.assertOpen();
    return computeAuditMacKey(this.deploymentSecret);
  }

  async forUser(userId: string): Promise<UserCodec> {
    const uid = this.uidOf(userId);
    await this.revalidateDeployment();
    return new EncryptedUserCodec(uid, this.deploymentId, await this.keysOf(uid, true), this.maxKeyBytes, () =>
      this.reloadKeys(uid),
    );
  }

  async forUid(uid: string): Promise<UserCodec> {
    if (!isUid(uid)) throw new MemvaultError('INVALID_USER', 'Error: Not a memvault uid.');
    await this.revalidateDeployment();
    return new EncryptedUserCodec(uid, this.deploymentId, await this.keysOf(uid, false), this.maxKeyBytes, () =>
      this.reloadKeys(uid),
    );
  }

  /** Re-read a user's key record now (a codec met a key version its cached record lacks). */
  private reloadKeys(uid: string): Promise<CachedKeys> {
    this.assertOpen();
    return this.joinLoad(uid, false);
  }

  /**
   * The load of a user's keys running now, or a new one. Later callers join it until it ends or the
   * user is evicted: one store read and one unwrap per user however many commands arrive together.
   */
  private joinLoad(uid: string, create: boolean): Promise<CachedKeys> {
    const running = this.inFlight.get(uid);
    if (running) return running;
    const loading: Promise<CachedKeys> = this.loadKeys(uid, create).finally(() => {
      if (this.inFlight.get(uid) === loading) this.inFlight.delete(uid);
    });
    this.inFlight.set(uid, loading);
    return loading;
  }

  /**
   * Every key-cache age, prove k/_deployment is still this instance's (one HEAD when unchanged):
   * a deployment record that disappeared or changed is an error on every instance, never two
   * answers for one user. While it fails, every call checks again (a restored record heals).
   */
  private revalidateDeployment(): Promise<void> {
    if (this.now() - this.deploymentCheckedAt < this.maxAgeMs) return Promise.resolve();
    this.deploymentCheck ??= this.checkDeployment().finally(() => (this.deploymentCheck = undefined));
    return this.deploymentCheck;
  }

  private async checkDeployment(): Promise<void> {
    const head = await this.store.head(DEPLOYMENT_RECORD_KEY);
    if (!head) throw new MemvaultError('STORE_INCONSISTENT', DEPLOYMENT_CHANGED_MESSAGE);
    if (head.etag !== this.deploymentEtag) {
      // Rewritten: a rotation re-wraps the same secret (fine); anything else is another deployment.
      let current: OpenedSecret | null;
      try {
        current = await readDeployment(this.store, this.providers, (b) => this.sodium.memzero(b));
      } catch (e) {
        throw new MemvaultError('STORE_INCONSISTENT', DEPLOYMENT_CHANGED_MESSAGE, { cause: e });
      }
      if (!current) throw new MemvaultError('STORE_INCONSISTENT', DEPLOYMENT_CHANGED_MESSAGE);
      const same =
        current.record.deployment === this.deploymentId && constantTimeEqual(current.secret, this.deploymentSecret);
      this.sodium.memzero(current.secret);
      if (!same) throw new MemvaultError('STORE_INCONSISTENT', DEPLOYMENT_CHANGED_MESSAGE);
      this.deploymentEtag = current.etag;
    }
    this.deploymentCheckedAt = this.now();
  }

  evict(uid: string): void {
    this.evictions += 1;
    // A load still running read what may be gone now: later callers start their own.
    this.inFlight.delete(uid);
    this.cache.evict(uid);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.cache.clear();
    this.uids.clear();
    this.sodium.memzero(this.deploymentSecret);
    this.sodium.memzero(this.binding.macKey);
  }

  private assertOpen(): void {
    if (this.closed) throw new MemvaultError('KEY_UNAVAILABLE', 'Error: The memory store is closed.');
  }

  private keysOf(uid: string, create: boolean): Promise<CachedKeys> {
    this.assertOpen();
    const cached = this.cache.get(uid);
    if (cached) return Promise.resolve(cached);
    return this.joinLoad(uid, create);
  }

  private async loadKeys(uid: string, create: boolean): Promise<CachedKeys> {
    // An eviction while this load runs (forget deletes the key record after evicting it; a re-key
    // evicts once it wrote a new one) may mean that what this load read is stale: it is then given
    // to the commands that waited for it but never cached, so no later command gets an erased key.
    const evictionsBefore = this.evictions;
    const readAt = this.now();
    const wipe = (bytes: Uint8Array) => this.sodium.memzero(bytes);
    const opened = create
      ? await readOrCreateUserSecret(this.store, uid, this.binding, this.primary, this.providers, wipe)
      : await readUserSecret(this.store, uid, this.binding, this.providers);
    if (!opened) throw new MemvaultError('NOT_FOUND', 'Error: No memory key exists for this user.');
    const secrets = opened.versions ?? new Map([[opened.record.keyVersion, opened.secret]]);
    let keys: UserKeyring;
    try {
      keys = deriveKeyring(secrets, opened.record.keyVersion, contentVersionsOf(opened.record));
    } finally {
      for (const secret of secrets.values()) wipe(secret);
      wipe(opened.secret);
    }
    if (this.closed) {
      // Closed while the key was loading: do not leave it in a cache nobody will wipe.
      wipeKeyring(keys);
      this.assertOpen();
    }
    if (this.evictions !== evictionsBefore) return this.cache.detached(keys);
    return this.cache.set(uid, keys, readAt);
  }
}

/**
 * Open (or, on a really empty store, create) the deployment record and return the provider.
 * Start-up fails with a clear KEY_UNAVAILABLE message when the configured key is not the
 * deployment's, STORE_INCONSISTENT when the store holds user data but no deployment record (a new
 * record would silently hide every user's memories), and CONFIG when `createDeployment: false`
 * and there is no deployment at all (a mistyped store URL for a command that only reads or erases).
 */
export async function createEncryptedCodecProvider(options: EncryptedCodecOptions): Promise<EncryptedCodecProvider> {
  const sodium = await loadSodium();
  const previous = options.previousKeyProviders ?? [];
  const providers = [options.keyProvider, ...previous];
  const wipe = (b: Uint8Array) => sodium.memzero(b);
  let opened;
  try {
    opened = await readDeployment(options.store, providers, wipe);
    if (!opened) {
      await assertNoDeploymentIsExpected(options.store, options.createDeployment ?? true);
      opened = await readOrCreateDeployment(options.store, options.keyProvider, providers, wipe);
    }
  } catch (e) {
    throw explainDeploymentFailure(e, options.keyProvider, previous);
  }
  if (options.deploymentFingerprint !== undefined) {
    const actual = computeDeploymentFingerprint(opened.secret, opened.record.deployment);
    if (actual !== options.deploymentFingerprint.trim()) {
      wipe(opened.secret);
      throw new MemvaultError(
        'KEY_UNAVAILABLE',
        `The deployment record (${DEPLOYMENT_RECORD_KEY}) is not the pinned deployment: its fingerprint is ${actual}, the configured one (encryption.deploymentFingerprint / MEMVAULT_DEPLOYMENT_FINGERPRINT) is ${options.deploymentFingerprint.trim()}. ` +
          'It was replaced (or the configuration names another deployment); memvault will not start on it. Restore the record from a backup or an earlier object version.',
      );
    }
  }
  return new EncryptedCodecProviderImpl(
    sodium,
    options.store,
    options.keyProvider,
    previous,
    opened,
    opened.created,
    options.cache,
    options.maxKeyBytes,
  );
}
