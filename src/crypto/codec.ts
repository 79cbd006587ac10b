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
  CONTENT_OVERHEAD,
  computeUid,
  computePathId,
  computeAuditMacKey,
  computeDeploymentFingerprint,
  contentKeyVersion,
  decryptSegment,
  deriveKeyring,
  deriveRecordMacKey,
  encryptSegment,
  integrityError,
  NONCE_BYTES,
  openContent,
  sealContentWithNonce,
  wipeKeyring,
  type UserKeyring,
  type UserKeys,
} from './format.js';
import { constantTimeEqual, randomNonce } from './bytes.js';
import { contentVersionsOf, describeKey, type KeyProvider } from './key-provider.js';
import { KeyCache, type CachedKeys, type KeyCacheOptions } from './key-cache.js';
import { DEPLOYMENT_RECORD_KEY, firstDeploymentDataKey, isUid, userFilesPrefix } from './layout.js';
import { loadSodium, type Sodium } from './sodium.js';
import {
  DEPLOYMENT_RECORD_INTEGRITY_MESSAGE,
  NoMatchingKeyError,
  readDeployment,
  readOrCreateDeployment,
  readOrCreateUserSecret,
  readUserSecret,
  type DeploymentBinding,
  type OpenedSecret,
} from './wrapped-secret.js';

export const MEMORIES_ROOT = '/memories';
/** S3's key limit; a store adapter that adds its own prefix passes a smaller `maxKeyBytes`. */
export { MAX_STORE_KEY_BYTES } from '../store/layout.js';
import { MAX_STORE_KEY_BYTES } from '../store/layout.js';
/** Longest user id accepted, in UTF-16 units (user ids are opaque strings from the host application). */
export { MAX_USER_ID_LENGTH } from '../store/layout.js';
import { MAX_USER_ID_LENGTH } from '../store/layout.js';
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

// Node 20 has String.prototype.isWellFormed; the ES2023 lib this project compiles against does not declare it.
const isWellFormedUtf16 = (text: string): boolean => (text as string & { isWellFormed(): boolean }).isWellFormed();

/**
 * The one check of a user id, wherever one enters (createVault's handlers, run and files, the CLI's
 * --user, and this codec's uidOf). User ids come from the host application; one that is refused is a
 * host bug, refused loudly. The rule that keeps users apart: the uid is a keyed hash of the id's
 * UTF-8 bytes, and UTF-8 encoding maps every lone surrogate to the same U+FFFD, so "victim\ud800",
 * "victim\udfff" and "victim\ufffd" would all be one user. Ill-formed UTF-16 is refused, and so is
 * U+FFFD itself: it is what a lossy decoding upstream leaves where bytes were lost, so two ids
 * that were different before that decoding could arrive here as one. Every id accepted is
 * well-formed, so its UTF-8 encoding is one-to-one, and distinct ids have distinct uids.
 */
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
  if (!isWellFormedUtf16(userId)) {
    throw new MemvaultError(
      'INVALID_USER',
      'memvault: the user id is not well-formed Unicode (it has an unpaired surrogate), so it cannot be told apart from other ids',
    );
  }
  if (userId.includes('\ufffd')) {
    throw new MemvaultError(
      'INVALID_USER',
      'memvault: the user id contains U+FFFD, the replacement character of a lossy decoding, so it cannot be told apart from other ids; pass the id as it was before decoding',
    );
  }
  return userId;
}

function invalidCanonicalPath(): MemvaultError {
  // Only reachable through a caller bug: the path guard hands the vault canonical paths.
  return new MemvaultError('INVALID_PATH', 'Error: The path is not a canonical path below /memories.');
}

/** Segments of a canonical path below /memories ('/memories' itself has none). */
function segmentsOf(path: string): string[] {
  if (path === MEMORIES_ROOT) return [];
  if (!path.startsWith(`${MEMORIES_ROOT}/`)) throw invalidCanonicalPath();
  const segments = path.slice(MEMORIES_ROOT.length + 1).split('/');
  if (segments.some((s) => s.length === 0 || s === '.' || s === '..')) throw invalidCanonicalPath();
  return segments;
}

/**
 * Memo of encrypted <-> plain segments per cached user key: files in one directory share their
 * leading segments, so a listing decrypts each directory name once instead of once per file.
 * It lives exactly as long as the key entry it hangs off (WeakMap), and is bounded by the one LRU rule.
 */
interface NameMemo {
  encrypted: LruMap<string, string>;
  decrypted: LruMap<string, string>;
  /** UserCodec.memoScope: one object per key entry, for memos above the codec (never the keys themselves). */
  scope: object;
}
const NAME_MEMO_LIMIT = 4096;
/** User ids whose uid the provider remembers. */
const UID_MEMO_LIMIT = 4096;
const nameMemos = new WeakMap<CachedKeys, NameMemo>();

function memoOf(cached: CachedKeys): NameMemo {
  let memo = nameMemos.get(cached);
  if (!memo) {
    memo = { encrypted: new LruMap(NAME_MEMO_LIMIT), decrypted: new LruMap(NAME_MEMO_LIMIT), scope: {} };
    nameMemos.set(cached, memo);
  }
  return memo;
}

class EncryptedUserCodec implements UserCodec {
  readonly filesPrefix: string;
  private readonly memo: NameMemo;

  /**
   * The re-read of the key record for an unknown key version (at most once per codec): the running
   * one, shared by every read of the command that meets one (a directory rename reads several files
   * at once: a second read must wait for it, not open with the stale record), then `true`.
   */
  private reread: Promise<void> | true | undefined;

  constructor(
    readonly uid: string,
    private readonly deploymentId: string,
    private cached: CachedKeys,
    private readonly maxKeyBytes: number,
    private readonly reload: () => Promise<CachedKeys>,
  ) {
    this.filesPrefix = userFilesPrefix(uid);
    // Names derive from the name root, the same in every version: the memo survives a reload.
    this.memo = memoOf(cached);
  }

  private get keyring(): UserKeyring {
    if (this.cached.wiped) {
      throw new MemvaultError('KEY_UNAVAILABLE', 'Error: The memory key was released while this command ran; please try again.');
    }
    return this.cached.keys;
  }

  /** The current version's keys (names, and new content). */
  private get keys(): UserKeys {
    return this.keyring.current;
  }

  /**
   * Another instance re-keyed this user (src/crypto/rekey.ts) after this process cached the key
   * record: stored bytes name a key version the cached record does not hold. Re-read the record
   * once (then new writes use the new version too); a version it does not hold either is refused
   * by open() as INTEGRITY.
   */
  ensureKeyFor(stored: Uint8Array): Promise<void> | undefined {
    const version = contentKeyVersion(stored);
    if (version === null || this.reread === true || this.keyring.byVersion.has(version)) return undefined;
    this.reread ??= this.reload().then((cached) => {
      this.cached = cached;
      this.reread = true;
    });
    return this.reread;
  }

  private encryptedSegments(path: string): string {
    const keys = this.keys;
    let parent = MEMORIES_ROOT;
    const out: string[] = [];
    for (const segment of segmentsOf(path)) {
      // The length prefix keeps (parent, segment) pairs apart whatever characters they hold.
      const memoKey = `${parent.length}:${parent}${segment}`;
      let encrypted = this.memo.encrypted.get(memoKey);
      if (encrypted === undefined) {
        encrypted = encryptSegment(keys, parent, segment);
        this.memo.encrypted.set(memoKey, encrypted);
      }
      out.push(encrypted);
      parent = `${parent}/${segment}`;
    }
    return out.join('/');
  }

  keyFor(path: string): string {
    if (path === MEMORIES_ROOT) throw invalidCanonicalPath();
    const key = this.filesPrefix + this.encryptedSegments(path);
    if (Buffer.byteLength(key, 'utf8') > this.maxKeyBytes) {
      throw new MemvaultError(
        'INVALID_PATH',
        `Error: The path ${path} is too long to store. Encrypted names are about a third longer than the names themselves, and the store limits a key to ${this.maxKeyBytes} bytes; use shorter names or fewer directory levels.`,
      );
    }
    return key;
  }

  prefixFor(dir: string): string {
    const encrypted = this.encryptedSegments(dir);
    return encrypted.length === 0 ? this.filesPrefix : `${this.filesPrefix}${encrypted}/`;
  }

  pathFor(key: string): string {
    if (!key.startsWith(this.filesPrefix)) throw new MemvaultError('INTEGRITY', 'Error: A stored object does not belong to this user.');
    const keys = this.keys;
    let path = MEMORIES_ROOT;
    for (const encoded of key.slice(this.filesPrefix.length).split('/')) {
      const memoKey = `${path.length}:${path}${encoded}`;
      let segment = this.memo.decrypted.get(memoKey);
      if (segment === undefined) {
        segment = decryptSegment(keys, path, encoded);
        this.memo.decrypted.set(memoKey, segment);
      }
      path = `${path}/${segment}`;
    }
    if (path === MEMORIES_ROOT) throw new MemvaultError('INTEGRITY', 'Error: A stored object does not belong to this user.');
    return path;
  }

  seal(path: string, plaintext: Uint8Array): Uint8Array {
    segmentsOf(path);
    const nonce = randomNonce(NONCE_BYTES);
    return sealContentWithNonce(this.keys, this.deploymentId, this.uid, path, plaintext, nonce);
  }

  open(path: string, stored: Uint8Array): Uint8Array {
    // The header names the version; only that version's keys are tried (a header whose version
    // disagrees with the key that sealed it fails the commitment check inside openContent).
    const version = contentKeyVersion(stored);
    const keys = version === null ? undefined : this.keyring.byVersion.get(version);
    if (!keys) throw integrityError();
    return openContent(keys, this.deploymentId, this.uid, path, stored);
  }

  plaintextSize(storedSize: number): number {
    return Math.max(0, storedSize - CONTENT_OVERHEAD);
  }

  auditPseudonymKey(): Uint8Array {
    return new Uint8Array(this.keys.auditPseudonymKey);
  }

  get memoScope(): object {
    void this.keyring; // a wiped key's codec refuses (KEY_UNAVAILABLE), and so do memos hung off it
    return this.memo.scope;
  }
}

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
    return new EncryptedUserCodec(uid, this.deploymentId, await this.keysOf(uid, true), this.maxKeyBytes, () => this.reloadKeys(uid));
  }

  async forUid(uid: string): Promise<UserCodec> {
    if (!isUid(uid)) throw new MemvaultError('INVALID_USER', 'Error: Not a memvault uid.');
    await this.revalidateDeployment();
    return new EncryptedUserCodec(uid, this.deploymentId, await this.keysOf(uid, false), this.maxKeyBytes, () => this.reloadKeys(uid));
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
      const same = current.record.deployment === this.deploymentId && constantTimeEqual(current.secret, this.deploymentSecret);
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
    return this.cache.set(uid, keys);
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
  return new EncryptedCodecProviderImpl(sodium, options.store, options.keyProvider, previous, opened, opened.created, options.cache, options.maxKeyBytes);
}

export const DEPLOYMENT_CHANGED_MESSAGE =
  `Error: The deployment record (${DEPLOYMENT_RECORD_KEY}) disappeared or changed while this service was running; memvault stops answering rather than serve a stale or a different deployment. ` +
  `Nothing was read or written. Recovery: the operator restores ${DEPLOYMENT_RECORD_KEY} from a backup or an earlier object version.`;

/**
 * Called when the deployment record is absent. A new deployment may be created only on a store
 * that holds nothing of one: otherwise the record was deleted or lost, and a fresh secret would map
 * every user id to a new, empty uid while the old keys and files stay behind.
 */
async function assertNoDeploymentIsExpected(store: ObjectStore, create: boolean): Promise<void> {
  const found = await firstDeploymentDataKey(store);
  if (found !== undefined) {
    // Another process may have created the deployment (and a first user) since our read.
    if ((await store.head(DEPLOYMENT_RECORD_KEY)) !== null) return;
    throw new MemvaultError('STORE_INCONSISTENT', DEPLOYMENT_MISSING_MESSAGE);
  }
  if (!create) {
    throw new MemvaultError(
      'CONFIG',
      `There is no memvault deployment in this store (no ${DEPLOYMENT_RECORD_KEY} and no user data): check the store URL. Nothing was created.`,
    );
  }
}

export const DEPLOYMENT_MISSING_MESSAGE =
  `The store holds user data but no deployment record (${DEPLOYMENT_RECORD_KEY}): it was deleted or lost. ` +
  'memvault will not start a new deployment over it, because every user would see an empty memory while their old files stay behind. ' +
  `Recovery: restore ${DEPLOYMENT_RECORD_KEY} from a backup or an earlier object version (README, "Recovering a lost deployment record"); ` +
  "if the data is to be abandoned, move or delete the store's k/ and u/ prefixes first.";

function explainDeploymentFailure(e: unknown, primary: KeyProvider, previous: KeyProvider[]): unknown {
  const configured = [primary, ...previous].map((p) => describeKey(p.kind, p.keyId)).join(', ');
  if (e instanceof NoMatchingKeyError) {
    const wrappedWith = describeKey(e.record.kind, e.record.keyId);
    const hint =
      e.record.kind === 'local'
        ? 'Set MEMVAULT_MASTER_KEY (or the master key file) to the master key this deployment was created with; while rotating, configure the old key as a previous key.'
        : 'Configure that KMS key (kms.keyId) and credentials allowed to use it.';
    return new MemvaultError(
      'KEY_UNAVAILABLE',
      `The configured master key does not match this deployment: its keys are wrapped with the ${wrappedWith}, but the configured key is the ${configured}. ${hint}`,
      { cause: e },
    );
  }
  if (e instanceof MemvaultError && e.code === 'INTEGRITY' && e.message === DEPLOYMENT_RECORD_INTEGRITY_MESSAGE) {
    return new MemvaultError('KEY_UNAVAILABLE', e.message, { cause: e });
  }
  if (e instanceof MemvaultError && e.code === 'INTEGRITY') {
    return new MemvaultError(
      'KEY_UNAVAILABLE',
      `The deployment record (${DEPLOYMENT_RECORD_KEY}) does not open with the ${configured}, although the key check matches: the record is damaged. Restore it from a backup.`,
      { cause: e },
    );
  }
  if (e instanceof MemvaultError && e.code === 'KEY_UNAVAILABLE') {
    return new MemvaultError('KEY_UNAVAILABLE', `The deployment record could not be opened: ${e.message.replace(/^Error: /, '')}`, { cause: e });
  }
  return e;
}
