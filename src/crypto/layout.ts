/**
 * Where encrypted data lives in the object store (docs/format.md, "Layout"):
 *   k/_deployment      the deployment record (wrapped secret for user-id hashing)
 *   k/{uid}            one user's wrapped data key
 *   u/{uid}/f/{names}  one user's files, each path segment encrypted
 * Rotation, erasure, export and the expiry sweeper find users and their objects through these.
 */
import { listAll, type ObjectStore } from '../store/port.js';
import { UID_PATTERN } from './format.js';

export { DEPLOYMENT_RECORD_KEY, KEYS_PREFIX, USERS_PREFIX, userFilesPrefix, userPrefix } from '../store/layout.js';
import { KEYS_PREFIX, USERS_PREFIX } from '../store/layout.js';
/** The uid used in the wrap context of the deployment secret (never a real uid: those are 32 chars). */
export const DEPLOYMENT_CONTEXT_UID = '_deployment';

export function userKeyKey(uid: string): string {
  return `${KEYS_PREFIX}${uid}`;
}

export function isUid(value: string): boolean {
  return UID_PATTERN.test(value);
}

/** Every uid with a key record, in key order. */
export async function* iterateUsers(store: ObjectStore): AsyncGenerator<string> {
  for await (const object of listAll(store, KEYS_PREFIX)) {
    const uid = object.key.slice(KEYS_PREFIX.length);
    if (isUid(uid)) yield uid;
  }
}

export async function listUsers(store: ObjectStore): Promise<string[]> {
  const uids: string[] = [];
  for await (const uid of iterateUsers(store)) uids.push(uid);
  return uids;
}

/**
 * The first key that only a deployment writes, if any: a user key record (`k/{uid}`; other `k/_...`
 * names such as doctor's probes do not count) or any user object (`u/...`). Two listings of one page.
 */
export async function firstDeploymentDataKey(store: ObjectStore): Promise<string | undefined> {
  for await (const object of listAll(store, KEYS_PREFIX)) {
    if (isUid(object.key.slice(KEYS_PREFIX.length))) return object.key;
  }
  const users = await store.list(USERS_PREFIX, { maxKeys: 1 });
  return users.objects[0]?.key;
}
