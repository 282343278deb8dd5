/**
 * The reaper's alarms: the function failed, a burst of deletions (agents failing to clean up), events lost
 * after their retries (dead-letter queue) — each sent to the topic when one is given.
 */
import { Duration } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as cloudwatchActions from 'aws-cdk-lib/aws-cloudwatch-actions';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import type * as sns from 'aws-cdk-lib/aws-sns';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';

/** What {@link reaperAlarms} watches. */
interface ReaperAlarmOptions {
  readonly fn: lambda.IFunction;
  /** The `Deleted` decision count, one datapoint per schedule interval. */
  readonly deletions: cloudwatch.Metric;
  readonly deadLetterQueue: sqs.Queue;
  readonly fleetId: string;
  /** Deletions in one interval above which the alarm fires. */
  readonly deletionThreshold: number;
  /** Where the alarms go, if anywhere. */
  readonly topic?: sns.ITopic;
}

/** The alarms `ErrorsAlarm`, `DeletionsAlarm` and `DeadLettersAlarm` of `scope`. */
export function reaperAlarms(scope: Construct, options: ReaperAlarmOptions): cloudwatch.Alarm[] {
  const alarms = [
    options.fn.metricErrors({ period: Duration.minutes(5) }).createAlarm(scope, 'ErrorsAlarm', {
      alarmDescription: `mountfleet ${options.fleetId}: the orphan reaper failed (see its log group)`,
      threshold: 0,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
      evaluationPeriods: 1,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    }),
    options.deletions.createAlarm(scope, 'DeletionsAlarm', {
      alarmDescription: `mountfleet ${options.fleetId}: a burst of scratch deletions — agents may be failing to clean up`,
      threshold: options.deletionThreshold,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
      evaluationPeriods: 1,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    }),
    options.deadLetterQueue
      .metricApproximateNumberOfMessagesVisible({ period: Duration.minutes(5), statistic: 'Maximum' })
      .createAlarm(scope, 'DeadLettersAlarm', {
        alarmDescription: `mountfleet ${options.fleetId}: reaper events failed after retries (dead-letter queue)`,
        threshold: 0,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
        evaluationPeriods: 1,
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      }),
  ];
  if (options.topic) {
    const action = new cloudwatchActions.SnsAction(options.topic);
    alarms.forEach((alarm) => alarm.addAlarmAction(action));
  }
  return alarms;
}
