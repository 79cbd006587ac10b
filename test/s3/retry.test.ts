/**
 * The retry strategy, proven with real HTTP: a tiny server on 127.0.0.1 plays a faulty S3 (503
 * SlowDown, 500, dropped connections, a request that never gets an answer) before it answers.
 * Unlike aws-sdk-client-mock, this goes through the client's whole middleware stack, so it also
 * shows that the accounting middleware counts every attempt.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { isMemvaultError } from '../../src/errors.js';
import { withRequestCounter, type RequestCounter } from '../../src/store/accounting.js';
import { PreconditionFailedError } from '../../src/store/port.js';
import { createS3Store, type S3Store } from '../../src/store/s3.js';

type Reply = 'slowdown' | 'internal' | 'precondition' | 'reset' | 'hang' | 'ok';

const text = (s: string): Uint8Array => new TextEncoder().encode(s);

function errorXml(code: string, message: string): string {
  return `<?xml version="1.0" encoding="UTF-8"?><Error><Code>${code}</Code><Message>${message}</Message><RequestId>r</RequestId></Error>`;
}

describe('S3 client retries against a faulty HTTP server', () => {
  let server: Server;
  let endpoint = '';
  /** Replies to play, in order; once used up, every request gets 'ok'. */
  let script: Reply[] = [];
  let seen: string[] = [];
  const hanging: ServerResponse[] = [];

  function respond(req: IncomingMessage, res: ServerResponse): void {
    seen.push(req.method ?? '?');
    const reply = script.shift() ?? 'ok';
    if (reply === 'reset') {
      req.socket.destroy();
      return;
    }
    if (reply === 'hang') {
      hanging.push(res);
      return;
    }
    const xml = (status: number, code: string, message: string): void => {
      res.writeHead(status, { 'content-type': 'application/xml' }).end(errorXml(code, message));
    };
    if (reply === 'slowdown') return xml(503, 'SlowDown', 'Please reduce your request rate.');
    if (reply === 'internal') return xml(500, 'InternalError', 'We encountered an internal error.');
    if (reply === 'precondition')
      return xml(412, 'PreconditionFailed', 'At least one of the preconditions did not hold.');
    const etag = '"0123456789abcdef0123456789abcdef"';
    if (req.method === 'GET') {
      res.writeHead(200, { etag, 'content-length': '5', 'last-modified': new Date().toUTCString() }).end('hello');
      return;
    }
    res.writeHead(200, { etag }).end();
  }

  beforeAll(async () => {
    server = createServer((req, res) => {
      // Read the whole body before answering, as S3 does.
      req.on('data', () => undefined);
      req.on('end', () => respond(req, res));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    for (const res of hanging) res.destroy();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  beforeEach(() => {
    script = [];
    seen = [];
  });

  function makeStore(extra: Record<string, unknown> = {}): S3Store {
    return createS3Store({
      url: 's3://retry-bucket/p',
      s3: {
        endpoint,
        forcePathStyle: true,
        region: 'us-east-1',
        credentials: { accessKeyId: 'a', secretAccessKey: 'b' },
        ...extra,
      },
    });
  }

  async function counted<T>(fn: () => Promise<T>): Promise<{ counter: RequestCounter; result: T | Error }> {
    const counter: RequestCounter = {};
    const result = await withRequestCounter(counter, async () => fn().catch((e: unknown) => e as Error));
    return { counter, result };
  }

  it('retries 503 SlowDown twice and succeeds on the third attempt; accounting counts all three', async () => {
    const store = makeStore();
    script = ['slowdown', 'slowdown'];
    const { counter, result } = await counted(() => store.put('k', text('x'), { ifMatch: 'e' }));
    expect(result).toEqual({ etag: '0123456789abcdef0123456789abcdef' });
    expect(seen).toEqual(['PUT', 'PUT', 'PUT']);
    expect(counter).toEqual({ PUT: 3 });
    await store.close();
  });

  it('gives up after 4 attempts with STORE_UNAVAILABLE', async () => {
    const store = makeStore();
    script = ['internal', 'internal', 'internal', 'internal', 'internal'];
    const { counter, result } = await counted(() => store.get('k'));
    expect(isMemvaultError(result, 'STORE_UNAVAILABLE')).toBe(true);
    expect((result as Error).message).toBe('S3 GetObject failed (HTTP 500, InternalError)');
    expect(seen).toEqual(['GET', 'GET', 'GET', 'GET']);
    expect(counter).toEqual({ GET: 4 });
    await store.close();
  });

  it('retries a dropped connection (ECONNRESET) and gets the body intact', async () => {
    const store = makeStore();
    script = ['reset'];
    const { counter, result } = await counted(() => store.get('k'));
    expect(new TextDecoder().decode((result as { body: Uint8Array }).body)).toBe('hello');
    expect(seen).toEqual(['GET', 'GET']);
    expect(counter).toEqual({ GET: 2 });
    await store.close();
  });

  it('retries a request that gets no answer within the request timeout', async () => {
    // The default timeout is 30 s; a short one keeps the test fast and exercises the same path.
    const store = makeStore({ requestHandler: { requestTimeout: 300, throwOnRequestTimeout: true } });
    script = ['hang'];
    const { counter, result } = await counted(() => store.head('k'));
    expect(result).toMatchObject({ key: 'k', etag: '0123456789abcdef0123456789abcdef' });
    expect(seen).toEqual(['HEAD', 'HEAD']);
    expect(counter).toEqual({ HEAD: 2 });
    await store.close();
  });

  it('does not retry a 412: the conflict goes straight back to the caller', async () => {
    const store = makeStore();
    script = ['precondition'];
    const { counter, result } = await counted(() => store.put('k', text('x'), { ifNoneMatch: '*' }));
    expect(result).toBeInstanceOf(PreconditionFailedError);
    expect(seen).toEqual(['PUT']);
    expect(counter).toEqual({ PUT: 1 });
    await store.close();
  });
});
