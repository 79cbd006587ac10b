// Verified JWTs are remembered for a minute at most and never past their exp: the signature is
// checked once per token, and every per-request rule still applies to a remembered one.
import { createLocalJWKSet, type JWTVerifyGetKey } from 'jose';
import { describe, expect, it } from 'vitest';
import { jwtVerifier } from '../../src/serve/jwt.js';
import { VerifiedTokens } from '../../src/serve/verified-tokens.js';
import { AUDIENCE, ISSUER, startIdp } from './helpers.js';

describe('verified tokens', () => {
  it('checks a token once, yet refuses a remembered one that names another user; 0 turns it off', async () => {
    const idp = await startIdp();
    try {
      let lookups = 0;
      const local = createLocalJWKSet({ keys: [idp.publicJwk] });
      const keys: JWTVerifyGetKey = (header, token) => (lookups++, local(header, token));
      const request = (token: string, user?: string) => ({
        headers: { authorization: `Bearer ${token}`, ...(user ? { 'memvault-user': user } : {}) },
      });
      const base = { jwksUrl: idp.jwksUrl, issuer: ISSUER, audience: AUDIENCE, keys };
      const verifier = jwtVerifier(base);
      const alice = await idp.sign({ sub: 'alice' });
      for (let i = 0; i < 3; i++) expect((await verifier.verify(request(alice))).userId).toBe('alice');
      expect(lookups).toBe(1);
      await expect(verifier.verify(request(alice, 'bob'))).rejects.toMatchObject({ problem: { status: 403 } });
      // A token that fails is never remembered: it fails every time, and costs a check every time.
      const forged = `${alice.slice(0, -4)}AAAA`;
      for (let i = 0; i < 2; i++)
        await expect(verifier.verify(request(forged))).rejects.toMatchObject({ problem: { status: 401 } });
      expect(lookups).toBe(3);
      // A subject that is no user id (blank, a lone surrogate) is refused like any bad token.
      for (const sub of ['   ', '\ud800x'])
        await expect(verifier.verify(request(await idp.sign({ sub })))).rejects.toMatchObject({
          problem: { status: 401, detail: 'The token names no usable subject.' },
        });
      const uncached = jwtVerifier({ ...base, verifiedCacheSeconds: 0 });
      await uncached.verify(request(alice));
      await uncached.verify(request(alice));
      expect(lookups).toBe(7);
      for (const bad of [-1, 301, 1.5])
        expect(() => jwtVerifier({ ...base, verifiedCacheSeconds: bad })).toThrow(RangeError);
    } finally {
      await idp.close();
    }
  });

  it('forgets a token at its exp plus the skew, or after the memo age, whichever is first', () => {
    let now = 1_000_000_000_000;
    const tokens = new VerifiedTokens(60_000, 30, () => now);
    const nowSeconds = () => now / 1000;
    tokens.set('short', { sub: 'a', exp: nowSeconds() + 10 });
    tokens.set('long', { sub: 'b', exp: nowSeconds() + 3600 });
    tokens.set('expired', { sub: 'c', exp: nowSeconds() - 31 });
    expect(tokens.get('expired')).toBeUndefined();
    now += 39_999;
    expect(tokens.get('short')?.sub).toBe('a');
    now += 1;
    expect(tokens.get('short')).toBeUndefined();
    now += 19_999;
    expect(tokens.get('long')?.sub).toBe('b');
    now += 1;
    expect(tokens.get('long')).toBeUndefined();
    expect(tokens.get('never-set')).toBeUndefined();
  });
});
