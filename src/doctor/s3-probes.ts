/**
 * doctor's write probes (src/doctor/s3.ts): conditional puts, tags and copies tried for real on a
 * few objects under `<prefix>/k/_doctor-<random>`, deleted again afterwards.
 */
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  CopyObjectCommand,
  DeleteObjectCommand,
  DeleteObjectsCommand,
  GetObjectTaggingCommand,
  HeadObjectCommand,
  PutObjectCommand,
  type S3Client,
} from '@aws-sdk/client-s3';
import { TTL_CLASS_TAG_KEY } from '../expiry/config.js';
import type { S3Failure } from '../store/s3/errors.js';
import type { DoctorCheck } from './checks.js';
import { failureName, failureOf, unknownCheck } from './s3-failures.js';

const STALE_ETAG = '0123456789abcdef0123456789abcdef';

export async function probes(client: S3Client, bucket: string, base: string): Promise<DoctorCheck[]> {
  const checks: DoctorCheck[] = [];
  const key = `${base}k/_doctor-${randomBytes(8).toString('hex')}`;
  const body = Buffer.from('memvault doctor probe\n');
  const put = (extra: { IfNoneMatch?: string; IfMatch?: string; Tagging?: string } = {}) =>
    client.send(
      new PutObjectCommand({ Bucket: bucket, Key: key, Body: body, ContentLength: body.byteLength, ...extra }),
    );
  const exists = async (): Promise<boolean> => {
    try {
      await client.send(new HeadObjectCommand({ Bucket: bucket, Key: key }));
      return true;
    } catch (error) {
      if (failureOf(error).status === 404) return false;
      throw error;
    }
  };
  const rejected = async (send: () => Promise<unknown>): Promise<'rejected' | 'accepted' | S3Failure> => {
    try {
      await send();
      return 'accepted';
    } catch (error) {
      const f = failureOf(error);
      return f.status === 412 || f.code === 'PreconditionFailed' ? 'rejected' : f;
    }
  };

  try {
    // Conditional writes: create-once and compare-and-swap, which every file edit relies on.
    const title = 'Conditional writes (If-None-Match: *, If-Match)';
    const first = await rejected(() => put({ IfNoneMatch: '*' }));
    if (first !== 'accepted') {
      checks.push(
        first === 'rejected'
          ? {
              id: 'conditional-writes',
              title,
              status: 'unknown',
              required: true,
              detail: 'unknown (the probe key already existed)',
            }
          : unknownCheck('conditional-writes', title, true, 'PutObject with If-None-Match', first),
      );
    } else {
      const second = await rejected(() => put({ IfNoneMatch: '*' }));
      const stale = await rejected(() => put({ IfMatch: STALE_ETAG }));
      const ok = second === 'rejected' && stale === 'rejected';
      const problems = [
        second === 'rejected' ? '' : 'a second If-None-Match: * put was not refused',
        stale === 'rejected' ? '' : 'an If-Match put with a stale ETag was not refused',
      ].filter(Boolean);
      checks.push({
        id: 'conditional-writes',
        title,
        status: ok ? 'ok' : 'missing',
        required: true,
        detail: ok ? 'both refused with 412 as required' : problems.join('; '),
        ...(ok
          ? {}
          : {
              fix: 'memvault needs an S3 server that enforces conditional PUTs (AWS S3 since 2024, MinIO, R2, Ceph RGW on unversioned buckets); without them a user can get two data keys and concurrent edits can be lost. Ceph RGW 16 stops enforcing If-None-Match: * once versioning is enabled (measured): there, leave versioning off or upgrade RGW',
            }),
      });
    }

    // Conditional deletes: does DeleteObjects honour the ETag of an ObjectIdentifier?
    {
      const title = 'Conditional deletes (DeleteObjects with ETag), used by the sweeper';
      if (!(await exists())) await put();
      let result: string;
      try {
        await client.send(
          new DeleteObjectsCommand({
            Bucket: bucket,
            Delete: { Objects: [{ Key: key, ETag: `"${STALE_ETAG}"` }], Quiet: true },
          }),
        );
        result = (await exists()) ? 'enforced' : 'ignored';
      } catch (error) {
        result = `failed:${failureName(failureOf(error))}`;
      }
      if (result === 'enforced')
        checks.push({
          id: 'conditional-deletes',
          title,
          status: 'ok',
          required: false,
          detail: 'enforced: run the sweeper with MEMVAULT_CONDITIONAL_DELETE=native (no HEAD per deletion)',
        });
      else if (result === 'ignored')
        checks.push({
          id: 'conditional-deletes',
          title,
          status: 'warn',
          required: false,
          detail:
            "ignored by this server (a stale ETag deleted the object): keep the sweeper's default recheck mode (one HEAD per deletion)",
        });
      else
        checks.push({
          id: 'conditional-deletes',
          title,
          status: 'unknown',
          required: false,
          detail: `unknown (DeleteObjects ${result.slice(7)})`,
        });
    }

    // Touch: a copy in place must move LastModified (the idle clock) and should keep the TTL tag.
    const touchTitle = 'Touch on read (copy in place moves LastModified, keeps the TTL tag)';
    try {
      const title = touchTitle;
      await put({ Tagging: `${encodeURIComponent(TTL_CLASS_TAG_KEY)}=doctor` });
      const before =
        (await client.send(new HeadObjectCommand({ Bucket: bucket, Key: key }))).LastModified?.getTime() ?? 0;
      await sleep(1100); // LastModified has whole seconds
      try {
        await client.send(
          new CopyObjectCommand({
            Bucket: bucket,
            Key: key,
            CopySource: `${bucket}/${key.split('/').map(encodeURIComponent).join('/')}`,
            MetadataDirective: 'REPLACE',
            Metadata: {},
            TaggingDirective: 'COPY',
          }),
        );
        const after =
          (await client.send(new HeadObjectCommand({ Bucket: bucket, Key: key }))).LastModified?.getTime() ?? 0;
        let tagKept: boolean | undefined;
        try {
          const tags = (await client.send(new GetObjectTaggingCommand({ Bucket: bucket, Key: key }))).TagSet ?? [];
          tagKept = tags.some((t) => t.Key === TTL_CLASS_TAG_KEY && t.Value === 'doctor');
        } catch {
          tagKept = undefined;
        }
        if (after <= before)
          checks.push({
            id: 'touch',
            title,
            status: 'missing',
            required: true,
            detail: 'LastModified did not move: reads cannot keep files alive',
            fix: 'use an S3 server whose CopyObject onto the same key updates LastModified',
          });
        else if (tagKept === false) {
          checks.push({
            id: 'touch',
            title,
            status: 'warn',
            required: false,
            detail:
              "LastModified moves, but the server drops tags on a copy in place (Ceph RGW 16 does): keep S3Store's restateTagsOnReplace on (the default; 2 more requests per touch), or touched files fall out of the tag-filtered lifecycle rules",
          });
        } else {
          checks.push({
            id: 'touch',
            title,
            status: 'ok',
            required: true,
            detail: tagKept
              ? 'LastModified moves and the server keeps tags: S3Store may use restateTagsOnReplace: false (1 request per touch instead of 3)'
              : 'LastModified moves (tags: unknown, GetObjectTagging not allowed)',
          });
        }
      } catch (error) {
        checks.push(unknownCheck('touch', title, true, 'CopyObject onto itself', failureOf(error)));
      }
    } catch (error) {
      checks.push(unknownCheck('touch', touchTitle, true, 'PutObject with tags', failureOf(error)));
    }
  } catch (error) {
    checks.push(unknownCheck('probes', 'Probes', false, 'the probe requests', failureOf(error)));
  } finally {
    await client.send(new DeleteObjectCommand({ Bucket: bucket, Key: key })).catch(() => undefined);
  }
  return checks;
}
