/**
 * Start-up's deployment checks and their messages: a store with data but no deployment record is
 * refused, and a deployment record the configured keys cannot open is explained in words an
 * operator can act on.
 */
import { MemvaultError } from '../errors.js';
import type { ObjectStore } from '../store/port.js';
import { describeKey, type KeyProvider } from './key-provider.js';
import { DEPLOYMENT_RECORD_KEY, firstDeploymentDataKey } from './layout.js';
import { DEPLOYMENT_RECORD_INTEGRITY_MESSAGE, NoMatchingKeyError } from './wrapped-secret.js';

export const DEPLOYMENT_CHANGED_MESSAGE =
  `Error: The deployment record (${DEPLOYMENT_RECORD_KEY}) disappeared or changed while this service was running; memvault stops answering rather than serve a stale or a different deployment. ` +
  `Nothing was read or written. Recovery: the operator restores ${DEPLOYMENT_RECORD_KEY} from a backup or an earlier object version.`;

/**

 * Called when the deployment record is absent. A new deployment may be created only on a store
 * that holds nothing of one: otherwise the record was deleted or lost, and a fresh secret would map
 * every user id to a new, empty uid while the old keys and files stay behind.
 */
export async function assertNoDeploymentIsExpected(store: ObjectStore, create: boolean): Promise<void> {
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

export function explainDeploymentFailure(e: unknown, primary: KeyProvider, previous: KeyProvider[]): unknown {
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
    return new MemvaultError(
      'KEY_UNAVAILABLE',
      `The deployment record could not be opened: ${e.message.replace(/^Error: /, '')}`,
      { cause: e },
    );
  }
  return e;
}
