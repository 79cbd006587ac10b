import { MemvaultError } from '../../errors.js';

/**
 * `s3://bucket` or `s3://bucket/some/prefix` -> bucket and a normalised prefix (no leading or
 * trailing '/', no empty segments; '' for none). The error never echoes the URL: it is written
 * by the operator, but may carry a bucket name that should not land in shared logs.
 */
export function parseS3Url(url: string): { bucket: string; prefix: string } {
  const match = /^s3:\/\/([^/]+)(?:\/(.*))?$/.exec(url);
  const bucket = match?.[1] ?? '';
  // Bucket naming rules (3-63 of a-z, 0-9, '.', '-'), loosened to allow the upper case and '_'
  // that some S3-compatible servers accept.
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]{1,62}$/.test(bucket)) {
    throw new MemvaultError('CONFIG', 'The S3 store URL must look like s3://bucket or s3://bucket/prefix');
  }
  const prefix = (match?.[2] ?? '')
    .split('/')
    .filter((segment) => segment !== '')
    .join('/');
  return { bucket, prefix };
}
