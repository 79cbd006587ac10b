/**
 * The memory page's rate limits over HTTP (no browser): per session on every page and change, and
 * per client address on sign-in; a 429 is a page that says when to retry (Retry-After), and other
 * sessions go on.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createVault, type Vault } from '../../src/memvault.js';
import { createServer, type MemvaultServer } from '../../src/serve.js';
import { registerPage, SESSION_COOKIE, WRITE_COOKIE } from '../../src/serve/page/plugin.js';
import { RateWindow } from '../../src/serve/page/rate.js';
import { CookieSealer, newSession } from '../../src/serve/page/session.js';
import { MemoryStore } from '../../src/store/memory.js';
import { CLIENT_ID, startProvider } from './setup.js';

const secret = randomBytes(32);
let vault: Vault;
let server: MemvaultServer;
let idp: Awaited<ReturnType<typeof startProvider>>;
let origin: string;

beforeAll(async () => {
  idp = await startProvider('http://127.0.0.1:1/page/callback');
  vault = await createVault({
    store: new MemoryStore(),
    encryption: { masterKey: randomBytes(32).toString('base64') },
  });
  server = await createServer(vault, { auth: { development: true }, rateLimit: false });
  await registerPage(server.fastify, vault, {
    oidc: { issuer: idp.issuer, clientId: CLIENT_ID },
    publicUrl: 'http://127.0.0.1:1',
    sessionSecret: secret,
    rateLimits: { session: { max: 3, windowMs: 60_000 }, login: { max: 2, windowMs: 60_000 } },
  });
  origin = await server.listen({ host: '127.0.0.1', port: 0 });
});
afterAll(async () => {
  await server?.close();
  await vault?.close();
  await idp?.close();
});

function cookieOf(user: string): { cookie: string; csrf: string } {
  const session = newSession(user, Date.now());
  const sealed = new CookieSealer(secret).seal('session', session);
  return { cookie: `${SESSION_COOKIE}=${sealed}; ${WRITE_COOKIE}=${sealed}`, csrf: session.csrf };
}

describe('page rate limits', () => {
  it('limits each session, reads and changes together, with a 429 page and Retry-After', async () => {
    const alice = cookieOf('alice');
    const statuses: number[] = [];
    for (let i = 0; i < 2; i++)
      statuses.push((await fetch(`${origin}/page`, { headers: { cookie: alice.cookie } })).status);
    const change = await fetch(`${origin}/page/pause`, {
      method: 'POST',
      headers: {
        cookie: alice.cookie,
        origin: 'http://127.0.0.1:1',
        'content-type': 'application/x-www-form-urlencoded',
      },
      body: new URLSearchParams({ csrf: alice.csrf, paused: 'off' }).toString(),
    });
    statuses.push(change.status);
    const limited = await fetch(`${origin}/page`, { headers: { cookie: alice.cookie } });
    expect([...statuses, limited.status]).toEqual([200, 200, 200, 429]);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(limited.headers.get('content-type')).toContain('text/html');
    expect(limited.headers.get('content-security-policy')).toContain("script-src 'none'");
    expect(await limited.text()).toMatch(/Too many requests from this session.*Wait \d+ seconds/);
    // Another session is not held back by alice's.
    expect((await fetch(`${origin}/page`, { headers: { cookie: cookieOf('bob').cookie } })).status).toBe(200);
  });

  it('limits sign-in per client address', async () => {
    const statuses = [];
    for (let i = 0; i < 3; i++) statuses.push((await fetch(`${origin}/page/login`, { redirect: 'manual' })).status);
    expect(statuses).toEqual([303, 303, 429]);
    const callback = await fetch(`${origin}/page/callback?code=x&state=y`, { redirect: 'manual' });
    expect(callback.status).toBe(429);
    expect(await callback.text()).toContain('Too many sign-in attempts');
  });

  it('forgets expired windows and refuses a limit that is not a positive integer', () => {
    const window = new RateWindow({ max: 1, windowMs: 1_000 }, 'requests');
    window.take('k', 0);
    expect(() => window.take('k', 999)).toThrow(/Wait 1 seconds/);
    expect(() => window.take('k', 1_000)).not.toThrow();
    for (const bad of [
      { max: 0, windowMs: 1 },
      { max: 1.5, windowMs: 1 },
      { max: 1, windowMs: -1 },
    ])
      expect(() => new RateWindow(bad, 'x')).toThrow(RangeError);
  });
});
