// PUT and DELETE of a file with If-Match / If-None-Match: the model's create and delete run by
// vault.run with the caller's condition, so a mismatch is 412 and changes nothing, and every command
// (POST /v1/memory too) is audited with the caller as actor.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createVault, type Vault } from '../../src/memvault.js';
import type { MemvaultServer } from '../../src/serve.js';
import { MemoryStore } from '../../src/store/memory.js';
import { messages } from '../../src/tool/messages.js';
import { tempDir } from '../kit/temp.js';
import { bearer, serviceKey, startIdp, testServer, type TestIdp } from './helpers.js';

let idp: TestIdp;
let server: MemvaultServer;
let vault: Vault;
const temp = tempDir('memvault-serve-writes');
const auditFile = join(temp.dir, 'audit.jsonl');
const asService = (user: string) => ({ ...bearer(serviceKey.key), 'memvault-user': user });
const URL_A = '/v1/files/memories/notes/a.md';

async function send(
  method: 'GET' | 'PUT' | 'DELETE' | 'POST',
  url: string,
  headers: Record<string, string>,
  body?: unknown,
) {
  return server.fastify.inject({
    method,
    url,
    headers: { ...headers, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    ...(body !== undefined ? { payload: JSON.stringify(body) } : {}),
  });
}
const put = (user: string, content: string, condition: Record<string, string>, url = URL_A) =>
  send('PUT', url, { ...asService(user), ...condition }, { content });
async function read(user: string, url = URL_A) {
  const response = await send('GET', url, asService(user));
  return { status: response.statusCode, body: response.body, etag: String(response.headers['etag']) };
}

beforeAll(async () => {
  idp = await startIdp();
  vault = await createVault({
    store: new MemoryStore(),
    encryption: { masterKey: Buffer.alloc(32, 5).toString('base64') },
    audit: { file: auditFile },
  });
  ({ server } = await testServer(idp, {}, vault));
});

afterAll(async () => {
  await server.close();
  await vault.close();
  await idp.close();
  temp.cleanup();
});

describe('PUT and DELETE /v1/files/{path}', () => {
  it('writes and deletes only the version named; a mismatch is 412 and changes nothing', async () => {
    const created = await put('gina', 'first\n', { 'if-none-match': '*' });
    expect(created.statusCode).toBe(201);
    expect(created.json()).toEqual({ path: 'memories/notes/a.md', content: messages.created('/memories/notes/a.md') });
    expect(created.headers['cache-control']).toBe('no-store');
    const again = await put('gina', 'second\n', { 'if-none-match': '*' });
    expect([again.statusCode, again.json<{ type: string }>().type]).toEqual([
      412,
      'urn:memvault:problem:precondition-failed',
    ]);
    const first = await read('gina');
    expect(first.body).toBe('first\n');

    const replaced = await put('gina', 'second\n', { 'if-match': first.etag });
    expect(replaced.statusCode).toBe(200);
    const second = await read('gina');
    expect([second.body, second.etag === first.etag]).toEqual(['second\n', false]);
    // The old ETag no longer names the file: refused, for the write and the delete alike.
    expect((await put('gina', 'third\n', { 'if-match': first.etag })).statusCode).toBe(412);
    expect((await send('DELETE', URL_A, { ...asService('gina'), 'if-match': first.etag })).statusCode).toBe(412);
    // Another user's file with gina's ETag: nothing of hank's is touched (his memory holds no such version).
    expect((await put('hank', 'hijack\n', { 'if-match': second.etag })).statusCode).toBe(412);
    expect((await read('hank')).status).toBe(404);
    expect((await read('gina')).body).toBe('second\n');

    const deleted = await send('DELETE', URL_A, { ...asService('gina'), 'if-match': second.etag });
    expect([deleted.statusCode, deleted.json()]).toEqual([
      200,
      { path: 'memories/notes/a.md', content: messages.deleted('/memories/notes/a.md') },
    ]);
    expect((await read('gina')).status).toBe(404);
    // Gone: If-Match names no current version (412, not a create).
    expect((await put('gina', 'back\n', { 'if-match': second.etag })).statusCode).toBe(412);
    expect((await read('gina')).status).toBe(404);
  });

  it('an agent edit between the read and the PUT wins: 412, and the edit is kept', async () => {
    expect((await put('ivan', 'plan: walk\n', { 'if-none-match': '*' })).statusCode).toBe(201);
    const before = await read('ivan');
    const edit = await send('POST', '/v1/memory', asService('ivan'), {
      command: 'str_replace',
      path: '/memories/notes/a.md',
      old_str: 'walk',
      new_str: 'run',
    });
    expect(edit.json<{ is_error: boolean }>().is_error).toBe(false);
    const stale = await put('ivan', 'plan: swim\n', { 'if-match': before.etag });
    expect(stale.statusCode).toBe(412);
    expect(stale.json<{ detail: string }>().detail).toBe(messages.versionChanged('/memories/notes/a.md'));
    expect((await read('ivan')).body).toBe('plan: run\n');
  });

  it('asks for a condition, refuses malformed ones and refused content, changing nothing', async () => {
    expect((await put('jill', 'x', {})).statusCode).toBe(428);
    expect((await send('DELETE', URL_A, asService('jill'))).statusCode).toBe(428);
    const malformed: Record<string, string>[] = [
      { 'if-match': 'W/"sha256:' + '0'.repeat(64) + '"' },
      { 'if-match': '*' },
      { 'if-match': '"abc"' },
      { 'if-none-match': '"sha256:' + '0'.repeat(64) + '"' },
      { 'if-match': '"sha256:' + '0'.repeat(64) + '"', 'if-none-match': '*' },
    ];
    for (const condition of malformed)
      expect((await put('jill', 'x', condition)).statusCode, JSON.stringify(condition)).toBe(400);
    expect((await send('PUT', URL_A, { ...asService('jill'), 'if-none-match': '*' }, { content: 1 })).statusCode).toBe(
      400,
    );
    expect(
      (await send('PUT', URL_A, { ...asService('jill'), 'if-none-match': '*' }, { content: 'x', user: 'bob' }))
        .statusCode,
    ).toBe(400);
    expect((await put('jill', 'x', { 'if-none-match': '*' }, '/v1/files/memories/%2e%2e/etc')).statusCode).toBe(400);
    // A file at notes/a.md makes notes a directory: a PUT there is refused by the vault (422, its own words).
    expect((await put('jill', 'x', { 'if-none-match': '*' })).statusCode).toBe(201);
    const onDirectory = await put('jill', 'y', { 'if-none-match': '*' }, '/v1/files/memories/notes');
    expect([onDirectory.statusCode, onDirectory.json<{ type: string }>().type]).toEqual([
      422,
      'urn:memvault:problem:refused',
    ]);
    const listing = await send('GET', '/v1/files?prefix=memories', asService('jill'));
    expect(listing.json<{ data: { path: string }[] }>().data.map((f) => f.path)).toEqual(['memories/notes/a.md']);
  });

  it('records the caller as actor on every command, the user in no clear field', async () => {
    const token = await idp.sign({ sub: 'kate' });
    expect(
      (await send('PUT', URL_A, { ...bearer(token), 'if-none-match': '*' }, { content: 'mine\n' })).statusCode,
    ).toBe(201);
    await send('POST', '/v1/memory', bearer(token), { command: 'view', path: '/memories' });
    await send('POST', '/v1/memory', asService('kate'), { command: 'view', path: '/memories' });
    const records = readFileSync(auditFile, 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>)
      .filter((r) => r['type'] === 'command');
    expect(records.slice(-3).map((r) => [r['command'], r['actor']])).toEqual([
      ['create', 'user'],
      ['view', 'user'],
      ['view', 'key:billing-agent'],
    ]);
    expect(records.every((r) => typeof r['actor'] === 'string')).toBe(true);
    const text = readFileSync(auditFile, 'utf8');
    for (const user of ['gina', 'hank', 'ivan', 'jill', 'kate']) expect(text).not.toContain(`"${user}"`);
  });
});
