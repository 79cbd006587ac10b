/**
 * A virtual bucket for the sweeper's request-count and memory checks: an S3Client mocked with
 * aws-sdk-client-mock whose ListObjectsV2 generates pages of `u/{uid}/f/{file}` keys from their
 * index on the fly, so the test itself holds no key list (memory measured is the sweeper's own).
 * Even indexes are idle for 400 days (expired at a 30-day TTL), odd ones were written an hour ago.
 * The mock's own call history (sinon keeps every input and output) is cleared on every call and
 * requests are counted here instead, or the mock itself would grow with the object count.
 */
import {
  DeleteObjectCommand,
  DeleteObjectsCommand,
  PutObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  S3Client,
  type _Object,
  type DeleteObjectsCommandOutput,
} from '@aws-sdk/client-s3';
import { mockClient } from 'aws-sdk-client-mock';
import { createS3Store, type S3Store } from '../../src/store/s3.js';

export const MOCK_BUCKET = 'bench-bucket';
export const MOCK_PREFIX = 'mv';
const FILES_PER_USER = 10;
const NOW = Date.parse('2025-06-01T00:00:00Z');
export const MOCK_NOW = new Date(NOW);

function keyOf(i: number): string {
  return `${MOCK_PREFIX}/u/user${String(Math.floor(i / FILES_PER_USER)).padStart(9, '0')}/f/file${String(i).padStart(10, '0')}`;
}

function indexOf(fullKey: string): number {
  return Number(/file(\d+)$/.exec(fullKey)?.[1] ?? NaN);
}

function lastModifiedOf(i: number): Date {
  return new Date(i % 2 === 0 ? NOW - 400 * 86_400_000 : NOW - 3_600_000);
}

export function isExpiredIndex(i: number): boolean {
  return i % 2 === 0;
}

export interface VirtualBucket {
  store: S3Store;
  client: S3Client;
  calls(): Record<string, number>;
  /** Keys that DeleteObjects received, counted (not stored). */
  deletedKeys(): number;
  restore(): void;
}

export function virtualBucket(
  objects: number,
  options: { deleteErrors?: (key: string) => string | undefined } = {},
): VirtualBucket {
  const client = new S3Client({ region: 'us-east-1', credentials: { accessKeyId: 'x', secretAccessKey: 'x' } });
  const mock = mockClient(client);
  let deleted = 0;
  const counts: Record<string, number> = {};
  const count = (name: string): void => {
    counts[name] = (counts[name] ?? 0) + 1;
    // Not inside the stub's own invocation (sinon refuses that): right after it.
    setImmediate(() => mock.resetHistory());
  };
  // Answer on a later turn of the event loop, as a network reply would, so the resets above run
  // while the sweep is still going (an always-resolved mock would starve setImmediate).
  const later = async <T>(answer: () => T): Promise<T> => {
    await new Promise((resolve) => setImmediate(resolve));
    return answer();
  };
  mock
    .on(ListObjectsV2Command)
    .callsFake((input: { Prefix?: string; ContinuationToken?: string; MaxKeys?: number }) => {
      count('ListObjectsV2');
      return later(() => listPage(input));
    });
  const listPage = (input: { Prefix?: string; ContinuationToken?: string; MaxKeys?: number }) => {
    if (input.Prefix !== `${MOCK_PREFIX}/u/`) throw new Error(`unexpected prefix ${input.Prefix}`);
    const start = input.ContinuationToken ? Number(input.ContinuationToken) : 0;
    const end = Math.min(objects, start + Math.min(input.MaxKeys ?? 1000, 1000));
    const contents: _Object[] = [];
    for (let i = start; i < end; i++)
      contents.push({ Key: keyOf(i), ETag: `"etag${i}"`, Size: 100, LastModified: lastModifiedOf(i) });
    return {
      Contents: contents,
      IsTruncated: end < objects,
      ...(end < objects ? { NextContinuationToken: String(end) } : {}),
    };
  };
  mock.on(DeleteObjectsCommand).callsFake((input: { Delete?: { Objects?: { Key?: string }[] } }) => {
    count('DeleteObjects');
    return later(() => deleteObjects(input));
  });
  const deleteObjects = (input: { Delete?: { Objects?: { Key?: string }[] } }): Partial<DeleteObjectsCommandOutput> => {
    const errors: { Key: string; Code: string }[] = [];
    for (const o of input.Delete?.Objects ?? []) {
      const code = options.deleteErrors?.(o.Key ?? '');
      if (code) errors.push({ Key: o.Key ?? '', Code: code });
      else deleted += 1;
    }
    return errors.length > 0 ? { Errors: errors } : {};
  };
  // Fence markers (recheck mode): the indexes currently replaced by an empty marker, each removed
  // again by the DeleteObject that follows, so the set stays as small as the sweep's concurrency.
  const EMPTY_MD5 = 'd41d8cd98f00b204e9800998ecf8427e';
  const fenced = new Set<number>();
  mock.on(PutObjectCommand).callsFake((input: { Key?: string; IfMatch?: string }) => {
    count('PutObject');
    const i = indexOf(input.Key ?? '');
    return later(() => {
      // The marker's clean-up reaps it first (src/store/fence.ts): a PUT If-Match the marker's ETag.
      if (input.IfMatch === EMPTY_MD5 && fenced.has(i)) return { ETag: `"reaping${i}"` };
      if (input.IfMatch !== `etag${i}` || fenced.has(i))
        throw Object.assign(new Error('PreconditionFailed'), {
          name: 'PreconditionFailed',
          $metadata: { httpStatusCode: 412 },
        });
      fenced.add(i);
      return { ETag: `"${EMPTY_MD5}"` };
    });
  });
  mock.on(DeleteObjectCommand).callsFake((input: { Key?: string }) => {
    count('DeleteObject');
    const i = indexOf(input.Key ?? '');
    return later(() => {
      if (fenced.delete(i)) deleted += 1;
      return {};
    });
  });
  mock.on(HeadObjectCommand).callsFake((input: { Key?: string }) => {
    count('HeadObject');
    const i = indexOf(input.Key ?? '');
    return later(() =>
      fenced.has(i)
        ? { ETag: `"${EMPTY_MD5}"`, LastModified: MOCK_NOW, ContentLength: 0 }
        : { ETag: `"etag${i}"`, LastModified: lastModifiedOf(i), ContentLength: 100 },
    );
  });
  const store = createS3Store({ url: `s3://${MOCK_BUCKET}/${MOCK_PREFIX}`, s3: client });
  return {
    store,
    client,
    calls: () => ({ ...counts }),
    deletedKeys: () => deleted,
    restore: () => mock.restore(),
  };
}
