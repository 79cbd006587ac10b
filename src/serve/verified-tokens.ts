/**
 * Bearer JWTs verified a moment ago, remembered: checking a signature costs 0.2 to 0.7 ms (RSA or
 * ECDSA through WebCrypto's thread pool), more than the rest of the HTTP layer together, and an agent
 * sends the same token with every command of a conversation. An entry is keyed by the SHA-256 of the
 * token (the token itself is not kept) and holds only the claims a caller is made of. It is used
 * while the token is within its `exp` (plus the allowed skew) and at most `maxAgeMs` after the
 * check, by default a minute: well inside jose's own JWKS cache (ten minutes), so a key the identity
 * provider withdraws stops being accepted no later than it would without this memo. Bounded by the
 * one LRU rule. Per-request checks (Memvault-User) stay with the caller of `get`.
 */
import { createHash } from 'node:crypto';
import { LruMap } from '../util/lru.js';

export interface VerifiedClaims {
  sub: string;
  /** Seconds since the epoch. */
  exp: number;
  iat?: number;
}

const MAX_ENTRIES = 10_000;

export class VerifiedTokens {
  private readonly entries = new LruMap<string, { claims: VerifiedClaims; until: number }>(MAX_ENTRIES);

  constructor(
    private readonly maxAgeMs: number,
    private readonly clockSkewSeconds: number,
    private readonly now: () => number = Date.now,
  ) {}

  get(token: string): VerifiedClaims | undefined {
    if (this.maxAgeMs === 0) return undefined;
    const id = idOf(token);
    const entry = this.entries.get(id);
    if (!entry) return undefined;
    if (this.now() < entry.until) return entry.claims;
    this.entries.delete(id);
    return undefined;
  }

  set(token: string, claims: VerifiedClaims): void {
    if (this.maxAgeMs === 0) return;
    const now = this.now();
    const until = Math.min(now + this.maxAgeMs, (claims.exp + this.clockSkewSeconds) * 1000);
    if (until > now) this.entries.set(idOf(token), { claims, until });
  }
}

function idOf(token: string): string {
  return createHash('sha256').update(token).digest('base64url');
}
