/**
 * Fault injection and request shapes for S3Store, with aws-sdk-client-mock. The mock replaces the
 * client's send(), so no middleware runs (no retries, no signing, no accounting): these tests pin
 * how the store maps answers to results and what it asks for, not S3 behaviour (that is proven on
 * RGW in store.test.ts and contract.test.ts). Real retries are tested in retry.test.ts.
 */
import {
  CopyObjectCommand,
  DeleteObjectCommand,
  DeleteObjectsCommand,
  GetObjectCommand,
  GetObjectTaggingCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
  type S3ServiceException,
} from '@aws-sdk/client-s3';
import { mockClient } from 'aws-sdk-client-mock';
import { createHash } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isMemvaultError } from '../../src/errors.js';
import { PreconditionFailedError } from '../../src/store/port.js';
import { buildS3Client, createS3Store, s3ConfigFromEnv, type S3Store } from '../../src/store/s3.js';
import { s3Error as fakeS3Error } from './fixtures/fake-s3.js';

const BUCKET = 'bucket-name-that-must-not-leak';
const SECRET = 'secret-access-key-that-must-not-leak';
const KEY = 'user-derived-key-that-must-not-leak';
const text = (s: string): Uint8Array => new TextEncoder().encode(s);

/** An SDK error as it arrives after the SDK's own retries (4 attempts). */
function s3Error(name: string, status: number, message = `${name} answered`): S3ServiceException {
  return fakeS3Error(name, status, message, { requestId: 'req-1', attempts: 4 });
}

function networkError(code: string): Error {
  return Object.assign(new Error(`connect ${code} 10.0.0.1:443 while talking to ${BUCKET}.s3.amazonaws.com/${KEY}`), {
    code,
    name: 'Error',
  });
}

function body(bytes: Uint8Array): { transformToByteArray(): Promise<Uint8Array> } {
  return { transformToByteArray: async () => bytes };
}

function expectCleanUnavailable(error: unknown, pattern: RegExp): void {
  expect(isMemvaultError(error, 'STORE_UNAVAILABLE')).toBe(true);
  const message = (error as Error).message;
  expect(message).toMatch(pattern);
  for (const secret of [BUCKET, SECRET, KEY, 'prefix-part', 's3.amazonaws.com', '10.0.0.1'])
    expect(message).not.toContain(secret);
  expect((error as Error).cause).toBeUndefined();
}

describe('S3Store with a mocked client', () => {
  const client = new S3Client({
    region: 'us-east-1',
    credentials: { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: SECRET },
  });
  const mock = mockClient(client);
  let store: S3Store;

  beforeEach(() => {
    mock.reset();
    store = createS3Store({ url: `s3://${BUCKET}/prefix-part/`, s3: client });
  });
  afterEach(async () => {
    await store.close();
  });

  describe('maps answers to results', () => {
    it('GetObject: NoSuchKey is null; the body, bare ETag and prefix-free key come back', async () => {
      mock.on(GetObjectCommand, { Key: 'prefix-part/missing' }).rejects(s3Error('NoSuchKey', 404));
      mock.on(GetObjectCommand, { Key: 'prefix-part/k' }).resolves({
        Body: body(text('hello')) as never,
        ContentLength: 5,
        ETag: '"abc123"',
        LastModified: new Date('2026-01-02T03:04:05Z'),
        Metadata: { a: '1' },
      });
      expect(await store.get('missing')).toBeNull();
      const got = await store.get('k');
      expect(got).toMatchObject({ key: 'k', size: 5, etag: 'abc123', metadata: { a: '1' } });
      expect(new TextDecoder().decode(got!.body)).toBe('hello');
    });

    it('GetObject: a body shorter than Content-Length is STORE_UNAVAILABLE, not a silently short file', async () => {
      mock.on(GetObjectCommand).resolves({ Body: body(text('hel')) as never, ContentLength: 5, ETag: '"e"' });
      expectCleanUnavailable(await store.get(KEY).catch((e: unknown) => e), /^S3 GetObject failed/);
    });

    it('HeadObject: a 404 is null; NoSuchBucket on GetObject is an outage, not a missing file', async () => {
      mock.on(HeadObjectCommand).rejects(s3Error('NotFound', 404));
      expect(await store.head(KEY)).toBeNull();
      mock.on(GetObjectCommand).rejects(s3Error('NoSuchBucket', 404));
      expectCleanUnavailable(
        await store.get(KEY).catch((e: unknown) => e),
        /^S3 GetObject failed \(HTTP 404, NoSuchBucket\)$/,
      );
    });

    it.each([
      ['412 PreconditionFailed', s3Error('PreconditionFailed', 412), { ifMatch: 'e1' }],
      ['409 ConditionalRequestConflict', s3Error('ConditionalRequestConflict', 409), { ifNoneMatch: '*' as const }],
      ['AWS If-Match on a missing key: 404 NoSuchKey', s3Error('NoSuchKey', 404), { ifMatch: 'e1' }],
      [
        'RGW 500 UnknownError (its ECANCELED) under a race',
        s3Error('UnknownError', 500, 'UnknownError'),
        { ifMatch: 'e1' },
      ],
      ['500 with ECANCELED in the message', s3Error('ServiceError', 500, 'ECANCELED'), { ifMatch: 'e1' }],
      ['RGW 500 with ECANCELED as the code', s3Error('ECANCELED', 500), { ifNoneMatch: '*' as const }],
    ])('PutObject, conditional: %s is PreconditionFailedError', async (_label, error, condition) => {
      mock.on(PutObjectCommand).rejects(error);
      await expect(store.put(KEY, text('x'), condition)).rejects.toBeInstanceOf(PreconditionFailedError);
    });

    it('PutObject, unconditional: 500 (even ECANCELED) and 409 stay real errors', async () => {
      mock.on(PutObjectCommand).rejects(s3Error('UnknownError', 500, 'ECANCELED'));
      expectCleanUnavailable(
        await store.put(KEY, text('x')).catch((e: unknown) => e),
        /^S3 PutObject failed \(HTTP 500, UnknownError\)$/,
      );
      mock.on(PutObjectCommand).rejects(s3Error('OperationAborted', 409));
      expectCleanUnavailable(
        await store.put(KEY, text('x')).catch((e: unknown) => e),
        /^S3 PutObject failed \(HTTP 409, OperationAborted\)$/,
      );
    });

    it('PutObject, conditional: a plain 500 InternalError is an outage, not a conflict', async () => {
      mock.on(PutObjectCommand).rejects(s3Error('InternalError', 500, 'We encountered an internal error'));
      expectCleanUnavailable(
        await store.put(KEY, text('x'), { ifMatch: 'e' }).catch((e: unknown) => e),
        /\(HTTP 500, InternalError\)$/,
      );
    });

    it.each([
      ['503 SlowDown', s3Error('SlowDown', 503), /^S3 PutObject failed \(HTTP 503, SlowDown\)$/],
      ['403 AccessDenied', s3Error('AccessDenied', 403), /^S3 PutObject failed \(HTTP 403, AccessDenied\)$/],
      ['ECONNRESET', networkError('ECONNRESET'), /^S3 PutObject failed \(no response, ECONNRESET\)$/],
      [
        'a timeout',
        Object.assign(new Error(`Request to ${BUCKET} timed out`), { name: 'TimeoutError' }),
        /^S3 PutObject failed \(no response, TimeoutError\)$/,
      ],
    ])(
      '%s after the SDK’s retries is STORE_UNAVAILABLE with nothing sensitive in it',
      async (_label, error, pattern) => {
        mock.on(PutObjectCommand).rejects(error);
        expectCleanUnavailable(await store.put(KEY, text('x'), { ifMatch: 'e' }).catch((e: unknown) => e), pattern);
      },
    );

    it('CopyObject: a missing source is NOT_FOUND, or a lost condition when a source version was expected', async () => {
      mock.on(HeadObjectCommand).resolves({ ETag: '"src"', ContentLength: 1 });
      mock.on(CopyObjectCommand).rejects(s3Error('NoSuchKey', 404));
      await expect(store.copy('a', 'b')).rejects.toSatisfy((e: unknown) => isMemvaultError(e, 'NOT_FOUND'));
      await expect(store.copy('a', 'b', { ifSourceMatch: 'src' })).rejects.toBeInstanceOf(PreconditionFailedError);
      mock.on(CopyObjectCommand).rejects(s3Error('PreconditionFailed', 412));
      mock.on(HeadObjectCommand, { Key: 'prefix-part/b' }).rejects(s3Error('NotFound', 404));
      await expect(store.copy('a', 'b', { ifNoneMatch: '*' })).rejects.toBeInstanceOf(PreconditionFailedError);
    });

    it('DeleteObject: a 404 is success; a 412 is PreconditionFailedError', async () => {
      const native = createS3Store({ url: `s3://${BUCKET}/prefix-part`, s3: client, conditionChecks: 'native' });
      mock.on(DeleteObjectCommand).rejects(s3Error('NoSuchKey', 404));
      await native.delete(KEY, { ifMatch: 'e' });
      mock.on(DeleteObjectCommand).rejects(s3Error('PreconditionFailed', 412));
      await expect(native.delete(KEY, { ifMatch: 'e' })).rejects.toBeInstanceOf(PreconditionFailedError);
    });

    it('check-first: a stale source, an occupied destination or a changed object fail before the write is sent', async () => {
      mock.on(HeadObjectCommand, { Key: 'prefix-part/src' }).resolves({ ETag: '"current"' });
      mock.on(HeadObjectCommand, { Key: 'prefix-part/dst' }).resolves({ ETag: '"other"' });
      await expect(store.copy('src', 'new', { ifSourceMatch: 'stale' })).rejects.toBeInstanceOf(
        PreconditionFailedError,
      );
      await expect(store.copy('src', 'dst', { ifNoneMatch: '*' })).rejects.toBeInstanceOf(PreconditionFailedError);
      await expect(store.delete('src', { ifMatch: 'stale' })).rejects.toBeInstanceOf(PreconditionFailedError);
      expect(mock.commandCalls(CopyObjectCommand)).toHaveLength(0);
      expect(mock.commandCalls(DeleteObjectCommand)).toHaveLength(0);
    });

    it('DeleteObjects: reports the keys S3 could not delete, without the prefix; a failed request is an outage', async () => {
      mock.on(DeleteObjectsCommand).resolves({ Errors: [{ Key: 'prefix-part/b', Code: 'AccessDenied' }] });
      expect(await store.deleteMany(['a', 'b'])).toEqual({ failed: ['b'] });
      mock.on(DeleteObjectsCommand).rejects(s3Error('SlowDown', 503));
      expectCleanUnavailable(
        await store.deleteMany(['a']).catch((e: unknown) => e),
        /^S3 DeleteObjects failed \(HTTP 503, SlowDown\)$/,
      );
    });
  });

  describe('sends the requests S3 and RGW expect', () => {
    it('PutObject: bare If-Match, If-None-Match "*", a Buffer with its length, Content-MD5, metadata, URL-encoded tags', async () => {
      mock.on(PutObjectCommand).resolves({ ETag: '"new"' });
      const bytes = text('body bytes');
      expect(
        await store.put('k', bytes, { ifMatch: 'abc', metadata: { m: 'v' }, tags: { ttl: '30 days', 'a&b': 'c=d/é' } }),
      ).toEqual({ etag: 'new' });
      await store.put('k2', bytes, { ifNoneMatch: '*' });
      const [first, second] = mock.commandCalls(PutObjectCommand).map((call) => call.args[0].input);
      expect(first).toMatchObject({
        Bucket: BUCKET,
        Key: 'prefix-part/k',
        IfMatch: 'abc',
        ContentLength: bytes.byteLength,
        ContentMD5: createHash('md5').update(bytes).digest('base64'),
        Metadata: { m: 'v' },
        Tagging: 'ttl=30%20days&a%26b=c%3Dd%2F%C3%A9',
      });
      expect(first!.IfMatch).not.toContain('"');
      expect(Buffer.isBuffer(first!.Body)).toBe(true);
      expect(first!.IfNoneMatch).toBeUndefined();
      expect(second).toMatchObject({ Key: 'prefix-part/k2', IfNoneMatch: '*' });
      expect(second!.IfMatch).toBeUndefined();
      expect(second!.Metadata).toBeUndefined();
      expect(second!.Tagging).toBeUndefined();
    });

    it('ListObjectsV2: the store prefix, MaxKeys capped at 1,000, StartAfter prefixed; keys come back without it', async () => {
      mock.on(ListObjectsV2Command).resolves({
        Contents: [
          { Key: 'prefix-part/d/x', Size: 3, ETag: '"e"', LastModified: new Date('2026-01-02T03:04:05.678Z') },
        ],
        IsTruncated: true,
        NextContinuationToken: 'token-1',
      });
      const page = await store.list('d/', { maxKeys: 5000, startAfter: 'd/a' });
      expect(page).toEqual({
        objects: [{ key: 'd/x', size: 3, etag: 'e', lastModified: new Date('2026-01-02T03:04:05Z') }],
        continuationToken: 'token-1',
      });
      await store.list('d/', { continuationToken: 'token-1', startAfter: 'ignored-with-a-token', maxKeys: 0 });
      const [first, second] = mock.commandCalls(ListObjectsV2Command).map((call) => call.args[0].input);
      expect(first).toEqual({ Bucket: BUCKET, Prefix: 'prefix-part/d/', MaxKeys: 1000, StartAfter: 'prefix-part/d/a' });
      expect(second).toEqual({ Bucket: BUCKET, Prefix: 'prefix-part/d/', MaxKeys: 1, ContinuationToken: 'token-1' });
    });

    it('CopyObject: URL-encoded Unicode source, REPLACE with metadata, TaggingDirective COPY, native conditions', async () => {
      const native = createS3Store({
        url: `s3://${BUCKET}/prefix-part`,
        s3: client,
        conditionChecks: 'native',
        restateTagsOnReplace: false,
      });
      mock.on(CopyObjectCommand).resolves({ CopyObjectResult: { ETag: '"copied"' } });
      expect(
        await native.copy('dir/ü 😀+%?#', 'dst', { ifNoneMatch: '*', ifSourceMatch: 'src-etag', metadata: { v: '2' } }),
      ).toEqual({ etag: 'copied' });
      await native.copy('a', 'b');
      const [first, second] = mock.commandCalls(CopyObjectCommand).map((call) => call.args[0].input);
      expect(first).toEqual({
        Bucket: BUCKET,
        Key: 'prefix-part/dst',
        CopySource: `${BUCKET}/prefix-part/dir/%C3%BC%20%F0%9F%98%80%2B%25%3F%23`,
        TaggingDirective: 'COPY',
        IfNoneMatch: '*',
        CopySourceIfMatch: 'src-etag',
        MetadataDirective: 'REPLACE',
        Metadata: { v: '2' },
      });
      expect(second).toEqual({
        Bucket: BUCKET,
        Key: 'prefix-part/b',
        CopySource: `${BUCKET}/prefix-part/a`,
        TaggingDirective: 'COPY',
      });
      expect(mock.commandCalls(HeadObjectCommand)).toHaveLength(0);
      expect(mock.commandCalls(GetObjectTaggingCommand)).toHaveLength(0);
    });

    it('DeleteObjects: batches of 1,000, Quiet', async () => {
      mock.on(DeleteObjectsCommand).resolves({});
      const keys = Array.from({ length: 2001 }, (_, i) => `k${i}`);
      expect(await store.deleteMany(keys)).toEqual({ failed: [] });
      const inputs = mock.commandCalls(DeleteObjectsCommand).map((call) => call.args[0].input);
      expect(inputs.map((input) => input.Delete?.Objects?.length)).toEqual([1000, 1000, 1]);
      expect(inputs.every((input) => input.Delete?.Quiet === true)).toBe(true);
      expect(inputs[2]!.Delete!.Objects![0]!.Key).toBe('prefix-part/k2000');
      expect(await store.deleteMany([])).toEqual({ failed: [] });
      expect(mock.commandCalls(DeleteObjectsCommand)).toHaveLength(3);
    });
  });
});

describe('the client memvault builds', () => {
  it('retries in standard mode, 4 attempts, checksums only when required, with timeouts that throw', async () => {
    const client = buildS3Client({
      endpoint: 'http://127.0.0.1:1',
      forcePathStyle: true,
      credentials: { accessKeyId: 'a', secretAccessKey: 'b' },
    });
    try {
      expect(await client.config.maxAttempts()).toBe(4);
      const strategy = (await client.config.retryStrategy()) as { mode?: string };
      expect(strategy.mode).toBe('standard');
      expect(await client.config.requestChecksumCalculation()).toBe('WHEN_REQUIRED');
      expect(await client.config.responseChecksumValidation()).toBe('WHEN_SUPPORTED');
      expect(await client.config.region()).toBe(process.env.AWS_REGION ?? 'us-east-1');
      const handler = client.config.requestHandler as unknown as { httpHandlerConfigs(): Record<string, unknown> };
      // The handler resolves its options lazily, on the first request.
      await client.send(new HeadObjectCommand({ Bucket: 'b', Key: 'k' })).catch(() => undefined);
      expect(handler.httpHandlerConfigs()).toMatchObject({
        connectionTimeout: 3000,
        requestTimeout: 30000,
        throwOnRequestTimeout: true,
        socketTimeout: 15000,
      });
    } finally {
      client.destroy();
    }
  });

  it('lets the host’s settings win over the defaults', async () => {
    const client = buildS3Client({ region: 'eu-west-3', maxAttempts: 7, requestChecksumCalculation: 'WHEN_SUPPORTED' });
    try {
      expect(await client.config.maxAttempts()).toBe(7);
      expect(await client.config.region()).toBe('eu-west-3');
      expect(await client.config.requestChecksumCalculation()).toBe('WHEN_SUPPORTED');
    } finally {
      client.destroy();
    }
  });

  it('reads MEMVAULT_S3_* from the environment and refuses half a key pair', () => {
    expect(
      s3ConfigFromEnv({
        MEMVAULT_S3_ENDPOINT: 'http://127.0.0.1:7480',
        MEMVAULT_S3_FORCE_PATH_STYLE: 'true',
        MEMVAULT_S3_ACCESS_KEY_ID: 'a',
        MEMVAULT_S3_SECRET_ACCESS_KEY: 'b',
      }),
    ).toEqual({
      endpoint: 'http://127.0.0.1:7480',
      forcePathStyle: true,
      credentials: { accessKeyId: 'a', secretAccessKey: 'b' },
    });
    expect(s3ConfigFromEnv({})).toEqual({});
    expect(() => s3ConfigFromEnv({ MEMVAULT_S3_ACCESS_KEY_ID: 'a' })).toThrow(/must be set together/);
  });

  it('rejects a malformed store URL without echoing it', () => {
    for (const url of [
      's3://',
      'http://secret-bucket/x',
      `s3://${'b'.repeat(64)}`,
      's3:///secret-prefix',
      's3://secret bucket/x',
    ]) {
      let error: unknown;
      try {
        createS3Store({ url, s3: {} });
      } catch (e) {
        error = e;
      }
      expect(isMemvaultError(error, 'CONFIG')).toBe(true);
      expect((error as Error).message).not.toMatch(/secret|bbbb/);
    }
    const store = createS3Store({ url: 's3://bucket//a///b/', s3: { region: 'us-east-1' } });
    expect(store.maxKeyBytes).toBe(1024 - 'a/b/'.length);
    void store.close();
  });
});
