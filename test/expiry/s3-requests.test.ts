/**
 * The sweeper's S3 requests, with a mocked client (aws-sdk-client-mock): the acceptance bound over
 * 10,000 objects (at most 1 LIST per 1,000 objects plus 1 DeleteObjects per 1,000 deletions), the
 * shape of the conditional DeleteObjects, and how per-key errors are read. What RGW really does
 * with these requests is proven in test/s3/expiry.test.ts.
 */
import { DeleteObjectsCommand } from '@aws-sdk/client-s3';
import { describe, expect, it } from 'vitest';
import { s3Deleter } from '../../src/expiry/deleter.js';
import { sweep } from '../../src/expiry/sweep.js';
import { isExpiredIndex, MOCK_BUCKET, MOCK_NOW, MOCK_PREFIX, virtualBucket } from './s3-mock.js';

const N = 10_000;

describe('sweeper requests over 10,000 objects (mocked S3)', () => {
  it('native conditional deletes: 10 LIST + 5 DeleteObjects for 5,000 deletions, nothing else', async () => {
    const bucket = virtualBucket(N);
    try {
      const deleter = s3Deleter({ client: bucket.client, bucket: MOCK_BUCKET, prefix: MOCK_PREFIX, mode: 'native' });
      const summary = await sweep({ store: bucket.store, ttl: { ttlDays: 30 }, now: () => MOCK_NOW, deleter });
      expect(summary).toMatchObject({ scanned: N, expired: N / 2, kept: N / 2, errors: 0, users: N / 10 });
      const calls = bucket.calls();
      expect(calls).toEqual({ ListObjectsV2: Math.ceil(N / 1000), DeleteObjects: Math.ceil(N / 2 / 1000) });
      expect(bucket.deletedKeys()).toBe(N / 2);
    } finally {
      bucket.restore();
    }
  });

  it(
    'recheck mode HEADs, fences each deletion (PUT If-Match of a marker), then reaps the marker (PUT If-Match, DELETE)',
    { timeout: 120_000 },
    async () => {
      const bucket = virtualBucket(N);
      try {
        const deleter = s3Deleter({ client: bucket.client, bucket: MOCK_BUCKET, prefix: MOCK_PREFIX, mode: 'recheck' });
        const summary = await sweep({ store: bucket.store, ttl: { ttlDays: 30 }, now: () => MOCK_NOW, deleter });
        expect(summary).toMatchObject({ expired: N / 2, errors: 0, mode: 's3-recheck' });
        expect(bucket.calls()).toEqual({ ListObjectsV2: 10, PutObject: N, HeadObject: N / 2, DeleteObject: N / 2 });
        expect(bucket.deletedKeys()).toBe(N / 2);
      } finally {
        bucket.restore();
      }
    },
  );
});

describe('conditional DeleteObjects', () => {
  it('names every key with its store prefix and the listed ETag, quietly', async () => {
    const bucket = virtualBucket(40);
    try {
      const deleter = s3Deleter({ client: bucket.client, bucket: MOCK_BUCKET, prefix: MOCK_PREFIX, mode: 'native' });
      await sweep({ store: bucket.store, ttl: { ttlDays: 30 }, now: () => MOCK_NOW, deleter });
      expect(bucket.calls()['DeleteObjects']).toBe(1);
    } finally {
      bucket.restore();
    }
    // Request shape, from a fresh mock that records its input.
    const recording = virtualBucket(4);
    const seen: unknown[] = [];
    try {
      const deleter = s3Deleter({ client: recording.client, bucket: MOCK_BUCKET, prefix: MOCK_PREFIX, mode: 'native' });
      const send = recording.client.send.bind(recording.client);
      recording.client.send = ((command: unknown) => {
        if (command instanceof DeleteObjectsCommand) seen.push(command.input);
        return send(command as never);
      }) as typeof recording.client.send;
      await sweep({ store: recording.store, ttl: { ttlDays: 30 }, now: () => MOCK_NOW, deleter });
    } finally {
      recording.restore();
    }
    expect(seen).toEqual([
      {
        Bucket: MOCK_BUCKET,
        Delete: {
          Quiet: true,
          Objects: [0, 2].map((i) => ({
            Key: `${MOCK_PREFIX}/u/user000000000/f/file${String(i).padStart(10, '0')}`,
            ETag: `"etag${i}"`,
          })),
        },
      },
    ]);
  });

  it('PreconditionFailed and ConditionalRequestConflict mean changed (kept), NoSuchKey already gone, others errors', async () => {
    const codes = ['PreconditionFailed', 'ConditionalRequestConflict', 'NoSuchKey', 'InternalError'];
    const bucket = virtualBucket(100, {
      deleteErrors: (key) => {
        const i = Number(/file(\d+)$/.exec(key)?.[1]);
        return i < 8 && isExpiredIndex(i) ? codes[i / 2] : undefined;
      },
    });
    try {
      const deleter = s3Deleter({ client: bucket.client, bucket: MOCK_BUCKET, prefix: MOCK_PREFIX, mode: 'native' });
      const summary = await sweep({ store: bucket.store, ttl: { ttlDays: 30 }, now: () => MOCK_NOW, deleter });
      expect(summary).toMatchObject({
        scanned: 100,
        expired: 47,
        alreadyGone: 1,
        kept: 52,
        changedDuringSweep: 2,
        errors: 1,
      });
      expect(bucket.deletedKeys()).toBe(46);
    } finally {
      bucket.restore();
    }
  });
});
