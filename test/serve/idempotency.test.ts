// Safe retries and many clients: an Idempotency-Key runs a command once per user and key, across two
// servers sharing one store; 64 concurrent clients on one file lose no acknowledged edit.
import { createDecipheriv, createHash, hkdfSync } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createVault, type Vault } from '../../src/memvault.js';
import type { MemvaultServer } from '../../src/serve.js';
import { IDEMPOTENCY_RECORD_KIND } from '../../src/serve/idempotency.js';
import { userRecordPrefix } from '../../src/store/layout.js';
import { tempDir } from '../kit/temp.js';
import { serviceKey, startIdp, testServer, type TestIdp } from './helpers.js';

let idp: TestIdp;
const servers: { server: MemvaultServer; vault: Vault; url: string }[] = [];
const temp = tempDir('memvault-serve');

async function post(url: string, body: unknown, user: string, key?: string) {
  const response = await fetch(`${url}/v1/memory`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${serviceKey.key}`,
      'memvault-user': user,
      'content-type': 'application/json',
      ...(key ? { 'idempotency-key': key } : {}),
    },
    body: JSON.stringify(body),
  });
  return {
    status: response.status,
    replayed: response.headers.get('idempotent-replayed'),
    body: (await response.json()) as Record<string, unknown>,
  };
}

beforeAll(async () => {
  idp = await startIdp();
  // Two vaults (as two instances would have) on one file store with one key.
  const options = {
    store: `file://${temp.dir}/store`,
    encryption: { masterKey: Buffer.alloc(32, 7).toString('base64') },
  };
  for (let i = 0; i < 2; i++) {
    const vault = await createVault(options);
    const { server } = await testServer(idp, { rateLimit: false }, vault);
    servers.push({ server, vault, url: await server.listen({ port: 0 }) });
  }
});

afterAll(async () => {
  for (const { server, vault } of servers) {
    await server.close();
    await vault.close();
  }
  await idp.close();
  temp.cleanup();
});

describe('Idempotency-Key', () => {
  it('a retry answers the first result and runs nothing; the same key with another body is 422', async () => {
    const [a, b] = servers.map((s) => s.url) as [string, string];
    await post(a, { command: 'create', path: '/memories/log.md', file_text: 'start\n' }, 'dave');
    const insert = { command: 'insert', path: '/memories/log.md', insert_line: 1, insert_text: 'once' };
    const key = '6f1c1f1e-4b7a-4f1e-9a55-0c2f3f9d2b11';
    const first = await post(a, insert, 'dave', key);
    expect(first).toMatchObject({
      status: 200,
      replayed: null,
      body: { content: 'The file /memories/log.md has been edited.', is_error: false },
    });
    const retry = await post(b, insert, 'dave', key);
    expect(retry).toMatchObject({ status: 200, replayed: 'true', body: first.body });
    const other = await post(a, { ...insert, insert_text: 'twice' }, 'dave', key);
    expect(other.status).toBe(422);
    expect(other.body['type']).toBe('urn:memvault:problem:idempotency-key-reused');
    // The key is per user: erin's command with dave's key runs.
    expect(
      (await post(b, { command: 'create', path: '/memories/e.md', file_text: 'x' }, 'erin', key)).replayed,
    ).toBeNull();
    const view = await post(a, { command: 'view', path: '/memories/log.md' }, 'dave');
    expect(view.body['content']).toBe(
      "Here's the content of /memories/log.md with line numbers:\n     1\tstart\n     2\tonce",
    );
    for (const bad of ['short', 'x'.repeat(256), 'has space in it 123456'])
      expect((await post(a, insert, 'dave', bad)).status).toBe(400);
  });

  it('the same key sent to two servers at once runs the command once', async () => {
    const [a, b] = servers.map((s) => s.url) as [string, string];
    await post(a, { command: 'create', path: '/memories/race.md', file_text: 'r\n' }, 'dave');
    const key = 'race-key-0123456789abcdef';
    const insert = { command: 'insert', path: '/memories/race.md', insert_line: 0, insert_text: 'hit' };
    const answers = await Promise.all([
      post(a, insert, 'dave', key),
      post(b, insert, 'dave', key),
      post(a, insert, 'dave', key),
    ]);
    for (const answer of answers) expect([200, 409]).toContain(answer.status);
    const view = await post(a, { command: 'view', path: '/memories/race.md' }, 'dave');
    expect(String(view.body['content']).match(/hit/g)).toHaveLength(1);
  });

  it('records hold no plaintext: the object key is a hash, the body is sealed', async () => {
    const vault = servers[0]!.vault;
    const { uid } = await vault.files('dave');
    const page = await vault.store.list(userRecordPrefix(uid, IDEMPOTENCY_RECORD_KIND));
    expect(page.objects.length).toBeGreaterThan(0);
    for (const object of page.objects) {
      expect(object.key).toMatch(/\/i\/[0-9a-f]{64}$/);
      const stored = await vault.store.get(object.key);
      expect(Buffer.from(stored!.body).toString('latin1')).not.toMatch(/once|hit|memories|edited/);
    }
  });
});

describe('idempotency records open with the user key, not with the Idempotency-Key', () => {
  it('a record does not open with a key derived from the Idempotency-Key, nor is it named by one', async () => {
    const [a] = servers.map((s) => s.url) as [string];
    const key = 'secret-looking-key-0123456789';
    const create = { command: 'create', path: '/memories/sealed.md', file_text: 'quoted back in the result\n' };
    await post(a, create, 'grace', key);
    await post(a, create, 'heidi', key);
    const vault = servers[0]!.vault;
    const [grace, heidi] = [(await vault.files('grace')).uid, (await vault.files('heidi')).uid];
    const [graceKeys = [], heidiKeys = []] = await Promise.all(
      [grace, heidi].map(async (uid) =>
        (await vault.store.list(userRecordPrefix(uid, IDEMPOTENCY_RECORD_KIND))).objects.map((o) => o.key),
      ),
    );
    expect(graceKeys).toHaveLength(1);
    expect(heidiKeys).toHaveLength(1);
    // Another user's same key is another object, and not merely under another prefix.
    const names = [graceKeys[0]!.split('/').pop(), heidiKeys[0]!.split('/').pop()];
    expect(names[0]).not.toBe(names[1]);
    // The old, unkeyed names: a SHA-256 of uid and key, or of the key alone.
    const sha = (...parts: string[]) => createHash('sha256').update(parts.join('\0')).digest('hex');
    expect(names).not.toContain(sha(grace, key));
    expect(names).not.toContain(sha(key));
    const stored = (await vault.store.get(graceKeys[0]!))!.body;
    // The former sealing: AES-256-GCM under HKDF(Idempotency-Key, uid), laid out iv | tag | body.
    const derived = Buffer.from(hkdfSync('sha256', key, grace, 'memvault idempotency record v1', 32));
    const bytes = Buffer.from(stored);
    const decipher = createDecipheriv('aes-256-gcm', derived, bytes.subarray(0, 12));
    decipher.setAuthTag(bytes.subarray(12, 28));
    expect(() => Buffer.concat([decipher.update(bytes.subarray(28)), decipher.final()])).toThrow();
    expect(Buffer.from(stored).toString('latin1')).not.toMatch(/quoted|sealed|memories/);
  });

  it('a record moved to another name does not open there: 422 unreadable, neither replayed nor run', async () => {
    const [a] = servers.map((s) => s.url) as [string];
    const vault = servers[0]!.vault;
    const first = { command: 'create', path: '/memories/moved.md', file_text: 'one\n' };
    await post(a, first, 'ivan', 'first-key-0123456789');
    const uid = (await vault.files('ivan')).uid;
    const [record] = (await vault.store.list(userRecordPrefix(uid, IDEMPOTENCY_RECORD_KIND))).objects;
    const body = (await vault.store.get(record!.key))!.body;
    // Plant it under the name another key will have: find that name by sending the key once on a view.
    await post(a, { command: 'view', path: '/memories' }, 'ivan', 'second-key-0123456789');
    const after = (await vault.store.list(userRecordPrefix(uid, IDEMPOTENCY_RECORD_KIND))).objects.map((o) => o.key);
    const target = after.find((k) => k !== record!.key)!;
    await vault.store.put(target, body);
    const answer = await post(a, { command: 'view', path: '/memories' }, 'ivan', 'second-key-0123456789');
    expect(answer.status).toBe(422);
    expect(answer.body['type']).toBe('urn:memvault:problem:idempotency-record-unreadable');
  });
});

describe('many clients', () => {
  it('64 concurrent clients on one file, over two servers, lose no acknowledged edit', async () => {
    await post(servers[0]!.url, { command: 'create', path: '/memories/shared.md', file_text: 'head\n' }, 'frank');
    const answers = await Promise.all(
      Array.from({ length: 64 }, (_, i) =>
        post(
          servers[i % 2]!.url,
          { command: 'insert', path: '/memories/shared.md', insert_line: 1, insert_text: `client-${i}-edit` },
          'frank',
        ),
      ),
    );
    const acknowledged = answers.flatMap((answer, i) =>
      answer.status === 200 && answer.body['is_error'] === false ? [i] : [],
    );
    expect(acknowledged.length).toBeGreaterThan(32);
    const text = (await (await servers[1]!.vault.files('frank')).read('/memories/shared.md'))!.data;
    const content = Buffer.from(text).toString('utf8');
    for (const i of acknowledged) expect(content).toContain(`client-${i}-edit\n`);
    // A refused edit (write conflicts past the retry budget) is absent, not half applied.
    for (let i = 0; i < 64; i++) if (!acknowledged.includes(i)) expect(content).not.toContain(`client-${i}-edit`);
  });
});
