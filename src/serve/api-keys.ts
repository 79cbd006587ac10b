/**
 * Service API keys: `mvk_<id>_<secret>`, sent as a bearer token. The keys file holds, per key, its id,
 * the SHA-256 of the whole key (never the key) and its scopes. A key with the `act-as` scope names
 * the user it acts for in the Memvault-User header and is recorded as the actor by its id; a key
 * without it can name no user. Keys are random (32 bytes), so one SHA-256 is as good as a slow hash.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import {
  bearerToken,
  namedUser,
  rateKeyOf,
  UNAUTHORIZED_HEADERS,
  type Caller,
  type CredentialRequest,
  type CredentialVerifier,
} from './identity.js';
import { ProblemError } from './problems.js';

export const API_KEY_PREFIX = 'mvk_';
export const API_KEY_SCOPES = ['act-as'] as const;
export type ApiKeyScope = (typeof API_KEY_SCOPES)[number];

export interface ApiKeyEntry {
  /** `[a-z0-9-]{1,64}`: safe for audit records and logs. */
  id: string;
  /** Hex SHA-256 of the whole key. */
  sha256: string;
  scopes: ApiKeyScope[];
}

const KEY_ID = /^[a-z0-9-]{1,64}$/;
const KEY_TOKEN = /^mvk_([a-z0-9-]{1,64})_([A-Za-z0-9_-]{16,256})$/;

/** The keys file's content (`{ "keys": [...] }`), checked entry by entry; throws RangeError naming what is wrong. */
export function parseApiKeys(json: unknown): ApiKeyEntry[] {
  const keys = (json as { keys?: unknown } | null)?.keys;
  if (!Array.isArray(keys)) throw new RangeError('the API keys file must be {"keys": [...]}');
  const seen = new Set<string>();
  return keys.map((entry: unknown, index) => {
    const { id, sha256, scopes } = (entry ?? {}) as Record<string, unknown>;
    if (typeof id !== 'string' || !KEY_ID.test(id))
      throw new RangeError(`API key ${index}: id must match [a-z0-9-]{1,64}`);
    if (seen.has(id)) throw new RangeError(`API key ${index}: the id ${id} is listed twice`);
    seen.add(id);
    if (typeof sha256 !== 'string' || !/^[0-9a-f]{64}$/.test(sha256))
      throw new RangeError(`API key ${id}: sha256 must be 64 lower-case hex digits`);
    if (!Array.isArray(scopes) || scopes.some((s) => !(API_KEY_SCOPES as readonly unknown[]).includes(s)))
      throw new RangeError(`API key ${id}: scopes must be a list of ${API_KEY_SCOPES.join(', ')}`);
    return { id, sha256, scopes: scopes as ApiKeyScope[] };
  });
}

function sha256Hex(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/** A new key and its entry for the keys file (the key is shown once; only its hash is kept). */
export function newApiKey(id: string, scopes: ApiKeyScope[] = ['act-as']): { key: string; entry: ApiKeyEntry } {
  if (!KEY_ID.test(id)) throw new RangeError('the key id must match [a-z0-9-]{1,64}');
  const key = `${API_KEY_PREFIX}${id}_${randomBytes(32).toString('base64url')}`;
  return { key, entry: { id, sha256: sha256Hex(key), scopes } };
}

export function apiKeyVerifier(entries: readonly ApiKeyEntry[]): CredentialVerifier {
  const byId = new Map(entries.map((entry) => [entry.id, entry]));
  const invalid = () => new ProblemError('unauthorized', 'The API key is not valid.', UNAUTHORIZED_HEADERS);
  return {
    kind: 'service-key',
    recognises: (request) => bearerToken(request)?.startsWith(API_KEY_PREFIX) === true,
    async verify(request: CredentialRequest): Promise<Caller> {
      const token = bearerToken(request) ?? '';
      const match = KEY_TOKEN.exec(token);
      const entry = match ? byId.get(match[1]!) : undefined;
      // Compare hashes in constant time; an unknown id costs the same hash as a known one.
      const given = Buffer.from(sha256Hex(token), 'hex');
      const expected = Buffer.from(entry?.sha256 ?? '0'.repeat(64), 'hex');
      if (!entry || !timingSafeEqual(given, expected)) throw invalid();
      if (!entry.scopes.includes('act-as'))
        throw new ProblemError('forbidden', 'This API key has no act-as scope: it cannot name a user.');
      const userId = namedUser(request);
      return { kind: 'service-key', userId, actor: `key:${entry.id}`, rateKey: rateKeyOf('key', entry.id) };
    },
  };
}
