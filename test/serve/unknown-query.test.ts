// Every route refuses a query parameter it does not define with the 400 problem an unknown
// parameter of GET /v1/files gets, before its handler runs: `GET /v1/files/{path}?version=1` is not
// the current content passed off as version 1, `PUT ...?dry_run=true` writes nothing. The one
// coercion left (an integer query parameter sent as digits) still works, and nothing else is coerced.
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createVault, type Vault } from '../../src/memvault.js';
import type { MemvaultServer } from '../../src/serve.js';
import { ROUTES } from '../../src/serve/routes.js';
import { MemoryStore } from '../../src/store/memory.js';
import { bearer, serviceKey, startIdp, testServer, type TestIdp } from './helpers.js';

let idp: TestIdp;
let server: MemvaultServer;
let vault: Vault;
const as = (user: string) => ({ ...bearer(serviceKey.key), 'memvault-user': user });
const etag = (text: string) => `"sha256:${createHash('sha256').update(text).digest('hex')}"`;
const stored = async (path: string) => {
  const file = await (await vault.files('tom')).read(path);
  return file ? Buffer.from(file.data).toString() : undefined;
};
const PROBLEM = { type: 'urn:memvault:problem:invalid-request', status: 400 };

beforeAll(async () => {
  idp = await startIdp();
  vault = await createVault({
    store: new MemoryStore(),
    encryption: { masterKey: Buffer.alloc(32, 5).toString('base64') },
  });
  ({ server } = await testServer(idp, {}, vault));
  await vault.run('tom', { command: 'create', path: '/memories/a.md', file_text: 'one\n' }, { writer: 'host' });
  await vault.run(
    'tom',
    { command: 'str_replace', path: '/memories/a.md', old_str: 'one', new_str: 'two' },
    { writer: 'host' },
  );
  await vault.run('tom', { command: 'create', path: '/memories/d/e/f.md', file_text: 'deep\n' }, { writer: 'host' });
});
afterAll(async () => {
  await server.close();
  await vault.close();
  await idp.close();
});

describe('query parameters a route does not define', () => {
  it('every route of the table answers one with the same 400 problem as GET /v1/files?limit=5', async () => {
    const list = await server.fastify.inject({ url: '/v1/files?limit=5', headers: as('tom') });
    expect({ status: list.statusCode, type: list.json<{ type: string }>().type }).toEqual(PROBLEM);
    expect(ROUTES.length).toBeGreaterThanOrEqual(11);
    for (const route of ROUTES) {
      const url = route.url.replace('*', 'memories/a.md');
      const res = await server.fastify.inject({
        method: route.method,
        url: `${url}?unknown=1`,
        headers: { ...as('tom'), 'content-type': 'application/json', 'if-match': etag('two\n') },
        payload: route.method === 'GET' ? undefined : '{"content":"x","command":"view","path":"/memories"}',
      });
      expect({
        route: `${route.method} ${route.url}`,
        status: res.statusCode,
        type: res.json<{ type: string }>().type,
      }).toEqual({ route: `${route.method} ${route.url}`, ...PROBLEM });
    }
    // None of those requests ran its handler.
    expect(await stored('/memories/a.md')).toBe('two\n');
  });

  it('GET /v1/files/{path}?version=1 is a 400, not the current content', async () => {
    const res = await server.fastify.inject({ url: '/v1/files/memories/a.md?version=1', headers: as('tom') });
    expect({ status: res.statusCode, body: res.body.includes('two') }).toEqual({ status: 400, body: false });
  });

  it('PUT /v1/files/{path}?dry_run=true is a 400 and writes nothing', async () => {
    const res = await server.fastify.inject({
      method: 'PUT',
      url: '/v1/files/memories/a.md?dry_run=true',
      headers: { ...as('tom'), 'if-match': etag('two\n'), 'content-type': 'application/json' },
      payload: JSON.stringify({ content: 'three\n' }),
    });
    expect({ status: res.statusCode, stored: await stored('/memories/a.md') }).toEqual({
      status: 400,
      stored: 'two\n',
    });
  });

  it('DELETE /v1/me takes ?confirm only: another parameter is a 400, whatever the credential', async () => {
    const token = await idp.sign({ sub: 'tom' });
    const res = await server.fastify.inject({
      method: 'DELETE',
      url: '/v1/me?confirm=forget-me&dry_run=true',
      headers: bearer(token),
    });
    expect(res.statusCode).toBe(400);
    expect(await stored('/memories/a.md')).toBe('two\n');
  });
});

describe('the query parameters a route does define', () => {
  const list = async (query: string) => {
    const res = await server.fastify.inject({ url: `/v1/files?${query}`, headers: as('tom') });
    return {
      status: res.statusCode,
      paths: res.statusCode === 200 ? res.json<{ data: { path: string }[] }>().data.map((f) => f.path) : [],
    };
  };

  it('an integer sent as digits is that integer; anything else is a 400', async () => {
    expect(await list('depth=1')).toEqual({ status: 200, paths: ['memories/a.md'] });
    expect(await list('depth=3')).toEqual({ status: 200, paths: ['memories/a.md', 'memories/d/e/f.md'] });
    expect(await list('prefix=memories/d&depth=2')).toEqual({ status: 200, paths: ['memories/d/e/f.md'] });
    for (const depth of ['x', '1.5', '', '0', '65', '01', '+1', '1e1', '0x1'])
      expect({ depth, status: (await list(`depth=${depth}`)).status }).toEqual({ depth, status: 400 });
    expect((await list('depth=1&depth=2')).status).toBe(400);
  });
});
