/**
 * `memvault doctor`: checks a live S3 bucket against what memvault needs and says how to fix what is
 * missing (the CDK construct in infra/, or the aws CLI). Bucket-level reads use @aws-sdk/client-s3
 * directly; a server that does not implement one of them (Ceph RGW answers some with
 * NotImplemented) yields "unknown", never a crash. The probes write a few objects under
 * `<prefix>/k/_doctor-<random>` (the application role may write `k/`; the sweeper never looks there)
 * and delete them again.
 */
import {
  GetBucketEncryptionCommand,
  GetBucketLifecycleConfigurationCommand,
  GetBucketVersioningCommand,
  GetPublicAccessBlockCommand,
  type LifecycleRule,
  type S3Client,
} from '@aws-sdk/client-s3';
import { TTL_CLASS_TAG_KEY, type ResolvedTtl } from '../expiry/config.js';
import type { S3Failure } from '../store/s3/errors.js';
import type { DoctorCheck } from './checks.js';
import { failureOf, unknownCheck } from './s3-failures.js';
import { probes } from './s3-probes.js';

export interface DoctorOptions {
  client: S3Client;
  bucket: string;
  /** The store's key prefix ('' for none). */
  prefix: string;
  ttl: ResolvedTtl;
  /** Skip the probes that write objects (read-only credentials). */
  skipProbes?: boolean;
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
          ? {
              id,
              title,
              status: 'ok',
              required: true,
              detail: `rule '${rule.ID ?? '(no id)'}': ${rule.NoncurrentVersionExpiration?.NoncurrentDays} days`,
            }
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
        (best, r) =>
          best === undefined ||
          r.NoncurrentVersionExpiration!.NoncurrentDays! < best.NoncurrentVersionExpiration!.NoncurrentDays!
            ? r
            : best,
        undefined,
      );
      const days = shortest?.NoncurrentVersionExpiration?.NoncurrentDays;
      checks.push(
        days !== undefined && days <= KEY_RECORD_NONCURRENT_DAYS
          ? {
              id,
              title,
              status: 'ok',
              required: true,
              detail: `rule '${shortest!.ID ?? '(no id)'}': ${days} day${days === 1 ? '' : 's'}`,
            }
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
    const algorithm =
      out.ServerSideEncryptionConfiguration?.Rules?.[0]?.ApplyServerSideEncryptionByDefault?.SSEAlgorithm;
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
    const off = (['BlockPublicAcls', 'IgnorePublicAcls', 'BlockPublicPolicy', 'RestrictPublicBuckets'] as const).filter(
      (k) => c[k] !== true,
    );
    checks.push(
      off.length === 0
        ? {
            id: 'public-access-block',
            title: 'Block Public Access',
            status: 'ok',
            required: true,
            detail: 'all four settings on',
          }
        : {
            id: 'public-access-block',
            title: 'Block Public Access',
            status: 'missing',
            required: true,
            detail: `off: ${off.join(', ')}`,
            fix: pabFix(bucket),
          },
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
