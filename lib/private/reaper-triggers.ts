/**
 * What starts the reaper: a schedule, and the fast path on Spot interruption warnings and instance
 * terminations. Events EventBridge cannot deliver after its retries go to the function's dead-letter queue.
 */
import { Duration } from 'aws-cdk-lib';
import * as events from 'aws-cdk-lib/aws-events';
import * as targets from 'aws-cdk-lib/aws-events-targets';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';

/** What {@link addReaperTriggers} wires up. */
interface ReaperTriggerOptions {
  readonly fn: lambda.IFunction;
  readonly deadLetterQueue: sqs.IQueue;
  readonly fleetId: string;
  /** How often the scheduled scan runs. */
  readonly schedule: Duration;
}

/** The rules `Schedule`, `SpotInterruption` and `InstanceTerminated` of `scope`, all targeting the function. */
export function addReaperTriggers(scope: Construct, options: ReaperTriggerOptions): void {
  // An event EventBridge cannot deliver (after its retries) goes to the same dead-letter queue.
  const target = new targets.LambdaFunction(options.fn, {
    retryAttempts: 2,
    maxEventAge: Duration.hours(1),
    deadLetterQueue: options.deadLetterQueue,
  });
  new events.Rule(scope, 'Schedule', {
    description: `mountfleet ${options.fleetId}: scheduled orphan scan`,
    schedule: events.Schedule.rate(options.schedule),
    targets: [target],
  });
  new events.Rule(scope, 'SpotInterruption', {
    description: `mountfleet ${options.fleetId}: clean up after Spot interruptions`,
    eventPattern: { source: ['aws.ec2'], detailType: ['EC2 Spot Instance Interruption Warning'] },
    targets: [target],
  });
  new events.Rule(scope, 'InstanceTerminated', {
    description: `mountfleet ${options.fleetId}: clean up after instance terminations`,
    eventPattern: {
      source: ['aws.ec2'],
      detailType: ['EC2 Instance State-change Notification'],
      detail: { state: ['terminated'] },
    },
    targets: [target],
  });
}
