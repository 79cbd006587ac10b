/**
 * `memvault doctor`: checks a live S3 bucket against what memvault needs and says how to fix what is
 * missing (the CDK construct in infra/, or the aws CLI). Bucket-level reads use @aws-sdk/client-s3
 * directly; a server that does not implement one of them (Ceph RGW answers some with
 * NotImplemented) yields "unknown", never a crash. The probes write a few objects under
 * `<prefix>/k/_doctor-<random>` (the application role may write `k/`; the sweeper never looks there)
 * and delete them again.
 */
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  CopyObjectCommand,
  DeleteObjectCommand,
  DeleteObjectsCommand,
  GetBucketEncryptionCommand,
  GetBucketLifecycleConfigurationCommand,
  GetBucketVersioningCommand,
  GetObjectTaggingCommand,
  GetPublicAccessBlockCommand,
  HeadObjectCommand,
  PutObjectCommand,
  type LifecycleRule,
  type S3Client,
} from '@aws-sdk/client-s3';
import { TTL_CLASS_TAG_KEY, type ResolvedTtl } from '../expiry/config.js';
import { describeS3Error, type S3Failure } from '../store/s3/errors.js';
import type { DoctorCheck } from './checks.js';

export interface DoctorOptions {
  client: S3Client;
  bucket: string;
  /** The store's key prefix ('' for none). */
  prefix: string;
  ttl: ResolvedTtl;
  /** Skip the probes that write objects (read-only credentials). */
  skipProbes?: boolean;
}

/** The one reading of an S3 failure (store/s3/errors.ts), with the network cause when there was no answer. */
const failureOf = describeS3Error;

function unsupported(f: S3Failure): boolean {
  return f.status === 501 || f.code === 'NotImplemented' || f.code === 'MethodNotAllowed' || f.status === 405;
}

/** The IAM action behind each API doctor calls, for "access denied" (what to grant). */
const PERMISSION_OF: Record<string, string> = {
  GetBucketVersioning: 's3:GetBucketVersioning',
  GetBucketLifecycleConfiguration: 's3:GetLifecycleConfiguration',
  GetBucketEncryption: 's3:GetEncryptionConfiguration',
  GetPublicAccessBlock: 's3:GetBucketPublicAccessBlock',
  'PutObject with If-None-Match': 's3:PutObject',
  'PutObject with tags': 's3:PutObject and s3:PutObjectTagging',
  'CopyObject onto itself': 's3:GetObject and s3:PutObject',
  'the probe requests': 's3:PutObject, s3:GetObject and s3:DeleteObject',
};

/**
 * A check that could not be made: its real cause (no answer, access denied naming the missing
 * permission, the server not implementing the API). A required one fails doctor (fail closed).
 */
function unknownCheck(id: string, title: string, required: boolean, api: string, f: S3Failure): DoctorCheck {
  const why = f.network
    ? `${api}: ${f.network}`
    : unsupported(f)
      ? `the server does not support ${api}`
      : ['InvalidAccessKeyId', 'SignatureDoesNotMatch', 'ExpiredToken', 'InvalidToken'].includes(f.code)
        ? `${api}: the credentials were rejected (${f.code})`
        : f.status === 403 || f.code === 'AccessDenied'
          ? `access denied to ${api}: the credentials lack ${PERMISSION_OF[api] ?? 'the permission for it'}`
          : `${api} failed: ${failureName(f)}${f.status ? ` (${f.status})` : ''}`;
  return { id, title, status: 'unknown', required, detail: `could not check: ${why}` };
}

/**
 * A failure's name for the operator: its code; without an HTTP answer (e.g. CredentialsProviderError)
 * also the SDK's own first sentence, which is then the only statement of the cause.
 */
function failureName(f: S3Failure): string {
  const sentence = f.message.split('\n')[0]!.slice(0, 160);
  return f.status === undefined && sentence !== '' ? `${f.code}: ${sentence}` : f.code;
}

function filterOf(rule: LifecycleRule): { prefix: string; tags: Record<string, string> } {
  const tags: Record<string, string> = {};
  const f = rule.Filter;
  let prefix = rule.Prefix ?? '';
  if (f?.Prefix !== undefined) prefix = f.Prefix;
  if (f?.Tag?.Key !== undefined) tags[f.Tag.Key] = f.Tag.Value ?? '';
  if (f?.And) {
    if (f.And.Prefix !== undefined) prefix = f.And.Prefix;
    for (const t of f.And.Tags ?? []) if (t.Key !== undefined) tags[t.Key] = t.Value ?? '';
  }
  return { prefix, tags };
}

/**
 * Days S3 may keep a replaced or deleted key record (`k/`) as a noncurrent version: the part of the
 * erasure window the bucket adds (docs/encryption.md, "Erasure window"). The construct sets it.
 */
export const KEY_RECORD_NONCURRENT_DAYS = 1;

export async function runDoctor(options: DoctorOptions): Promise<DoctorCheck[]> {
  const { client, bucket, prefix, ttl } = options;
  const base = prefix === '' ? '' : `${prefix}/`;
  const filesPrefix = `${base}u/`;
  const keysPrefix = `${base}k/`;
  const checks: DoctorCheck[] = [];

  // Versioning.
  try {
    const out = await client.send(new GetBucketVersioningCommand({ Bucket: bucket }));
    const versioned = out.Status === 'Enabled';
    checks.push({
      id: 'versioning',
      title: 'Versioning',
      status: versioned ? 'ok' : 'missing',
      required: true,
      detail: versioned ? 'enabled' : `not enabled (status: ${out.Status ?? 'never enabled'})`,
      ...(versioned
        ? {}
        : {
            fix: `CDK: s3.Bucket { versioned: true } (MemvaultStorage sets it)\naws s3api put-bucket-versioning --bucket ${bucket} --versioning-configuration Status=Enabled`,
          }),
    });
  } catch (error) {
    checks.push(unknownCheck('versioning', 'Versioning', true, 'GetBucketVersioning', failureOf(error)));
  }

  // Lifecycle: one rule per TTL class, and noncurrent-version expiration.
  let rules: LifecycleRule[] | undefined;
  let lifecycleFailure: S3Failure | undefined;
  try {
    rules = (await client.send(new GetBucketLifecycleConfigurationCommand({ Bucket: bucket }))).Rules ?? [];
  } catch (error) {
    const f = failureOf(error);
    if (f.code === 'NoSuchLifecycleConfiguration') rules = [];
    else lifecycleFailure = f;
  }
  const lifecycleJson = JSON.stringify({
    Rules: [
      {
        ID: 'memvault-housekeeping',
        Status: 'Enabled',
        Filter: { Prefix: base },
        NoncurrentVersionExpiration: { NoncurrentDays: 7 },
        AbortIncompleteMultipartUpload: { DaysAfterInitiation: 1 },
        Expiration: { ExpiredObjectDeleteMarker: true },
      },
      {
        ID: 'memvault-key-records',
        Status: 'Enabled',
        Filter: { Prefix: keysPrefix },
        NoncurrentVersionExpiration: { NoncurrentDays: KEY_RECORD_NONCURRENT_DAYS },
      },
      ...Object.entries(ttl.classes).map(([name, days]) => ({
        ID: `memvault-ttl-${name}`,
        Status: 'Enabled',
        Filter: { And: { Prefix: filesPrefix, Tags: [{ Key: TTL_CLASS_TAG_KEY, Value: name }] } },
        Expiration: { Days: days },
      })),
    ],
  });
  const lifecycleFix = `CDK: new MemvaultStorage(this, 'Memvault', { ttlClasses: ${JSON.stringify(ttl.classes)}, defaultTtlClass: '${ttl.defaultClass}' }) (infra/lib/memvault-storage.ts)\naws s3api put-bucket-lifecycle-configuration --bucket ${bucket} --lifecycle-configuration '${lifecycleJson}'\n(put-bucket-lifecycle-configuration replaces every rule of the bucket: merge in any rules of your own)`;
  const covers = (rulePrefix: string, target: string): boolean => target.startsWith(rulePrefix);
  for (const [name, days] of Object.entries(ttl.classes)) {
    const id = `lifecycle:${name}`;
    const title = `Lifecycle rule for TTL class '${name}' (${days} days)`;
    if (!rules) {
      checks.push(unknownCheck(id, title, true, 'GetBucketLifecycleConfiguration', lifecycleFailure!));
      continue;
    }
    const matching = rules.filter((r) => {
      if (r.Status !== 'Enabled') return false;
      const f = filterOf(r);
      return f.tags[TTL_CLASS_TAG_KEY] === name && Object.keys(f.tags).length === 1 && covers(f.prefix, filesPrefix);
    });
    const exact = matching.find((r) => r.Expiration?.Days === days);
    if (exact)
      checks.push({
        id,
        title,
        status: 'ok',
        required: true,
        detail: `rule '${exact.ID ?? '(no id)'}' expires tag ${TTL_CLASS_TAG_KEY}=${name} after ${days} days`,
      });
    else {
      const other = matching[0];
      checks.push({
        id,
        title,
        status: 'missing',
        required: true,
        detail: other
          ? `rule '${other.ID ?? '(no id)'}' expires after ${other.Expiration?.Days ?? '?'} days, not ${days}`
          : `no enabled rule on ${filesPrefix} with tag filter ${TTL_CLASS_TAG_KEY}=${name}`,
        fix: lifecycleFix,
      });
    }
  }
  {
    const id = 'lifecycle:noncurrent';
    const title = 'NoncurrentVersionExpiration (old versions of deleted or overwritten files)';
    if (!rules) checks.push(unknownCheck(id, title, true, 'GetBucketLifecycleConfiguration', lifecycleFailure!));
    else {
      const rule = rules.find(
        (r) =>
          r.Status === 'Enabled' &&
          r.NoncurrentVersionExpiration?.NoncurrentDays !== undefined &&
          covers(filterOf(r).prefix, filesPrefix) &&
          Object.keys(filterOf(r).tags).length === 0,
      );
      checks.push(
        rule
          ? { id, title, status: 'ok', required: true, detail: `rule '${rule.ID ?? '(no id)'}': ${rule.NoncurrentVersionExpiration?.NoncurrentDays} days` }
          : {
              id,
              title,
              status: 'missing',
              required: true,
              detail: `no enabled rule on ${base || '(whole bucket)'} expires noncurrent versions: expired and erased files stay recoverable forever`,
              fix: lifecycleFix,
            },
      );
    }
  }

  {
    // An erased user's key record stays readable as a noncurrent version until a rule removes it:
    // the erasure window (docs/encryption.md) is this many days. Overlapping rules: the shortest wins.
    const id = 'lifecycle:noncurrent-keys';
    const title = `NoncurrentVersionExpiration of key records (${keysPrefix}) within ${KEY_RECORD_NONCURRENT_DAYS} day`;
    if (!rules) checks.push(unknownCheck(id, title, true, 'GetBucketLifecycleConfiguration', lifecycleFailure!));
    else {
      const covering = rules.filter(
        (r) =>
          r.Status === 'Enabled' &&
          r.NoncurrentVersionExpiration?.NoncurrentDays !== undefined &&
          covers(filterOf(r).prefix, keysPrefix) &&
          Object.keys(filterOf(r).tags).length === 0,
      );
      const shortest = covering.reduce<LifecycleRule | undefined>(
        (best, r) => (best === undefined || r.NoncurrentVersionExpiration!.NoncurrentDays! < best.NoncurrentVersionExpiration!.NoncurrentDays! ? r : best),
        undefined,
      );
      const days = shortest?.NoncurrentVersionExpiration?.NoncurrentDays;
      checks.push(
        days !== undefined && days <= KEY_RECORD_NONCURRENT_DAYS
          ? { id, title, status: 'ok', required: true, detail: `rule '${shortest!.ID ?? '(no id)'}': ${days} day${days === 1 ? '' : 's'}` }
          : {
              id,
              title,
              status: 'missing',
              required: true,
              detail:
                days === undefined
                  ? `no enabled rule expires noncurrent versions under ${keysPrefix}: an erased user's key record stays recoverable forever`
                  : `rule '${shortest!.ID ?? '(no id)'}' keeps old key records ${days} days, not ${KEY_RECORD_NONCURRENT_DAYS}: an erased user's key stays recoverable that long`,
              fix: lifecycleFix,
            },
      );
    }
  }

  // Default encryption at rest (memvault already encrypts content client-side: defence in depth).
  try {
    const out = await client.send(new GetBucketEncryptionCommand({ Bucket: bucket }));
    const algorithm = out.ServerSideEncryptionConfiguration?.Rules?.[0]?.ApplyServerSideEncryptionByDefault?.SSEAlgorithm;
    checks.push(
      algorithm
        ? { id: 'encryption', title: 'Default encryption at rest', status: 'ok', required: false, detail: algorithm }
        : {
            id: 'encryption',
            title: 'Default encryption at rest',
            status: 'warn',
            required: false,
            detail: 'no default encryption rule',
            fix: encryptionFix(bucket),
          },
    );
  } catch (error) {
    const f = failureOf(error);
    if (f.code === 'ServerSideEncryptionConfigurationNotFoundError') {
      checks.push({
        id: 'encryption',
        title: 'Default encryption at rest',
        status: 'warn',
        required: false,
        detail: 'no default encryption configured',
        fix: encryptionFix(bucket),
      });
    } else checks.push(unknownCheck('encryption', 'Default encryption at rest', false, 'GetBucketEncryption', f));
  }

  // Public access block.
  try {
    const out = await client.send(new GetPublicAccessBlockCommand({ Bucket: bucket }));
    const c = out.PublicAccessBlockConfiguration ?? {};
    const off = (['BlockPublicAcls', 'IgnorePublicAcls', 'BlockPublicPolicy', 'RestrictPublicBuckets'] as const).filter((k) => c[k] !== true);
    checks.push(
      off.length === 0
        ? { id: 'public-access-block', title: 'Block Public Access', status: 'ok', required: true, detail: 'all four settings on' }
        : { id: 'public-access-block', title: 'Block Public Access', status: 'missing', required: true, detail: `off: ${off.join(', ')}`, fix: pabFix(bucket) },
    );
  } catch (error) {
    const f = failureOf(error);
    if (f.code === 'NoSuchPublicAccessBlockConfiguration') {
      checks.push({
        id: 'public-access-block',
        title: 'Block Public Access',
        status: 'missing',
        required: true,
        detail: 'not configured',
        fix: pabFix(bucket),
      });
    } else checks.push(unknownCheck('public-access-block', 'Block Public Access', true, 'GetPublicAccessBlock', f));
  }

  if (!options.skipProbes) checks.push(...(await probes(client, bucket, base)));
  return checks;
}

function encryptionFix(bucket: string): string {
  return `CDK: s3.Bucket { encryption: s3.BucketEncryption.KMS } (MemvaultStorage: memoryBucketEncryption 'kms' or 's3')\naws s3api put-bucket-encryption --bucket ${bucket} --server-side-encryption-configuration '{"Rules":[{"ApplyServerSideEncryptionByDefault":{"SSEAlgorithm":"AES256"}}]}'`;
}

function pabFix(bucket: string): string {
  return `CDK: s3.Bucket { blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL } (MemvaultStorage sets it)\naws s3api put-public-access-block --bucket ${bucket} --public-access-block-configuration BlockPublicAcls=true,IgnorePublicAcls=true,BlockPublicPolicy=true,RestrictPublicBuckets=true`;
}

const STALE_ETAG = '0123456789abcdef0123456789abcdef';

async function probes(client: S3Client, bucket: string, base: string): Promise<DoctorCheck[]> {
  const checks: DoctorCheck[] = [];
  const key = `${base}k/_doctor-${randomBytes(8).toString('hex')}`;
  const body = Buffer.from('memvault doctor probe\n');
  const put = (extra: { IfNoneMatch?: string; IfMatch?: string; Tagging?: string } = {}) =>
    client.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: body, ContentLength: body.byteLength, ...extra }));
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
          ? { id: 'conditional-writes', title, status: 'unknown', required: true, detail: 'unknown (the probe key already existed)' }
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
        await client.send(new DeleteObjectsCommand({ Bucket: bucket, Delete: { Objects: [{ Key: key, ETag: `"${STALE_ETAG}"` }], Quiet: true } }));
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
          detail: "ignored by this server (a stale ETag deleted the object): keep the sweeper's default recheck mode (one HEAD per deletion)",
        });
      else checks.push({ id: 'conditional-deletes', title, status: 'unknown', required: false, detail: `unknown (DeleteObjects ${result.slice(7)})` });
    }

    // Touch: a copy in place must move LastModified (the idle clock) and should keep the TTL tag.
    const touchTitle = 'Touch on read (copy in place moves LastModified, keeps the TTL tag)';
    try {
      const title = touchTitle;
      await put({ Tagging: `${encodeURIComponent(TTL_CLASS_TAG_KEY)}=doctor` });
      const before = (await client.send(new HeadObjectCommand({ Bucket: bucket, Key: key }))).LastModified?.getTime() ?? 0;
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
        const after = (await client.send(new HeadObjectCommand({ Bucket: bucket, Key: key }))).LastModified?.getTime() ?? 0;
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
