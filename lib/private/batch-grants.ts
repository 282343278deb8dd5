/**
 * The IAM of a Batch fleet's submission, in two parts (docs/design-decisions.md, "Batch submission"):
 *
 * - the **submitter** (`grantBatchSubmitter`, what BatchComputeFleet.grantSubmit gives) may invoke the fleet's
 *   submit function and read job state, nothing else: IAM cannot see a job definition's volumes, devices or Linux
 *   parameters (RegisterJobDefinition evaluates only batch:Privileged, batch:User, batch:Image, batch:LogDriver,
 *   batch:AWSLogs* among them), so no principal that submits may register or submit job definitions itself;
 * - the **runner** (`grantBatchRunner`: the submit function and the teardown, which check every definition
 *   against the fleet first) registers and deregisters the fleet's per-run definitions, submits to the fleet's
 *   queues, passes the job role, and makes and deletes the runs' file systems (the fleet's KMS key included).
 *
 * Checked against the Service Authorization Reference for AWS Batch
 * (https://docs.aws.amazon.com/service-authorization/latest/reference/list_awsbatch.html), AWS Lambda and Amazon
 * EFS, and the Batch User Guide's policy examples (iam-example-restrict-job-submission.html,
 * iam-example-restrict-job-submission-by-tags.html): SubmitJob authorizes the job queue and the job definition,
 * whose ARN then carries the revision (`job-definition/NAME:REV`); RegisterJobDefinition and
 * DeregisterJobDefinition the job definition, whose ARN pattern here is the fleet's per-run names only (ending in
 * `*`, so it matches with or without a revision). TagResource (SubmitJob and RegisterJobDefinition with tags)
 * takes the run's tag keys only (aws:TagKeys). lambda:InvokeFunction authorizes the function ARN
 * (`function:NAME`, unqualified here; a qualified ARN is `function:NAME:QUALIFIER`). The Describe and List calls
 * have no resource type. The EFS and EC2 statements are scratch-grants.ts's grantRunFileSystems, scoped by the fleet tag.
 */
import { ArnFormat, Stack } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import type { IConstruct } from 'constructs';
import {
  BATCH_RUN_TAG_KEYS,
  BATCH_SCRATCH_CREATE_TAG_KEYS,
  BATCH_SCRATCH_SUBMIT_TAG_KEYS,
  TAG_FLEET,
  runJobDefinitionIamPattern,
} from '../../core/contract';
import type { IScratchFileSystems } from '../interfaces';
import { acknowledgeWildcardResource } from './nag';
import { grantRunFileSystems } from './scratch-grants';

/** The services a job role is passed to: Batch (RegisterJobDefinition) and ECS, which runs the job's task. */
export const JOB_ROLE_PASSED_TO = ['batch.amazonaws.com', 'ecs-tasks.amazonaws.com'];

/** What the fleet's runs are scoped to. */
interface BatchRunScope {
  readonly fleetId: string;
  /** The fleet's job queues (ARNs). */
  readonly queueArns: string[];
  /** The one role a job definition may carry. */
  readonly jobRole: iam.IRole;
  /** The fleet's scratch: a run creates, tags and deletes its file system (encrypted with the scratch key). */
  readonly scratch?: IScratchFileSystems;
}

/** `arn:…:batch:R:A:job-definition/mf-<fleet>-<run id shape>*`: every revision of the fleet's per-run definitions. */
export function runJobDefinitionsArn(scope: IConstruct, fleetId: string): string {
  return Stack.of(scope).formatArn({
    service: 'batch',
    resource: 'job-definition',
    resourceName: runJobDefinitionIamPattern(fleetId),
    arnFormat: ArnFormat.SLASH_RESOURCE_NAME,
  });
}

function allow(grantee: iam.IGrantable, actions: string[], resourceArns: string[], conditions?: object) {
  return iam.Grant.addToPrincipal({
    grantee,
    actions,
    resourceArns,
    conditions: conditions as Record<string, Record<string, unknown>> | undefined,
  });
}

/** Batch's reads: no resource type in the Service Authorization Reference. */
const BATCH_READS = [
  'batch:DescribeJobQueues',
  'batch:DescribeJobDefinitions',
  'batch:DescribeJobs',
  'batch:ListJobs',
];

/** The reads behind `mountfleet batch status` and the function look-up: Batch's, and the runs' file systems and credit. */
function grantBatchReads(grantee: iam.IGrantable): iam.Grant {
  acknowledgeWildcardResource(
    grantee.grantPrincipal,
    '*',
    'batch:DescribeJobQueues, DescribeJobDefinitions, DescribeJobs, ListJobs, elasticfilesystem:DescribeFileSystems and cloudwatch:GetMetricData (classic metrics) have no resource type in the Service Authorization Reference; they read, and the explicit Deny of privileged registrations names every job definition.',
  );
  return allow(grantee, BATCH_READS, ['*']);
}

/**
 * A submitter: invoke the fleet's submit function, read job state (`batch status`: Batch, the runs' file systems and
 * their burst credit). It cannot register or submit a job definition, pass a role, or touch a file system.
 */
export function grantBatchSubmitter(grantee: iam.IGrantable, submitFunction: lambda.IFunction): iam.Grant {
  return submitFunction
    .grantInvoke(grantee)
    .combine(grantBatchReads(grantee))
    .combine(allow(grantee, ['elasticfilesystem:DescribeFileSystems', 'cloudwatch:GetMetricData'], ['*']));
}

/**
 * The fleet's own functions (submit, teardown): submit to the fleet's queues any job definition — they check each
 * one first (core/batch/host-access.ts) —, register and deregister the per-run definitions only (never
 * privileged), pass the job role only, read Batch's state, and with scratch make, tag and delete the fleet's file
 * systems.
 */
export function grantBatchRunner(scope: IConstruct, grantee: iam.IGrantable, s: BatchRunScope): iam.Grant {
  const runDefinitions = runJobDefinitionsArn(scope, s.fleetId);
  acknowledgeWildcardResource(
    grantee.grantPrincipal,
    runDefinitions,
    "A run registers one job definition, named mf-<fleet>-<run id> (a fresh id, unknown at deploy); the pattern matches this fleet's run-id shape only ('?' per character) and '*' the revision, so another fleet's or a user's definitions are out of reach.",
  );
  const jobs = Stack.of(scope).formatArn({ service: 'batch', resource: 'job', resourceName: '*' });
  acknowledgeWildcardResource(
    grantee.grantPrincipal,
    jobs,
    "A submitted job's id is made by Batch; tagging one at submit is allowed only with this fleet's mountfleet:fleet tag in the request.",
  );
  const anyDefinition = Stack.of(scope).formatArn({
    service: 'batch',
    resource: 'job-definition',
    resourceName: '*',
    arnFormat: ArnFormat.SLASH_RESOURCE_NAME,
  });
  acknowledgeWildcardResource(
    grantee.grantPrincipal,
    anyDefinition,
    "The submit function runs a job definition a submitter names (any name, any revision) after checking it against the fleet (core/batch/host-access.ts: host volumes only at the fleet's Mountpoint paths, read-only; no devices; not privileged; the fleet's job role); IAM cannot see those fields, the function can. The queues are the fleet's only.",
  );
  grantee.grantPrincipal.addToPrincipalPolicy(
    new iam.PolicyStatement({
      sid: 'NoPrivilegedJobDefinitions',
      effect: iam.Effect.DENY,
      actions: ['batch:RegisterJobDefinition'],
      resources: ['*'],
      conditions: { Bool: { 'batch:Privileged': 'true' } },
    }),
  );
  const runTagKeys = { 'ForAllValues:StringEquals': { 'aws:TagKeys': [...BATCH_RUN_TAG_KEYS] } };
  let grant = allow(grantee, ['batch:SubmitJob'], [...s.queueArns, anyDefinition])
    .combine(
      allow(grantee, ['batch:RegisterJobDefinition', 'batch:DeregisterJobDefinition'], [runDefinitions]),
    )
    .combine(
      // RegisterJobDefinition with the run's tags authorizes batch:TagResource on the new revision.
      allow(grantee, ['batch:TagResource'], [runDefinitions], {
        StringEquals: { [`aws:RequestTag/${TAG_FLEET}`]: s.fleetId },
        ...runTagKeys,
      }),
    )
    .combine(
      // SubmitJob with tags (the run's, on the job and its ECS task) also authorizes batch:TagResource on the new job.
      allow(grantee, ['batch:TagResource'], [jobs], {
        StringEquals: { [`aws:RequestTag/${TAG_FLEET}`]: s.fleetId },
        ...runTagKeys,
      }),
    )
    .combine(grantBatchReads(grantee))
    .combine(
      allow(grantee, ['iam:PassRole'], [s.jobRole.roleArn], {
        StringEquals: { 'iam:PassedToService': JOB_ROLE_PASSED_TO },
      }),
    );
  if (s.scratch) {
    // A run's file system: created with the fleet tag and the create keys only, tagged later with the job's keys
    // only; no credit guard, which runs only in an instance's `scratch run`.
    grant = grant.combine(
      grantRunFileSystems(scope, grantee, s.scratch, {
        createTagKeys: BATCH_SCRATCH_CREATE_TAG_KEYS,
        tagKeysAfterCreate: BATCH_SCRATCH_SUBMIT_TAG_KEYS,
        creditGuard: false,
      }),
    );
  }
  return grant;
}
