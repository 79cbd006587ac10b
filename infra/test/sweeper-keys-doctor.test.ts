/**
 * The default (Lambda) sweeper and its operations, the key's alias and policy, and the doctor's
 * read-only role, asserted on the synthesized template with aws-cdk-lib/assertions.
 */
import { App, Duration, Stack } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import * as events from 'aws-cdk-lib/aws-events';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as sns from 'aws-cdk-lib/aws-sns';
import { beforeAll, describe, expect, it } from 'vitest';
import { MemvaultStorage, type MemvaultStorageProps } from '../lib/index.js';

type Json = Record<string, unknown>;

interface Synthesized {
  template: Template;
  storage: MemvaultStorage;
  stack: Stack;
  topic: sns.Topic;
}

function synth(props: MemvaultStorageProps = {}, withTopic = false): Synthesized {
  const app = new App({ stackTraces: false });
  const stack = new Stack(app, 'SweeperStack');
  const topic = new sns.Topic(stack, 'Ops');
  const storage = new MemvaultStorage(stack, 'Storage', {
    ...props,
    ...(withTopic && props.sweeper !== false ? { sweeper: { ...(props.sweeper || {}), alarmTopic: topic } } : {}),
  });
  return { template: Template.fromStack(stack), storage, stack, topic };
}

function idOf(stack: Stack, construct: { node: { defaultChild?: unknown } }): string {
  const child = construct.node.defaultChild as { logicalId: unknown } | undefined;
  if (!child) throw new Error('no CFN resource');
  return stack.resolve(child.logicalId) as string;
}

function resources(template: Template, type: string): Json[] {
  return Object.values(template.findResources(type)).map((r) => r.Properties as Json);
}

interface Statement {
  Sid?: string;
  Effect: string;
  Action: string | string[];
  Principal?: unknown;
  Resource: unknown;
  Condition?: unknown;
}
const actions = (s: Statement): string[] => (Array.isArray(s.Action) ? s.Action : [s.Action]);

describe('the default sweeper: a Lambda function on an EventBridge schedule', () => {
  let s: Synthesized;
  let fnId: string;
  beforeAll(() => {
    s = synth({ ttlClasses: { default: 30, pro: 365 } }, true);
    fnId = idOf(s.stack, s.storage.sweeperFunction!);
  });

  it('creates a function (no task, cluster or VPC) running the bundled memvault/lambda handler', () => {
    s.template.resourceCountIs('AWS::Lambda::Function', 1);
    s.template.resourceCountIs('AWS::ECS::TaskDefinition', 0);
    s.template.resourceCountIs('AWS::EC2::VPC', 0);
    s.template.hasResourceProperties('AWS::Lambda::Function', {
      Handler: 'index.handler',
      Runtime: 'nodejs22.x',
      Architectures: ['arm64'],
      Timeout: 900,
      MemorySize: 512,
    });
  });

  it('gives it the same environment `memvault expire` reads, native conditional deletes and a stop margin', () => {
    const env = (resources(s.template, 'AWS::Lambda::Function')[0]!.Environment as { Variables: Json }).Variables;
    const bucketId = idOf(s.stack, s.storage.memoryBucket);
    const auditId = idOf(s.stack, s.storage.auditBucket);
    expect(env).toEqual({
      MEMVAULT_STORE: { 'Fn::Join': ['', ['s3://', { Ref: bucketId }, '/memvault']] },
      MEMVAULT_TTL_DAYS: '30',
      MEMVAULT_TTL_CLASSES: JSON.stringify({ default: 30, pro: 365 }),
      MEMVAULT_TTL_DEFAULT_CLASS: 'default',
      MEMVAULT_AUDIT_STORE: { 'Fn::Join': ['', ['s3://', { Ref: auditId }, '/audit']] },
      MEMVAULT_CONDITIONAL_DELETE: 'native',
      MEMVAULT_EXPIRE_GRACE_MINUTES: '60',
      MEMVAULT_SWEEP_STOP_MARGIN_SECONDS: '60',
    });
  });

  it('starts a pass daily and continues an unfinished one every 30 minutes, with the mode in the event', () => {
    const rules = resources(s.template, 'AWS::Events::Rule').map((r) => ({
      schedule: r.ScheduleExpression,
      targets: (r.Targets as Json[]).map((t) => ({
        arn: t.Arn,
        input: t.Input,
        retry: t.RetryPolicy,
        dlq: t.DeadLetterConfig,
      })),
    }));
    const dlqArn = { 'Fn::GetAtt': [idOf(s.stack, s.storage.sweeperDeadLetterQueue!), 'Arn'] };
    const target = (mode: string) => ({
      arn: { 'Fn::GetAtt': [fnId, 'Arn'] },
      input: JSON.stringify({ mode }),
      retry: { MaximumEventAgeInSeconds: 3600, MaximumRetryAttempts: 2 },
      dlq: { Arn: dlqArn },
    });
    expect(rules).toEqual(
      expect.arrayContaining([
        { schedule: 'cron(17 3 * * ? *)', targets: [target('start')] },
        { schedule: 'rate(30 minutes)', targets: [target('continue')] },
      ]),
    );
    expect(rules).toHaveLength(2);
  });

  it('sends failed invocations to the dead-letter queue without Lambda retries (the checkpoint and continue schedule resume)', () => {
    const dlqId = idOf(s.stack, s.storage.sweeperDeadLetterQueue!);
    s.template.hasResourceProperties('AWS::Lambda::Function', {
      DeadLetterConfig: { TargetArn: { 'Fn::GetAtt': [dlqId, 'Arn'] } },
    });
    s.template.hasResourceProperties('AWS::Lambda::EventInvokeConfig', {
      FunctionName: { Ref: fnId },
      MaximumRetryAttempts: 0,
    });
    s.template.hasResourceProperties('AWS::SQS::Queue', {
      MessageRetentionPeriod: 14 * 86400,
      SqsManagedSseEnabled: true,
    });
    // EventBridge may send undeliverable schedule events to it.
    s.template.hasResourceProperties('AWS::SQS::QueuePolicy', {
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({ Action: 'sqs:SendMessage', Principal: { Service: 'events.amazonaws.com' } }),
        ]),
      },
    });
  });

  it('logs to its own log group with one month retention', () => {
    const logId = idOf(s.stack, s.storage.sweeperLogGroup!);
    s.template.hasResourceProperties('AWS::Logs::LogGroup', { RetentionInDays: 30 });
    s.template.hasResourceProperties('AWS::Lambda::Function', { LoggingConfig: { LogGroup: { Ref: logId } } });
  });

  it('alarms on errors, on a sweep that did not run for a day and on dead letters, notifying the topic', () => {
    const topicRef = { Ref: idOf(s.stack, s.topic) };
    const alarms = resources(s.template, 'AWS::CloudWatch::Alarm');
    expect(alarms).toHaveLength(3);
    for (const alarm of alarms) {
      expect(alarm.AlarmActions).toEqual([topicRef]);
      expect(alarm.OKActions).toEqual([topicRef]);
    }
    s.template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      MetricName: 'Errors',
      Namespace: 'AWS/Lambda',
      Dimensions: [{ Name: 'FunctionName', Value: { Ref: fnId } }],
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      Threshold: 1,
      TreatMissingData: 'notBreaching',
    });
    s.template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      MetricName: 'SweepRuns',
      Period: 86400,
      Statistic: 'Sum',
      ComparisonOperator: 'LessThanThreshold',
      Threshold: 1,
      TreatMissingData: 'breaching',
    });
    s.template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      MetricName: 'ApproximateNumberOfMessagesVisible',
      Namespace: 'AWS/SQS',
      Threshold: 1,
    });
  });

  it('counts runs from the summary line the handler logs (every summary has `scanned`)', () => {
    const filters = resources(s.template, 'AWS::Logs::MetricFilter');
    expect(filters).toHaveLength(1);
    expect(filters[0]).toMatchObject({
      FilterPattern: '{ $.scanned >= 0 }',
      LogGroupName: { Ref: idOf(s.stack, s.storage.sweeperLogGroup!) },
      MetricTransformations: [expect.objectContaining({ MetricName: 'SweepRuns', MetricValue: '1' })],
    });
  });

  it('its role may list and delete files, keep its checkpoint, write audit and logs, and reach no key', () => {
    const roleId = idOf(s.stack, s.storage.sweeperRole!);
    s.template.hasResourceProperties('AWS::IAM::Role', {
      Description: Match.stringLikeRegexp('^memvault sweeper'),
      AssumeRolePolicyDocument: { Statement: [Match.objectLike({ Principal: { Service: 'lambda.amazonaws.com' } })] },
    });
    s.template.hasResourceProperties('AWS::Lambda::Function', { Role: { 'Fn::GetAtt': [roleId, 'Arn'] } });
    const inline = resources(s.template, 'AWS::IAM::Policy')
      .filter((p) => JSON.stringify(p.Roles) === JSON.stringify([{ Ref: roleId }]))
      .flatMap((p) => (p.PolicyDocument as { Statement: Statement[] }).Statement);
    expect(inline.flatMap(actions).sort()).toEqual(['logs:CreateLogStream', 'logs:PutLogEvents', 'sqs:SendMessage']);
    const managed = resources(s.template, 'AWS::IAM::ManagedPolicy')
      .filter((p) => String(p.Description).startsWith('memvault sweeper'))
      .flatMap((p) => (p.PolicyDocument as { Statement: Statement[] }).Statement);
    expect(managed.find((st) => st.Sid === 'SweepCheckpoint')).toMatchObject({
      Action: ['s3:GetObject', 's3:PutObject'],
    });
    expect(JSON.stringify(managed.find((st) => st.Sid === 'SweepCheckpoint')!.Resource)).toContain('/memvault/s/*');
    expect([...managed, ...inline].flatMap(actions).some((a) => a.startsWith('kms:'))).toBe(false);
  });

  it('takes its schedules, timeout and retention from props, and can go without the continue schedule', () => {
    const custom = synth({
      sweeper: {
        schedule: events.Schedule.rate(Duration.hours(6)),
        continueSchedule: false,
        timeout: Duration.minutes(5),
        conditionalDelete: 'recheck',
        missedRunPeriod: Duration.days(2),
      },
    });
    const rules = resources(custom.template, 'AWS::Events::Rule');
    expect(rules.map((r) => r.ScheduleExpression)).toEqual(['rate(6 hours)']);
    custom.template.hasResourceProperties('AWS::Lambda::Function', {
      Timeout: 300,
      Environment: {
        Variables: Match.objectLike({
          MEMVAULT_CONDITIONAL_DELETE: 'recheck',
          MEMVAULT_SWEEP_STOP_MARGIN_SECONDS: '30',
        }),
      },
    });
    custom.template.hasResourceProperties('AWS::CloudWatch::Alarm', { MetricName: 'SweepRuns', Period: 2 * 86400 });
    // Without a topic the alarms exist but notify nobody.
    for (const alarm of resources(custom.template, 'AWS::CloudWatch::Alarm'))
      expect(alarm.AlarmActions).toBeUndefined();
  });
});

describe('the KMS key', () => {
  it('has an alias (alias/memvault unless given)', () => {
    const { template, storage, stack } = synth({ sweeper: false });
    template.hasResourceProperties('AWS::KMS::Alias', {
      AliasName: 'alias/memvault',
      TargetKeyId: { 'Fn::GetAtt': [idOf(stack, storage.key), 'Arn'] },
    });
    synth({ sweeper: false, keyAlias: 'alias/acme/memvault' }).template.hasResourceProperties('AWS::KMS::Alias', {
      AliasName: 'alias/acme/memvault',
    });
  });

  describe("keyPolicy 'application-only' (the default)", () => {
    let statements: Statement[];
    let s: Synthesized;
    beforeAll(() => {
      s = synth({});
      statements = (resources(s.template, 'AWS::KMS::Key')[0]!.KeyPolicy as { Statement: Statement[] }).Statement;
    });

    it('lets the account root administer the key but not use it, and grants no kms:* at all', () => {
      const root = statements.filter((st) => JSON.stringify(st.Principal).includes(':root'));
      expect(root).toHaveLength(1);
      const rootActions = actions(root[0]!);
      for (const forbidden of [
        'kms:Decrypt',
        'kms:Encrypt',
        'kms:GenerateDataKey',
        'kms:ReEncryptFrom',
        'kms:CreateGrant',
        'kms:*',
      ]) {
        expect(rootActions).not.toContain(forbidden);
      }
      // Nothing that matches a use action through a wildcard either.
      for (const a of statements.flatMap(actions)) expect(a).not.toMatch(/\*/);
      expect(rootActions).toEqual(
        expect.arrayContaining([
          'kms:PutKeyPolicy',
          'kms:ScheduleKeyDeletion',
          'kms:EnableKeyRotation',
          'kms:DescribeKey',
        ]),
      );
    });

    it('grants use only to the application role, with an encryption context required', () => {
      const use = statements.filter((st) =>
        actions(st).some((a) => ['kms:Decrypt', 'kms:GenerateDataKey', 'kms:Encrypt'].includes(a)),
      );
      expect(use).toHaveLength(1);
      const roleId = idOf(s.stack, s.storage.applicationRole as iam.Role);
      expect(use[0]).toMatchObject({
        Effect: 'Allow',
        Principal: { AWS: { 'Fn::GetAtt': [roleId, 'Arn'] } },
        Condition: { Null: { 'kms:EncryptionContextKeys': 'false' } },
      });
      expect(actions(use[0]!).sort()).toEqual(['kms:Decrypt', 'kms:Encrypt', 'kms:GenerateDataKey']);
      // The sweeper and doctor never open content: neither is a principal of the key.
      expect(JSON.stringify(statements)).not.toContain(idOf(s.stack, s.storage.sweeperRole!));
      expect(JSON.stringify(statements)).not.toContain(idOf(s.stack, s.storage.doctorRole));
    });

    it('names an existing application role by its ARN', () => {
      const app = new App({ stackTraces: false });
      const stack = new Stack(app, 'Existing');
      const role = iam.Role.fromRoleArn(stack, 'Svc', 'arn:aws:iam::123456789012:role/svc');
      new MemvaultStorage(stack, 'Storage', { applicationRole: role, sweeper: false });
      const policy = Template.fromStack(stack).toJSON() as {
        Resources: Record<string, { Type: string; Properties: Json }>;
      };
      const key = Object.values(policy.Resources).find((r) => r.Type === 'AWS::KMS::Key')!;
      expect(JSON.stringify(key.Properties.KeyPolicy)).toContain('arn:aws:iam::123456789012:role/svc');
    });
  });

  it("keyPolicy 'account' keeps CDK's default (the account root, kms:*: IAM policies decide)", () => {
    const statements = (
      resources(synth({ keyPolicy: 'account', sweeper: false }).template, 'AWS::KMS::Key')[0]!.KeyPolicy as {
        Statement: Statement[];
      }
    ).Statement;
    expect(statements).toHaveLength(1);
    expect(statements[0]).toMatchObject({ Action: 'kms:*', Effect: 'Allow' });
  });
});

describe('the doctor role', () => {
  it('holds only the bucket-configuration reads doctor makes, on the memory bucket', () => {
    const s = synth({ sweeper: false });
    const doctorRoleId = idOf(s.stack, s.storage.doctorRole);
    const policies = resources(s.template, 'AWS::IAM::ManagedPolicy').filter((p) =>
      String(p.Description).startsWith('memvault doctor'),
    );
    expect(policies).toHaveLength(1);
    expect(policies[0]!.Roles).toEqual([{ Ref: doctorRoleId }]);
    const statements = (policies[0]!.PolicyDocument as { Statement: Statement[] }).Statement;
    expect(statements.flatMap(actions).sort()).toEqual([
      's3:GetBucketPublicAccessBlock',
      's3:GetBucketVersioning',
      's3:GetEncryptionConfiguration',
      's3:GetLifecycleConfiguration',
    ]);
    expect(statements.map((st) => st.Resource)).toEqual([
      { 'Fn::GetAtt': [idOf(s.stack, s.storage.memoryBucket), 'Arn'] },
    ]);
    // Read-only: no write, delete or object read; and it is attached to nothing else.
    for (const a of statements.flatMap(actions)) expect(a).toMatch(/^s3:Get/);
    s.template.hasResourceProperties('AWS::IAM::Role', {
      Description: Match.stringLikeRegexp('^memvault doctor'),
      AssumeRolePolicyDocument: Match.anyValue(),
    });
  });

  it('is assumable by the principal given', () => {
    const s = synth({
      sweeper: false,
      doctorRolePrincipal: new iam.ArnPrincipal('arn:aws:iam::123456789012:role/oncall'),
    });
    s.template.hasResourceProperties('AWS::IAM::Role', {
      Description: Match.stringLikeRegexp('^memvault doctor'),
      AssumeRolePolicyDocument: {
        Statement: [Match.objectLike({ Principal: { AWS: 'arn:aws:iam::123456789012:role/oncall' } })],
      },
    });
  });
});
