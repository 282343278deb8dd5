import { Duration } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import type * as logs from 'aws-cdk-lib/aws-logs';
import type * as sns from 'aws-cdk-lib/aws-sns';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import {
  REAPER_FLEET_DIMENSION,
  REAPER_METRICS_NAMESPACE,
  type ReaperMetricName,
  REAPER_DEFAULTS,
  REAPER_FUNCTION_MEMORY_MB,
  REAPER_SETTING_SOURCES,
  type ReaperSettings,
} from '../core/contract';
import type { IFleetNetwork } from './interfaces';
import { fleetFunction, lambdaBundleDir } from './private/fleet-function';
import { reaperAlarms } from './private/reaper-alarms';
import { grantReaping } from './private/reaper-grants';
import { validateReaperSettings, wholeMinutes } from './private/reaper-settings';
import { addReaperTriggers } from './private/reaper-triggers';
import { invalidProp, validateFleetId } from './private/validation';

const REAPER_BUNDLE = 'reaper';

/** Where the pre-built reaper bundle lives (`node scripts/bundle.mjs` writes it; the npm package ships it). */
export function reaperBundleDir(): string {
  return lambdaBundleDir(REAPER_BUNDLE);
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
  /**
   * A Batch run's file system whose job Batch does not return counts as ended once the file system is this old
   * (Batch forgets ended jobs; whole minutes, 15 minutes to 7 days). @default Duration.minutes(60)
   */
  readonly batchUnknownJobAge?: Duration;
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
  /** The fleet whose scratch file systems it may delete. */
  readonly fleetId: string;
  /** The reaper Lambda (the pre-built bundle; reserved concurrency 1). */
  readonly function: lambda.Function;
  /** Failed asynchronous invocations and event deliveries (after retries) land here. */
  readonly deadLetterQueue: sqs.Queue;
  /** The function's log group: one JSON line per decision and a summary per run. */
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
      batchUnknownJobMinutes: wholeMinutes(
        this,
        'batchUnknownJobAge',
        props.batchUnknownJobAge,
        REAPER_DEFAULTS.batchUnknownJobMinutes,
      ),
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
    this.fleetId = props.fleetId;
    this.schedulePeriod = scheduleInterval;

    const made = fleetFunction(this, {
      bundle: REAPER_BUNDLE,
      description: `mountfleet orphan reaper: deletes orphaned scratch file systems of fleet ${props.fleetId}`,
      roleDescription: `mountfleet orphan reaper of fleet ${props.fleetId}`,
      timeout,
      // Not the 256 MB of the other functions: see REAPER_FUNCTION_MEMORY_MB (512 MB also doubles the CPU share).
      memorySize: REAPER_FUNCTION_MEMORY_MB,
      logRetention: props.logRetention,
      deadLetterQueue: true,
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
      grantsFirst: (role) => grantReaping(role, props.fleetId, props.network),
    });
    this.function = made.function;
    this.logGroup = made.logGroup;
    this.deadLetterQueue = made.deadLetterQueue;

    addReaperTriggers(this, {
      fn: this.function,
      deadLetterQueue: this.deadLetterQueue,
      fleetId: props.fleetId,
      schedule: this.schedulePeriod,
    });

    if (props.alarms ?? true) {
      this.alarms.push(
        ...reaperAlarms(this, {
          fn: this.function,
          deletions: this.metricDecision('Deleted', { period: this.schedulePeriod }),
          deadLetterQueue: this.deadLetterQueue,
          fleetId: props.fleetId,
          deletionThreshold: props.deletionAlarmThreshold ?? 20,
          topic: props.alarmTopic,
        }),
      );
    }
  }

  /** A reaper decision count for this fleet (namespace `Mountfleet/Reaper`, dimension `Fleet`, Sum per schedule interval). */
  metricDecision(name: ReaperMetricName, props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return new cloudwatch.Metric({
      namespace: REAPER_METRICS_NAMESPACE,
      metricName: name,
      dimensionsMap: { [REAPER_FLEET_DIMENSION]: this.fleetId },
      statistic: 'Sum',
      period: this.schedulePeriod,
      ...props,
    });
  }
}
