/**
 * Sealed audit segments uploaded to a real S3 server (Ceph radosgw) with Object Lock retention.
 * Runs when the run has an S3 server (test/setup/rgw.ts as globalSetup, or MEMVAULT_S3_ENDPOINT);
 * otherwise skips, like the suites under test/s3/.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  CreateBucketCommand,
  DeleteObjectCommand,
  HeadObjectCommand,
  ListObjectVersionsCommand,
  S3Client,
} from '@aws-sdk/client-s3';
import { afterAll, describe, expect, it } from 'vitest';
import { createAuditLogger } from '../../src/pipeline/audit-logger.js';
import { S3SegmentUploader } from '../../src/audit/s3-uploader.js';
import { listSealedSegments } from '../../src/audit/segments.js';
import { collectStoreChains } from '../../src/audit/sources.js';
import { verifyChains } from '../../src/audit/verify.js';
import { createS3Store } from '../../src/store/s3.js';
import { s3Available, s3ClientConfig, s3SkipReason } from '../s3/helpers.js';
import { tempDir } from './helpers.js';

const temp = tempDir();
afterAll(() => temp.cleanup());

describe.skipIf(!s3Available())(
  `audit segments on S3 with Object Lock${s3Available() ? '' : ` (skipped: ${s3SkipReason()})`}`,
  () => {
    it('uploads each sealed segment create-only with retention; a locked version cannot be deleted; the copy verifies', async () => {
      const client = new S3Client(s3ClientConfig());
      const bucket = `mv-audit-${Date.now().toString(36)}-${randomBytes(3).toString('hex')}`;
      await client.send(new CreateBucketCommand({ Bucket: bucket, ObjectLockEnabledForBucket: true }));
      const file = join(temp.dir, 'audit.jsonl');
      const uploader = new S3SegmentUploader({ client, bucket });
      const errors: Error[] = [];
      const logger = await createAuditLogger({
        file,
        maxSegmentBytes: 1200,
        upload: { uploader, prefix: 'memvault/', objectLock: { mode: 'GOVERNANCE', days: 1 } },
        onError: (e) => errors.push(e),
      });
      for (let i = 0; i < 15; i++) logger.append({ type: 'expire', counts: { objects: i } });
      await logger.close();
      expect(errors).toEqual([]);

      const store = createS3Store({ url: `s3://${bucket}/memvault`, s3: s3ClientConfig() });
      const report = await verifyChains(await collectStoreChains(store));
      expect(report.failures).toEqual([]);
      expect(report.totals.segments).toBe(listSealedSegments(file).length);
      expect(report.totals.segments).toBeGreaterThan(2);

      const key = `memvault/audit/${logger.instanceId}/000000000001.jsonl`;
      const head = await client.send(new HeadObjectCommand({ Bucket: bucket, Key: key }));
      expect(head.ObjectLockMode).toBe('GOVERNANCE');
      expect(head.ObjectLockRetainUntilDate!.getTime()).toBeGreaterThan(Date.now() + 23 * 3600 * 1000);

      // Deleting the locked version is refused (403); a plain delete only adds a delete marker.
      const versions = await client.send(new ListObjectVersionsCommand({ Bucket: bucket, Prefix: key }));
      const versionId = versions.Versions?.[0]?.VersionId;
      expect(versionId).toBeDefined();
      await expect(
        client.send(new DeleteObjectCommand({ Bucket: bucket, Key: key, VersionId: versionId })),
      ).rejects.toMatchObject({
        $metadata: { httpStatusCode: 403 },
      });

      // A second upload of the same segment (lost progress file) is create-only: reported, not overwritten.
      expect(await uploader.upload(key, new TextEncoder().encode('forged\n'))).toBe('exists');
      // ...and the shipper counts an 'exists' only when the object there is this segment, byte for byte.
      const segment = readFileSync(listSealedSegments(file)[0]!.file);
      expect(await uploader.holds(key, segment)).toBe(true);
      expect(await uploader.holds(key, new TextEncoder().encode('forged\n'))).toBe(false);
      expect(await uploader.holds(key, segment.subarray(0, segment.byteLength - 1))).toBe(false);
      expect(await uploader.holds(`${key}.absent`, segment)).toBe(false);
      expect((await verifyChains(await collectStoreChains(store))).ok).toBe(true);

      // A delete without a version id only hides a segment behind a delete marker: the locked
      // version survives, and verify of the store copy reports the gap where it was.
      const secondKey = (await collectStoreChains(store)).chains[0]!.segments[1]!.name;
      await client.send(new DeleteObjectCommand({ Bucket: bucket, Key: `memvault/${secondKey}` }));
      const hidden = await verifyChains(await collectStoreChains(store));
      expect(hidden.failures[0]).toMatchObject({ line: 1, reason: expect.stringMatching(/missing/) });
      const stillThere = await client.send(
        new ListObjectVersionsCommand({ Bucket: bucket, Prefix: `memvault/${secondKey}` }),
      );
      expect(stillThere.Versions).toHaveLength(1);

      await store.close();
      client.destroy();
    });
  },
);
