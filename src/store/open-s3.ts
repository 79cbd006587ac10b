/**
 * An s3:// store with its client (doctor and the sweeper's conditional deleter talk to the client
 * itself). Apart from open.ts so that the package root's declarations never name the S3 adapter's
 * types (client-shape.ts says why); the adapter and the AWS SDK load only when an s3:// URL opens.
 */
import { MemvaultError } from '../errors.js';
import { BAD_URL, type OpenStoreOptions } from './open-options.js';
import type { S3Store } from './s3.js';
import { resolveS3Settings } from './s3/settings.js';

export async function openS3Store(url: string, options: Omit<OpenStoreOptions, 'create'> = {}): Promise<S3Store> {
  if (!url.startsWith('s3://')) throw new MemvaultError('CONFIG', BAD_URL);
  const { createS3Store } = await import('./s3.js');
  return createS3Store({ url, s3: resolveS3Settings(options.s3, options.env), ...options.s3Options });
}
