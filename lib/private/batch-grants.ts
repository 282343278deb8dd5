/**
 * What `mountfleet batch submit` (and the teardown's resubmission of a retry) may do, statement by statement,
 * checked against the Service Authorization Reference for AWS Batch
 * (https://docs.aws.amazon.com/service-authorization/latest/reference/list_awsbatch.html) and the Batch User
 * Guide's policy examples (iam-example-restrict-job-submission.html, iam-example-restrict-job-submission-by-tags.html):
 * SubmitJob authorizes the job queue and the job definition, whose ARN then carries the revision
 * (`job-definition/NAME:REV`; a pattern without `:…` matches no SubmitJob); RegisterJobDefinition and
 * DeregisterJobDefinition the job definition, whose ARN pattern here is the fleet's per-run names only (ending in
 * `*`, so it matches with or without a revision). A plain submit (no scratch) submits the fleet's own job
 * definitions (FleetJobDefinition, tagged mountfleet:fleet): SubmitJob of `job-definition/*:*` with that resource
 * tag (Batch evaluates a job definition's tags only when the revision is given; `*:*` requires one). TagResource
 * (SubmitJob and RegisterJobDefinition with tags) takes the run's tag keys only (aws:TagKeys, which the reference
 * lists for TagResource). The Describe and List calls have no resource type. The EFS and EC2 statements are
 * scratch-grants.ts's, scoped by the fleet tag, with the Batch run's own tag keys.
 */
import { ArnFormat, Stack } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
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
import {
  acknowledgeScratchWildcards,
  denyUntaggedScratch,
  grantCreateTagged,
  grantEfsServiceLinkedRole,
  grantMountTargetInterfaces,
  grantMountTargetsAndDelete,
  grantScratchLookups,
  grantTeardownMark,
} from './scratch-grants';
import { anyFileSystemArn, anyNetworkInterfaceArn, onlyTagKeysOfFleet, subnetArns } from './scratch-iam';

/** The services a job role is passed to: Batch (RegisterJobDefinition) and ECS, which runs the job's task. */
export const JOB_ROLE_PASSED_TO = ['batch.amazonaws.com', 'ecs-tasks.amazonaws.com'];

/** What a submit is scoped to. */
interface BatchSubmitScope {
  readonly fleetId: string;
  /** The fleet's job queues (ARNs). */
  readonly queueArns: string[];
  /** The one role a job definition may carry. */
  readonly jobRole: iam.IRole;
  /** The fleet's scratch: a submit with `--scratch` creates, tags and (on a failure half way) deletes. */
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

/** Submit, register and deregister the fleet's per-run job definitions, pass the job role, read Batch's state. */
export function grantBatchSubmit(scope: IConstruct, grantee: iam.IGrantable, s: BatchSubmitScope): iam.Grant {
  const runDefinitions = runJobDefinitionsArn(scope, s.fleetId);
  acknowledgeWildcardResource(
    grantee.grantPrincipal,
    runDefinitions,
    "A submit registers one job definition per run, named mf-<fleet>-<run id> (a fresh id, unknown at deploy); the pattern matches this fleet's run-id shape only ('?' per character) and '*' the revision, so another fleet's or a user's definitions are out of reach.",
  );
  acknowledgeWildcardResource(
    grantee.grantPrincipal,
    '*',
    'batch:DescribeJobQueues, DescribeJobDefinitions, DescribeJobs and ListJobs have no resource type in the Service Authorization Reference; the explicit Deny of privileged registrations names every job definition.',
  );
  const jobs = Stack.of(scope).formatArn({ service: 'batch', resource: 'job', resourceName: '*' });
  acknowledgeWildcardResource(
    grantee.grantPrincipal,
    jobs,
    "A submitted job's id is made by Batch; tagging one at submit is allowed only with this fleet's mountfleet:fleet tag in the request.",
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
  const fleetDefinitions = Stack.of(scope).formatArn({
    service: 'batch',
    resource: 'job-definition',
    resourceName: '*:*',
    arnFormat: ArnFormat.SLASH_RESOURCE_NAME,
  });
  acknowledgeWildcardResource(
    grantee.grantPrincipal,
    fleetDefinitions,
    "A plain submit runs one of the fleet's job definitions (FleetJobDefinition, names chosen by the user): the statement requires the definition's mountfleet:fleet tag, which Batch evaluates because the ARN pattern requires a revision.",
  );
  const runTagKeys = { 'ForAllValues:StringEquals': { 'aws:TagKeys': [...BATCH_RUN_TAG_KEYS] } };
  let grant = allow(grantee, ['batch:SubmitJob'], [...s.queueArns, runDefinitions])
    .combine(
      allow(grantee, ['batch:SubmitJob'], [fleetDefinitions], {
        StringEquals: { [`aws:ResourceTag/${TAG_FLEET}`]: s.fleetId },
      }),
    )
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
    .combine(
      allow(
        grantee,
        ['batch:DescribeJobQueues', 'batch:DescribeJobDefinitions', 'batch:DescribeJobs', 'batch:ListJobs'],
        ['*'],
      ),
    )
    .combine(
      allow(grantee, ['iam:PassRole'], [s.jobRole.roleArn], {
        StringEquals: { 'iam:PassedToService': JOB_ROLE_PASSED_TO },
      }),
    );
  if (s.scratch) grant = grant.combine(grantBatchScratch(scope, grantee, s.fleetId, s.scratch));
  return grant;
}

/**
 * A Batch run's file system: created with the fleet tag and the create keys only, tagged later with the job's
 * keys only, its mount target made in the queue's subnet, and everything about it deleted — this fleet's only.
 */
function grantBatchScratch(
  scope: IConstruct,
  grantee: iam.IGrantable,
  fleetId: string,
  scratch: IScratchFileSystems,
): iam.Grant {
  const fileSystems = anyFileSystemArn(scope);
  const networkInterfaces = anyNetworkInterfaceArn(scope);
  acknowledgeScratchWildcards(grantee, fileSystems, networkInterfaces);
  const securityGroup = Stack.of(scope).formatArn({
    service: 'ec2',
    resource: 'security-group',
    resourceName: scratch.securityGroup.securityGroupId,
  });
  const grant = grantCreateTagged(grantee, fleetId, fileSystems, BATCH_SCRATCH_CREATE_TAG_KEYS)
    .combine(
      allow(
        grantee,
        ['elasticfilesystem:TagResource'],
        [fileSystems],
        onlyTagKeysOfFleet(fleetId, BATCH_SCRATCH_SUBMIT_TAG_KEYS),
      ),
    )
    .combine(grantTeardownMark(grantee, fleetId, fileSystems))
    .combine(grantMountTargetsAndDelete(grantee, fleetId, fileSystems))
    .combine(grantScratchLookups(grantee))
    .combine(
      grantMountTargetInterfaces(
        grantee,
        networkInterfaces,
        subnetArns(scope, Object.values(scratch.subnets)),
        securityGroup,
      ),
    )
    .combine(grantEfsServiceLinkedRole(scope, grantee));
  denyUntaggedScratch(grantee);
  return grant;
}
