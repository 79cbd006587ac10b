import { createHash } from 'node:crypto';
import {
  GetObjectCommand,
  HeadObjectCommand,
  PutObjectCommand,
  type PutObjectCommandInput,
  type S3Client,
} from '@aws-sdk/client-s3';
import type { SegmentRetention, SegmentUploader } from './uploader.js';

export interface S3SegmentUploaderOptions {
  client: S3Client;
  /** The audit bucket; it must have Object Lock enabled for retention to be accepted. */
  bucket: string;
}

/**
 * Uploads sealed segments straight to an S3 bucket with Object Lock retention on each object
 * (`x-amz-object-lock-mode` and `-retain-until-date` on the PutObject), create-only. The ObjectStore
 * port has no retention parameter, so this uploader talks to the S3 client itself.
 *
 * Create-only is checked twice. A HEAD first: Ceph RGW 16 did not enforce `If-None-Match: *` in an
 * Object Lock bucket (always versioned): a second PutObject to an existing key succeeded and became
 * the current version (measured in test/audit/s3-object-lock.test.ts before this HEAD was added),
 * which would hide the locked original behind a forgery. Then `If-None-Match: *` on the PUT itself, for servers that do enforce it. One
 * writer owns each instance's keys, so the gap between the two is not a race in practice.
 *
 * Content-MD5 is always sent: S3 requires an integrity header on any PutObject that sets
 * retention, and it makes a corrupted upload fail (400 BadDigest) instead of being locked in.
 */
export class S3SegmentUploader implements SegmentUploader {
  readonly supportsRetention = true;
  constructor(private readonly options: S3SegmentUploaderOptions) {}

  async upload(key: string, body: Uint8Array, retention?: SegmentRetention): Promise<'uploaded' | 'exists'> {
    if (await this.exists(key)) return 'exists';
    const input: PutObjectCommandInput = {
      Bucket: this.options.bucket,
      Key: key,
      Body: Buffer.from(body.buffer, body.byteOffset, body.byteLength),
      ContentLength: body.byteLength,
      ContentMD5: createHash('md5').update(body).digest('base64'),
      ContentType: 'application/x-ndjson',
      IfNoneMatch: '*',
    };
    if (retention) {
      input.ObjectLockMode = retention.mode;
      input.ObjectLockRetainUntilDate = retention.retainUntil;
    }
    try {
      await this.options.client.send(new PutObjectCommand(input));
      return 'uploaded';
    } catch (error) {
      // 412: a segment is already at this key (an earlier upload that lost its progress record).
      if (httpStatusOf(error) === 412) return 'exists';
      throw error;
    }
  }

  async holds(key: string, body: Uint8Array): Promise<boolean> {
    // One byte past the local segment: a longer object shows itself without being read whole.
    const range = `bytes=0-${body.byteLength}`;
    try {
      const out = await this.options.client.send(
        new GetObjectCommand({ Bucket: this.options.bucket, Key: key, Range: range }),
      );
      if (!out.Body) return false;
      return Buffer.from(body).equals(await out.Body.transformToByteArray());
    } catch (error) {
      // 404: gone since the 'exists'; 416: an empty object (no byte 0). Neither is this segment.
      const status = httpStatusOf(error);
      if (status === 404 || status === 416) return false;
      throw error;
    }
  }

  private async exists(key: string): Promise<boolean> {
    try {
      await this.options.client.send(new HeadObjectCommand({ Bucket: this.options.bucket, Key: key }));
      return true;
    } catch (error) {
      if (httpStatusOf(error) === 404) return false;
      throw error;
    }
  }
}

/** The HTTP status of an SDK error, read by shape (the app's SDK copy may not be ours). */
function httpStatusOf(error: unknown): number | undefined {
  const metadata = (error as { $metadata?: { httpStatusCode?: unknown } } | null)?.$metadata;
  return typeof metadata?.httpStatusCode === 'number' ? metadata.httpStatusCode : undefined;
}
