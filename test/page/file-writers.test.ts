/**
 * The file routes pass the writer (src/serve/file-routes.ts): a person's own token writes as the
 * person and a service key as the host, in file history; neither is refused by a paused memory,
 * while the agent's POST /v1/memory is.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createVault, type Vault } from '../../src/memvault.js';
import type { MemvaultServer } from '../../src/serve.js';
import { MemoryStore } from '../../src/store/memory.js';
import { messages } from '../../src/tool/messages.js';
import { bearer, serviceKey, startIdp, testServer, type TestIdp } from '../serve/helpers.js';

let idp: TestIdp;
let server: MemvaultServer;
let vault: Vault;
beforeAll(async () => {
  idp = await startIdp();
  vault = await createVault({
    store: new MemoryStore(),
    encryption: { masterKey: Buffer.alloc(32, 7).toString('base64') },
  });
  ({ server } = await testServer(idp, { rateLimit: false }, vault));
});
afterAll(async () => {
  await server?.close();
  await vault?.close();
  await idp?.close();
});

const send = (method: 'PUT' | 'POST', url: string, headers: Record<string, string>, body: unknown) =>
  server.fastify.inject({
    method,
    url,
    headers: { ...headers, 'content-type': 'application/json' },
    payload: JSON.stringify(body),
  });

describe('file routes: the writer', () => {
  it('records the person for their own token and the host for a service key; a pause refuses only the agent', async () => {
    const asPerson = bearer(await idp.sign({ sub: 'hana' }));
    const asService = { ...bearer(serviceKey.key), 'memvault-user': 'hana' };
    await vault.setMemoryPaused('hana', true);
    const mine = await send('PUT', '/v1/files/memories/a.md', { ...asPerson, 'if-none-match': '*' }, { content: 'a' });
    const theirs = await send(
      'PUT',
      '/v1/files/memories/b.md',
      { ...asService, 'if-none-match': '*' },
      { content: 'b' },
    );
    expect([mine.statusCode, theirs.statusCode]).toEqual([201, 201]);
    const agent = await send('POST', '/v1/memory', asService, {
      command: 'create',
      path: '/memories/c.md',
      file_text: 'c',
    });
    expect(agent.json()).toEqual({ content: messages.memoryPaused(), is_error: true });
    const { versions } = await vault.history('hana', '/memories');
    expect(versions.map((v) => [v.path, v.actor]).sort()).toEqual([
      ['/memories/a.md', 'person'],
      ['/memories/b.md', 'host'],
    ]);
  });
});
