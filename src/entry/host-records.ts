/**
 * What a host that serves the vault (src/serve/) needs beside the commands: records kept next to a
 * user's files under the user's own key (vault.userRecords), and a readiness check that proves the
 * configured key still opens this deployment (vault.checkReady).
 */
import { createHmac } from 'node:crypto';
import { validateUserId } from '../crypto/codec.js';
import type { Encryption } from '../crypto/index.js';
import { DEPLOYMENT_CHANGED_MESSAGE, explainDeploymentFailure } from '../crypto/deployment-checks.js';
import { computeDeploymentFingerprint } from '../crypto/format.js';
import { userRecordPath } from '../crypto/record-path.js';
import type { CodecProvider } from '../crypto/user-codec.js';
import { readDeployment } from '../crypto/wrapped-secret.js';
import { MemvaultError } from '../errors.js';
import { KEYS_PREFIX, USER_RECORD_KIND, USER_RECORD_NAME, userRecordKey } from '../store/layout.js';
import type { ObjectStore } from '../store/port.js';

/**
 * One kind of record a host keeps beside a user's files (serve's idempotency records, u/{uid}/i/):
 * named by a keyed hash (a key the deployment secret derives per user), sealed under the user's own
 * data key with the record's name in the associated data, like the user's files. The store learns
 * neither the name nor the content, a record moved to another name does not open, and erasing the
 * user's key makes every record unreadable, backups included. A record stored at `keyOf(name)` is
 * re-sealed by a re-key like the user's files, so it still opens after the old key version is
 * dropped (src/store/layout.ts says where each kind lives).
 */
export interface UserRecords {
  /** The user's pseudonymous store id (u/{uid}/). */
  readonly uid: string;
  /** 64 hex digits: the keyed hash of a record's name, the same in every instance of the deployment. */
  nameOf(name: string): string;
  /** The store key of the record named `hashedName` (from nameOf): where a re-key finds it. */
  keyOf(hashedName: string): string;
  /** Bytes to store for the record named `hashedName` (from nameOf). */
  seal(hashedName: string, plaintext: Uint8Array): Uint8Array;
  /** Throws MemvaultError('INTEGRITY') when the bytes are not this user's record of that name. */
  open(hashedName: string, stored: Uint8Array): Promise<Uint8Array>;
}

export function userRecordsOf(codec: CodecProvider): (userId: string, kind: string) => Promise<UserRecords> {
  return async (userId, kind) => {
    if (typeof kind !== 'string' || !USER_RECORD_KIND.test(kind))
      throw new MemvaultError('INVALID_INPUT', 'Error: A record kind is [a-z-]{1,32}.');
    const userCodec = await codec.forUser(validateUserId(userId));
    const uid = userCodec.uid;
    const nameKey = Buffer.from(codec.pathId(uid, `\u0000record-names\u0000${kind}`), 'base64url');
    // Only a name from nameOf: a record elsewhere would be one a re-key never finds.
    const checked = (hashedName: string): string => {
      if (typeof hashedName !== 'string' || !USER_RECORD_NAME.test(hashedName))
        throw new MemvaultError('INVALID_INPUT', 'Error: A record name is the 64 hex digits nameOf returns.');
      return hashedName;
    };
    return {
      uid,
      nameOf: (name) => createHmac('sha256', nameKey).update(name, 'utf8').digest('hex'),
      keyOf: (hashedName) => userRecordKey(uid, kind, checked(hashedName)),
      seal: (hashedName, plaintext) => userCodec.seal(userRecordPath(kind, checked(hashedName)), plaintext),
      open: async (hashedName, stored) => {
        const path = userRecordPath(kind, checked(hashedName));
        await userCodec.ensureKeyFor?.(stored);
        return userCodec.open(path, stored);
      },
    };
  };
}

/**
 * The store answers and the configured key opens this deployment now: k/_deployment read and
 * unwrapped (one KMS call with a KMS key), and the same deployment this process opened at start-up.
 * Without the vault's own encryption (plain, or a host's codec) only the store is asked.
 */
export function readinessCheck(store: ObjectStore, encryption: Encryption | undefined): () => Promise<void> {
  return async () => {
    if (!encryption) {
      await store.list(KEYS_PREFIX, { maxKeys: 1 });
      return;
    }
    const { keyProvider, previousKeyProviders, codecProvider } = encryption;
    let opened;
    try {
      opened = await readDeployment(store, [keyProvider, ...previousKeyProviders], (bytes) => bytes.fill(0));
    } catch (error) {
      throw explainDeploymentFailure(error, keyProvider, previousKeyProviders);
    }
    if (!opened) throw new MemvaultError('STORE_INCONSISTENT', DEPLOYMENT_CHANGED_MESSAGE);
    const fingerprint = computeDeploymentFingerprint(opened.secret, opened.record.deployment);
    opened.secret.fill(0);
    if (fingerprint !== codecProvider.deploymentFingerprint)
      throw new MemvaultError('STORE_INCONSISTENT', DEPLOYMENT_CHANGED_MESSAGE);
  };
}
