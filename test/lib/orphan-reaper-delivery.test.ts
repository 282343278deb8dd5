/** The reaper runs one at a time, loses no event (dead-letter queue on every rule target) and can page someone. */
import { Match, Template } from 'aws-cdk-lib/assertions';
import * as sns from 'aws-cdk-lib/aws-sns';
import { FleetNetwork, OrphanReaper, type OrphanReaperProps } from '../../lib';
import { resolveAppConfig } from '../../lib/app-config';
import { MountfleetStack } from '../../lib/mountfleet-stack';
import { ensureBundles, fastApp, testStack } from './support';

beforeAll(ensureBundles);

const TOPIC_ARN = 'arn:aws:sns:us-east-1:123456789012:mountfleet-alarms';

function reaper(props: Partial<OrphanReaperProps> & { topic?: boolean } = {}) {
  const stack = testStack();
  const network = new FleetNetwork(stack, 'Network', { azIds: ['use1-az4'] });
  const { topic, ...rest } = props;
  new OrphanReaper(stack, 'Reaper', {
    fleetId: 'train',
    network,
    ...(topic ? { alarmTopic: sns.Topic.fromTopicArn(stack, 'Topic', TOPIC_ARN) } : {}),
    ...rest,
  });
  return Template.fromStack(stack);
}

test('reserved concurrency 1: two runs at once would double-count deletions and race on marks', () => {
  reaper().hasResourceProperties('AWS::Lambda::Function', { ReservedConcurrentExecutions: 1 });
});

test('every rule target has the dead-letter queue and a retry policy; EventBridge may send to the queue', () => {
  const t = reaper();
  const queue = Object.keys(t.findResources('AWS::SQS::Queue'));
  expect(queue).toHaveLength(1);
  const rules = Object.values(t.findResources('AWS::Events::Rule')) as Array<{
    Properties: { Targets: Array<Record<string, unknown>> };
  }>;
  expect(rules).toHaveLength(3);
  for (const rule of rules) {
    for (const target of rule.Properties.Targets) {
      expect(target.DeadLetterConfig).toEqual({ Arn: { 'Fn::GetAtt': [queue[0], 'Arn'] } });
      expect(target.RetryPolicy).toEqual({ MaximumRetryAttempts: 2, MaximumEventAgeInSeconds: 3600 });
    }
  }
  t.hasResourceProperties('AWS::SQS::QueuePolicy', {
    PolicyDocument: {
      Statement: Match.arrayWith([
        Match.objectLike({
          Action: 'sqs:SendMessage',
          Principal: { Service: 'events.amazonaws.com' },
          Condition: { ArnEquals: { 'aws:SourceArn': Match.anyValue() } },
        }),
      ]),
    },
  });
});

test('an alarm topic is the alarm action of every alarm; none without it', () => {
  const withTopic = reaper({ topic: true });
  const alarms = Object.values(withTopic.findResources('AWS::CloudWatch::Alarm')) as Array<{
    Properties: { AlarmActions?: unknown[] };
  }>;
  expect(alarms).toHaveLength(3);
  for (const alarm of alarms) expect(alarm.Properties.AlarmActions).toEqual([TOPIC_ARN]);
  for (const alarm of Object.values(reaper().findResources('AWS::CloudWatch::Alarm')) as typeof alarms) {
    expect(alarm.Properties.AlarmActions).toBeUndefined();
  }
});

test('an alarm topic with alarms turned off is refused at synth', () => {
  expect(() => reaper({ topic: true, alarms: false })).toThrow(
    'Test/Reaper: alarmTopic: is given but alarms is false — turn alarms on or leave the topic out',
  );
});

describe('bundled app: monitoring.alarmTopicArn', () => {
  test('the sandbox profile has alarms too, so it takes a topic', () => {
    const [config] = resolveAppConfig(
      { profile: 'sandbox', monitoring: { alarmTopicArn: TOPIC_ARN } },
      'test',
    );
    expect(config.monitoring?.alarmTopicArn).toBe(TOPIC_ARN);
  });

  test('reaches every alarm of the stack', () => {
    const [config] = resolveAppConfig({ monitoring: { alarmTopicArn: TOPIC_ARN } }, 'test');
    const stack = new MountfleetStack(fastApp(), 'Mountfleet', { config });
    const alarms = Object.values(Template.fromStack(stack).findResources('AWS::CloudWatch::Alarm')) as Array<{
      Properties: { AlarmActions?: unknown[] };
    }>;
    expect(alarms.length).toBeGreaterThan(0);
    for (const alarm of alarms) expect(alarm.Properties.AlarmActions).toEqual([TOPIC_ARN]);
  });

  test('a malformed ARN and alarms turned off are config errors naming the field', () => {
    expect(() => resolveAppConfig({ monitoring: { alarmTopicArn: 'mountfleet-alarms' } }, 'test')).toThrow(
      /monitoring\.alarmTopicArn: must be an SNS topic ARN/,
    );
    expect(() =>
      resolveAppConfig({ monitoring: { alarms: false, alarmTopicArn: TOPIC_ARN } }, 'test'),
    ).toThrow(/monitoring\.alarmTopicArn: is set but monitoring\.alarms is false/);
  });
});
