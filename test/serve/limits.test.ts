// Bad input at the HTTP layer: a clear problem, bounded time, nothing written. Over a real socket
// where the transport matters (slow senders), in-process otherwise.
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Vault } from '../../src/memvault.js';
import type { MemvaultServer } from '../../src/serve.js';
import { listAll } from '../../src/store/port.js';
import { bearer, serviceKey, startIdp, testServer, type TestIdp } from './helpers.js';

let idp: TestIdp;
let server: MemvaultServer;
let vault: Vault;
let url: URL;
const asAlice = { ...bearer(serviceKey.key), 'memvault-user': 'alice' };

async function objectCount(): Promise<number> {
  let n = 0;
  for await (const object of listAll(vault.store, 'u/')) if (object.key) n++;
  return n;
}

async function send(payload: string | Buffer, contentType = 'application/json') {
  const response = await server.fastify.inject({
    method: 'POST',
    url: '/v1/memory',
    headers: { ...asAlice, 'content-type': contentType },
    payload,
  });
  return {
    status: response.statusCode,
    type: response.headers['content-type'],
    body: response.json<Record<string, unknown>>(),
  };
}

beforeAll(async () => {
  idp = await startIdp();
  // A small file limit makes the body limit small: 2 x 4 KiB + 64 KiB.
  ({ server, vault } = await testServer(idp, { maxFileBytes: 4096, limits: { requestTimeoutMs: 400 } }));
  url = new URL(await server.listen({ port: 0 }));
});

afterAll(async () => {
  await server.close();
  await vault.close();
  await idp.close();
});

describe('bad input', () => {
  it('oversized, deep, invalid UTF-8, malformed or non-JSON bodies are problems and write nothing', async () => {
    const before = await objectCount();
    const cases: [string | Buffer, number, string, string?][] = [
      [
        JSON.stringify({ command: 'create', path: '/memories/big.md', file_text: 'x'.repeat(80 * 1024) }),
        413,
        'body-too-large',
      ],
      ['['.repeat(10_000) + ']'.repeat(10_000), 400, 'not-acceptable-body'],
      [
        `{"command":"create","path":"/memories/a.md","file_text":${'{"a":'.repeat(40)}1${'}'.repeat(40)}}`,
        400,
        'not-acceptable-body',
      ],
      [
        Buffer.concat([
          Buffer.from('{"command":"create","path":"/memories/a.md","file_text":"'),
          Buffer.from([0xc3, 0x28]),
          Buffer.from('"}'),
        ]),
        400,
        'not-acceptable-body',
      ],
      [Buffer.from([0xef, 0xbb, 0xbf, 0xff, 0xfe]), 400, 'not-acceptable-body'],
      ['{"command":"create",', 400, 'not-acceptable-body'],
      ['', 400, 'not-acceptable-body'],
      ['command=create&path=/memories/a.md', 415, 'unsupported-media-type', 'application/x-www-form-urlencoded'],
      ['{"command":"view","path":"/memories"}', 415, 'unsupported-media-type', 'text/plain'],
    ];
    for (const [payload, status, type, contentType] of cases) {
      const result = await send(payload, contentType);
      expect(result.status, type).toBe(status);
      expect(result.type).toContain('application/problem+json');
      expect(result.body['type']).toBe(`urn:memvault:problem:${type}`);
      expect(JSON.stringify(result.body)).not.toMatch(/\/work\/|\bat \w|node_modules/);
    }
    expect(await objectCount()).toBe(before);
  });

  it('paths in every encoding the guard knows are the guard’s errors, nothing written', async () => {
    const before = await objectCount();
    for (const path of [
      '/memories/../etc/passwd',
      '/memories/%2e%2e/x',
      '/memories/%252e%252e/x',
      '/etc/x',
      'C:\\memories\\x',
      '/memories/a\u0000b',
      '/memories/.memvault/x',
      '/memories/\u202e.md',
    ])
      expect((await send(JSON.stringify({ command: 'create', path, file_text: 'x' }))).body['is_error'], path).toBe(
        true,
      );
    expect(await objectCount()).toBe(before);
  });

  it('a slow sender is cut off within the request timeout, and its command never runs', async () => {
    const before = await objectCount();
    const started = Date.now();
    const answer = await new Promise<string>((resolve) => {
      const socket = connect(Number(url.port), url.hostname);
      let text = '';
      socket.on('data', (d: Buffer) => (text += d.toString()));
      socket.on('close', () => resolve(text));
      socket.on('error', () => resolve(text));
      const body = JSON.stringify({ command: 'create', path: '/memories/slow.md', file_text: 'x' });
      socket.write(
        `POST /v1/memory HTTP/1.1\r\nhost: x\r\nauthorization: Bearer ${serviceKey.key}\r\nmemvault-user: alice\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\n\r\n${body.slice(0, 5)}`,
      );
    });
    expect(Date.now() - started).toBeLessThan(3000);
    expect(answer === '' || /^HTTP\/1\.1 408/.test(answer)).toBe(true);
    expect(await objectCount()).toBe(before);
  });

  it('the rate limit counts per credential and answers a problem with Retry-After', async () => {
    const { server: limited, vault: v } = await testServer(idp, { rateLimit: { max: 3, windowMs: 60_000 } });
    try {
      const statuses: number[] = [];
      for (let i = 0; i < 4; i++) {
        const r = await limited.fastify.inject({
          method: 'POST',
          url: '/v1/memory',
          headers: { ...asAlice, 'content-type': 'application/json' },
          payload: '{"command":"view","path":"/memories"}',
        });
        statuses.push(r.statusCode);
        if (r.statusCode === 429) {
          expect(r.json<Record<string, unknown>>()['type']).toBe('urn:memvault:problem:rate-limited');
          expect(Number(r.headers['retry-after'])).toBeGreaterThan(0);
        }
      }
      expect(statuses).toEqual([200, 200, 200, 429]);
      // Another credential has its own budget.
      const alice = await idp.sign({ sub: 'alice' });
      const other = await limited.fastify.inject({
        method: 'POST',
        url: '/v1/memory',
        headers: { ...bearer(alice), 'content-type': 'application/json' },
        payload: '{"command":"view","path":"/memories"}',
      });
      expect(other.statusCode).toBe(200);
    } finally {
      await limited.close();
      await v.close();
    }
  });

  it('after close() starts, new requests get 503 while the one in flight finishes', async () => {
    const { vault: v } = await testServer(idp);
    let entered!: () => void;
    const inside = new Promise<void>((resolve) => (entered = resolve));
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    // The command is held inside vault.run until the server has started closing.
    const held: Vault = { ...v, run: async (user, input) => (entered(), await gate, v.run(user, input)) };
    const { server: s } = await testServer(idp, {}, held);
    const headers = { ...asAlice, 'content-type': 'application/json' };
    const inFlight = s.fastify.inject({
      method: 'POST',
      url: '/v1/memory',
      headers,
      payload: '{"command":"create","path":"/memories/f.md","file_text":"done\\n"}',
    });
    await inside;
    const closing = s.close();
    const late = await s.fastify.inject({
      method: 'POST',
      url: '/v1/memory',
      headers,
      payload: '{"command":"view","path":"/memories"}',
    });
    expect(late.statusCode).toBe(503);
    expect(late.json<Record<string, unknown>>()['type']).toBe('urn:memvault:problem:shutting-down');
    release();
    expect((await inFlight).json()).toEqual({
      content: 'File created successfully at: /memories/f.md',
      is_error: false,
    });
    await closing;
    await v.close();
  });
});
