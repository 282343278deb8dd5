import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Duration } from 'aws-cdk-lib';
import * as events from 'aws-cdk-lib/aws-events';
import * as targets from 'aws-cdk-lib/aws-events-targets';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { BATCH_FINAL_STATES, BATCH_TEARDOWN_ENV, packageRoot } from '../core/contract';
import type { IBatchComputeFleet } from './interfaces';
import { acknowledge } from './private/nag';
import { invalidProp } from './private/validation';

/** Where the pre-built Batch teardown bundle lives (`node scripts/bundle.mjs` writes it; the npm package ships it). */
export function batchTeardownBundleDir(): string {
  return join(packageRoot(), 'dist', 'lambda', 'batch-teardown');
}

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
 * Lambda from the pre-built bundle, whose role is the submit's (`grantSubmit`: a retried attempt is resubmitted
 * with a file system of its own) and so may delete only file systems tagged with the fleet. Events it cannot take
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
    const codeDir = batchTeardownBundleDir();
    if (!existsSync(join(codeDir, 'index.js'))) {
      invalidProp(
        this,
        'code',
        `the Batch teardown bundle ${join(codeDir, 'index.js')} does not exist`,
        'run `node scripts/bundle.mjs` (npm run build does)',
      );
    }
    const { fleet } = props;
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
      description: `mountfleet Batch scratch teardown of fleet ${fleet.fleetId}`,
    });
    this.function = new lambda.Function(this, 'Function', {
      description: `mountfleet: deletes the scratch of fleet ${fleet.fleetId}'s Batch jobs when they end`,
      runtime: lambda.Runtime.NODEJS_22_X,
      architecture: lambda.Architecture.ARM_64,
      handler: 'index.handler',
      code: lambda.Code.fromAsset(codeDir),
      memorySize: 256,
      timeout: props.timeout ?? Duration.minutes(5),
      role,
      logGroup: this.logGroup,
      deadLetterQueue: this.deadLetterQueue,
      retryAttempts: 2,
      environment: {
        [BATCH_TEARDOWN_ENV.fleetId]: fleet.fleetId,
        [BATCH_TEARDOWN_ENV.queueArns]: fleet.jobQueueArns.join(','),
      },
    });
    fleet.grantSubmit(role);
    this.logGroup.grantWrite(role);
    // No run before its grants (see OrphanReaper: the function's GetAtt already implies the role).
    const policy = role.node.findChild('DefaultPolicy').node.defaultChild as iam.CfnPolicy;
    (this.function.node.defaultChild as lambda.CfnFunction).addOverride('DependsOn', [policy.logicalId]);

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

    acknowledge(
      this.deadLetterQueue,
      'AwsSolutions-SQS3',
      'This queue is itself the dead-letter queue of the teardown function and its rule; it has no consumer whose failures need another queue.',
    );
    acknowledge(
      this.function,
      'AwsSolutions-L1',
      'The teardown bundle targets NODEJS_22_X, the runtime its AWS SDK v3 is supported on and tested with; moving runtimes is a deliberate, tested change, not an automatic one.',
    );
  }
}
