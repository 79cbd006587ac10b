// Identity comes from the credential: alice's token reaches only alice's memory, whatever else the
// request says; every kind of bad token is 401 and touches nothing. In-process (inject), real jose,
// a real JWKS over HTTP.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateKeyPair, SignJWT, base64url } from 'jose';
import type { Vault } from '../../src/memvault.js';
import type { MemvaultServer } from '../../src/serve.js';
import { listAll } from '../../src/store/port.js';
import {
  AUDIENCE,
  bearer,
  ISSUER,
  keyWithoutActAs,
  serviceKey,
  startIdp,
  testServer,
  type TestIdp,
} from './helpers.js';

let idp: TestIdp;
let server: MemvaultServer;
let vault: Vault;
let alice: string;

const SECRET = 'bob-secret-text-7f3a';

async function post(headers: Record<string, string>, body: unknown, url = '/v1/memory') {
  const response = await server.fastify.inject({
    method: 'POST',
    url,
    headers: { 'content-type': 'application/json', ...headers },
    payload: JSON.stringify(body),
  });
  return {
    status: response.statusCode,
    type: response.headers['content-type'],
    body: response.json<Record<string, unknown>>(),
    raw: response.body,
  };
}

async function storeKeys(): Promise<string[]> {
  const keys: string[] = [];
  for await (const object of listAll(vault.store, '')) keys.push(`${object.key}@${object.etag}`);
  return keys;
}

beforeAll(async () => {
  idp = await startIdp();
  ({ server, vault } = await testServer(idp));
  alice = await idp.sign({ sub: 'alice' });
  const bob = await idp.sign({ sub: 'bob' });
  const created = await post(bearer(bob), {
    command: 'create',
    path: '/memories/bob/plan.md',
    file_text: `${SECRET}\n`,
  });
  expect(created.body).toEqual({ content: 'File created successfully at: /memories/bob/plan.md', is_error: false });
});

afterAll(async () => {
  await server.close();
  await vault.close();
  await idp.close();
});

describe('POST /v1/memory: identity from the credential', () => {
  it("alice's token works on alice's memory, and no spelling reaches bob's files", async () => {
    const ok = await post(bearer(alice), { command: 'create', path: '/memories/a.md', file_text: 'mine\n' });
    expect(ok).toMatchObject({ status: 200, body: { is_error: false } });
    const attempts: unknown[] = [
      { command: 'view', path: '/memories' },
      { command: 'view', path: '/memories/bob/plan.md' },
      { command: 'view', path: '/memories/../memories/bob/plan.md' },
      { command: 'view', path: '/memories/%62ob/plan.md' },
      { command: 'view', path: '/memories/bob%2Fplan.md' },
      { command: 'view', path: '/memories/..%2f..%2fu' },
      { command: 'view', path: '/memories/ｂｏｂ/plan.md' },
      { command: 'view', path: '/memories/bob/plan.md', user: 'bob', userId: 'bob', user_id: 'bob' },
      { command: 'rename', old_path: '/memories/bob/plan.md', new_path: '/memories/mine.md' },
      { command: 'delete', path: '/memories/bob' },
    ];
    for (const body of attempts) {
      const result = await post(bearer(alice), body);
      expect(result.status).toBe(200);
      expect(result.raw).not.toContain(SECRET);
      if ((body as { command: string }).command !== 'view' || (body as { path: string }).path !== '/memories')
        expect(result.body['is_error']).toBe(true);
    }
    // Headers naming bob do not move alice's token to bob's memory.
    const named = await post(
      { ...bearer(alice), 'memvault-user': 'bob' },
      { command: 'view', path: '/memories/bob/plan.md' },
    );
    expect(named.status).toBe(403);
    expect(named.type).toContain('application/problem+json');
    expect(named.body['type']).toBe('urn:memvault:problem:forbidden');
    const spoofs = await post(
      { ...bearer(alice), 'x-user-id': 'bob', 'x-forwarded-user': 'bob' },
      { command: 'view', path: '/memories/bob/plan.md' },
    );
    expect(spoofs.raw).not.toContain(SECRET);
    // Bob's file is still there, unchanged.
    const bob = await idp.sign({ sub: 'bob' });
    const view = await post(bearer(bob), { command: 'view', path: '/memories/bob/plan.md' });
    expect(view.body['content']).toContain(SECRET);
  });

  it('a service key with act-as works for the user it names; without act-as it cannot name one', async () => {
    const asBob = await post(
      { ...bearer(serviceKey.key), 'memvault-user': 'bob' },
      { command: 'view', path: '/memories/bob/plan.md' },
    );
    expect(asBob.body['content']).toContain(SECRET);
    const noUser = await post(bearer(serviceKey.key), { command: 'view', path: '/memories' });
    expect(noUser).toMatchObject({ status: 400, body: { type: 'urn:memvault:problem:invalid-request' } });
    const before = await storeKeys();
    const scoped = await post(
      { ...bearer(keyWithoutActAs.key), 'memvault-user': 'bob' },
      { command: 'view', path: '/memories/bob/plan.md' },
    );
    expect(scoped).toMatchObject({ status: 403, body: { type: 'urn:memvault:problem:forbidden' } });
    const wrongSecret = `${serviceKey.key.slice(0, -4)}AAAA`;
    const bad = await post(
      { ...bearer(wrongSecret), 'memvault-user': 'bob' },
      { command: 'delete', path: '/memories/bob/plan.md' },
    );
    expect(bad).toMatchObject({ status: 401, body: { type: 'urn:memvault:problem:unauthorized' } });
    const unknownId = await post(
      { ...bearer(serviceKey.key.replace('billing-agent', 'billing-agenz')), 'memvault-user': 'bob' },
      { command: 'view', path: '/memories' },
    );
    expect(unknownId.status).toBe(401);
    expect(await storeKeys()).toEqual(before);
  });

  it('every bad token is 401, names nothing of the failure, and touches nothing', async () => {
    const before = await storeKeys();
    const now = Math.floor(Date.now() / 1000);
    const header = (h: object) => base64url.encode(JSON.stringify(h));
    const claims = base64url.encode(JSON.stringify({ sub: 'bob', iss: ISSUER, aud: AUDIENCE, exp: now + 300 }));
    const otherKey = (await generateKeyPair('RS256')).privateKey;
    const rsaPublicAsSecret = new TextEncoder().encode(JSON.stringify(idp.publicJwk));
    const tokens: Record<string, string> = {
      'alg none': `${header({ alg: 'none', typ: 'JWT' })}.${claims}.`,
      'HS256 with the RSA public key': await new SignJWT({ sub: 'bob' })
        .setProtectedHeader({ alg: 'HS256', kid: 'k1' })
        .setIssuer(ISSUER)
        .setAudience(AUDIENCE)
        .setExpirationTime('5m')
        .sign(rsaPublicAsSecret),
      expired: await idp.sign({ sub: 'bob' }, { expiresIn: now - 3600 }),
      'not yet valid': await new SignJWT({ sub: 'bob', nbf: now + 3600 })
        .setProtectedHeader({ alg: 'RS256', kid: 'k1' })
        .setIssuer(ISSUER)
        .setAudience(AUDIENCE)
        .setExpirationTime('2h')
        .sign(idp.privateKey),
      'wrong issuer': await new SignJWT({ sub: 'bob' })
        .setProtectedHeader({ alg: 'RS256', kid: 'k1' })
        .setIssuer('https://evil.test/')
        .setAudience(AUDIENCE)
        .setExpirationTime('5m')
        .sign(idp.privateKey),
      'wrong audience': await new SignJWT({ sub: 'bob' })
        .setProtectedHeader({ alg: 'RS256', kid: 'k1' })
        .setIssuer(ISSUER)
        .setAudience('another-service')
        .setExpirationTime('5m')
        .sign(idp.privateKey),
      'unknown kid': await idp.sign({ sub: 'bob' }, { kid: 'k2' }),
      'signed by another key': await idp.sign({ sub: 'bob' }, { key: otherKey }),
      'no sub': await idp.sign({}),
      'no exp': await new SignJWT({ sub: 'bob' })
        .setProtectedHeader({ alg: 'RS256', kid: 'k1' })
        .setIssuer(ISSUER)
        .setAudience(AUDIENCE)
        .sign(idp.privateKey),
      'tampered payload': (() => {
        const [h, , s] = alice.split('.');
        return `${h}.${claims}.${s}`;
      })(),
      garbage: 'not.a.token',
    };
    for (const [name, token] of Object.entries(tokens)) {
      const result = await post(bearer(token), { command: 'delete', path: '/memories/bob/plan.md' });
      expect(result.status, name).toBe(401);
      expect(result.body['type'], name).toBe('urn:memvault:problem:unauthorized');
      expect(result.raw, name).not.toMatch(/stack|at .*\.ts|\/work\/|Error:/);
    }
    const noCredential: Record<string, string>[] = [
      {},
      { authorization: 'Basic Ym9iOmJvYg==' },
      { 'memvault-user': 'bob' },
    ];
    for (const headers of noCredential) {
      const result = await post(headers, { command: 'delete', path: '/memories/bob/plan.md' });
      expect(result.status).toBe(401);
    }
    expect(await storeKeys()).toEqual(before);
  });

  it('no endpoint or method reaches bob’s files with alice’s token; none answers without a credential', async () => {
    for (const url of ['/healthz', '/readyz', '/openapi.json'])
      expect((await server.fastify.inject({ url })).statusCode).toBe(200);
    const requests: { method: 'GET' | 'POST' | 'DELETE'; url: string; payload?: unknown }[] = [
      { method: 'GET', url: '/v1/files' },
      { method: 'GET', url: '/v1/files?prefix=memories/bob' },
      { method: 'GET', url: '/v1/files/memories/bob/plan.md' },
      { method: 'GET', url: '/v1/files/memories/bob/plan.md/versions' },
      { method: 'GET', url: '/v1/files/memories/%2e%2e/bob/plan.md' },
      { method: 'GET', url: '/v1/export' },
      { method: 'POST', url: '/v1/restore', payload: { as_of: new Date(0).toISOString(), dry_run: true } },
      { method: 'DELETE', url: '/v1/me' },
    ];
    const before = await storeKeys();
    for (const { method, url, payload } of requests) {
      const body =
        payload === undefined
          ? {}
          : { payload: JSON.stringify(payload), headers: { 'content-type': 'application/json' } };
      const asAlice = await server.fastify.inject({
        method,
        url,
        ...body,
        headers: { ...body.headers, ...bearer(alice) },
      });
      expect(asAlice.body, `${method} ${url}`).not.toContain(SECRET);
      expect(asAlice.rawPayload.includes(Buffer.from(SECRET)), `${method} ${url}`).toBe(false);
      const naming = await server.fastify.inject({
        method,
        url,
        ...body,
        headers: { ...body.headers, ...bearer(alice), 'memvault-user': 'bob' },
      });
      expect(naming.statusCode, `${method} ${url} naming bob`).toBe(403);
      const anonymous = await server.fastify.inject({
        method,
        url,
        ...body,
        headers: { ...body.headers, 'memvault-user': 'bob' },
      });
      expect(anonymous.statusCode, `${method} ${url} without a credential`).toBe(401);
      const scoped = await server.fastify.inject({
        method,
        url,
        ...body,
        headers: { ...body.headers, ...bearer(keyWithoutActAs.key), 'memvault-user': 'bob' },
      });
      expect(scoped.statusCode, `${method} ${url} with a key without act-as`).toBe(403);
    }
    // Only alice's own reads and audit-free dry runs happened: bob's objects are as they were.
    const bobPrefix = (await vault.files('bob')).uid;
    const after = await storeKeys();
    expect(after.filter((k) => k.includes(bobPrefix))).toEqual(before.filter((k) => k.includes(bobPrefix)));
  });
});
