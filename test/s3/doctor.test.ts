/**
 * `memvault doctor` against the real S3 server of this run, on a bucket of its own: versioning and
 * lifecycle rules are set through the SDK, then doctor must call those ok, report the rule that is
 * missing (with its fix), match its probes to what the server does, and leave no probe behind.
 */
import {
  DeleteObjectsCommand,
  GetObjectTaggingCommand,
  HeadObjectCommand,
  ListObjectVersionsCommand,
  PutBucketLifecycleConfigurationCommand,
  type LifecycleRule,
  PutBucketVersioningCommand,
  PutObjectCommand,
  CopyObjectCommand,
} from '@aws-sdk/client-s3';
import { Command } from 'commander';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerDoctor } from '../../src/cli/commands/doctor.js';
import { resolveTtl, TTL_CLASS_TAG_KEY } from '../../src/expiry/config.js';
import { doctorFailed, formatDoctor, runDoctor, type DoctorCheck } from '../../src/doctor/index.js';
import { listAll } from '../../src/store/port.js';
import type { S3Store } from '../../src/store/s3.js';
import { makeS3StoreInFreshBucket, recordS3SuiteRun, s3Connection, s3SkipReason } from './helpers.js';

recordS3SuiteRun(import.meta.url);

const connection = s3Connection();

describe.skipIf(!connection)(
  `memvault doctor on a real S3 server${connection ? '' : ` (skipped: ${s3SkipReason()})`}`,
  () => {
    let store: S3Store;
    let cleanup: () => Promise<void>;
    let bucket: string;
    const ttl = resolveTtl({ ttlDays: 30, classes: { pro: 365 } });
    const byId = (checks: DoctorCheck[]) => new Map(checks.map((c) => [c.id, c]));

    beforeAll(async () => {
      ({ store, cleanup } = await makeS3StoreInFreshBucket());
      bucket = (store as unknown as { bucket: string }).bucket;
    });
    afterAll(async () => {
      // A versioned bucket only empties once every version and delete marker is gone.
      const versions = await store.client.send(new ListObjectVersionsCommand({ Bucket: bucket }));
      const objects = [...(versions.Versions ?? []), ...(versions.DeleteMarkers ?? [])].map((v) => ({
        Key: v.Key!,
        VersionId: v.VersionId!,
      }));
      if (objects.length > 0)
        await store.client.send(new DeleteObjectsCommand({ Bucket: bucket, Delete: { Objects: objects } }));
      await cleanup();
    });

    /** Does this bucket refuse a second If-None-Match: * put? */
    async function refusesSecondCreate(): Promise<boolean> {
      const key = `direct/create-${Date.now()}`;
      await store.client.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: 'x', IfNoneMatch: '*' }));
      const refused = await store.client
        .send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: 'x', IfNoneMatch: '*' }))
        .then(
          () => false,
          (e: { $metadata?: { httpStatusCode?: number } }) => e.$metadata?.httpStatusCode === 412,
        );
      await store.client.send(new DeleteObjectsCommand({ Bucket: bucket, Delete: { Objects: [{ Key: key }] } }));
      return refused;
    }

    it('before any configuration: versioning and every lifecycle rule are missing, with fixes; exit status fails', async () => {
      const checks = byId(await runDoctor({ client: store.client, bucket, prefix: '', ttl }));
      // Unversioned, conditional writes are enforced (RGW 16 and every S3 memvault supports).
      expect(checks.get('conditional-writes')).toMatchObject({ status: 'ok' });
      expect(checks.get('versioning')).toMatchObject({ status: 'missing', required: true });
      expect(checks.get('versioning')!.fix).toContain(
        `aws s3api put-bucket-versioning --bucket ${bucket} --versioning-configuration Status=Enabled`,
      );
      expect(checks.get('lifecycle:default')).toMatchObject({ status: 'missing' });
      expect(checks.get('lifecycle:pro')).toMatchObject({ status: 'missing' });
      expect(checks.get('lifecycle:noncurrent')).toMatchObject({ status: 'missing' });
      expect(checks.get('lifecycle:noncurrent-keys')).toMatchObject({ status: 'missing', required: true });
      expect(checks.get('lifecycle:default')!.fix).toContain('put-bucket-lifecycle-configuration');
      // The printed fix sets the key-record rule with the day count docs/encryption.md states.
      expect(checks.get('lifecycle:noncurrent-keys')!.fix).toContain(
        '"ID":"memvault-key-records","Status":"Enabled","Filter":{"Prefix":"k/"},"NoncurrentVersionExpiration":{"NoncurrentDays":1}',
      );
      expect(doctorFailed([...checks.values()])).toBe(true);
    });

    it('after versioning and two rules set through the SDK: those are ok, the missing class and a wrong day count are reported', async () => {
      await store.client.send(
        new PutBucketVersioningCommand({ Bucket: bucket, VersioningConfiguration: { Status: 'Enabled' } }),
      );
      await store.client.send(
        new PutBucketLifecycleConfigurationCommand({
          Bucket: bucket,
          LifecycleConfiguration: {
            Rules: [
              {
                ID: 'memvault-housekeeping',
                Status: 'Enabled',
                Filter: { Prefix: '' },
                NoncurrentVersionExpiration: { NoncurrentDays: 7 },
              },
              {
                ID: 'memvault-ttl-default',
                Status: 'Enabled',
                Filter: { And: { Prefix: 'u/', Tags: [{ Key: TTL_CLASS_TAG_KEY, Value: 'default' }] } },
                Expiration: { Days: 30 },
              },
              {
                ID: 'memvault-ttl-pro',
                Status: 'Enabled',
                Filter: { And: { Prefix: 'u/', Tags: [{ Key: TTL_CLASS_TAG_KEY, Value: 'pro' }] } },
                Expiration: { Days: 90 },
              },
            ],
          },
        }),
      );
      const all = await runDoctor({ client: store.client, bucket, prefix: '', ttl });
      const checks = byId(all);
      expect(checks.get('versioning')).toMatchObject({ status: 'ok' });
      expect(checks.get('lifecycle:default')).toMatchObject({ status: 'ok' });
      expect(checks.get('lifecycle:noncurrent')).toMatchObject({ status: 'ok' });
      expect(checks.get('lifecycle:pro')).toMatchObject({ status: 'missing' });
      expect(checks.get('lifecycle:pro')!.detail).toContain('expires after 90 days, not 365');
      // The whole-bucket 7-day rule covers the key records, but keeps an erased user's key 7 days.
      expect(checks.get('lifecycle:noncurrent-keys')).toMatchObject({ status: 'missing' });
      expect(checks.get('lifecycle:noncurrent-keys')!.detail).toContain(
        "rule 'memvault-housekeeping' keeps old key records 7 days, not 1",
      );
      // Versioned: the probe must agree with the server (Ceph RGW 16 stops refusing a second create).
      const enforced = await refusesSecondCreate();
      expect(checks.get('conditional-writes')!.status).toBe(enforced ? 'ok' : 'missing');
      if (!enforced)
        expect(checks.get('conditional-writes')!.detail).toContain('a second If-None-Match: * put was not refused');
      // Server features doctor cannot change are reported, never thrown.
      for (const id of ['encryption', 'public-access-block'])
        expect(['ok', 'missing', 'warn', 'unknown']).toContain(checks.get(id)!.status);
      expect(doctorFailed(all)).toBe(true);

      // The probes' verdicts match what the server does when asked directly.
      const probe = 'direct/probe';
      await store.client.send(
        new PutObjectCommand({ Bucket: bucket, Key: probe, Body: 'x', Tagging: `${TTL_CLASS_TAG_KEY}=x` }),
      );
      await store.client.send(
        new DeleteObjectsCommand({
          Bucket: bucket,
          Delete: { Objects: [{ Key: probe, ETag: '"0123456789abcdef0123456789abcdef"' }] },
        }),
      );
      const survived = await store.client.send(new HeadObjectCommand({ Bucket: bucket, Key: probe })).then(
        () => true,
        () => false,
      );
      expect(checks.get('conditional-deletes')!.status).toBe(survived ? 'ok' : 'warn');
      await store.client.send(
        new PutObjectCommand({ Bucket: bucket, Key: probe, Body: 'x', Tagging: `${TTL_CLASS_TAG_KEY}=x` }),
      );
      await store.client.send(
        new CopyObjectCommand({
          Bucket: bucket,
          Key: probe,
          CopySource: `${bucket}/${probe}`,
          MetadataDirective: 'REPLACE',
          Metadata: {},
          TaggingDirective: 'COPY',
        }),
      );
      const tags = (await store.client.send(new GetObjectTaggingCommand({ Bucket: bucket, Key: probe }))).TagSet ?? [];
      expect(checks.get('touch')!.status).toBe(tags.length > 0 ? 'ok' : 'warn');
      await store.client.send(new DeleteObjectsCommand({ Bucket: bucket, Delete: { Objects: [{ Key: probe }] } }));

      // No probe object is left as a current version (the versioned bucket keeps delete markers).
      const current: string[] = [];
      for await (const o of listAll(store, '')) current.push(o.key);
      expect(current).toEqual([]);
      const versions = await store.client.send(new ListObjectVersionsCommand({ Bucket: bucket, Prefix: 'k/_doctor-' }));
      expect((versions.DeleteMarkers ?? []).length).toBeGreaterThan(0);
    });

    it('key records: the shortest covering untagged rule decides; a 1-day rule on k/ (or a prefix above it) is ok', async () => {
      const put = (rules: LifecycleRule[]) =>
        store.client.send(
          new PutBucketLifecycleConfigurationCommand({ Bucket: bucket, LifecycleConfiguration: { Rules: rules } }),
        );
      const housekeeping: LifecycleRule = {
        ID: 'memvault-housekeeping',
        Status: 'Enabled',
        Filter: { Prefix: '' },
        NoncurrentVersionExpiration: { NoncurrentDays: 7 },
      };
      const keysCheck = async () =>
        byId(await runDoctor({ client: store.client, bucket, prefix: '', ttl })).get('lifecycle:noncurrent-keys')!;
      await put([
        housekeeping,
        {
          ID: 'keys-tagged',
          Status: 'Enabled',
          Filter: { And: { Prefix: 'k/', Tags: [{ Key: 'x', Value: 'y' }] } },
          NoncurrentVersionExpiration: { NoncurrentDays: 1 },
        },
      ]);
      expect((await keysCheck()).status).toBe('missing'); // a tag filter does not cover untagged key records
      await put([
        housekeeping,
        {
          ID: 'keys-disabled',
          Status: 'Disabled',
          Filter: { Prefix: 'k/' },
          NoncurrentVersionExpiration: { NoncurrentDays: 1 },
        },
      ]);
      expect((await keysCheck()).status).toBe('missing');
      await put([
        housekeeping,
        {
          ID: 'files-only',
          Status: 'Enabled',
          Filter: { Prefix: 'u/' },
          NoncurrentVersionExpiration: { NoncurrentDays: 1 },
        },
      ]);
      expect((await keysCheck()).status).toBe('missing');
      await put([
        housekeeping,
        {
          ID: 'memvault-key-records',
          Status: 'Enabled',
          Filter: { Prefix: 'k/' },
          NoncurrentVersionExpiration: { NoncurrentDays: 1 },
        },
      ]);
      const ok = await keysCheck();
      expect(ok).toMatchObject({ status: 'ok' });
      expect(ok.detail).toContain("'memvault-key-records': 1 day");
      await put([{ ...housekeeping, NoncurrentVersionExpiration: { NoncurrentDays: 1 } }]);
      expect((await keysCheck()).status).toBe('ok');
    });

    it('credentials the server rejects: every required check could not be made, with the cause; doctor fails', async () => {
      const { S3Client } = await import('@aws-sdk/client-s3');
      const client = new S3Client({
        endpoint: connection!.endpoint,
        region: connection!.region,
        forcePathStyle: true,
        credentials: { accessKeyId: connection!.accessKeyId, secretAccessKey: 'wrong-secret' },
        maxAttempts: 1,
      });
      const checks = await runDoctor({ client, bucket, prefix: '', ttl });
      const required = checks.filter((c) => c.required);
      expect(required.length).toBeGreaterThan(3);
      for (const check of required) {
        expect(check.status, check.id).toBe('unknown');
        expect(check.detail, check.id).toMatch(
          /credentials were rejected \(SignatureDoesNotMatch|InvalidAccessKeyId\)|access denied to .*: the credentials lack s3:/,
        );
      }
      expect(doctorFailed(checks)).toBe(true);
      expect(formatDoctor(checks)).toMatch(/memvault doctor: FAILED: .*could not be made/);
      client.destroy();
    });

    it('the CLI prints MISSING with the fix and exits 1; --json gives one object', async () => {
      const env = {
        MEMVAULT_S3_ENDPOINT: connection!.endpoint,
        MEMVAULT_S3_REGION: connection!.region,
        MEMVAULT_S3_ACCESS_KEY_ID: connection!.accessKeyId,
        MEMVAULT_S3_SECRET_ACCESS_KEY: connection!.secretAccessKey,
        MEMVAULT_S3_FORCE_PATH_STYLE: '1',
        MEMVAULT_TTL_DAYS: '30',
        MEMVAULT_TTL_CLASSES: JSON.stringify({ pro: 365 }),
      };
      const run = async (args: string[]) => {
        let out = '';
        let code: number | undefined;
        const program = new Command().exitOverride();
        registerDoctor(program, {
          env,
          stdout: (s) => void (out += s),
          stderr: (s) => void (out += s),
          setExitCode: (c) => void (code = c),
        });
        await program.parseAsync(['node', 'memvault', 'doctor', '--store', `s3://${bucket}`, ...args]);
        return { out, code };
      };
      const human = await run(['--no-probes']);
      expect(human.code).toBe(1);
      expect(human.out).toMatch(/\[MISSING\] Lifecycle rule for TTL class 'pro' \(365 days\)/);
      expect(human.out).toMatch(/\[ok {5}\] Versioning: enabled/);
      expect(human.out).toContain('fix: aws s3api put-bucket-lifecycle-configuration');
      const json = await run(['--no-probes', '--json']);
      const parsed = JSON.parse(json.out) as { ok: boolean; checks: DoctorCheck[] };
      expect(parsed.ok).toBe(false);
      expect(parsed.checks.find((c) => c.id === 'lifecycle:pro')?.status).toBe('missing');
    });
  },
);
