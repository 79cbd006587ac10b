/**
 * Where encrypted data lives in the object store (docs/format.md, "Layout"):
 *   k/_deployment      the deployment record (wrapped secret for user-id hashing)
 *   k/{uid}            one user's wrapped data key
 *   u/{uid}/f/{names}  one user's files, each path segment encrypted
 * Rotation, erasure, export and the expiry sweeper find users and their objects through these.
 */
import { listAll, type ObjectStore } from '../store/port.js';
import { UID_PATTERN } from './format.js';

export const KEYS_PREFIX = 'k/';
export const DEPLOYMENT_RECORD_KEY = 'k/_deployment';
/** The uid used in the wrap context of the deployment secret (never a real uid: those are 32 chars). */
export const DEPLOYMENT_CONTEXT_UID = '_deployment';

export function userKeyKey(uid: string): string {
  return `${KEYS_PREFIX}${uid}`;
}

/** Prefix of everything stored for one user (files and anything the vault keeps beside them). */
export function userPrefix(uid: string): string {
  return `u/${uid}/`;
}

/** Prefix of one user's files. */
export function userFilesPrefix(uid: string): string {
  return `u/${uid}/f/`;
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
