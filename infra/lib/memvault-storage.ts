import { existsSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { AssetHashType, DockerImage, Duration, Names, Stack } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as cwActions from 'aws-cdk-lib/aws-cloudwatch-actions';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as ecs from 'aws-cdk-lib/aws-ecs';
import * as events from 'aws-cdk-lib/aws-events';
import * as targets from 'aws-cdk-lib/aws-events-targets';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as s3 from 'aws-cdk-lib/aws-s3';
import type * as sns from 'aws-cdk-lib/aws-sns';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';

/** The object tag memvault sets at write time; its value names the object's TTL class. */
export const TTL_CLASS_TAG_KEY = 'memvault-ttl-class';
/**
 * Days S3 keeps a replaced or deleted key record (`k/`) as a noncurrent version: an erased user's
 * wrapped key is recoverable that long (docs/encryption.md, "Erasure window"). Not configurable, and
 * shorter than `noncurrentVersionExpirationDays` (S3 honours the shorter of overlapping expirations);
 * `memvault doctor` requires the same (src/expiry/doctor.ts KEY_RECORD_NONCURRENT_DAYS).
 */
export const KEY_RECORD_NONCURRENT_DAYS = 1;
/** The object tag of every kept file version (docs/versions.md); src/store/layout.ts HISTORY_TAG_KEY/VALUE. */
export const HISTORY_TAG_KEY = 'memvault-history';
export const HISTORY_TAG_VALUE = 'version';

/** Object Lock modes for the audit bucket. COMPLIANCE cannot be shortened or lifted by anyone, root included. */
export type AuditRetentionMode = 'GOVERNANCE' | 'COMPLIANCE';

/** How the memory bucket is encrypted at rest (memvault also encrypts content client-side). */
export type MemoryBucketEncryption = 'kms' | 's3-managed';

/**
 * Who may use the KMS key.
 * - 'application-only': the key policy lets only the application role wrap and unwrap data keys
 *   (always with an encryption context); the account root may administer the key but not use it,
 *   so no IAM policy in the account, however broad, reaches the data keys.
 * - 'account': CDK's default policy (`kms:*` to the account root): IAM policies decide who uses it.
 */
export type KeyPolicyMode = 'application-only' | 'account';

interface MemvaultSweeperCommonProps {
  /** When a new sweep pass starts. @default daily at 03:17 UTC */
  readonly schedule?: events.Schedule;
  /** @default one month */
  readonly logRetention?: logs.RetentionDays;
  /** Where the sweeper's alarms notify. @default no action (the alarms still show in CloudWatch) */
  readonly alarmTopic?: sns.ITopic;
  /**
   * The "sweep did not run" alarm fires when no sweep summary was logged for this long (a whole
   * number of days, at most 7). @default one day (the default schedule is daily)
   */
  readonly missedRunPeriod?: Duration;
  /**
   * How deletes are kept from removing a file written after its listing: 'native' (AWS S3 checks
   * the listed ETag in DeleteObjects) or 'recheck' (HEAD each candidate first; S3-compatible servers).
   * @default 'native'
   */
  readonly conditionalDelete?: 'native' | 'recheck';
  /** Minutes after a file's TTL ran out before the sweeper deletes it. @default 60 */
  readonly graceMinutes?: number;
}

/** The default sweeper: a Lambda function bundled from this package at synth time (esbuild, no Docker). */
export interface MemvaultLambdaSweeperProps extends MemvaultSweeperCommonProps {
  readonly kind?: 'lambda';
  /**
   * How often an unfinished pass is continued (a run that neared its timeout left a checkpoint);
   * a tick with nothing to continue costs one GET. false: only `schedule` runs it. @default every 30 minutes
   */
  readonly continueSchedule?: events.Schedule | false;
  /** @default 15 minutes (Lambda's maximum) */
  readonly timeout?: Duration;
  /** @default 512 MiB */
  readonly memorySize?: number;
  /** @default Node.js 22 */
  readonly runtime?: lambda.Runtime;
  /** @default ARM64 */
  readonly architecture?: lambda.Architecture;
}

/** A scheduled Fargate task running `memvault expire` from your own image, in a VPC you give. */
export interface MemvaultFargateSweeperProps extends MemvaultSweeperCommonProps {
  readonly kind: 'fargate';
  /** Container image URI that has the `memvault` CLI on its PATH, e.g. `123456789012.dkr.ecr.eu-west-1.amazonaws.com/memvault:1.0`. */
  readonly imageUri: string;
  /** The VPC the task runs in (no VPC is created for it); it needs a route to S3 and the image registry. */
  readonly vpc: ec2.IVpc;
  /** @default private subnets with egress */
  readonly subnets?: ec2.SubnetSelection;
  /** @default false */
  readonly assignPublicIp?: boolean;
  /**
   * Full container command. @default `['memvault', 'expire', '--store', <storeUrl>, '--json']`
   * Override it when the image's ENTRYPOINT is already `memvault`.
   */
  readonly command?: string[];
  /** Fargate task size. @default 256 CPU units, 512 MiB */
  readonly cpu?: number;
  readonly memoryLimitMiB?: number;
}

export type MemvaultSweeperProps = MemvaultLambdaSweeperProps | MemvaultFargateSweeperProps;

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
  /**
   * Days a replaced or deleted version is kept before S3 removes it for good. @default 7
   * Key records (`k/`) have their own rule of KEY_RECORD_NONCURRENT_DAYS (1), so erasure is not held up.
   */
  readonly noncurrentVersionExpirationDays?: number;
  /**
   * Days S3 keeps a file version of memvault's history (docs/versions.md) before its lifecycle rule
   * deletes it: a backstop of the sweeper's retention, which also keeps the newest version of a
   * live file and at most N per file (a lifecycle rule can only bound age). Match the vault's
   * `history.retentionDays`. @default 30
   */
  readonly historyRetentionDays?: number;
  /** Days before an unfinished multipart upload is aborted. @default 1 */
  readonly abortIncompleteMultipartUploadDays?: number;
  /** Object Lock default retention of audit segments, in days. @default 365 */
  readonly auditRetentionDays?: number;
  /** @default 'GOVERNANCE' */
  readonly auditRetentionMode?: AuditRetentionMode;
  /** @default 'kms' (SSE-KMS with the construct's key and an S3 Bucket Key) */
  readonly memoryBucketEncryption?: MemoryBucketEncryption;
  /** @default 'application-only' (see KeyPolicyMode and docs/infra.md for the trade-off) */
  readonly keyPolicy?: KeyPolicyMode;
  /** The key's alias; aliases are unique per account and region. @default 'alias/memvault' */
  readonly keyAlias?: string;
  /** An existing role the application runs as; the least-privilege policy is attached to it. @default a new role */
  readonly applicationRole?: iam.IRole;
  /** Who may assume the role created when applicationRole is not given. @default the account root (IAM policies in the account decide) */
  readonly applicationRolePrincipal?: iam.IPrincipal;
  /** Who may assume the read-only role for `memvault doctor --no-probes`. @default the account root */
  readonly doctorRolePrincipal?: iam.IPrincipal;
  /** The scheduled sweeper (a Lambda function unless kind is 'fargate'), or false to run `memvault expire` from cron. @default {} (Lambda) */
  readonly sweeper?: MemvaultSweeperProps | false;
}

const DEFAULT_TTL_CLASSES: Readonly<Record<string, number>> = { default: 30 };
// S3 tag values allow letters, digits, spaces and + - = . _ : / @; spaces and '/' are left out so that a
// class name is also a valid lifecycle rule id suffix and never looks like a key path.
const TTL_CLASS_NAME = /^[A-Za-z0-9_.:+=@-]{1,64}$/;
const PREFIX_SHAPE = /^(?:[A-Za-z0-9!_.*'()-]+\/)*$/;
// A bucket holds at most 1,000 lifecycle rules; one is the housekeeping rule.
const MAX_TTL_CLASSES = 999;
/** Where the Lambda sweeper keeps its checkpoint (src/expiry/checkpoint.ts: `s/sweep-state.json`). */
const SWEEP_STATE_SEGMENT = 's/';

/**
 * Key administration without key use. No kms:Create* (CreateGrant would let an administrator grant
 * itself Decrypt) and no Encrypt/Decrypt/GenerateDataKey/ReEncrypt.
 */
const KEY_ADMIN_ACTIONS = [
  'kms:CancelKeyDeletion',
  'kms:CreateAlias',
  'kms:DeleteAlias',
  'kms:DescribeKey',
  'kms:DisableKey',
  'kms:DisableKeyRotation',
  'kms:EnableKey',
  'kms:EnableKeyRotation',
  'kms:GetKeyPolicy',
  'kms:GetKeyRotationStatus',
  'kms:ListAliases',
  'kms:ListGrants',
  'kms:ListKeyPolicies',
  'kms:ListKeyRotations',
  'kms:ListResourceTags',
  'kms:PutKeyPolicy',
  'kms:RetireGrant',
  'kms:RevokeGrant',
  'kms:RotateKeyOnDemand',
  'kms:ScheduleKeyDeletion',
  'kms:TagResource',
  'kms:UntagResource',
  'kms:UpdateAlias',
  'kms:UpdateKeyDescription',
];

/** Encrypt re-wraps on rotation; every call must carry an encryption context (memvault's carries the uid). */
const KEY_USE_ACTIONS = ['kms:GenerateDataKey', 'kms:Decrypt', 'kms:Encrypt'];
const ENCRYPTION_CONTEXT_REQUIRED = { Null: { 'kms:EncryptionContextKeys': 'false' } };

/** What `memvault doctor` reads of the bucket configuration (src/expiry/doctor.ts, without probes). */
const DOCTOR_READ_ACTIONS = [
  's3:GetBucketVersioning',
  's3:GetLifecycleConfiguration',
  's3:GetEncryptionConfiguration',
  's3:GetBucketPublicAccessBlock',
];

/**
 * Everything memvault needs in an AWS account: the memory bucket with one lifecycle rule per TTL class,
 * the Object-Locked audit bucket, the KMS key (with an alias) that wraps per-user data keys, a
 * least-privilege policy for the application role, a read-only role for `memvault doctor`, and the
 * scheduled sweeper (a Lambda function by default) with its alarms and dead-letter queue.
 */
export class MemvaultStorage extends Construct {
  readonly memoryBucket: s3.Bucket;
  readonly auditBucket: s3.Bucket;
  readonly key: kms.Key;
  readonly keyAlias: kms.Alias;
  readonly keyPolicy: KeyPolicyMode;
  readonly applicationRole: iam.IRole;
  readonly applicationPolicy: iam.ManagedPolicy;
  /** Read-only bucket-configuration reads for `memvault doctor`; attach it to more principals if needed. */
  readonly doctorPolicy: iam.ManagedPolicy;
  /** A role with doctorPolicy only: run `memvault doctor --no-probes` as it. */
  readonly doctorRole: iam.Role;
  readonly memoryPrefix: string;
  readonly auditPrefix: string;
  readonly ttlClasses: Readonly<Record<string, number>>;
  readonly defaultTtlClass: string;
  /** `s3://bucket/prefix`, the value for memvault's `--store`. */
  readonly storeUrl: string;
  /** `s3://audit-bucket/audit-prefix`, where audit segments go. */
  readonly auditStoreUrl: string;
  readonly sweeperFunction?: lambda.Function;
  readonly sweeperTaskDefinition?: ecs.FargateTaskDefinition;
  /** The schedule that starts a pass. */
  readonly sweeperRule?: events.Rule;
  /** The schedule that continues an unfinished pass (Lambda sweeper). */
  readonly sweeperContinueRule?: events.Rule;
  readonly sweeperRole?: iam.Role;
  readonly sweeperLogGroup?: logs.LogGroup;
  /** Failed invocations (after retries) and events EventBridge could not deliver. */
  readonly sweeperDeadLetterQueue?: sqs.Queue;
  readonly sweeperErrorsAlarm?: cloudwatch.Alarm;
  readonly sweeperNotRunAlarm?: cloudwatch.Alarm;
  readonly sweeperDeadLetterAlarm?: cloudwatch.Alarm;

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
    const historyDays = checkDays('historyRetentionDays', props.historyRetentionDays ?? 30);
    this.keyPolicy = props.keyPolicy ?? 'application-only';
    if (this.keyPolicy !== 'application-only' && this.keyPolicy !== 'account') {
      throw new Error(`keyPolicy must be 'application-only' or 'account' (got '${String(this.keyPolicy)}')`);
    }

    this.key = new kms.Key(this, 'Key', {
      description: 'memvault: wraps per-user data keys (GenerateDataKey/Decrypt with an encryption context)',
      enableKeyRotation: true,
      // An explicit (for now empty) document keeps CDK from adding `kms:*` for the account root;
      // the statements follow once the roles exist.
      ...(this.keyPolicy === 'application-only' ? { policy: new iam.PolicyDocument() } : {}),
    });
    this.keyAlias = this.key.addAlias(checkAlias(props.keyAlias ?? 'alias/memvault'));

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
        // Key records: an erased user's old key record goes after one day, whatever the files' rule says.
        {
          id: 'memvault-key-records',
          prefix: keysPrefix,
          noncurrentVersionExpiration: Duration.days(KEY_RECORD_NONCURRENT_DAYS),
        },
        // Lifecycle age counts from the last write; memvault's touch-on-read (copy in place) restarts it,
        // so "N days since creation" becomes "N idle days". The default class is one of these rules:
        // memvault tags a file with it when nothing more specific applies.
        // File history: every kept version carries the history tag (never a TTL class tag).
        {
          id: 'memvault-history',
          prefix: filesPrefix,
          tagFilters: { [HISTORY_TAG_KEY]: HISTORY_TAG_VALUE },
          expiration: Duration.days(historyDays),
        },
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

    if (this.keyPolicy === 'application-only') {
      this.key.addToResourcePolicy(
        new iam.PolicyStatement({
          sid: 'AccountAdministersTheKey',
          principals: [new iam.AccountRootPrincipal()],
          actions: KEY_ADMIN_ACTIONS,
          resources: ['*'],
        }),
      );
      this.key.addToResourcePolicy(
        new iam.PolicyStatement({
          sid: 'OnlyTheApplicationUsesTheKey',
          principals: [this.applicationRole],
          actions: KEY_USE_ACTIONS,
          resources: ['*'],
          conditions: ENCRYPTION_CONTEXT_REQUIRED,
        }),
      );
    }

    this.doctorRole = new iam.Role(this, 'DoctorRole', {
      assumedBy: props.doctorRolePrincipal ?? new iam.AccountRootPrincipal(),
      description: 'memvault doctor: read the memory bucket configuration, nothing else',
    });
    this.doctorPolicy = new iam.ManagedPolicy(this, 'DoctorPolicy', {
      description: 'memvault doctor: read-only checks of the memory bucket configuration',
      roles: [this.doctorRole],
      statements: [
        new iam.PolicyStatement({
          sid: 'ReadBucketConfiguration',
          actions: DOCTOR_READ_ACTIONS,
          resources: [this.memoryBucket.bucketArn],
        }),
      ],
    });

    const sweeper = props.sweeper ?? {};
    if (sweeper !== false) {
      missedRunDays(sweeper); // fail before bundling
      const scope = { filesPrefix, statePrefix: `${this.memoryPrefix}${SWEEP_STATE_SEGMENT}` };
      const created =
        sweeper.kind === 'fargate'
          ? this.createFargateSweeper(sweeper, scope)
          : this.createLambdaSweeper(sweeper, scope);
      this.sweeperRole = created.role;
      this.sweeperRule = created.rule;
      this.sweeperLogGroup = created.logGroup;
      this.sweeperDeadLetterQueue = created.deadLetterQueue;
      this.sweeperFunction = created.fn;
      this.sweeperContinueRule = created.continueRule;
      this.sweeperTaskDefinition = created.taskDefinition;
      const alarms = this.createSweeperAlarms(sweeper, created);
      this.sweeperErrorsAlarm = alarms.errors;
      this.sweeperNotRunAlarm = alarms.notRun;
      this.sweeperDeadLetterAlarm = alarms.deadLetter;
    }
  }

  /** What both sweepers are told: the same variables `memvault expire` reads. */
  private sweeperEnvironment(options: MemvaultSweeperCommonProps): Record<string, string> {
    const graceMinutes = options.graceMinutes ?? 60;
    if (!Number.isFinite(graceMinutes) || graceMinutes < 0)
      throw new Error(`sweeper.graceMinutes must be >= 0 (got ${graceMinutes})`);
    const conditionalDelete = options.conditionalDelete ?? 'native';
    if (conditionalDelete !== 'native' && conditionalDelete !== 'recheck')
      throw new Error("sweeper.conditionalDelete must be 'native' or 'recheck'");
    return {
      MEMVAULT_STORE: this.storeUrl,
      MEMVAULT_TTL_DAYS: String(this.ttlClasses[this.defaultTtlClass]),
      MEMVAULT_TTL_CLASSES: JSON.stringify(this.ttlClasses),
      MEMVAULT_TTL_DEFAULT_CLASS: this.defaultTtlClass,
      MEMVAULT_AUDIT_STORE: this.auditStoreUrl,
      MEMVAULT_CONDITIONAL_DELETE: conditionalDelete,
      MEMVAULT_EXPIRE_GRACE_MINUTES: String(graceMinutes),
    };
  }

  private sweeperBase(
    assumedBy: iam.IPrincipal,
    scope: SweeperPrefixes,
    retention: logs.RetentionDays | undefined,
  ): SweeperBase {
    const role = new iam.Role(this, 'SweeperRole', {
      assumedBy,
      description: 'memvault sweeper: list, inspect and delete memory files; keep its checkpoint; write audit records',
    });
    new iam.ManagedPolicy(this, 'SweeperPolicy', {
      description: 'memvault sweeper: least privilege for memvault expire',
      roles: [role],
      statements: sweeperStatements({
        memoryBucket: this.memoryBucket,
        auditBucket: this.auditBucket,
        filesPrefix: scope.filesPrefix,
        statePrefix: scope.statePrefix,
        auditPrefix: this.auditPrefix,
      }),
    });
    const logGroup = new logs.LogGroup(this, 'SweeperLogs', { retention: retention ?? logs.RetentionDays.ONE_MONTH });
    const deadLetterQueue = new sqs.Queue(this, 'SweeperDeadLetters', {
      retentionPeriod: Duration.days(14),
      encryption: sqs.QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
    });
    return { role, logGroup, deadLetterQueue };
  }

  private createLambdaSweeper(options: MemvaultLambdaSweeperProps, scope: SweeperPrefixes): CreatedSweeper {
    const timeout = options.timeout ?? Duration.minutes(15);
    if (timeout.toSeconds() < 120 || timeout.toSeconds() > 900)
      throw new Error('sweeper.timeout must be between 2 and 15 minutes');
    const environment = this.sweeperEnvironment(options);
    const base = this.sweeperBase(new iam.ServicePrincipal('lambda.amazonaws.com'), scope, options.logRetention);
    base.logGroup.grantWrite(base.role);
    const fn = new lambda.Function(this, 'SweeperFunction', {
      description: 'memvault sweeper: memvault expire in slices, resuming from its checkpoint',
      runtime: options.runtime ?? lambda.Runtime.NODEJS_22_X,
      architecture: options.architecture ?? lambda.Architecture.ARM_64,
      code: sweeperCode(),
      handler: 'index.handler',
      timeout,
      memorySize: options.memorySize ?? 512,
      role: base.role,
      logGroup: base.logGroup,
      environment: {
        ...environment,
        // A fifteenth of the run (at least 30 s) for the last batch, the checkpoint and the audit upload.
        MEMVAULT_SWEEP_STOP_MARGIN_SECONDS: String(Math.max(30, Math.round(timeout.toSeconds() / 15))),
      },
      deadLetterQueue: base.deadLetterQueue,
      // A failed run keeps its checkpoint; the continue schedule is the retry.
      retryAttempts: 0,
    });
    const target = (mode: 'start' | 'continue') =>
      new targets.LambdaFunction(fn, {
        event: events.RuleTargetInput.fromObject({ mode }),
        deadLetterQueue: base.deadLetterQueue,
        retryAttempts: 2,
        maxEventAge: Duration.hours(1),
      });
    const rule = new events.Rule(this, 'SweeperSchedule', {
      description: 'memvault: start a sweep pass (memvault expire)',
      schedule: options.schedule ?? events.Schedule.cron({ minute: '17', hour: '3' }),
      targets: [target('start')],
    });
    const continueSchedule = options.continueSchedule ?? events.Schedule.rate(Duration.minutes(30));
    const continueRule =
      continueSchedule === false
        ? undefined
        : new events.Rule(this, 'SweeperContinueSchedule', {
            description: 'memvault: continue an unfinished sweep pass from its checkpoint',
            schedule: continueSchedule,
            targets: [target('continue')],
          });
    return { ...base, fn, rule, ...(continueRule ? { continueRule } : {}) };
  }

  private createFargateSweeper(options: MemvaultFargateSweeperProps, scope: SweeperPrefixes): CreatedSweeper {
    if (options.imageUri.trim() === '') throw new Error('sweeper.imageUri must not be empty');
    if (!options.vpc) throw new Error("sweeper.vpc is required for kind 'fargate' (no VPC is created for the sweeper)");
    const base = this.sweeperBase(new iam.ServicePrincipal('ecs-tasks.amazonaws.com'), scope, options.logRetention);
    const cluster = new ecs.Cluster(this, 'SweeperCluster', { vpc: options.vpc });
    const taskDefinition = new ecs.FargateTaskDefinition(this, 'SweeperTask', {
      cpu: options.cpu ?? 256,
      memoryLimitMiB: options.memoryLimitMiB ?? 512,
      taskRole: base.role,
    });
    grantEcrPull(taskDefinition, options.imageUri);
    taskDefinition.addContainer('memvault', {
      image: ecs.ContainerImage.fromRegistry(options.imageUri),
      command: options.command ?? ['memvault', 'expire', '--store', this.storeUrl, '--json'],
      environment: { AWS_REGION: Stack.of(this).region, ...this.sweeperEnvironment(options) },
      logging: ecs.LogDriver.awsLogs({ logGroup: base.logGroup, streamPrefix: 'sweeper' }),
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
        subnetSelection: options.subnets ?? { subnetType: ec2.SubnetType.PRIVATE_WITH_EGRESS },
        assignPublicIp: options.assignPublicIp ?? false,
        retryAttempts: 2,
        deadLetterQueue: base.deadLetterQueue,
      }),
    );
    return { ...base, rule, taskDefinition };
  }

  /**
   * Errors: Lambda's own Errors metric (a failed or timed-out run), or for Fargate the summary lines
   * reporting errors. Did not run: no summary line (`scanned` is in every one) for missedRunPeriod.
   * Dead letters: anything in the queue.
   */
  private createSweeperAlarms(options: MemvaultSweeperCommonProps, created: CreatedSweeper): SweeperAlarms {
    const namespace = `memvault/${Names.uniqueId(this)}`;
    const days = missedRunDays(options);
    const runs = new logs.MetricFilter(this, 'SweeperRunsMetric', {
      logGroup: created.logGroup,
      filterPattern: logs.FilterPattern.numberValue('$.scanned', '>=', 0),
      metricNamespace: namespace,
      metricName: 'SweepRuns',
      metricValue: '1',
    });
    const errorsMetric = created.fn
      ? created.fn.metricErrors({ period: Duration.hours(1), statistic: 'Sum' })
      : new logs.MetricFilter(this, 'SweeperErrorsMetric', {
          logGroup: created.logGroup,
          filterPattern: logs.FilterPattern.numberValue('$.errors', '>', 0),
          metricNamespace: namespace,
          metricName: 'SweepErrors',
          metricValue: '1',
        }).metric({ period: Duration.hours(1), statistic: 'Sum' });
    const errors = new cloudwatch.Alarm(this, 'SweeperErrorsAlarm', {
      alarmDescription:
        'memvault sweeper: a sweep failed or could not handle some files (see its summary line in the log group)',
      metric: errorsMetric,
      threshold: 1,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      evaluationPeriods: 1,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    });
    const notRun = new cloudwatch.Alarm(this, 'SweeperNotRunAlarm', {
      alarmDescription: `memvault sweeper: no sweep summary logged for ${days} day(s)`,
      metric: runs.metric({ period: Duration.days(days), statistic: 'Sum' }),
      threshold: 1,
      comparisonOperator: cloudwatch.ComparisonOperator.LESS_THAN_THRESHOLD,
      evaluationPeriods: 1,
      treatMissingData: cloudwatch.TreatMissingData.BREACHING,
    });
    const deadLetter = new cloudwatch.Alarm(this, 'SweeperDeadLetterAlarm', {
      alarmDescription: 'memvault sweeper: a run or a schedule event went to the dead-letter queue',
      metric: created.deadLetterQueue.metricApproximateNumberOfMessagesVisible({
        period: Duration.minutes(5),
        statistic: 'Maximum',
      }),
      threshold: 1,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      evaluationPeriods: 1,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    });
    if (options.alarmTopic) {
      const action = new cwActions.SnsAction(options.alarmTopic);
      for (const alarm of [errors, notRun, deadLetter]) {
        alarm.addAlarmAction(action);
        alarm.addOkAction(action);
      }
    }
    return { errors, notRun, deadLetter };
  }
}

interface SweeperPrefixes {
  readonly filesPrefix: string;
  readonly statePrefix: string;
}

interface SweeperBase {
  readonly role: iam.Role;
  readonly logGroup: logs.LogGroup;
  readonly deadLetterQueue: sqs.Queue;
}

interface CreatedSweeper extends SweeperBase {
  readonly rule: events.Rule;
  readonly fn?: lambda.Function;
  readonly continueRule?: events.Rule;
  readonly taskDefinition?: ecs.FargateTaskDefinition;
}

interface SweeperAlarms {
  readonly errors: cloudwatch.Alarm;
  readonly notRun: cloudwatch.Alarm;
  readonly deadLetter: cloudwatch.Alarm;
}

/**
 * The handler's entry: dist/lambda/handler.js beside this compiled file (dist/infra/), or the
 * TypeScript source when the construct itself runs from source (this repository's tests).
 */
function sweeperEntry(): string {
  const here = dirname(fileURLToPath(import.meta.url));
  const candidates = [join(here, '..', 'lambda', 'handler.js'), join(here, '..', '..', 'src', 'lambda', 'handler.ts')];
  const entry = candidates.find((c) => existsSync(c));
  if (!entry)
    throw new Error(
      'memvault sweeper: the Lambda handler (dist/lambda/handler.js) is missing from the memvault package',
    );
  return entry;
}

interface Esbuild {
  buildSync(options: Record<string, unknown>): { errors: unknown[]; outputFiles?: { contents: Uint8Array }[] };
}

function loadEsbuild(): Esbuild {
  try {
    return createRequire(import.meta.url)('esbuild') as Esbuild;
  } catch {
    throw new Error(
      "memvault sweeper: the Lambda sweeper is bundled with esbuild at synth time; add it to your app (npm install --save-dev esbuild), or use sweeper: { kind: 'fargate', ... } or sweeper: false",
    );
  }
}

/** One bundle per entry and process: an app with several stacks (or a test suite) bundles once. */
const bundles = new Map<string, Uint8Array>();

function bundleSweeper(entry: string): Uint8Array {
  const cached = bundles.get(entry);
  if (cached) return cached;
  const result = loadEsbuild().buildSync({
    entryPoints: [entry],
    outfile: 'index.mjs',
    write: false,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node22',
    minify: true,
    keepNames: true,
    legalComments: 'none',
    sourcemap: false,
    logLevel: 'error',
    mainFields: ['module', 'main'],
    // CommonJS dependencies bundled into an ES module still call require() for Node built-ins.
    banner: {
      js: "import { createRequire as __memvaultRequire } from 'node:module'; const require = __memvaultRequire(import.meta.url);",
    },
  });
  const output = result.outputFiles?.[0];
  if (result.errors.length > 0 || !output) throw new Error('memvault sweeper: bundling the Lambda handler failed');
  bundles.set(entry, output.contents);
  return output.contents;
}

/**
 * The handler and everything it imports (the AWS SDK included: the function does not depend on the
 * runtime's copy), bundled by esbuild in-process at synth time. Local bundling always succeeds or
 * throws, so CDK never falls back to its Docker bundling image.
 */
function sweeperCode(): lambda.Code {
  const entry = sweeperEntry();
  return lambda.Code.fromAsset(dirname(entry), {
    assetHashType: AssetHashType.OUTPUT,
    bundling: {
      // Required by the type, never pulled: tryBundle below returns true or throws.
      image: DockerImage.fromRegistry('memvault-sweeper-bundles-locally'),
      local: {
        tryBundle(outputDir: string): boolean {
          writeFileSync(join(outputDir, 'index.mjs'), bundleSweeper(entry));
          return true;
        },
      },
    },
  });
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
  readonly statePrefix: string;
  readonly auditPrefix: string;
}

function sweeperStatements(scope: SweeperScope): iam.PolicyStatement[] {
  const { memoryBucket, auditBucket, filesPrefix, statePrefix, auditPrefix } = scope;
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
    new iam.PolicyStatement({
      sid: 'SweepCheckpoint',
      // One small object (s/sweep-state.json): where an unfinished pass continues, and its lease.
      actions: ['s3:GetObject', 's3:PutObject'],
      resources: [memoryBucket.arnForObjects(`${statePrefix}*`)],
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

function missedRunDays(options: MemvaultSweeperCommonProps): number {
  const days = (options.missedRunPeriod ?? Duration.days(1)).toDays({ integral: false });
  if (!Number.isInteger(days) || days < 1 || days > 7)
    throw new Error('sweeper.missedRunPeriod must be a whole number of days from 1 to 7');
  return days;
}

function checkAlias(alias: string): string {
  if (!/^alias\/[A-Za-z0-9/_-]{1,250}$/.test(alias) || alias.startsWith('alias/aws/')) {
    throw new Error(
      `keyAlias must be 'alias/' followed by letters, digits, '/', '_' or '-', and not under alias/aws/ (got '${alias}')`,
    );
  }
  return alias;
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
