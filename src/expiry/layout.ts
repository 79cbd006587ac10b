/**
 * What the sweeper reads from key names alone (no request per object). Every vault codec stores a
 * user's files under `u/{uid}/f/` (src/vault/plain-codec.ts, src/crypto/layout.ts). Beside them the
 * expiry service keeps, only for users of a non-default TTL class, one empty marker object
 * `u/{uid}/c/{class}`: it sorts before the user's files ('c' < 'f'), so a sweep that streams the
 * listing of `u/` in key order learns the class before it meets the files it applies to.
 */
export { USERS_PREFIX } from '../store/layout.js';
import { USERS_PREFIX } from '../store/layout.js';
const FILES_SEGMENT = 'f';
const CLASS_SEGMENT = 'c';

export type ParsedKey =
  | { kind: 'file'; uid: string }
  | { kind: 'class'; uid: string; className: string }
  | { kind: 'other'; uid: string | undefined };

export function parseUserKey(key: string): ParsedKey {
  if (!key.startsWith(USERS_PREFIX)) return { kind: 'other', uid: undefined };
  const rest = key.slice(USERS_PREFIX.length);
  const slash = rest.indexOf('/');
  if (slash <= 0) return { kind: 'other', uid: undefined };
  const uid = rest.slice(0, slash);
  const after = rest.slice(slash + 1);
  if (after.startsWith(`${FILES_SEGMENT}/`) && after.length > FILES_SEGMENT.length + 1) return { kind: 'file', uid };
  if (after.startsWith(`${CLASS_SEGMENT}/`)) {
    const className = after.slice(CLASS_SEGMENT.length + 1);
    if (className.length > 0 && !className.includes('/')) return { kind: 'class', uid, className };
  }
  return { kind: 'other', uid };
}

/** `u/{uid}/` from a codec's files prefix `u/{uid}/f/`; undefined for any other layout. */
export function userPrefixOf(filesPrefix: string): string | undefined {
  const match = /^(u\/[^/]+\/)f\/$/.exec(filesPrefix);
  return match?.[1];
}

export function classMarkerPrefix(userPrefix: string): string {
  return `${userPrefix}${CLASS_SEGMENT}/`;
}

export function classMarkerKey(userPrefix: string, className: string): string {
  return `${classMarkerPrefix(userPrefix)}${className}`;
}
