import { Duration } from 'aws-cdk-lib';
import type * as iam from 'aws-cdk-lib/aws-iam';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import type * as logs from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { SUBMIT_FUNCTION_TIMEOUT_MINUTES, submitFunctionName } from '../core/contract';
import type { IBatchComputeFleet } from './interfaces';
import { fleetFunction } from './private/fleet-function';

/** Props of {@link BatchSubmitFunction}. */
export interface BatchSubmitFunctionProps {
  /** The fleet whose jobs the function submits. */
  readonly fleet: IBatchComputeFleet;
  /** Log retention of the function's log group. @default RetentionDays.ONE_MONTH */
  readonly logRetention?: logs.RetentionDays;
}

/**
 * The only way onto a Batch fleet's hosts: `mountfleet batch submit` invokes this function, which checks the job
 * definition against the fleet (host volumes only at the fleet's Mountpoint paths and read-only, no devices, not
 * privileged, the fleet's job role; IAM cannot see these), makes the run's scratch file system when asked, registers
 * the run's revision and submits the job. A submitter is granted only to invoke it and read job state
 * (`BatchComputeFleet.grantSubmit`). Its name is fixed by the fleet id (`mountfleet-<fleet>-batch-submit`): the
 * fleet's queues carry it as a tag, which a reference would make circular (the function's policy names the queues).
 */
export class BatchSubmitFunction extends Construct {
  /** The function (the pre-built bundle dist/lambda/batch-submit). */
  readonly function: lambda.Function;
  /** Its role: the fleet's run grants (`grantRunJobs`). */
  readonly role: iam.Role;
  /** The function's log group. */
  readonly logGroup: logs.LogGroup;

  constructor(scope: Construct, id: string, props: BatchSubmitFunctionProps) {
    super(scope, id);
    const { fleet } = props;
    const made = fleetFunction(this, {
      bundle: 'batch-submit',
      functionName: submitFunctionName(fleet.fleetId),
      description: `mountfleet: checks and submits the jobs of Batch fleet ${fleet.fleetId}`,
      // Making a run's file system and mount target takes minutes; the submit stops in time to roll back.
      timeout: Duration.minutes(SUBMIT_FUNCTION_TIMEOUT_MINUTES),
      environment: fleet.functionEnvironment(),
      logRetention: props.logRetention,
    });
    this.function = made.function;
    this.role = made.role;
    this.logGroup = made.logGroup;
    fleet.grantRunJobs(this.role);
  }

  /** Lets a principal invoke the function (what `BatchComputeFleet.grantSubmit` gives with the reads). */
  grantInvoke(grantee: iam.IGrantable): iam.Grant {
    return this.function.grantInvoke(grantee);
  }
}
