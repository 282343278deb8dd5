import { Duration } from 'aws-cdk-lib';
import * as events from 'aws-cdk-lib/aws-events';
import * as targets from 'aws-cdk-lib/aws-events-targets';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import type * as logs from 'aws-cdk-lib/aws-logs';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { BATCH_FINAL_STATES } from '../core/contract';
import type { IBatchComputeFleet } from './interfaces';
import { fleetFunction } from './private/fleet-function';

/** Props of {@link BatchScratchTeardown}. */
export interface BatchScratchTeardownProps {
  /** The fleet whose jobs' scratch file systems and per-run job definitions the teardown deletes. */
  readonly fleet: IBatchComputeFleet;
  /** The function timeout. @default Duration.minutes(5) */
  readonly timeout?: Duration;
  /** Log retention of the function's log group. @default RetentionDays.ONE_MONTH */
  readonly logRetention?: logs.RetentionDays;
}

/**
 * Deletes a Batch run's scratch file system and deregisters its job-definition revision when the job ends: an
 * EventBridge rule on `aws.batch` "Batch Job State Change" to SUCCEEDED or FAILED in the fleet's queues starts a
 * Lambda from the pre-built bundle, whose role has the fleet's run grants (`grantRunJobs`: a retried attempt is
 * resubmitted as a new run with a file system of its own) and so may delete only file systems tagged with the fleet. Events it cannot take
 * after EventBridge's and Lambda's retries land in a dead-letter queue; the orphan reaper catches the rest.
 */
export class BatchScratchTeardown extends Construct {
  /** The teardown Lambda (the pre-built bundle). */
  readonly function: lambda.Function;
  /** The rule on the fleet's jobs' final states. */
  readonly rule: events.Rule;
  /** Events and invocations that failed after their retries. */
  readonly deadLetterQueue: sqs.Queue;
  /** The function's log group. */
  readonly logGroup: logs.LogGroup;

  constructor(scope: Construct, id: string, props: BatchScratchTeardownProps) {
    super(scope, id);
    const { fleet } = props;
    const made = fleetFunction(this, {
      bundle: 'batch-teardown',
      description: `mountfleet: deletes the scratch of fleet ${fleet.fleetId}'s Batch jobs when they end`,
      timeout: props.timeout ?? Duration.minutes(5),
      environment: fleet.functionEnvironment(),
      logRetention: props.logRetention,
      deadLetterQueue: true,
    });
    this.function = made.function;
    this.logGroup = made.logGroup;
    this.deadLetterQueue = made.deadLetterQueue;
    // A retried attempt is a new run: the teardown makes it as the submit function does.
    fleet.grantRunJobs(made.role);

    this.rule = new events.Rule(this, 'JobEnded', {
      description: `mountfleet ${fleet.fleetId}: a Batch job of the fleet's queues ended; delete its scratch`,
      eventPattern: {
        source: ['aws.batch'],
        detailType: ['Batch Job State Change'],
        detail: { status: [...BATCH_FINAL_STATES], jobQueue: fleet.jobQueueArns },
      },
      targets: [
        new targets.LambdaFunction(this.function, {
          retryAttempts: 8,
          maxEventAge: Duration.hours(6),
          deadLetterQueue: this.deadLetterQueue,
        }),
      ],
    });
  }
}
