import { Duration } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { FleetNetwork, OrphanReaper } from '../../lib';
import { resolveAppConfig } from '../../lib/app-config';
import { MountfleetStack } from '../../lib/mountfleet-stack';
import { AZS, ensureBundles, fastApp, statements, testStack } from './support';

beforeAll(ensureBundles);

describe('OrphanReaper', () => {
  function reaper(props: Partial<ConstructorParameters<typeof OrphanReaper>[2]> = {}) {
    const stack = testStack();
    const network = new FleetNetwork(stack, 'Network', { azIds: AZS });
    new OrphanReaper(stack, 'Reaper', { fleetId: 'train', network, ...props });
    return Template.fromStack(stack);
  }

  test('the pre-built bundle on NODEJS_22_X with the environment the handler reads', () => {
    reaper({
      dryRun: true,
      maxDeletionsPerRun: 7,
      batchUnknownJobAge: Duration.hours(2),
    }).hasResourceProperties('AWS::Lambda::Function', {
      Runtime: 'nodejs22.x',
      Handler: 'index.handler',
      DeadLetterConfig: { TargetArn: Match.anyValue() },
      Environment: {
        Variables: {
          MOUNTFLEET_FLEET_ID: 'train',
          MOUNTFLEET_DRY_RUN: 'true',
          MOUNTFLEET_GRACE_MINUTES: '30',
          MOUNTFLEET_IDLE_WINDOW_MINUTES: '30',
          MOUNTFLEET_METRIC_LAG_MINUTES: '5',
          MOUNTFLEET_MAX_DELETIONS_PER_RUN: '7',
          MOUNTFLEET_DEADLINE_MARGIN_SECONDS: '60',
          MOUNTFLEET_BATCH_UNKNOWN_JOB_MINUTES: '120',
        },
      },
    });
  });

  test('schedule every 15 minutes, Spot interruption and termination rules, encrypted DLQ, log retention', () => {
    const t = reaper();
    t.hasResourceProperties('AWS::Events::Rule', { ScheduleExpression: 'rate(15 minutes)' });
    t.hasResourceProperties('AWS::Events::Rule', {
      EventPattern: { source: ['aws.ec2'], 'detail-type': ['EC2 Spot Instance Interruption Warning'] },
    });
    t.hasResourceProperties('AWS::Events::Rule', {
      EventPattern: {
        source: ['aws.ec2'],
        'detail-type': ['EC2 Instance State-change Notification'],
        detail: { state: ['terminated'] },
      },
    });
    t.hasResourceProperties('AWS::SQS::Queue', {
      SqsManagedSseEnabled: true,
      MessageRetentionPeriod: 1209600,
    });
    t.hasResourceProperties('AWS::Logs::LogGroup', { RetentionInDays: 30 });
  });

  test('keeps the logical ids, order and settings of its function, role, policy, log group and dead-letter queue (a new id replaces the resource on deploy)', () => {
    type Resource = { Type: string; Properties: Record<string, unknown>; DependsOn?: unknown };
    const t = reaper().toJSON() as { Resources: Record<string, Resource> };
    const own = Object.entries(t.Resources)
      .filter(([id]) => /^Reaper(LogGroup|DeadLetterQueue|Role|Function)[0-9A-F]{8}$/.test(id))
      .map(([id, r]) => [id, r.Type]);
    expect(own).toEqual([
      ['ReaperLogGroupA95EC377', 'AWS::Logs::LogGroup'],
      ['ReaperDeadLetterQueue6AC26A62', 'AWS::SQS::Queue'],
      ['ReaperRole31ABEC86', 'AWS::IAM::Role'],
      ['ReaperFunctionF52F06D3', 'AWS::Lambda::Function'],
    ]);
    const fn = t.Resources['ReaperFunctionF52F06D3'];
    expect(fn.DependsOn).toEqual(['ReaperRoleDefaultPolicy70DAA954']);
    expect(fn.Properties).toMatchObject({
      Description: 'mountfleet orphan reaper: deletes orphaned scratch file systems of fleet train',
      MemorySize: 512,
      Timeout: 300,
      Architectures: ['arm64'],
      ReservedConcurrentExecutions: 1,
      LoggingConfig: { LogGroup: { Ref: 'ReaperLogGroupA95EC377' } },
      DeadLetterConfig: { TargetArn: { 'Fn::GetAtt': ['ReaperDeadLetterQueue6AC26A62', 'Arn'] } },
    });
    expect(t.Resources['ReaperFunctionEventInvokeConfigC9640CAF']).toMatchObject({
      Properties: { MaximumRetryAttempts: 2 },
    });
    expect(t.Resources['ReaperRole31ABEC86']).toMatchObject({
      Properties: { Description: 'mountfleet orphan reaper of fleet train' },
    });
    // The policy's statements in their deployed order: the dead-letter queue, the reaping grants, the log group.
    const { PolicyDocument } = t.Resources['ReaperRoleDefaultPolicy70DAA954'].Properties as {
      PolicyDocument: { Statement: Array<{ Action: string | string[] }> };
    };
    const actions = PolicyDocument.Statement.map((st) => st.Action);
    expect(actions[0]).toBe('sqs:SendMessage');
    expect(actions[1]).toContain('elasticfilesystem:DescribeFileSystems');
    expect(actions[actions.length - 1]).toEqual(['logs:CreateLogStream', 'logs:PutLogEvents']);
  });

  test('alarms on errors, deletion bursts and dead letters — none when turned off', () => {
    const t = reaper({ deletionAlarmThreshold: 12 });
    t.resourceCountIs('AWS::CloudWatch::Alarm', 3);
    t.hasResourceProperties('AWS::CloudWatch::Alarm', {
      MetricName: 'Errors',
      Threshold: 0,
      ComparisonOperator: 'GreaterThanThreshold',
    });
    t.hasResourceProperties('AWS::CloudWatch::Alarm', {
      Namespace: 'Mountfleet/Reaper',
      MetricName: 'Deleted',
      Dimensions: [{ Name: 'Fleet', Value: 'train' }],
      Threshold: 12,
    });
    t.hasResourceProperties('AWS::CloudWatch::Alarm', {
      MetricName: 'ApproximateNumberOfMessagesVisible',
      Threshold: 0,
    });
    reaper({ alarms: false }).resourceCountIs('AWS::CloudWatch::Alarm', 0);
  });

  test('role: deletes and marks only with the fleet tag, explicit deny when untagged, read evidence', () => {
    const all = statements(reaper());
    expect(all).toContainEqual(
      expect.objectContaining({
        Action: ['elasticfilesystem:DeleteMountTarget', 'elasticfilesystem:DeleteFileSystem'],
        Condition: { StringEquals: { 'aws:ResourceTag/mountfleet:fleet': 'train' } },
      }),
    );
    expect(all).toContainEqual(
      expect.objectContaining({
        Action: ['elasticfilesystem:TagResource', 'elasticfilesystem:UntagResource'],
        Condition: {
          StringEquals: { 'aws:ResourceTag/mountfleet:fleet': 'train' },
          'ForAllValues:StringEquals': { 'aws:TagKeys': ['mountfleet:marked-idle-at'] },
          Null: { 'aws:TagKeys': 'false' },
        },
      }),
    );
    expect(all).toContainEqual(
      expect.objectContaining({
        Effect: 'Deny',
        Action: [
          'elasticfilesystem:DeleteMountTarget',
          'elasticfilesystem:DeleteFileSystem',
          'elasticfilesystem:TagResource',
          'elasticfilesystem:UntagResource',
        ],
        Condition: { Null: { 'aws:ResourceTag/mountfleet:fleet': 'true' } },
      }),
    );
    expect(all).toContainEqual(
      expect.objectContaining({
        Action: [
          'elasticfilesystem:DescribeFileSystems',
          'elasticfilesystem:DescribeMountTargets',
          'cloudwatch:GetMetricData',
          'ec2:DescribeInstances',
          'batch:DescribeJobs',
          'batch:ListJobs',
        ],
        Resource: '*',
      }),
    );
    // Batched marks: the Tagging API has no resource type; the EFS statement above confines each ARN.
    expect(all).toContainEqual(
      expect.objectContaining({ Action: ['tag:TagResources', 'tag:UntagResources'], Resource: '*' }),
    );
    // No reaper code (evidence or teardown) reads network interfaces.
    expect(JSON.stringify(all)).not.toContain('ec2:DescribeNetworkInterfaces');
    const eni = all.find((s) => s.Action === 'ec2:DeleteNetworkInterface');
    expect(eni?.Condition).toEqual({ ArnEquals: { 'ec2:Subnet': expect.any(Array) } });
    expect(JSON.stringify(all)).not.toMatch(/elasticfilesystem:\*|"Action":"\*"/);
  });

  test('reaper.scheduleMinutes sets the schedule, the deletion alarm period and metricDecision', () => {
    const [config] = resolveAppConfig({ reaper: { scheduleMinutes: 60 } }, '(test)');
    const stack = new MountfleetStack(fastApp(), config.stackName, { config });
    const t = Template.fromStack(stack);
    t.hasResourceProperties('AWS::Events::Rule', { ScheduleExpression: 'rate(1 hour)' });
    t.hasResourceProperties('AWS::CloudWatch::Alarm', { MetricName: 'Deleted', Period: 3600 });
    expect(stack.reaper.metricDecision('Marked').period.toMinutes()).toBe(60);
    reaper().hasResourceProperties('AWS::CloudWatch::Alarm', { MetricName: 'Deleted', Period: 900 });
  });

  test('rejects a schedule interval that is no alarm period', () => {
    expect(() => reaper({ scheduleInterval: Duration.seconds(90) })).toThrow(/scheduleInterval: 1 minute 30/);
    expect(() => reaper({ scheduleInterval: Duration.days(2) })).toThrow(/scheduleInterval: 2 days/);
  });

  test('rejects a bad fleet id with the fix', () => {
    expect(() => reaper({ fleetId: 'Train' })).toThrow(
      /^Test\/Reaper: fleetId: fleet id "Train" .* — for example "training"$/,
    );
  });

  test.each([
    [
      'maxDeletionsPerRun above the Lambda limit',
      { maxDeletionsPerRun: 1001 },
      /maxDeletionsPerRun: 1001 must be at most 1000 — allowed: 1 to 1000$/,
    ],
    [
      'maxDeletionsPerRun of zero',
      { maxDeletionsPerRun: 0 },
      /maxDeletionsPerRun: 0 must be at least 1 — allowed: 1 to 1000$/,
    ],
    [
      'a fractional maxDeletionsPerRun',
      { maxDeletionsPerRun: 2.5 },
      /maxDeletionsPerRun: 2.5 must be a whole number — allowed: 1 to 1000$/,
    ],
    [
      'an idle window under 5 minutes',
      { idleWindow: Duration.minutes(4) },
      /idleWindow: 4 minutes must be at least 5 — allowed: 5 to 1440 minutes$/,
    ],
    [
      'an idle window over a day',
      { idleWindow: Duration.hours(25) },
      /idleWindow: 1500 minutes must be at most 1440 — allowed: 5 to 1440 minutes$/,
    ],
    [
      'a grace period over a week',
      { gracePeriod: Duration.days(8) },
      /gracePeriod: 11520 minutes must be at most 10080 — allowed: 0 to 10080 minutes$/,
    ],
    [
      'a metric lag over an hour',
      { metricLag: Duration.minutes(61) },
      /metricLag: 61 minutes must be at most 60 — allowed: 0 to 60 minutes$/,
    ],
    [
      'a bound on unknown Batch jobs under 15 minutes',
      { batchUnknownJobAge: Duration.minutes(10) },
      /batchUnknownJobAge: 10 minutes must be at least 15 — allowed: 15 to 10080 minutes$/,
    ],
    [
      'a deadline margin over 15 minutes',
      { deadlineMargin: Duration.minutes(16), timeout: Duration.minutes(20) },
      /deadlineMargin: 960 seconds must be at most 900 — allowed: 0 to 900 seconds$/,
    ],
    [
      'a grace period of 90 seconds',
      { gracePeriod: Duration.seconds(90) },
      /gracePeriod: 1 minute 30 seconds is not a whole number of minutes/,
    ],
    [
      'an idle window of 90 seconds',
      { idleWindow: Duration.seconds(90) },
      /idleWindow: 1 minute 30 seconds is not a whole number of minutes/,
    ],
    [
      'a metric lag of 30 seconds',
      { metricLag: Duration.seconds(30) },
      /metricLag: 30 seconds is not a whole number of minutes/,
    ],
  ])('rejects %s at synth, as the Lambda would on every run', (_name, props, message) => {
    expect(() => reaper(props)).toThrow(new RegExp(`^Test/Reaper: ${message.source}`));
  });

  test('rejects a deadline margin that does not fit the timeout', () => {
    expect(() => reaper({ timeout: Duration.seconds(30) })).toThrow(
      /deadlineMargin: 1 minute leaves no time in a 30 seconds timeout/,
    );
  });
});
