/** The S3 server the benches use when MEMVAULT_S3_ENDPOINT is set (radosgw of scripts/rgw.sh), and its bucket, created if missing. */
import { CreateBucketCommand, S3Client, type S3ClientConfig } from '@aws-sdk/client-s3';

export const s3Endpoint = process.env.MEMVAULT_S3_ENDPOINT;
export const s3Bucket = process.env.MEMVAULT_S3_BUCKET ?? 'memvault-test';

export function s3ClientConfig(): S3ClientConfig {
  return {
    endpoint: s3Endpoint!,
    region: process.env.MEMVAULT_S3_REGION ?? 'us-east-1',
    forcePathStyle: true,
    credentials: {
      accessKeyId: process.env.MEMVAULT_S3_ACCESS_KEY_ID ?? 'test',
      secretAccessKey: process.env.MEMVAULT_S3_SECRET_ACCESS_KEY ?? 'test',
    },
  };
}

/** Creates the bench bucket when it does not exist yet (an existing one is an error the bench ignores). */
export async function ensureBucket(): Promise<void> {
  const client = new S3Client(s3ClientConfig());
  try {
    await client.send(new CreateBucketCommand({ Bucket: s3Bucket })).catch(() => undefined);
  } finally {
    client.destroy();
  }
}
