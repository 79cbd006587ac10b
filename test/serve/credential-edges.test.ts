// Two edges of the credential checks. Requests whose credential fails count against a budget per
// client address (the rate limit's max per window) and get 429 with Retry-After past it, while a
// credential that verifies from that same address is still served. Erasure's "issued in the last
// 300 s" refuses a token whose iat is in the future beyond the JWT clock skew, which would otherwise
// stay "fresh" for as long as it lives.
import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createVault, type Vault } from '../../src/memvault.js';
import type { MemvaultServer } from '../../src/serve.js';
import { MemoryStore } from '../../src/store/memory.js';
import { AUDIENCE, bearer, ISSUER, serviceKey, startIdp, testServer, type TestIdp } from './helpers.js';

let idp: TestIdp;
beforeAll(async () => {
  idp = await startIdp();
});
afterAll(async () => {
  await idp.close();
});

async function withServer(
  extra: Parameters<typeof testServer>[1],
  body: (server: MemvaultServer, vault: Vault) => Promise<void>,
) {
  const { server, vault } = await testServer(
    idp,
    extra,
    await createVault({ store: new MemoryStore(), encryption: { masterKey: Buffer.alloc(32, 4).toString('base64') } }),
  );
  try {
    await body(server, vault);
  } finally {
    await server.close();
    await vault.close();
  }
}

const view = (server: MemvaultServer, headers: Record<string, string>, remoteAddress = '127.0.0.1') =>
  server.fastify.inject({
    method: 'POST',
    url: '/v1/memory',
    remoteAddress,
    headers: { ...headers, 'content-type': 'application/json' },
    payload: '{"command":"view","path":"/memories"}',
  });

describe('failing credentials and the rate limit', () => {
  it('count per address: 401 up to the budget, then 429 with Retry-After; a good credential still passes', async () => {
    await withServer({ rateLimit: { max: 3, windowMs: 60_000 } }, async (server) => {
      const statuses: number[] = [];
      for (let i = 0; i < 3; i++) statuses.push((await view(server, bearer('not.a.jwt'))).statusCode);
      statuses.push((await view(server, {})).statusCode);
      expect(statuses).toEqual([401, 401, 401, 429]);
      const limited = await view(server, bearer('mvk_nope_nope'));
      expect(limited.statusCode).toBe(429);
      expect(limited.json()).toMatchObject({ type: 'urn:memvault:problem:rate-limited' });
      expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
      // Another address has its own budget; a verified credential from the limited one is served.
      expect((await view(server, bearer('not.a.jwt'), '10.0.0.2')).statusCode).toBe(401);
      expect((await view(server, { ...bearer(serviceKey.key), 'memvault-user': 'uma' })).statusCode).toBe(200);
    });
  });

  it('are not limited when rate limits are off', async () => {
    await withServer({ rateLimit: false }, async (server) => {
      for (let i = 0; i < 8; i++) expect((await view(server, bearer('not.a.jwt'))).statusCode).toBe(401);
    });
  });
});

describe('erasure and the token’s iat', () => {
  const tokenIssuedAt = (iat: number) =>
    new SignJWT({ sub: 'uma' })
      .setProtectedHeader({ alg: 'RS256', kid: 'k1' })
      .setIssuer(ISSUER)
      .setAudience(AUDIENCE)
      .setIssuedAt(iat)
      .setExpirationTime(iat + 3600)
      .sign(idp.privateKey);
  const erase = (server: MemvaultServer, token: string) =>
    server.fastify.inject({ method: 'DELETE', url: '/v1/me?confirm=forget-me', headers: bearer(token) });

  it('refuses an iat in the future beyond the clock skew (403), erasing nothing', async () => {
    await withServer({}, async (server, vault) => {
      await vault.run('uma', { command: 'create', path: '/memories/a.md', file_text: 'x' }, { writer: 'host' });
      const now = Math.floor(Date.now() / 1000);
      for (const ahead of [3600, 120]) {
        const res = await erase(server, await tokenIssuedAt(now + ahead));
        expect({ ahead, status: res.statusCode }).toEqual({ ahead, status: 403 });
        expect(res.json()).toMatchObject({ type: 'urn:memvault:problem:forbidden' });
      }
      expect(await (await vault.files('uma')).read('/memories/a.md')).toBeDefined();
    });
  });

  it('takes an iat within the skew (a clock a few seconds ahead) as fresh', async () => {
    await withServer({}, async (server, vault) => {
      await vault.run('uma', { command: 'create', path: '/memories/a.md', file_text: 'x' }, { writer: 'host' });
      const res = await erase(server, await tokenIssuedAt(Math.floor(Date.now() / 1000) + 10));
      expect({ status: res.statusCode, erased: res.json<{ erased?: boolean }>().erased }).toEqual({
        status: 200,
        erased: true,
      });
    });
  });
});
