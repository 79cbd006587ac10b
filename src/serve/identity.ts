/**
 * Who is calling, derived from a verified credential and nothing else. Each kind of credential has a
 * verifier: it says whether a request carries its kind of credential, and verifies it into a Caller.
 * The resolver asks them in order; the first that recognises the credential decides (a bad one is
 * 401, never a fall-through to a weaker kind). A new kind (a logged-in person's session cookie) is one
 * more verifier; the routes only ever see the Caller.
 */
import { createHash } from 'node:crypto';
import { validateUserId } from '../crypto/user-id.js';
import { ProblemError } from './problems.js';

/** The kinds of caller: a user's own token, a service acting for a user, local development without auth. */
export type CallerKind = 'user-token' | 'service-key' | 'development' | (string & { readonly __kind?: never });

export interface Caller {
  kind: CallerKind;
  /** The user whose memory the request works on. Never taken from the body or the path. */
  userId: string;
  /** Who acted, for audit records: the service key id, or the kind for a user acting on their own memory. */
  actor: string;
  /** What rate limits count against (the credential, never the user's id in clear). */
  rateKey: string;
  /** Seconds since the epoch when the credential was issued (a JWT's iat), for operations that need a fresh one. */
  issuedAt?: number;
}

/** What a verifier may read of a request: its headers (lower-case names). */
export interface CredentialRequest {
  headers: Record<string, string | string[] | undefined>;
}

export interface CredentialVerifier {
  readonly kind: CallerKind;
  /** True when the request carries this kind's credential (whether valid or not). */
  recognises(request: CredentialRequest): boolean;
  /** The caller the credential proves, or a ProblemError (401 invalid, 403 not allowed). */
  verify(request: CredentialRequest): Promise<Caller>;
}

/** The header a service names the user it acts for in (only with a credential allowed to). */
export const USER_HEADER = 'memvault-user';

export function bearerToken(request: CredentialRequest): string | undefined {
  const value = request.headers['authorization'];
  if (typeof value !== 'string') return undefined;
  const match = /^Bearer +([\x21-\x7e]{1,8192})$/i.exec(value.trim());
  return match?.[1];
}

export function singleHeader(request: CredentialRequest, name: string): string | undefined {
  const value = request.headers[name];
  if (Array.isArray(value)) throw new ProblemError('invalid-request', `Send the ${name} header once.`);
  return value;
}

/** The user a service names in Memvault-User, checked as every user id is. */
export function namedUser(request: CredentialRequest): string {
  const user = singleHeader(request, USER_HEADER);
  if (user === undefined || user === '')
    throw new ProblemError('invalid-request', 'Name the user to act for in the Memvault-User header.');
  try {
    return validateUserId(user);
  } catch {
    throw new ProblemError('invalid-request', 'The Memvault-User header is not a valid user id.');
  }
}

export const UNAUTHORIZED_HEADERS = { 'www-authenticate': 'Bearer realm="memvault"' };

export async function resolveCaller(
  verifiers: readonly CredentialVerifier[],
  request: CredentialRequest,
): Promise<Caller> {
  for (const verifier of verifiers) if (verifier.recognises(request)) return verifier.verify(request);
  throw new ProblemError(
    'unauthorized',
    'Send a credential: Authorization: Bearer <token or API key>.',
    UNAUTHORIZED_HEADERS,
  );
}

/** What rate limits count against: a hash of the credential's subject, so no user id is kept in clear. */
export function rateKeyOf(kind: string, id: string): string {
  return `${kind}:${createHash('sha256').update(id).digest('base64url').slice(0, 22)}`;
}
