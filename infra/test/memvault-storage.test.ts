import { App, Duration, Stack } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as events from 'aws-cdk-lib/aws-events';
import * as iam from 'aws-cdk-lib/aws-iam';
import { beforeAll, describe, expect, it } from 'vitest';
import { GetBucketLifecycleConfigurationCommand, S3Client, type LifecycleRule } from '@aws-sdk/client-s3';
import { mockClient } from 'aws-sdk-client-mock';
import { resolveTtl } from '../../src/expiry/config.js';
import { KEY_RECORD_NONCURRENT_DAYS as DOCTOR_KEY_RECORD_NONCURRENT_DAYS, runDoctor } from '../../src/doctor/index.js';
import {
  KEY_RECORD_NONCURRENT_DAYS,
  MemvaultStorage,
  TTL_CLASS_TAG_KEY,
  type MemvaultStorageProps,
} from '../lib/index.js';

const IMAGE = '123456789012.dkr.ecr.eu-west-1.amazonaws.com/memvault:1.0.0';

interface Synthesized {
  readonly template: Template;
  readonly storage: MemvaultStorage;
  readonly stack: Stack;
}

function synth(props: MemvaultStorageProps | ((stack: Stack) => MemvaultStorageProps)): Synthesized {
  const app = new App({ stackTraces: false });
  const stack = new Stack(app, 'TestStack');
  const storage = new MemvaultStorage(stack, 'Storage', typeof props === 'function' ? props(stack) : props);
  return { template: Template.fromStack(stack), storage, stack };
}

type Json = Record<string, unknown>;

function resourcesOf(template: Template, type: string): [string, Json][] {
  return Object.entries(template.findResources(type)) as [string, Json][];
}

function logicalIdOf(stack: Stack, construct: { node: { defaultChild?: unknown } }): string {
  const child = construct.node.defaultChild;
  if (!(child && typeof child === 'object' && 'logicalId' in child)) throw new Error('no CFN resource');
  return stack.resolve((child as { logicalId: unknown }).logicalId) as string;
}

interface PolicyStatementJson {
  Sid?: string;
  Effect: string;
  Action: string | string[];
  Resource: unknown;
  Condition?: Record<string, Record<string, unknown>>;
}

function managedPolicyStatements(template: Template, descriptionStart: string): PolicyStatementJson[] {
  const matches = resourcesOf(template, 'AWS::IAM::ManagedPolicy').filter(([, r]) =>
    String((r.Properties as Json).Description).startsWith(descriptionStart),
  );
  expect(matches).toHaveLength(1);
  const props = matches[0]![1].Properties as { PolicyDocument: { Statement: PolicyStatementJson[] } };
  return props.PolicyDocument.Statement;
}

const actionsOf = (s: PolicyStatementJson): string[] => (Array.isArray(s.Action) ? s.Action : [s.Action]);

/** The object ARN suffix a statement's resource joins onto a bucket ARN, e.g. '/memvault/u/*'. */
function objectSuffixes(statement: PolicyStatementJson): string[] {
  const resources = Array.isArray(statement.Resource) ? statement.Resource : [statement.Resource];
  return resources.map((r) => {
    const join = (r as { 'Fn::Join'?: [string, unknown[]] })['Fn::Join'];
    if (!join) return '<bucket>';
    return join[1].filter((part): part is string => typeof part === 'string').join('');
  });
}

function bucketRefOf(statement: PolicyStatementJson): string {
  const resources = Array.isArray(statement.Resource) ? statement.Resource : [statement.Resource];
  const text = JSON.stringify(resources);
  const match = /"Fn::GetAtt":\["([^"]+)","Arn"\]/.exec(text);
  if (!match?.[1]) throw new Error(`no GetAtt in ${text}`);
  return match[1];
}

describe('MemvaultStorage with TTL classes and a Fargate sweeper in a given VPC', () => {
  let synthesized: Synthesized;
  let template: Template;
  let memoryBucketId: string;
  let auditBucketId: string;
  let keyId: string;

  beforeAll(() => {
    synthesized = synth((stack) => ({
      ttlClasses: { default: 30, free: 7, pro: 365 },
      defaultTtlClass: 'default',
      noncurrentVersionExpirationDays: 3,
      abortIncompleteMultipartUploadDays: 2,
      auditRetentionDays: 400,
      auditRetentionMode: 'COMPLIANCE',
      sweeper: {
        kind: 'fargate',
        imageUri: IMAGE,
        vpc: new ec2.Vpc(stack, 'AppVpc', { maxAzs: 2, natGateways: 1 }),
        schedule: events.Schedule.cron({ minute: '5', hour: '4' }),
      },
    }));
    template = synthesized.template;
    memoryBucketId = logicalIdOf(synthesized.stack, synthesized.storage.memoryBucket);
    auditBucketId = logicalIdOf(synthesized.stack, synthesized.storage.auditBucket);
    keyId = logicalIdOf(synthesized.stack, synthesized.storage.key);
  });

  const bucketProps = (id: string): Json => template.toJSON().Resources[id].Properties as Json;

  it('blocks all public access on both buckets', () => {
    const block = {
      BlockPublicAcls: true,
      BlockPublicPolicy: true,
      IgnorePublicAcls: true,
      RestrictPublicBuckets: true,
    };
    expect(bucketProps(memoryBucketId).PublicAccessBlockConfiguration).toEqual(block);
    expect(bucketProps(auditBucketId).PublicAccessBlockConfiguration).toEqual(block);
  });

  it('denies every request without TLS on both buckets', () => {
    for (const bucketId of [memoryBucketId, auditBucketId]) {
      template.hasResourceProperties('AWS::S3::BucketPolicy', {
        Bucket: { Ref: bucketId },
        PolicyDocument: {
          Statement: Match.arrayWith([
            Match.objectLike({
              Effect: 'Deny',
              Principal: { AWS: '*' },
              Action: 's3:*',
              Condition: { Bool: { 'aws:SecureTransport': 'false' } },
              Resource: Match.arrayWith([{ 'Fn::GetAtt': [bucketId, 'Arn'] }]),
            }),
          ]),
        },
      });
    }
  });

  it('denies TLS versions below 1.2 on both buckets', () => {
    for (const bucketId of [memoryBucketId, auditBucketId]) {
      template.hasResourceProperties('AWS::S3::BucketPolicy', {
        Bucket: { Ref: bucketId },
        PolicyDocument: {
          Statement: Match.arrayWith([
            Match.objectLike({
              Effect: 'Deny',
              Action: 's3:*',
              Condition: { NumericLessThan: { 's3:TlsVersion': 1.2 } },
            }),
          ]),
        },
      });
    }
  });

  it('encrypts the memory bucket with the construct key (SSE-KMS, bucket key) and the audit bucket with SSE-S3', () => {
    expect(bucketProps(memoryBucketId).BucketEncryption).toEqual({
      ServerSideEncryptionConfiguration: [
        {
          BucketKeyEnabled: true,
          ServerSideEncryptionByDefault: { SSEAlgorithm: 'aws:kms', KMSMasterKeyID: { 'Fn::GetAtt': [keyId, 'Arn'] } },
        },
      ],
    });
    expect(bucketProps(auditBucketId).BucketEncryption).toEqual({
      ServerSideEncryptionConfiguration: [{ ServerSideEncryptionByDefault: { SSEAlgorithm: 'AES256' } }],
    });
  });

  it('versions both buckets', () => {
    expect(bucketProps(memoryBucketId).VersioningConfiguration).toEqual({ Status: 'Enabled' });
    expect(bucketProps(auditBucketId).VersioningConfiguration).toEqual({ Status: 'Enabled' });
  });

  const lifecycleRules = (): Json[] => (bucketProps(memoryBucketId).LifecycleConfiguration as { Rules: Json[] }).Rules;

  it('expires noncurrent versions and stale delete markers under the memory prefix', () => {
    const housekeeping = lifecycleRules().find((r) => r.Id === 'memvault-housekeeping');
    expect(housekeeping).toMatchObject({
      Status: 'Enabled',
      Prefix: 'memvault/',
      NoncurrentVersionExpiration: { NoncurrentDays: 3 },
      ExpiredObjectDeleteMarker: true,
    });
  });

  it('keeps old key records one day (the erasure window docs/encryption.md states, which doctor requires), whatever the files keep', () => {
    const keys = lifecycleRules().find((r) => r.Id === 'memvault-key-records');
    expect(keys).toEqual({
      Id: 'memvault-key-records',
      Status: 'Enabled',
      Prefix: 'memvault/k/',
      NoncurrentVersionExpiration: { NoncurrentDays: KEY_RECORD_NONCURRENT_DAYS },
    });
    expect(KEY_RECORD_NONCURRENT_DAYS).toBe(DOCTOR_KEY_RECORD_NONCURRENT_DAYS);
    expect(KEY_RECORD_NONCURRENT_DAYS).toBe(1);
  });

  it('memvault doctor finds its lifecycle checks satisfied by the rules the construct synthesizes', async () => {
    // The synthesized CloudFormation rules in the S3 API's shape, served by a stand-in S3 client.
    const rules: LifecycleRule[] = lifecycleRules().map((r) => {
      const tags = (r.TagFilters as { Key: string; Value: string }[] | undefined) ?? [];
      return {
        ID: r.Id as string,
        Status: r.Status as 'Enabled',
        Filter: tags.length > 0 ? { And: { Prefix: r.Prefix as string, Tags: tags } } : { Prefix: r.Prefix as string },
        ...(r.NoncurrentVersionExpiration
          ? { NoncurrentVersionExpiration: r.NoncurrentVersionExpiration as { NoncurrentDays: number } }
          : {}),
        ...(r.ExpirationInDays !== undefined ? { Expiration: { Days: r.ExpirationInDays as number } } : {}),
      };
    });
    const s3 = mockClient(S3Client);
    s3.onAnyCommand().rejects(
      Object.assign(new Error('not served by this stand-in'), {
        name: 'NotImplemented',
        $metadata: { httpStatusCode: 501 },
      }),
    );
    s3.on(GetBucketLifecycleConfigurationCommand).resolves({ Rules: rules });
    try {
      const checks = await runDoctor({
        client: new S3Client({ region: 'us-east-1' }),
        bucket: 'b',
        prefix: 'memvault',
        ttl: resolveTtl({ ttlDays: 30, classes: { free: 7, pro: 365 }, defaultClass: 'default' }),
      });
      const byId = new Map(checks.map((c) => [c.id, c]));
      expect(byId.get('lifecycle:noncurrent-keys')).toMatchObject({ status: 'ok' });
      expect(byId.get('lifecycle:noncurrent-keys')!.detail).toContain("'memvault-key-records': 1 day");
      expect(byId.get('lifecycle:noncurrent')).toMatchObject({ status: 'ok' });
    } finally {
      s3.restore();
    }
  });

  it('aborts incomplete multipart uploads after the configured days', () => {
    const withAbort = lifecycleRules().filter((r) => r.AbortIncompleteMultipartUpload !== undefined);
    expect(withAbort).toHaveLength(1);
    expect(withAbort[0]).toMatchObject({
      Prefix: 'memvault/',
      AbortIncompleteMultipartUpload: { DaysAfterInitiation: 2 },
    });
  });

  it('has exactly one lifecycle rule per TTL class, filtered by its tag under the files prefix', () => {
    const ttlRules = lifecycleRules().filter(
      (r) => (r.TagFilters as { Key: string }[] | undefined)?.[0]?.Key === TTL_CLASS_TAG_KEY,
    );
    const byClass = Object.fromEntries(
      ttlRules.map((r) => {
        const filters = r.TagFilters as { Key: string; Value: string }[];
        expect(filters).toHaveLength(1);
        expect(filters[0]!.Key).toBe(TTL_CLASS_TAG_KEY);
        expect(r.Prefix).toBe('memvault/u/');
        expect(r.Status).toBe('Enabled');
        return [filters[0]!.Value, r.ExpirationInDays];
      }),
    );
    expect(ttlRules).toHaveLength(3);
    expect(byClass).toEqual({ default: 30, free: 7, pro: 365 });
    expect(TTL_CLASS_TAG_KEY).toBe('memvault-ttl-class');
  });

  it('has one lifecycle rule for the kept file versions (the history tag, under the files prefix), 30 days by default', () => {
    const history = lifecycleRules().filter((r) => r.Id === 'memvault-history');
    expect(history).toHaveLength(1);
    expect(history[0]).toMatchObject({
      Prefix: 'memvault/u/',
      Status: 'Enabled',
      ExpirationInDays: 30,
      TagFilters: [{ Key: 'memvault-history', Value: 'version' }],
    });
    // Exactly the TTL rules and this one carry tag filters.
    expect(lifecycleRules().filter((r) => r.TagFilters !== undefined)).toHaveLength(4);
  });

  it('a kept version (under u/, tagged memvault-history=version and nothing else) is expired by the history rule alone, never by a TTL class rule', () => {
    // A version key of the default layout; the object carries exactly the history tag (src/vault/store-user-files.ts, src/crypto/rekey.ts).
    const key = 'memvault/u/0123abcd/v/bmFtZQ/@9007199254740990';
    const tags: Record<string, string> = { 'memvault-history': 'version' };
    const expiring = lifecycleRules().filter((r) => {
      const filters = (r.TagFilters ?? []) as Array<{ Key: string; Value: string }>;
      const matches = key.startsWith(String(r.Prefix ?? '')) && filters.every((f) => tags[f.Key] === f.Value);
      return matches && r.ExpirationInDays !== undefined;
    });
    expect(expiring.map((r) => [r.Id, r.ExpirationInDays])).toEqual([['memvault-history', 30]]);
    // And a current file (TTL class tag only) is never expired by the history rule.
    const fileTags: Record<string, string> = { [TTL_CLASS_TAG_KEY]: 'default' };
    const fileRules = lifecycleRules().filter((r) => {
      const filters = (r.TagFilters ?? []) as Array<{ Key: string; Value: string }>;
      return (
        'memvault/u/0123abcd/f/bmFtZQ'.startsWith(String(r.Prefix ?? '')) &&
        filters.every((f) => fileTags[f.Key] === f.Value) &&
        r.ExpirationInDays !== undefined
      );
    });
    expect(fileRules.map((r) => r.Id)).toEqual(['memvault-ttl-default']);
  });

  it("the history rule follows historyRetentionDays (the vault's history.retentionDays)", () => {
    const { template } = synth({ historyRetentionDays: 90 });
    const [, bucket] = resourcesOf(template, 'AWS::S3::Bucket').find(([, r]) =>
      JSON.stringify(r).includes('memvault-history'),
    )!;
    const rules = ((bucket.Properties as Json).LifecycleConfiguration as { Rules: Json[] }).Rules;
    expect(rules.filter((r) => r.Id === 'memvault-history').map((r) => r.ExpirationInDays)).toEqual([90]);
  });

  it('turns Object Lock on for the audit bucket with the configured default retention', () => {
    expect(bucketProps(auditBucketId).ObjectLockEnabled).toBe(true);
    expect(bucketProps(auditBucketId).ObjectLockConfiguration).toEqual({
      ObjectLockEnabled: 'Enabled',
      Rule: { DefaultRetention: { Mode: 'COMPLIANCE', Days: 400 } },
    });
    expect(bucketProps(memoryBucketId).ObjectLockEnabled).toBeUndefined();
  });

  it('creates one KMS key, with rotation enabled', () => {
    template.resourceCountIs('AWS::KMS::Key', 1);
    template.resourceCountIs('AWS::EC2::VPC', 1); // the app's own: none is created for the sweeper
    template.hasResourceProperties('AWS::KMS::Key', { EnableKeyRotation: true });
  });

  describe('application policy', () => {
    let statements: PolicyStatementJson[];
    beforeAll(() => {
      statements = managedPolicyStatements(template, 'memvault application');
    });
    const bySid = (sid: string): PolicyStatementJson => {
      const found = statements.find((s) => s.Sid === sid);
      if (!found) throw new Error(`no statement ${sid}`);
      return found;
    };

    it('allows exactly the actions memvault uses, no more', () => {
      const all = new Set(statements.flatMap(actionsOf));
      expect([...all].sort()).toEqual(
        [
          'kms:Decrypt',
          'kms:Encrypt',
          'kms:GenerateDataKey',
          's3:DeleteObject',
          's3:GetObject',
          's3:GetObjectTagging',
          's3:ListBucket',
          's3:PutObject',
          's3:PutObjectRetention',
          's3:PutObjectTagging',
        ].sort(),
      );
      expect(statements.every((s) => s.Effect === 'Allow')).toBe(true);
    });

    it('has no wildcard in any action', () => {
      for (const action of statements.flatMap(actionsOf)) {
        expect(action).not.toContain('*');
      }
      expect(statements.flatMap(actionsOf)).not.toContain('s3:*');
    });

    it('scopes object actions to the memory files, data keys and audit prefixes', () => {
      expect(actionsOf(bySid('MemoryFiles')).sort()).toEqual(
        ['s3:DeleteObject', 's3:GetObject', 's3:GetObjectTagging', 's3:PutObject', 's3:PutObjectTagging'].sort(),
      );
      expect(objectSuffixes(bySid('MemoryFiles'))).toEqual(['/memvault/u/*']);
      expect(bucketRefOf(bySid('MemoryFiles'))).toBe(memoryBucketId);

      expect(actionsOf(bySid('WrappedDataKeys')).sort()).toEqual(['s3:DeleteObject', 's3:GetObject', 's3:PutObject']);
      expect(objectSuffixes(bySid('WrappedDataKeys'))).toEqual(['/memvault/k/*']);
      expect(bucketRefOf(bySid('WrappedDataKeys'))).toBe(memoryBucketId);

      // PutObjectRetention only on audit objects, and audit objects can never be deleted by the app.
      expect(actionsOf(bySid('AuditSegments')).sort()).toEqual([
        's3:GetObject',
        's3:PutObject',
        's3:PutObjectRetention',
      ]);
      expect(objectSuffixes(bySid('AuditSegments'))).toEqual(['/audit/*']);
      expect(bucketRefOf(bySid('AuditSegments'))).toBe(auditBucketId);
      const retentionStatements = statements.filter((s) => actionsOf(s).includes('s3:PutObjectRetention'));
      expect(retentionStatements.map((s) => s.Sid)).toEqual(['AuditSegments']);
    });

    it('allows ListBucket only with an s3:prefix condition on memvault prefixes', () => {
      const listing = statements.filter((s) => actionsOf(s).includes('s3:ListBucket'));
      expect(listing.map((s) => s.Sid).sort()).toEqual(['ListAuditPrefix', 'ListMemoryPrefixes']);
      for (const s of listing) expect(actionsOf(s)).toEqual(['s3:ListBucket']);
      expect(bySid('ListMemoryPrefixes').Resource).toEqual({ 'Fn::GetAtt': [memoryBucketId, 'Arn'] });
      expect(bySid('ListMemoryPrefixes').Condition).toEqual({
        StringLike: { 's3:prefix': ['memvault/u/*', 'memvault/k/*'] },
      });
      expect(bySid('ListAuditPrefix').Resource).toEqual({ 'Fn::GetAtt': [auditBucketId, 'Arn'] });
      expect(bySid('ListAuditPrefix').Condition).toEqual({ StringLike: { 's3:prefix': ['audit/*'] } });
    });

    it('allows KMS only on the construct key and only with an encryption context', () => {
      const kmsStatements = statements.filter((s) => actionsOf(s).some((a) => a.startsWith('kms:')));
      expect(kmsStatements).toHaveLength(1);
      expect(actionsOf(kmsStatements[0]!).sort()).toEqual(['kms:Decrypt', 'kms:Encrypt', 'kms:GenerateDataKey']);
      expect(kmsStatements[0]!.Resource).toEqual({ 'Fn::GetAtt': [keyId, 'Arn'] });
      expect(kmsStatements[0]!.Condition).toEqual({ Null: { 'kms:EncryptionContextKeys': 'false' } });
    });

    it('never names a resource "*"', () => {
      expect(JSON.stringify(statements.map((s) => s.Resource))).not.toMatch(/"\*"/);
    });

    it('is attached to the application role', () => {
      const roleId = logicalIdOf(synthesized.stack, synthesized.storage.applicationRole as iam.Role);
      template.hasResourceProperties('AWS::IAM::ManagedPolicy', {
        Description: Match.stringLikeRegexp('^memvault application'),
        Roles: [{ Ref: roleId }],
      });
    });
  });

  describe('scheduled sweeper', () => {
    it('runs on the configured cron schedule with the Fargate task as its target', () => {
      const rules = resourcesOf(template, 'AWS::Events::Rule');
      expect(rules).toHaveLength(1);
      const props = rules[0]![1].Properties as { ScheduleExpression: string; State: string; Targets: Json[] };
      expect(props.ScheduleExpression).toBe('cron(5 4 * * ? *)');
      expect(props.State).toBe('ENABLED');
      expect(props.Targets).toHaveLength(1);
      const taskId = logicalIdOf(synthesized.stack, synthesized.storage.sweeperTaskDefinition!);
      expect(props.Targets[0]).toMatchObject({
        EcsParameters: {
          LaunchType: 'FARGATE',
          TaskCount: 1,
          TaskDefinitionArn: { Ref: taskId },
          // Private subnets with egress of the given VPC, no public IP.
          NetworkConfiguration: { AwsVpcConfiguration: { AssignPublicIp: 'DISABLED' } },
        },
      });
    });

    it('runs memvault expire against the store with the given image', () => {
      template.hasResourceProperties('AWS::ECS::TaskDefinition', {
        RequiresCompatibilities: ['FARGATE'],
        ContainerDefinitions: [
          Match.objectLike({
            Image: IMAGE,
            Command: [
              'memvault',
              'expire',
              '--store',
              { 'Fn::Join': ['', ['s3://', { Ref: memoryBucketId }, '/memvault']] },
              '--json',
            ],
            Environment: Match.arrayWith([
              { Name: 'MEMVAULT_TTL_DAYS', Value: '30' },
              { Name: 'MEMVAULT_TTL_CLASSES', Value: JSON.stringify({ default: 30, free: 7, pro: 365 }) },
              { Name: 'MEMVAULT_TTL_DEFAULT_CLASS', Value: 'default' },
              { Name: 'MEMVAULT_CONDITIONAL_DELETE', Value: 'native' },
            ]),
          }),
        ],
      });
    });

    it('has the same operations as the Lambda sweeper: log retention, a dead-letter queue for the schedule, alarms from the summary lines', () => {
      template.hasResourceProperties('AWS::Logs::LogGroup', { RetentionInDays: 30 });
      const dlqId = logicalIdOf(synthesized.stack, synthesized.storage.sweeperDeadLetterQueue!);
      const rule = resourcesOf(template, 'AWS::Events::Rule')[0]![1].Properties as { Targets: Json[] };
      expect(rule.Targets[0]).toMatchObject({
        DeadLetterConfig: { Arn: { 'Fn::GetAtt': [dlqId, 'Arn'] } },
        RetryPolicy: { MaximumRetryAttempts: 2 },
      });
      const filters = resourcesOf(template, 'AWS::Logs::MetricFilter')
        .map(([, r]) => (r.Properties as Json).FilterPattern)
        .sort();
      expect(filters).toEqual(['{ $.errors > 0 }', '{ $.scanned >= 0 }']);
      const alarms = resourcesOf(template, 'AWS::CloudWatch::Alarm')
        .map(([, r]) => (r.Properties as Json).MetricName)
        .sort();
      expect(alarms).toEqual(['ApproximateNumberOfMessagesVisible', 'SweepErrors', 'SweepRuns']);
      template.resourceCountIs('AWS::Lambda::Function', 0);
    });

    it('lets the execution role pull only the given ECR repository', () => {
      const pull = resourcesOf(template, 'AWS::IAM::Policy')
        .map(
          ([, r]) =>
            (r.Properties as { PolicyDocument: { Statement: PolicyStatementJson[] } }).PolicyDocument.Statement,
        )
        .flat()
        .filter((s) => actionsOf(s).some((a) => a.startsWith('ecr:')));
      expect(pull.map((s) => [actionsOf(s).sort(), s.Resource])).toEqual([
        [
          ['ecr:BatchCheckLayerAvailability', 'ecr:BatchGetImage', 'ecr:GetDownloadUrlForLayer'],
          'arn:aws:ecr:eu-west-1:123456789012:repository/memvault',
        ],
        [['ecr:GetAuthorizationToken'], '*'],
      ]);
    });

    it('gives the sweeper its own least-privilege role: list, get, delete files; read and write audit records', () => {
      const statements = managedPolicyStatements(template, 'memvault sweeper');
      for (const action of statements.flatMap(actionsOf)) expect(action).not.toContain('*');
      const summary = statements.map((s) => ({
        actions: actionsOf(s).sort(),
        bucket: bucketRefOf(s),
        objects: objectSuffixes(s),
        condition: s.Condition,
      }));
      expect(summary).toEqual([
        {
          actions: ['s3:ListBucket'],
          bucket: memoryBucketId,
          objects: ['<bucket>'],
          condition: { StringLike: { 's3:prefix': ['memvault/u/*'] } },
        },
        {
          actions: ['s3:DeleteObject', 's3:GetObject', 's3:GetObjectTagging'],
          bucket: memoryBucketId,
          objects: ['/memvault/u/*'],
          condition: undefined,
        },
        {
          actions: ['s3:GetObject', 's3:PutObject'],
          bucket: memoryBucketId,
          objects: ['/memvault/s/*'],
          condition: undefined,
        },
        {
          actions: ['s3:GetObject', 's3:PutObject', 's3:PutObjectRetention'],
          bucket: auditBucketId,
          objects: ['/audit/*'],
          condition: undefined,
        },
        {
          actions: ['s3:ListBucket'],
          bucket: auditBucketId,
          objects: ['<bucket>'],
          condition: { StringLike: { 's3:prefix': ['audit/*'] } },
        },
      ]);
      const sweeperRoleId = logicalIdOf(synthesized.stack, synthesized.storage.sweeperRole!);
      template.hasResourceProperties('AWS::IAM::Role', {
        AssumeRolePolicyDocument: {
          Statement: [Match.objectLike({ Principal: { Service: 'ecs-tasks.amazonaws.com' } })],
        },
      });
      template.hasResourceProperties('AWS::ECS::TaskDefinition', {
        TaskRoleArn: { 'Fn::GetAtt': [sweeperRoleId, 'Arn'] },
      });
    });
  });
});

describe('MemvaultStorage with defaults and sweeper: false', () => {
  let template: Template;
  beforeAll(() => {
    template = synth({ sweeper: false }).template;
  });

  it('creates no schedule, task, cluster or VPC', () => {
    template.resourceCountIs('AWS::Events::Rule', 0);
    template.resourceCountIs('AWS::ECS::TaskDefinition', 0);
    template.resourceCountIs('AWS::ECS::Cluster', 0);
    template.resourceCountIs('AWS::EC2::VPC', 0);
  });

  it('uses the default prefix, one default TTL class of 30 days, GOVERNANCE audit retention of 365 days', () => {
    const bucket = resourcesOf(template, 'AWS::S3::Bucket').map(([, r]) => r.Properties as Json);
    const memory = bucket.find((p) => p.LifecycleConfiguration !== undefined)!;
    const audit = bucket.find((p) => p.ObjectLockConfiguration !== undefined)!;
    expect((memory.LifecycleConfiguration as { Rules: Json[] }).Rules).toEqual([
      {
        Id: 'memvault-housekeeping',
        Status: 'Enabled',
        Prefix: 'memvault/',
        NoncurrentVersionExpiration: { NoncurrentDays: 7 },
        AbortIncompleteMultipartUpload: { DaysAfterInitiation: 1 },
        ExpiredObjectDeleteMarker: true,
      },
      {
        Id: 'memvault-key-records',
        Status: 'Enabled',
        Prefix: 'memvault/k/',
        NoncurrentVersionExpiration: { NoncurrentDays: 1 },
      },
      {
        Id: 'memvault-history',
        Status: 'Enabled',
        Prefix: 'memvault/u/',
        TagFilters: [{ Key: 'memvault-history', Value: 'version' }],
        ExpirationInDays: 30,
      },
      {
        Id: 'memvault-ttl-default',
        Status: 'Enabled',
        Prefix: 'memvault/u/',
        TagFilters: [{ Key: 'memvault-ttl-class', Value: 'default' }],
        ExpirationInDays: 30,
      },
    ]);
    expect(audit.ObjectLockConfiguration).toEqual({
      ObjectLockEnabled: 'Enabled',
      Rule: { DefaultRetention: { Mode: 'GOVERNANCE', Days: 365 } },
    });
  });
});

describe('MemvaultStorage options', () => {
  it('attaches the policy to an existing role instead of creating one', () => {
    const app = new App({ stackTraces: false });
    const stack = new Stack(app, 'ExistingRole');
    const role = iam.Role.fromRoleArn(stack, 'Existing', 'arn:aws:iam::123456789012:role/my-app');
    new MemvaultStorage(stack, 'Storage', { applicationRole: role, memoryPrefix: 'tenants/acme/' });
    const template = Template.fromStack(stack);
    // Only the sweeper's and doctor's own roles: no application role is created.
    const roles = resourcesOf(template, 'AWS::IAM::Role').map(([, r]) => String((r.Properties as Json).Description));
    expect(roles.sort()).toEqual([
      expect.stringMatching(/^memvault doctor/),
      expect.stringMatching(/^memvault sweeper/),
    ]);
    template.hasResourceProperties('AWS::IAM::ManagedPolicy', { Roles: ['my-app'] });
    const statements = managedPolicyStatements(template, 'memvault application');
    const suffixesBySid = Object.fromEntries(statements.map((s) => [s.Sid, objectSuffixes(s)]));
    expect(suffixesBySid.MemoryFiles).toEqual(['/tenants/acme/u/*']);
    expect(suffixesBySid.WrappedDataKeys).toEqual(['/tenants/acme/k/*']);
    expect(statements.find((s) => s.Sid === 'ListMemoryPrefixes')!.Condition).toEqual({
      StringLike: { 's3:prefix': ['tenants/acme/u/*', 'tenants/acme/k/*'] },
    });
  });

  it('uses S3-managed encryption on the memory bucket when asked', () => {
    const { template } = synth({ memoryBucketEncryption: 's3-managed' });
    template.hasResourceProperties('AWS::S3::Bucket', {
      LifecycleConfiguration: Match.anyValue(),
      BucketEncryption: {
        ServerSideEncryptionConfiguration: [{ ServerSideEncryptionByDefault: { SSEAlgorithm: 'AES256' } }],
      },
    });
  });

  it.each([
    [{ ttlClasses: { free: 7 } }, /defaultTtlClass 'default' is not one of ttlClasses \(free\)/],
    [{ ttlClasses: {} }, /at least one class/],
    [{ ttlClasses: { default: 0 } }, /ttlClasses.default must be a whole number of days/],
    [{ ttlClasses: { default: 30, 'has space': 1 } }, /TTL class name 'has space'/],
    [{ memoryPrefix: 'no-trailing-slash' }, /memoryPrefix must be/],
    [{ memoryPrefix: '/leading/' }, /memoryPrefix must be/],
    [{ auditRetentionDays: 1.5 }, /auditRetentionDays must be a whole number/],
    [{ historyRetentionDays: 0 }, /historyRetentionDays must be a whole number/],
    [{ historyRetentionDays: 2.5 }, /historyRetentionDays must be a whole number/],
    [
      { sweeper: { kind: 'fargate', imageUri: ' ', vpc: undefined as unknown as ec2.IVpc } },
      /sweeper.imageUri must not be empty/,
    ],
    [
      { sweeper: { kind: 'fargate', imageUri: IMAGE, vpc: undefined as unknown as ec2.IVpc } },
      /sweeper.vpc is required/,
    ],
    [{ keyAlias: 'memvault' }, /keyAlias must be 'alias\//],
    [{ keyAlias: 'alias/aws/s3' }, /keyAlias must be/],
    [{ sweeper: { timeout: Duration.minutes(20) } }, /sweeper.timeout must be between/],
    [{ sweeper: { missedRunPeriod: Duration.hours(6) } }, /missedRunPeriod must be a whole number of days/],
  ] satisfies [MemvaultStorageProps, RegExp][])('rejects %j', (props, message) => {
    const stack = new Stack(new App(), 'Bad');
    expect(() => new MemvaultStorage(stack, 'Storage', props)).toThrow(message);
  });
});
