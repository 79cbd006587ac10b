// Whose change a PUT or DELETE of /v1/files/{path} is: the person's with their own token, the host's
// with a service key, never the model's. So a paused memory takes both from them (only the model's
// writes are paused), and file history records each version, deletions too, as theirs.
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createVault, type Vault } from '../../src/memvault.js';
import type { MemvaultServer } from '../../src/serve.js';
import { MemoryStore } from '../../src/store/memory.js';
import { bearer, serviceKey, startIdp, testServer, type TestIdp } from './helpers.js';

let idp: TestIdp;
let server: MemvaultServer;
let vault: Vault;
const etag = (text: string) => `"sha256:${createHash('sha256').update(text).digest('hex')}"`;

beforeAll(async () => {
  idp = await startIdp();
  vault = await createVault({
    store: new MemoryStore(),
    encryption: { masterKey: Buffer.alloc(32, 7).toString('base64') },
  });
  ({ server } = await testServer(idp, {}, vault));
});
afterAll(async () => {
  await server.close();
  await vault.close();
  await idp.close();
});

/** The actors file history records for the path, oldest first. */
async function actors(user: string, path: string): Promise<string[]> {
  const { versions } = await vault.history(user, path);
  return versions.sort((a, b) => a.seq - b.seq).map((v) => v.actor);
}

describe('PUT and DELETE /v1/files/{path} while the memory is paused', () => {
  it('the person’s own token writes and deletes, recorded as the person’s', async () => {
    const token = await idp.sign({ sub: 'pia' });
    await vault.run('pia', { command: 'create', path: '/memories/a.md', file_text: 'hello\n' }, { writer: 'host' });
    await vault.setMemoryPaused('pia', true);
    const put = await server.fastify.inject({
      method: 'PUT',
      url: '/v1/files/memories/a.md',
      headers: { ...bearer(token), 'content-type': 'application/json', 'if-match': etag('hello\n') },
      payload: JSON.stringify({ content: 'edited\n' }),
    });
    expect(put.statusCode, put.body).toBe(200);
    const del = await server.fastify.inject({
      method: 'DELETE',
      url: '/v1/files/memories/a.md',
      headers: { ...bearer(token), 'if-match': etag('edited\n') },
    });
    expect(del.statusCode, del.body).toBe(200);
    expect(await (await vault.files('pia')).read('/memories/a.md')).toBeNull();
    expect(await actors('pia', '/memories/a.md')).toEqual(['host', 'person', 'person']);
  });

  it('a service key’s DELETE is the host’s', async () => {
    await vault.run('quinn', { command: 'create', path: '/memories/b.md', file_text: 'x\n' }, { writer: 'host' });
    await vault.setMemoryPaused('quinn', true);
    const del = await server.fastify.inject({
      method: 'DELETE',
      url: '/v1/files/memories/b.md',
      headers: { ...bearer(serviceKey.key), 'memvault-user': 'quinn', 'if-match': etag('x\n') },
    });
    expect(del.statusCode, del.body).toBe(200);
    expect(await actors('quinn', '/memories/b.md')).toEqual(['host', 'host']);
  });

  it('the model’s delete (POST /v1/memory) is still paused', async () => {
    await vault.run('ruth', { command: 'create', path: '/memories/c.md', file_text: 'x\n' }, { writer: 'host' });
    await vault.setMemoryPaused('ruth', true);
    const res = await server.fastify.inject({
      method: 'POST',
      url: '/v1/memory',
      headers: { ...bearer(serviceKey.key), 'memvault-user': 'ruth', 'content-type': 'application/json' },
      payload: JSON.stringify({ command: 'delete', path: '/memories/c.md' }),
    });
    expect(res.json()).toMatchObject({ is_error: true });
    expect(await (await vault.files('ruth')).read('/memories/c.md')).toBeDefined();
  });
});
