// The files as resources: list, read with a SHA-256 ETag, versions, restore, export and erasure,
// each for the caller's own user only; lifecycle operations audited with the caller as actor.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createVault, type Vault } from '../../src/memvault.js';
import type { MemvaultServer } from '../../src/serve.js';
import { MemoryStore } from '../../src/store/memory.js';
import { tempDir } from '../kit/temp.js';
import { SignJWT } from 'jose';
import { AUDIENCE, bearer, ISSUER, serviceKey, startIdp, testServer, type TestIdp } from './helpers.js';

let idp: TestIdp;
let server: MemvaultServer;
let vault: Vault;
const temp = tempDir('memvault-serve-files');
const auditFile = join(temp.dir, 'audit.jsonl');
const asService = (user: string) => ({ ...bearer(serviceKey.key), 'memvault-user': user });

async function request(
  method: 'GET' | 'POST' | 'DELETE',
  url: string,
  headers: Record<string, string>,
  payload?: unknown,
) {
  const response = await server.fastify.inject({
    method,
    url,
    headers: { ...headers, ...(payload !== undefined ? { 'content-type': 'application/json' } : {}) },
    ...(payload !== undefined ? { payload: JSON.stringify(payload) } : {}),
  });
  return response;
}

async function run(user: string, input: Record<string, unknown>) {
  return (await request('POST', '/v1/memory', asService(user), input)).json<{ content: string; is_error: boolean }>();
}

beforeAll(async () => {
  idp = await startIdp();
  vault = await createVault({
    store: new MemoryStore(),
    encryption: { masterKey: Buffer.alloc(32, 3).toString('base64') },
    audit: { file: auditFile },
  });
  ({ server } = await testServer(idp, {}, vault));
  await run('gina', { command: 'create', path: '/memories/notes/a.md', file_text: 'first\n' });
  await run('gina', { command: 'create', path: '/memories/notes/deep/b.md', file_text: 'bee\n' });
  await run('hank', { command: 'create', path: '/memories/notes/a.md', file_text: 'hank-only\n' });
});

afterAll(async () => {
  await server.close();
  await vault.close();
  await idp.close();
  temp.cleanup();
});

describe('files as resources', () => {
  it('lists and reads the caller’s own files, with a SHA-256 ETag and no caching', async () => {
    const listed = (await request('GET', '/v1/files?prefix=memories/notes', asService('gina'))).json<{
      data: { path: string; size: number }[];
    }>();
    expect(listed.data.map((f) => [f.path, f.size])).toEqual([
      ['memories/notes/a.md', 6],
      ['memories/notes/deep/b.md', 4],
    ]);
    const shallow = (await request('GET', '/v1/files?prefix=memories/notes&depth=1', asService('gina'))).json<{
      data: { path: string }[];
    }>();
    expect(shallow.data.map((f) => f.path)).toEqual(['memories/notes/a.md']);
    const read = await request('GET', '/v1/files/memories/notes/a.md', asService('gina'));
    expect(read.statusCode).toBe(200);
    expect(read.body).toBe('first\n');
    expect(read.headers['etag']).toBe(`"sha256:${createHash('sha256').update('first\n').digest('hex')}"`);
    expect(read.headers['cache-control']).toBe('no-store');
    const again = await server.fastify.inject({
      url: '/v1/files/memories/notes/a.md',
      headers: { ...asService('gina'), 'if-none-match': read.headers['etag'] as string },
    });
    expect(again.statusCode).toBe(304);
    // hank's file at the same path is hank's; a path out of /memories is a 400.
    expect((await request('GET', '/v1/files/memories/notes/a.md', asService('hank'))).body).toBe('hank-only\n');
    for (const url of ['/v1/files/etc/passwd', '/v1/files/memories/%2e%2e/x', '/v1/files?prefix=..'])
      expect((await request('GET', url, asService('gina'))).statusCode, url).toBe(400);
    expect((await request('GET', '/v1/files/memories/none.md', asService('gina'))).statusCode).toBe(404);
  });

  it('versions and restore, audited with the service key as actor', async () => {
    const before = new Date();
    await run('gina', { command: 'str_replace', path: '/memories/notes/a.md', old_str: 'first', new_str: 'second' });
    const versions = (await request('GET', '/v1/files/memories/notes/a.md/versions', asService('gina'))).json<{
      data: { seq: number; actor: string }[];
    }>();
    expect(versions.data).toHaveLength(2);
    expect(versions.data[0]!.seq).toBeGreaterThan(versions.data[1]!.seq);
    const dry = (
      await request('POST', '/v1/restore', asService('gina'), {
        path: 'memories/notes/a.md',
        as_of: before.toISOString(),
        dry_run: true,
      })
    ).json<{ restored: number; dry_run: boolean }>();
    expect(dry).toMatchObject({ restored: 1, dry_run: true });
    const done = await request('POST', '/v1/restore', asService('gina'), {
      path: 'memories/notes/a.md',
      as_of: before.toISOString(),
    });
    expect(done.json()).toMatchObject({ restored: 1, dry_run: false });
    expect((await request('GET', '/v1/files/memories/notes/a.md', asService('gina'))).body).toBe('first\n');
    expect((await request('POST', '/v1/restore', asService('gina'), { as_of: 'yesterday' })).statusCode).toBe(400);
    expect(
      (await request('POST', '/v1/restore', asService('gina'), { as_of: before.toISOString(), user: 'hank' }))
        .statusCode,
    ).toBe(400);
    const audit = readFileSync(auditFile, 'utf8');
    expect(audit).toContain('"actor":"key:billing-agent"');
    expect(audit).not.toContain('gina');
  });

  it('export streams the caller’s tar; erasure needs a fresh user token and the confirmation', async () => {
    const tar = await request('GET', '/v1/export', asService('gina'));
    expect(tar.statusCode).toBe(200);
    expect(tar.headers['content-type']).toBe('application/x-tar');
    expect(tar.rawPayload.includes(Buffer.from('memories/notes/deep/b.md'))).toBe(true);
    expect(tar.rawPayload.includes(Buffer.from('hank-only'))).toBe(false);
    // A service key cannot erase; a user token needs ?confirm and a recent iat.
    expect((await request('DELETE', '/v1/me?confirm=forget-me', asService('gina'))).statusCode).toBe(403);
    const fresh = await idp.sign({ sub: 'gina' });
    expect((await request('DELETE', '/v1/me', bearer(fresh))).statusCode).toBe(428);
    const stale = await new SignJWT({ sub: 'gina' })
      .setProtectedHeader({ alg: 'RS256', kid: 'k1' })
      .setIssuer(ISSUER)
      .setAudience(AUDIENCE)
      .setIssuedAt(Math.floor(Date.now() / 1000) - 3600)
      .setExpirationTime('5m')
      .sign(idp.privateKey);
    expect((await request('DELETE', '/v1/me?confirm=forget-me', bearer(stale))).statusCode).toBe(403);
    const erased = await request('DELETE', '/v1/me?confirm=forget-me', bearer(fresh));
    expect(erased.json()).toMatchObject({ erased: true, key_deleted: true });
    expect((await request('GET', '/v1/export', asService('gina'))).statusCode).toBe(404);
    expect((await request('GET', '/v1/files/memories/notes/a.md', asService('hank'))).body).toBe('hank-only\n');
  });
});
