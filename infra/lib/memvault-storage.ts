import { Duration, Stack } from 'aws-cdk-lib';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as ecs from 'aws-cdk-lib/aws-ecs';
import * as events from 'aws-cdk-lib/aws-events';
import * as targets from 'aws-cdk-lib/aws-events-targets';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as s3 from 'aws-cdk-lib/aws-s3';
import { Construct } from 'constructs';

/** The object tag memvault sets at write time; its value names the object's TTL class. */
export const TTL_CLASS_TAG_KEY = 'memvault-ttl-class';

/** Object Lock modes for the audit bucket. COMPLIANCE cannot be shortened or lifted by anyone, root included. */
export type AuditRetentionMode = 'GOVERNANCE' | 'COMPLIANCE';

/** How the memory bucket is encrypted at rest (memvault also encrypts content client-side). */
export type MemoryBucketEncryption = 'kms' | 's3-managed';

export interface MemvaultSweeperProps {
  /** Container image URI that has the `memvault` CLI on its PATH, e.g. `123456789012.dkr.ecr.eu-west-1.amazonaws.com/memvault:1.0`. */
  readonly imageUri: string;
  /** When the sweep runs. @default daily at 03:17 UTC */
  readonly schedule?: events.Schedule;
  /**
   * Full container command. @default `['memvault', 'expire', '--store', <storeUrl>, '--json']`
   * Override it when the image's ENTRYPOINT is already `memvault`.
   */
  readonly command?: string[];
  /** Fargate task size. @default 256 CPU units, 512 MiB */
  readonly cpu?: number;
  readonly memoryLimitMiB?: number;
  /** Network for the task. @default a new VPC with two public subnets and no NAT gateway (nothing to pay for while idle) */
  readonly vpc?: ec2.IVpc;
  /** @default public subnets when the VPC is created here, private subnets with egress otherwise */
  readonly subnets?: ec2.SubnetSelection;
  /** The task needs a route to S3 and the image registry. @default true when the VPC is created here, false otherwise */
  readonly assignPublicIp?: boolean;
  /** @default one month */
  readonly logRetention?: logs.RetentionDays;
}

export interface MemvaultStorageProps {
  /** Key prefix of memvault's objects in the memory bucket; '' or segments each ending in '/'. @default 'memvault/' */
  readonly memoryPrefix?: string;
  /** Key prefix of audit segments in the audit bucket. @default 'audit/' */
  readonly auditPrefix?: string;
  /**
   * TTL classes: class name -> idle days. Every memory file carries the tag `memvault-ttl-class` whose
   * value is one of these names; one lifecycle rule per class expires it that many days after its last
   * write or touch. @default { default: 30 }
   */
  readonly ttlClasses?: Readonly<Record<string, number>>;
  /** The class memvault tags a file with when no other class applies; must be a key of ttlClasses. @default 'default' */
  readonly defaultTtlClass?: string;
  /** Days a replaced or deleted version is kept before S3 removes it for good. @default 7 */
  readonly noncurrentVersionExpirationDays?: number;
  /** Days before an unfinished multipart upload is aborted. @default 1 */
  readonly abortIncompleteMultipartUploadDays?: number;
  /** Object Lock default retention of audit segments, in days. @default 365 */
  readonly auditRetentionDays?: number;
  /** @default 'GOVERNANCE' */
  readonly auditRetentionMode?: AuditRetentionMode;
  /** @default 'kms' (SSE-KMS with the construct's key and an S3 Bucket Key) */
  readonly memoryBucketEncryption?: MemoryBucketEncryption;
  /** An existing role the application runs as; the least-privilege policy is attached to it. @default a new role */
  readonly applicationRole?: iam.IRole;
  /** Who may assume the role created when applicationRole is not given. @default the account root (IAM policies in the account decide) */
  readonly applicationRolePrincipal?: iam.IPrincipal;
  /** The scheduled sweeper, or false to run `memvault expire` from cron instead. @default false */
  readonly sweeper?: MemvaultSweeperProps | false;
}

const DEFAULT_TTL_CLASSES: Readonly<Record<string, number>> = { default: 30 };
// S3 tag values allow letters, digits, spaces and + - = . _ : / @; spaces and '/' are left out so that a
// class name is also a valid lifecycle rule id suffix and never looks like a key path.
const TTL_CLASS_NAME = /^[A-Za-z0-9_.:+=@-]{1,64}$/;
const PREFIX_SHAPE = /^(?:[A-Za-z0-9!_.*'()-]+\/)*$/;
// A bucket holds at most 1,000 lifecycle rules; one is the housekeeping rule.
const MAX_TTL_CLASSES = 999;

/**
 * Everything memvault needs in an AWS account: the memory bucket with one lifecycle rule per TTL class,
 * the Object-Locked audit bucket, the KMS key that wraps per-user data keys, a least-privilege policy
 * for the application role, and optionally a scheduled Fargate task running `memvault expire`.
 */
export class MemvaultStorage extends Construct {
  readonly memoryBucket: s3.Bucket;
  readonly auditBucket: s3.Bucket;
  readonly key: kms.Key;
  readonly applicationRole: iam.IRole;
  readonly applicationPolicy: iam.ManagedPolicy;
  readonly memoryPrefix: string;
  readonly auditPrefix: string;
  readonly ttlClasses: Readonly<Record<string, number>>;
  readonly defaultTtlClass: string;
  /** `s3://bucket/prefix`, the value for memvault's `--store`. */
  readonly storeUrl: string;
  /** `s3://audit-bucket/audit-prefix`, where audit segments go. */
  readonly auditStoreUrl: string;
  readonly sweeperTaskDefinition?: ecs.FargateTaskDefinition;
  readonly sweeperRule?: events.Rule;
  readonly sweeperRole?: iam.Role;

  constructor(scope: Construct, id: string, props: MemvaultStorageProps = {}) {
    super(scope, id);

    this.memoryPrefix = checkPrefix('memoryPrefix', props.memoryPrefix ?? 'memvault/');
    this.auditPrefix = checkPrefix('auditPrefix', props.auditPrefix ?? 'audit/');
    this.ttlClasses = checkTtlClasses(props.ttlClasses ?? DEFAULT_TTL_CLASSES);
    this.defaultTtlClass = props.defaultTtlClass ?? 'default';
    if (!Object.hasOwn(this.ttlClasses, this.defaultTtlClass)) {
      throw new Error(
        `defaultTtlClass '${this.defaultTtlClass}' is not one of ttlClasses (${Object.keys(this.ttlClasses).join(', ')})`,
      );
    }
    const noncurrentDays = checkDays('noncurrentVersionExpirationDays', props.noncurrentVersionExpirationDays ?? 7);
    const abortDays = checkDays('abortIncompleteMultipartUploadDays', props.abortIncompleteMultipartUploadDays ?? 1);
    const auditDays = checkDays('auditRetentionDays', props.auditRetentionDays ?? 365);

    this.key = new kms.Key(this, 'Key', {
      description: 'memvault: wraps per-user data keys (GenerateDataKey/Decrypt with an encryption context)',
      enableKeyRotation: true,
    });

    const filesPrefix = `${this.memoryPrefix}u/`;
    const keysPrefix = `${this.memoryPrefix}k/`;
    const useKms = (props.memoryBucketEncryption ?? 'kms') === 'kms';

    this.memoryBucket = new s3.Bucket(this, 'MemoryBucket', {
      blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
      enforceSSL: true,
      minimumTLSVersion: 1.2,
      ...(useKms
        ? { encryption: s3.BucketEncryption.KMS, encryptionKey: this.key, bucketKeyEnabled: true }
        : { encryption: s3.BucketEncryption.S3_MANAGED }),
      versioned: true,
      objectOwnership: s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
      lifecycleRules: [
        // Tag filters cannot be combined with AbortIncompleteMultipartUpload or ExpiredObjectDeleteMarker,
        // so housekeeping for the whole prefix lives in its own rule.
        {
          id: 'memvault-housekeeping',
          prefix: this.memoryPrefix,
          noncurrentVersionExpiration: Duration.days(noncurrentDays),
          abortIncompleteMultipartUploadAfter: Duration.days(abortDays),
          expiredObjectDeleteMarker: true,
        },
        // Lifecycle age counts from the last write; memvault's touch-on-read (copy in place) restarts it,
        // so "N days since creation" becomes "N idle days". The default class is one of these rules:
        // memvault tags a file with it when nothing more specific applies.
        ...Object.entries(this.ttlClasses).map(([name, days]) => ({
          id: `memvault-ttl-${name}`,
          prefix: filesPrefix,
          tagFilters: { [TTL_CLASS_TAG_KEY]: name },
          expiration: Duration.days(days),
        })),
      ],
    });

    this.auditBucket = new s3.Bucket(this, 'AuditBucket', {
      blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
      enforceSSL: true,
      minimumTLSVersion: 1.2,
      // Audit records hold no content or key material; SSE-S3 keeps writers (the sweeper) free of KMS grants.
      encryption: s3.BucketEncryption.S3_MANAGED,
      versioned: true,
      objectOwnership: s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
      objectLockEnabled: true,
      objectLockDefaultRetention:
        (props.auditRetentionMode ?? 'GOVERNANCE') === 'COMPLIANCE'
          ? s3.ObjectLockRetention.compliance(Duration.days(auditDays))
          : s3.ObjectLockRetention.governance(Duration.days(auditDays)),
    });

    this.storeUrl = `s3://${this.memoryBucket.bucketName}/${this.memoryPrefix.replace(/\/$/, '')}`;
    this.auditStoreUrl = `s3://${this.auditBucket.bucketName}/${this.auditPrefix.replace(/\/$/, '')}`;

    this.applicationRole =
      props.applicationRole ??
      new iam.Role(this, 'ApplicationRole', {
        assumedBy: props.applicationRolePrincipal ?? new iam.AccountRootPrincipal(),
        description: 'memvault application: its prefixes and its KMS key, nothing else',
      });

    this.applicationPolicy = new iam.ManagedPolicy(this, 'ApplicationPolicy', {
      description: 'memvault application: least privilege on the memory and audit prefixes and the key',
      roles: [this.applicationRole],
      statements: applicationStatements({
        memoryBucket: this.memoryBucket,
        auditBucket: this.auditBucket,
        key: this.key,
        filesPrefix,
        keysPrefix,
        auditPrefix: this.auditPrefix,
      }),
    });

    if (props.sweeper) {
      const sweeper = this.createSweeper(props.sweeper, filesPrefix);
      this.sweeperTaskDefinition = sweeper.taskDefinition;
      this.sweeperRule = sweeper.rule;
      this.sweeperRole = sweeper.role;
    }
  }

  private createSweeper(
    options: MemvaultSweeperProps,
    filesPrefix: string,
  ): { taskDefinition: ecs.FargateTaskDefinition; rule: events.Rule; role: iam.Role } {
    if (options.imageUri.trim() === '') throw new Error('sweeper.imageUri must not be empty');

    const role = new iam.Role(this, 'SweeperRole', {
      assumedBy: new iam.ServicePrincipal('ecs-tasks.amazonaws.com'),
      description: 'memvault sweeper: list, inspect and delete memory files; write audit records',
    });
    new iam.ManagedPolicy(this, 'SweeperPolicy', {
      description: 'memvault sweeper: least privilege for memvault expire',
      roles: [role],
      statements: sweeperStatements({
        memoryBucket: this.memoryBucket,
        auditBucket: this.auditBucket,
        filesPrefix,
        auditPrefix: this.auditPrefix,
      }),
    });

    const createdVpc = options.vpc === undefined;
    const vpc =
      options.vpc ??
      new ec2.Vpc(this, 'SweeperVpc', {
        maxAzs: 2,
        natGateways: 0,
        subnetConfiguration: [{ name: 'public', subnetType: ec2.SubnetType.PUBLIC, cidrMask: 24 }],
      });
    const cluster = new ecs.Cluster(this, 'SweeperCluster', { vpc });

    const taskDefinition = new ecs.FargateTaskDefinition(this, 'SweeperTask', {
      cpu: options.cpu ?? 256,
      memoryLimitMiB: options.memoryLimitMiB ?? 512,
      taskRole: role,
    });
    grantEcrPull(taskDefinition, options.imageUri);
    const logGroup = new logs.LogGroup(this, 'SweeperLogs', {
      retention: options.logRetention ?? logs.RetentionDays.ONE_MONTH,
    });
    taskDefinition.addContainer('memvault', {
      image: ecs.ContainerImage.fromRegistry(options.imageUri),
      command: options.command ?? ['memvault', 'expire', '--store', this.storeUrl, '--json'],
      environment: {
        AWS_REGION: Stack.of(this).region,
        MEMVAULT_TTL_DAYS: String(this.ttlClasses[this.defaultTtlClass]),
        MEMVAULT_TTL_CLASSES: JSON.stringify(this.ttlClasses),
        MEMVAULT_AUDIT_STORE: this.auditStoreUrl,
      },
      logging: ecs.LogDriver.awsLogs({ logGroup, streamPrefix: 'sweeper' }),
    });

    const rule = new events.Rule(this, 'SweeperSchedule', {
      description: 'memvault: run memvault expire',
      schedule: options.schedule ?? events.Schedule.cron({ minute: '17', hour: '3' }),
    });
    rule.addTarget(
      new targets.EcsTask({
        cluster,
        taskDefinition,
        taskCount: 1,
        platformVersion: ecs.FargatePlatformVersion.LATEST,
        subnetSelection:
          options.subnets ?? { subnetType: createdVpc ? ec2.SubnetType.PUBLIC : ec2.SubnetType.PRIVATE_WITH_EGRESS },
        assignPublicIp: options.assignPublicIp ?? createdVpc,
        retryAttempts: 2,
      }),
    );
    return { taskDefinition, rule, role };
  }
}

interface ApplicationScope {
  readonly memoryBucket: s3.IBucket;
  readonly auditBucket: s3.IBucket;
  readonly key: kms.IKey;
  readonly filesPrefix: string;
  readonly keysPrefix: string;
  readonly auditPrefix: string;
}

/**
 * The application's permissions, statement by statement. No action wildcards: CDK's grant helpers
 * (grantReadWrite and friends) add `s3:GetObject*`, `s3:List*`, `s3:Abort*` and more, so they are not used.
 */
function applicationStatements(scope: ApplicationScope): iam.PolicyStatement[] {
  const { memoryBucket, auditBucket, key, filesPrefix, keysPrefix, auditPrefix } = scope;
  return [
    new iam.PolicyStatement({
      sid: 'MemoryFiles',
      // GetObject/PutObject also cover CopyObject (the touch on read) and conditional writes;
      // the tagging actions set the TTL class at write time and keep it on copy.
      actions: ['s3:GetObject', 's3:PutObject', 's3:DeleteObject', 's3:GetObjectTagging', 's3:PutObjectTagging'],
      resources: [memoryBucket.arnForObjects(`${filesPrefix}*`)],
    }),
    new iam.PolicyStatement({
      sid: 'WrappedDataKeys',
      actions: ['s3:GetObject', 's3:PutObject', 's3:DeleteObject'],
      resources: [memoryBucket.arnForObjects(`${keysPrefix}*`)],
    }),
    new iam.PolicyStatement({
      sid: 'ListMemoryPrefixes',
      actions: ['s3:ListBucket'],
      resources: [memoryBucket.bucketArn],
      conditions: { StringLike: { 's3:prefix': [`${filesPrefix}*`, `${keysPrefix}*`] } },
    }),
    ...auditStatements(auditBucket, auditPrefix),
    new iam.PolicyStatement({
      sid: 'WrapDataKeys',
      // Encrypt is for re-wrapping on rotation. Every call must carry an encryption context: memvault's
      // carries the uid, and SSE-KMS requests made by S3 on the role's behalf carry the bucket ARN.
      actions: ['kms:GenerateDataKey', 'kms:Decrypt', 'kms:Encrypt'],
      resources: [key.keyArn],
      conditions: { Null: { 'kms:EncryptionContextKeys': 'false' } },
    }),
  ];
}

/** Both roles append sealed audit segments; neither may delete them (Object Lock guards them too). */
function auditStatements(auditBucket: s3.IBucket, auditPrefix: string): iam.PolicyStatement[] {
  return [
    new iam.PolicyStatement({
      sid: 'AuditSegments',
      actions: ['s3:GetObject', 's3:PutObject', 's3:PutObjectRetention'],
      resources: [auditBucket.arnForObjects(`${auditPrefix}*`)],
    }),
    new iam.PolicyStatement({
      sid: 'ListAuditPrefix',
      actions: ['s3:ListBucket'],
      resources: [auditBucket.bucketArn],
      conditions: { StringLike: { 's3:prefix': [`${auditPrefix}*`] } },
    }),
  ];
}

interface SweeperScope {
  readonly memoryBucket: s3.IBucket;
  readonly auditBucket: s3.IBucket;
  readonly filesPrefix: string;
  readonly auditPrefix: string;
}

function sweeperStatements(scope: SweeperScope): iam.PolicyStatement[] {
  const { memoryBucket, auditBucket, filesPrefix, auditPrefix } = scope;
  return [
    new iam.PolicyStatement({
      sid: 'ListMemoryFiles',
      actions: ['s3:ListBucket'],
      resources: [memoryBucket.bucketArn],
      conditions: { StringLike: { 's3:prefix': [`${filesPrefix}*`] } },
    }),
    new iam.PolicyStatement({
      sid: 'ExpireMemoryFiles',
      // GetObject covers HeadObject (re-checking a candidate's age just before deleting it);
      // GetObjectTagging reads its TTL class. No KMS: the sweeper never opens content.
      actions: ['s3:GetObject', 's3:GetObjectTagging', 's3:DeleteObject'],
      resources: [memoryBucket.arnForObjects(`${filesPrefix}*`)],
    }),
    ...auditStatements(auditBucket, auditPrefix),
  ];
}

// account.dkr.ecr.region.amazonaws.com[.cn]/repository[:tag|@digest]
const ECR_IMAGE_URI = /^(\d{12})\.dkr\.ecr\.([a-z0-9-]+)\.amazonaws\.com(\.cn)?\/([a-z0-9._/-]+?)(?:[:@].*)?$/;

/**
 * fromRegistry keeps the image URI verbatim but grants no pull rights; a private ECR image needs them on
 * the execution role, scoped to that one repository (GetAuthorizationToken has no resource-level form).
 */
function grantEcrPull(taskDefinition: ecs.FargateTaskDefinition, imageUri: string): void {
  const match = ECR_IMAGE_URI.exec(imageUri);
  if (!match) return;
  const [, account, region, china, repository] = match;
  const partition = china ? 'aws-cn' : 'aws';
  const executionRole = taskDefinition.obtainExecutionRole();
  executionRole.addToPrincipalPolicy(
    new iam.PolicyStatement({
      actions: ['ecr:BatchCheckLayerAvailability', 'ecr:GetDownloadUrlForLayer', 'ecr:BatchGetImage'],
      resources: [`arn:${partition}:ecr:${region}:${account}:repository/${repository}`],
    }),
  );
  executionRole.addToPrincipalPolicy(
    new iam.PolicyStatement({ actions: ['ecr:GetAuthorizationToken'], resources: ['*'] }),
  );
}

function checkPrefix(name: string, prefix: string): string {
  if (!PREFIX_SHAPE.test(prefix)) {
    throw new Error(`${name} must be '' or path segments each ending in '/', e.g. 'memvault/' (got '${prefix}')`);
  }
  return prefix;
}

function checkDays(name: string, days: number): number {
  if (!Number.isInteger(days) || days < 1) throw new Error(`${name} must be a whole number of days >= 1 (got ${days})`);
  return days;
}

function checkTtlClasses(classes: Readonly<Record<string, number>>): Readonly<Record<string, number>> {
  const entries = Object.entries(classes);
  if (entries.length === 0) throw new Error('ttlClasses must name at least one class');
  if (entries.length > MAX_TTL_CLASSES) {
    throw new Error(`ttlClasses has ${entries.length} classes; a bucket holds at most ${MAX_TTL_CLASSES} of them`);
  }
  for (const [name, days] of entries) {
    if (!TTL_CLASS_NAME.test(name)) {
      throw new Error(`TTL class name '${name}' must be 1-64 characters of A-Z a-z 0-9 _ . : + = @ -`);
    }
    checkDays(`ttlClasses.${name}`, days);
  }
  return Object.freeze({ ...classes });
}
