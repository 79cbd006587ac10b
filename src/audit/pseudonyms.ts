/**
 * The pseudonyms audit records carry for a user: a uid and one id per path (docs/audit.md,
 * "Pseudonyms and erasure").
 *
 * For encrypted stores they are keyed by a key derived from the user's own data key (the codec's
 * `auditPseudonymKey`), not by the deployment secret: the store's uid (`u/{uid}/`) must be
 * computable from the user id alone, so anyone holding the master key could recompute it from a
 * guessed id; the audit uid cannot be recomputed once `forget` has destroyed the data key. A user id
 * that comes back after an erasure gets a new data key, hence a new audit uid: it starts a new
 * history instead of inheriting the old one. No user id is stored anywhere for this.
 *
 * Audit verification never recomputes a pseudonym (the chain, the MACs and the checkpoints cover
 * the records' bytes), so erasing a user leaves every chain verifiable.
 */
import { createHmac } from 'node:crypto';
import type { CodecProvider, UserCodec } from '../crypto/user-codec.js';
import { LruMap } from '../util/lru.js';

export interface AuditPseudonyms {
  /** The user's pseudonymous id in audit records. */
  readonly uid: string;
  /** The pseudonymous id of one of the user's canonical paths. */
  pathId(path: string): string;
}

const LABEL_AUDIT_UID = 'memvault/v1/audit-uid';
const LABEL_AUDIT_PATH = 'memvault/v1/audit-path-id\u0000';
/**
 * Path ids a user's memoised pseudonyms remember: an audit record names the command's one or two
 * paths, so a session's working set is small. Kept small on purpose: there is one such memo per
 * user key held (up to the key cache's 1,000 users by default).
 */
const PATH_ID_MEMO_LIMIT = 64;

/**
 * The pseudonyms of each user key this process holds, by the codec's memo scope: the uid and the
 * recent path ids were two or three HMACs every command recomputed. Weakly held, so they go with
 * the key entry (never outliving an erasure, which makes a new key and so a new scope).
 */
const memoised = new WeakMap<object, AuditPseudonyms>();

/** Pseudonyms keyed by a user's audit pseudonym key (32 bytes; the caller may wipe it afterwards). */
export function auditPseudonymsFromKey(key: Uint8Array): AuditPseudonyms {
  const own = Buffer.from(key); // a copy: the caller's bytes may be wiped
  const uid = createHmac('sha256', own).update(LABEL_AUDIT_UID).digest().subarray(0, 24).toString('base64url');
  return {
    uid,
    pathId: (path) =>
      createHmac('sha256', own)
        .update(LABEL_AUDIT_PATH)
        .update(path, 'utf8')
        .digest()
        .subarray(0, 16)
        .toString('base64url'),
  };
}

/**
 * The audit pseudonyms of one user's codec: keyed by the user's own key when the codec has one,
 * otherwise (plain codec, no erasure possible) the codec's uid and the provider's path ids.
 */
export function auditPseudonymsOf(userCodec: UserCodec, provider: Pick<CodecProvider, 'pathId'>): AuditPseudonyms {
  const scope = userCodec.memoScope;
  const known = scope && memoised.get(scope);
  if (known) return known;
  const key = userCodec.auditPseudonymKey?.();
  if (key === undefined) return { uid: userCodec.uid, pathId: (path) => provider.pathId(userCodec.uid, path) };
  let pseudonyms: AuditPseudonyms;
  try {
    pseudonyms = auditPseudonymsFromKey(key);
  } finally {
    key.fill(0);
  }
  if (!scope) return pseudonyms;
  const pathIds = new LruMap<string, string>(PATH_ID_MEMO_LIMIT);
  const remembering: AuditPseudonyms = {
    uid: pseudonyms.uid,
    pathId: (path) => {
      let id = pathIds.get(path);
      if (id === undefined) pathIds.set(path, (id = pseudonyms.pathId(path)));
      return id;
    },
  };
  memoised.set(scope, remembering);
  return remembering;
}
