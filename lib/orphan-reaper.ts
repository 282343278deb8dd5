import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Duration, Stack } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as cloudwatchActions from 'aws-cdk-lib/aws-cloudwatch-actions';
import * as events from 'aws-cdk-lib/aws-events';
import * as targets from 'aws-cdk-lib/aws-events-targets';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as logs from 'aws-cdk-lib/aws-logs';
import type * as sns from 'aws-cdk-lib/aws-sns';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import * as z from 'zod/mini';
import { packageRoot } from '../core/package-root';
import {
  REAPER_DEFAULTS,
  REAPER_SETTING_RANGES,
  REAPER_SETTING_SOURCES,
  reaperSettingsSchema,
  type ReaperNumericSetting,
  type ReaperSettings,
  type ReaperSettingsInput,
} from '../core/reaper/settings';
import { TAG_FLEET, TAG_MARKED_IDLE_AT } from '../core/tags';
import type { IFleetNetwork } from './fleet-network';
import { acknowledge, acknowledgeWildcardResource } from './private/nag';
import { invalidProp, validateFleetId } from './private/validation';

/** CloudWatch namespace of the reaper's EMF metrics (dimension `Fleet`). */
export const REAPER_METRIC_NAMESPACE = 'Mountfleet';
/** The decisions the reaper counts, one metric each (unit Count). */
export const REAPER_METRIC_NAMES = ['Scanned', 'Deleted', 'Marked', 'Unmarked', 'Kept', 'Failed'] as const;
export type ReaperMetricName = (typeof REAPER_METRIC_NAMES)[number];

/** Where the pre-built reaper bundle lives (`node scripts/bundle.mjs` writes it; the npm package ships it). */
export function reaperBundleDir(): string {
  return join(packageRoot(), 'dist', 'lambda', 'reaper');
}

/** Props of {@link OrphanReaper}. */
export interface OrphanReaperProps {
  /** The fleet whose scratch file systems (tag `mountfleet:fleet`) the reaper may delete. */
  readonly fleetId: string;
  /**
   * The fleet's network: scopes `ec2:DeleteNetworkInterface` (needed by DeleteMountTarget) to its subnets.
   * @default - any network interface (DeleteMountTarget itself stays scoped by the fleet tag)
   */
  readonly network?: IFleetNetwork;
  /** Only report what would be deleted or marked. @default false */
  readonly dryRun?: boolean;
  /**
   * How often the full scan runs (whole minutes, 1 minute to 1 day). Also the period of `metricDecision` and
   * of the deletion alarm, so that one period holds one scheduled run's deletions.
   * @default Duration.minutes(15)
   */
  readonly scheduleInterval?: Duration;
  /**
   * How old a file system without a mount target must be before it counts as orphaned (whole minutes, 0 to
   * 7 days). @default Duration.minutes(30)
   */
  readonly gracePeriod?: Duration;
  /**
   * How long `ClientConnections` must be zero for metric-only evidence (whole minutes, 5 minutes to 1 day).
   * @default Duration.minutes(30)
   */
  readonly idleWindow?: Duration;
  /**
   * How far before now the metric window ends (CloudWatch ingestion lag; whole minutes, 0 to 60).
   * @default Duration.minutes(5)
   */
  readonly metricLag?: Duration;
  /** At most this many deletions per run (a brake on surprises; 1 to 1000). @default 100 */
  readonly maxDeletionsPerRun?: number;
  /**
   * The handler stops starting deletions this long before its timeout (at most 15 minutes).
   * @default Duration.seconds(60)
   */
  readonly deadlineMargin?: Duration;
  /** The function timeout. @default Duration.minutes(5) */
  readonly timeout?: Duration;
  /** Log retention of the function's log group. @default RetentionDays.ONE_MONTH */
  readonly logRetention?: logs.RetentionDays;
  /** Whether to create the alarms (errors, deletion bursts, dead letters). @default true */
  readonly alarms?: boolean;
  /** Deletions per schedule interval above which the deletion alarm fires. @default 20 */
  readonly deletionAlarmThreshold?: number;
  /** An SNS topic every alarm notifies when it goes into ALARM. @default - no alarm actions */
  readonly alarmTopic?: sns.ITopic;
}

/**
 * Finds and deletes the fleet's orphaned scratch file systems: a Lambda function from the pre-built bundle
 * (no esbuild or Docker at synth), run on a schedule and on Spot interruption warnings and instance
 * terminations (the fast path; the handler ignores instances that own no scratch file system of the
 * fleet), with a dead-letter queue, a log group with retention, alarms, and a least-privilege role whose
 * deletes are scoped by the fleet tag.
 */
export class OrphanReaper extends Construct {
  readonly fleetId: string;
  readonly function: lambda.Function;
  /** Failed asynchronous invocations and event deliveries (after retries) land here. */
  readonly deadLetterQueue: sqs.Queue;
  readonly logGroup: logs.LogGroup;
  /** The alarms (empty when `alarms` is false). */
  readonly alarms: cloudwatch.Alarm[] = [];
  private readonly schedulePeriod: Duration;

  constructor(scope: Construct, id: string, props: OrphanReaperProps) {
    super(scope, id);
    validateFleetId(this, props.fleetId);
    const timeout = props.timeout ?? Duration.minutes(5);
    const deadlineMargin = props.deadlineMargin ?? Duration.seconds(60);
    if (deadlineMargin.toSeconds() >= timeout.toSeconds()) {
      invalidProp(
        this,
        'deadlineMargin',
        `${deadlineMargin.toHumanString()} leaves no time in a ${timeout.toHumanString()} timeout`,
        'make it shorter than timeout',
      );
    }
    const settings = validateReaperSettings(this, {
      fleetId: props.fleetId,
      dryRun: props.dryRun ?? REAPER_DEFAULTS.dryRun,
      graceMinutes: wholeMinutes(this, 'gracePeriod', props.gracePeriod, REAPER_DEFAULTS.graceMinutes),
      idleWindowMinutes: wholeMinutes(
        this,
        'idleWindow',
        props.idleWindow,
        REAPER_DEFAULTS.idleWindowMinutes,
      ),
      metricLagMinutes: wholeMinutes(this, 'metricLag', props.metricLag, REAPER_DEFAULTS.metricLagMinutes),
      maxDeletionsPerRun: props.maxDeletionsPerRun ?? REAPER_DEFAULTS.maxDeletionsPerRun,
      deadlineMarginSeconds: deadlineMargin.toSeconds(),
    });
    if (props.alarmTopic && props.alarms === false) {
      invalidProp(
        this,
        'alarmTopic',
        'is given but alarms is false',
        'turn alarms on or leave the topic out',
      );
    }
    const scheduleInterval = props.scheduleInterval ?? Duration.minutes(15);
    const intervalSeconds = scheduleInterval.toSeconds();
    if (intervalSeconds % 60 !== 0 || intervalSeconds < 60 || intervalSeconds > 86_400) {
      invalidProp(
        this,
        'scheduleInterval',
        `${scheduleInterval.toHumanString()} is not a whole number of minutes from 1 minute to 1 day`,
        'for example Duration.minutes(15)',
      );
    }
    const codeDir = reaperBundleDir();
    if (!existsSync(join(codeDir, 'index.js'))) {
      invalidProp(
        this,
        'code',
        `the reaper bundle ${join(codeDir, 'index.js')} does not exist`,
        'run `node scripts/bundle.mjs` (npm run build does)',
      );
    }
    this.fleetId = props.fleetId;
    this.schedulePeriod = scheduleInterval;

    this.logGroup = new logs.LogGroup(this, 'LogGroup', {
      retention: props.logRetention ?? logs.RetentionDays.ONE_MONTH,
    });
    this.deadLetterQueue = new sqs.Queue(this, 'DeadLetterQueue', {
      encryption: sqs.QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      retentionPeriod: Duration.days(14),
    });
    const role = new iam.Role(this, 'Role', {
      assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'),
      description: `mountfleet orphan reaper of fleet ${props.fleetId}`,
    });
    this.function = new lambda.Function(this, 'Function', {
      description: `mountfleet orphan reaper: deletes orphaned scratch file systems of fleet ${props.fleetId}`,
      runtime: lambda.Runtime.NODEJS_22_X,
      architecture: lambda.Architecture.ARM_64,
      handler: 'index.handler',
      code: lambda.Code.fromAsset(codeDir),
      memorySize: 256,
      timeout,
      role,
      logGroup: this.logGroup,
      deadLetterQueue: this.deadLetterQueue,
      retryAttempts: 2,
      // One run at a time: two concurrent runs would count the same file systems twice against
      // maxDeletionsPerRun and race on the two-phase marks. Events that arrive meanwhile wait in Lambda's
      // asynchronous queue (throttled async invocations are retried), they are not lost.
      reservedConcurrentExecutions: 1,
      // Every setting from the schema's list of sources, so no variable the Lambda reads is left out.
      environment: Object.fromEntries(
        Object.entries(settings).map(([name, value]) => [
          REAPER_SETTING_SOURCES[name as keyof ReaperSettings].env,
          String(value),
        ]),
      ),
    });
    this.grantReaping(role, props.network);
    this.logGroup.grantWrite(role);

    // The L2 makes the function depend on the role and its policy; the role is already implied by the
    // function's GetAtt (cfn-lint W3005), the policy is the part that matters: no run before its grants.
    const policy = role.node.findChild('DefaultPolicy').node.defaultChild as iam.CfnPolicy;
    (this.function.node.defaultChild as lambda.CfnFunction).addOverride('DependsOn', [policy.logicalId]);

    // An event EventBridge cannot deliver (after its retries) goes to the same dead-letter queue.
    const target = new targets.LambdaFunction(this.function, {
      retryAttempts: 2,
      maxEventAge: Duration.hours(1),
      deadLetterQueue: this.deadLetterQueue,
    });
    new events.Rule(this, 'Schedule', {
      description: `mountfleet ${props.fleetId}: scheduled orphan scan`,
      schedule: events.Schedule.rate(this.schedulePeriod),
      targets: [target],
    });
    new events.Rule(this, 'SpotInterruption', {
      description: `mountfleet ${props.fleetId}: clean up after Spot interruptions`,
      eventPattern: { source: ['aws.ec2'], detailType: ['EC2 Spot Instance Interruption Warning'] },
      targets: [target],
    });
    new events.Rule(this, 'InstanceTerminated', {
      description: `mountfleet ${props.fleetId}: clean up after instance terminations`,
      eventPattern: {
        source: ['aws.ec2'],
        detailType: ['EC2 Instance State-change Notification'],
        detail: { state: ['terminated'] },
      },
      targets: [target],
    });

    if (props.alarms ?? true) {
      this.alarms.push(
        this.function.metricErrors({ period: Duration.minutes(5) }).createAlarm(this, 'ErrorsAlarm', {
          alarmDescription: `mountfleet ${props.fleetId}: the orphan reaper failed (see its log group)`,
          threshold: 0,
          comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
          evaluationPeriods: 1,
          treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
        }),
        this.metricDecision('Deleted', { period: this.schedulePeriod }).createAlarm(this, 'DeletionsAlarm', {
          alarmDescription: `mountfleet ${props.fleetId}: a burst of scratch deletions — agents may be failing to clean up`,
          threshold: props.deletionAlarmThreshold ?? 20,
          comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
          evaluationPeriods: 1,
          treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
        }),
        this.deadLetterQueue
          .metricApproximateNumberOfMessagesVisible({ period: Duration.minutes(5), statistic: 'Maximum' })
          .createAlarm(this, 'DeadLettersAlarm', {
            alarmDescription: `mountfleet ${props.fleetId}: reaper events failed after retries (dead-letter queue)`,
            threshold: 0,
            comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
            evaluationPeriods: 1,
            treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
          }),
      );
      if (props.alarmTopic) {
        const action = new cloudwatchActions.SnsAction(props.alarmTopic);
        this.alarms.forEach((alarm) => alarm.addAlarmAction(action));
      }
    }

    acknowledge(
      this.deadLetterQueue,
      'AwsSolutions-SQS3',
      'This queue is itself the dead-letter queue of the reaper function; it has no consumer whose failures need another queue.',
    );
    acknowledge(
      this.function,
      'AwsSolutions-L1',
      'The reaper bundle targets NODEJS_22_X, the runtime its AWS SDK v3 is supported on and tested with; moving runtimes is a deliberate, tested change, not an automatic one.',
    );
  }

  /** A reaper decision count for this fleet (namespace `Mountfleet`, dimension `Fleet`, Sum per schedule interval). */
  metricDecision(name: ReaperMetricName, props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return new cloudwatch.Metric({
      namespace: REAPER_METRIC_NAMESPACE,
      metricName: name,
      dimensionsMap: { Fleet: this.fleetId },
      statistic: 'Sum',
      period: this.schedulePeriod,
      ...props,
    });
  }

  private grantReaping(role: iam.Role, network: IFleetNetwork | undefined): void {
    const stack = Stack.of(this);
    const fileSystems = stack.formatArn({
      service: 'elasticfilesystem',
      resource: 'file-system',
      resourceName: '*',
    });
    const deletes = [
      'elasticfilesystem:DeleteMountTarget',
      'elasticfilesystem:DeleteFileSystem',
      'elasticfilesystem:TagResource',
      'elasticfilesystem:UntagResource',
    ];
    role.addToPolicy(
      new iam.PolicyStatement({
        sid: 'ReadEvidence',
        actions: [
          'elasticfilesystem:DescribeFileSystems',
          'elasticfilesystem:DescribeMountTargets',
          'cloudwatch:GetMetricData',
          'ec2:DescribeInstances',
        ],
        resources: ['*'],
      }),
    );
    role.addToPolicy(
      new iam.PolicyStatement({
        sid: 'DeleteOwnFleetScratch',
        actions: ['elasticfilesystem:DeleteMountTarget', 'elasticfilesystem:DeleteFileSystem'],
        resources: [fileSystems],
        conditions: { StringEquals: { [`aws:ResourceTag/${TAG_FLEET}`]: this.fleetId } },
      }),
    );
    // The two-phase delete marks and unmarks, and may touch no other tag.
    role.addToPolicy(
      new iam.PolicyStatement({
        sid: 'MarkOwnFleetScratch',
        actions: ['elasticfilesystem:TagResource', 'elasticfilesystem:UntagResource'],
        resources: [fileSystems],
        conditions: {
          StringEquals: { [`aws:ResourceTag/${TAG_FLEET}`]: this.fleetId },
          'ForAllValues:StringEquals': { 'aws:TagKeys': [TAG_MARKED_IDLE_AT] },
          // ForAllValues is also true of a request with no tag keys at all: require some.
          Null: { 'aws:TagKeys': 'false' },
        },
      }),
    );
    // Marks go through the Resource Groups Tagging API, 20 file systems a call. Its actions have no resource
    // type ("*"); for each ARN it then needs elasticfilesystem:TagResource/UntagResource as the caller, and
    // the statement above, with its tag conditions, is what confines the marks.
    role.addToPolicy(
      new iam.PolicyStatement({
        sid: 'BatchMarkOwnFleetScratch',
        actions: ['tag:TagResources', 'tag:UntagResources'],
        resources: ['*'],
      }),
    );
    // DeleteMountTarget also deletes the mount target's network interface as the caller.
    const networkInterfaces = stack.formatArn({
      service: 'ec2',
      resource: 'network-interface',
      resourceName: '*',
    });
    acknowledgeWildcardResource(
      role,
      '*',
      'Calls without resource-level permissions: the read-only evidence (elasticfilesystem:DescribeFileSystems/DescribeMountTargets, a paginated scan of the Region; cloudwatch:GetMetricData; ec2:DescribeInstances) and tag:TagResources/UntagResources, which only pass the tag-conditioned elasticfilesystem:TagResource/UntagResource through.',
    );
    acknowledgeWildcardResource(
      role,
      fileSystems,
      'Orphans are unknown until found; deletes and marks require aws:ResourceTag/mountfleet:fleet to equal this fleet (tag changes only on mountfleet:marked-idle-at), and untagged file systems are explicitly denied.',
    );
    acknowledgeWildcardResource(
      role,
      networkInterfaces,
      "DeleteMountTarget deletes the mount target's network interface as the caller; the interface ids are unknown in advance (scoped to the fleet subnets by ec2:Subnet when the network is given).",
    );
    const subnetArns = Object.values(network?.subnets ?? {}).map((s) =>
      stack.formatArn({ service: 'ec2', resource: 'subnet', resourceName: s.subnetId }),
    );
    role.addToPolicy(
      new iam.PolicyStatement({
        sid: 'DeleteMountTargetInterfaces',
        actions: ['ec2:DeleteNetworkInterface'],
        resources: [networkInterfaces],
        conditions: subnetArns.length ? { ArnEquals: { 'ec2:Subnet': subnetArns } } : undefined,
      }),
    );
    role.addToPolicy(
      new iam.PolicyStatement({
        sid: 'DenyUntagged',
        effect: iam.Effect.DENY,
        actions: deletes,
        resources: ['*'],
        conditions: { Null: { [`aws:ResourceTag/${TAG_FLEET}`]: 'true' } },
      }),
    );
  }
}

/** The prop each reaper setting comes from, so an error names what the caller wrote. */
const SETTING_PROPS: Record<keyof ReaperSettings, string> = {
  fleetId: 'fleetId',
  dryRun: 'dryRun',
  graceMinutes: 'gracePeriod',
  idleWindowMinutes: 'idleWindow',
  metricLagMinutes: 'metricLag',
  maxDeletionsPerRun: 'maxDeletionsPerRun',
  deadlineMarginSeconds: 'deadlineMargin',
};

const SETTING_UNITS: Record<ReaperNumericSetting, string> = {
  graceMinutes: ' minutes',
  idleWindowMinutes: ' minutes',
  metricLagMinutes: ' minutes',
  maxDeletionsPerRun: '',
  deadlineMarginSeconds: ' seconds',
};

/**
 * Validates the settings with the schema the Lambda applies to its environment, so values it would reject
 * on every run fail the synth instead, naming the prop and the allowed range.
 */
function validateReaperSettings(scope: Construct, input: ReaperSettingsInput): ReaperSettings {
  const result = z.safeParse(reaperSettingsSchema, input);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const name = issue.path[0] as keyof ReaperSettings;
  const value = input[name];
  if (!(name in REAPER_SETTING_RANGES)) return invalidProp(scope, SETTING_PROPS[name], issue.message);
  const range = REAPER_SETTING_RANGES[name as ReaperNumericSetting];
  const unit = SETTING_UNITS[name as ReaperNumericSetting];
  return invalidProp(
    scope,
    SETTING_PROPS[name],
    `${String(value)}${unit} ${issue.message}`,
    `allowed: ${range.min} to ${range.max}${unit}`,
  );
}

/** A Duration prop in whole minutes (the Lambda's settings are minutes; 90 seconds cannot be passed on). */
function wholeMinutes(scope: Construct, prop: string, d: Duration | undefined, fallback: number): number {
  if (d === undefined) return fallback;
  const seconds = d.toSeconds();
  if (seconds % 60 !== 0) {
    invalidProp(
      scope,
      prop,
      `${d.toHumanString()} is not a whole number of minutes`,
      'for example Duration.minutes(30)',
    );
  }
  return seconds / 60;
}
