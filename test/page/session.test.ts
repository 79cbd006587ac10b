/** The page's sealed cookies, without a browser: what opens, what does not, and the timeouts. */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { CookieSealer, csrfMatches, newSession, openSession, RevokedSessions } from '../../src/serve/page/session.js';

const timeouts = { idleMs: 1_000, absoluteMs: 10_000 };

describe('page sessions', () => {
  it('opens only what it sealed, for the same purpose, untouched and within both timeouts', () => {
    const sealer = new CookieSealer(randomBytes(32));
    const session = newSession('alice', 100_000);
    const sealed = sealer.seal('session', session);
    expect(openSession(sealer, sealed, timeouts, 100_500)).toEqual(session);
    expect(sealed).not.toContain('alice');
    // Idle past 1 s, or a renewed session past its absolute 10 s.
    expect(openSession(sealer, sealed, timeouts, 101_001)).toBeUndefined();
    const renewed = sealer.seal('session', { ...session, seen: 110_000 });
    expect(openSession(sealer, renewed, timeouts, 110_001)).toBeUndefined();
    expect(openSession(sealer, sealer.seal('session', { ...session, seen: 109_900 }), timeouts, 109_950)).toBeDefined();
    // Another secret, another purpose, one flipped character, garbage, an oversized value: nothing.
    expect(openSession(new CookieSealer(randomBytes(32)), sealed, timeouts, 100_500)).toBeUndefined();
    expect(sealer.open('login', sealed)).toBeUndefined();
    const flipped = sealed.slice(0, 20) + (sealed[20] === 'A' ? 'B' : 'A') + sealed.slice(21);
    expect(openSession(sealer, flipped, timeouts, 100_500)).toBeUndefined();
    for (const bad of [undefined, '', 'not base64!', 'QUJD', 'A'.repeat(5000)])
      expect(openSession(sealer, bad, timeouts, 100_500)).toBeUndefined();
    // A sealed login state is not a session even under the session purpose's shape check.
    const login = sealer.seal('session', { state: 's', nonce: 'n', verifier: 'v', created: 100_000 });
    expect(openSession(sealer, login, timeouts, 100_500)).toBeUndefined();
    expect(() => new CookieSealer(randomBytes(31))).toThrow(RangeError);
  });

  it('checks the CSRF token exactly and remembers revoked sessions until their absolute timeout', () => {
    const session = newSession('bob', 0);
    expect(csrfMatches(session, session.csrf)).toBe(true);
    for (const wrong of [undefined, '', session.csrf.slice(1), `${session.csrf.slice(0, -1)}x`, 42])
      expect(csrfMatches(session, wrong)).toBe(false);
    const revoked = new RevokedSessions(timeouts);
    const other = newSession('bob', 0);
    revoked.revoke(session, 0);
    expect(revoked.has(session)).toBe(true);
    expect(revoked.has(other)).toBe(false);
    // Past the absolute timeout the entry is dropped at the next revocation (the cookie is dead anyway).
    revoked.revoke(other, 10_001);
    expect(revoked.has(session)).toBe(false);
    expect(revoked.has(other)).toBe(true);
  });
});
