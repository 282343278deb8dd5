/**
 * grantSubmit (a submitter), and the roles of the fleet's own functions (submit and teardown: grantRunJobs),
 * evaluated as IAM would (batch-iam-evaluator.ts) on the requests AWS makes: resource ARNs in the Service
 * Authorization Reference's formats (a job definition's with its revision, a function's unqualified or qualified),
 * request and resource tags as context keys. Each allow is paired with the request next to it that must be refused.
 * A submitter may invoke the submit function and read, nothing that reaches a host or a file system.
 */
import * as iam from 'aws-cdk-lib/aws-iam';
import {
  BATCH_RUN_TAG_KEYS,
  BATCH_SCRATCH_CREATE_TAG_KEYS,
  TAG_BATCH_ATTEMPT,
  TAG_BATCH_JOB,
  TAG_BATCH_SCRATCH_PATH,
  TAG_FLEET,
  TAG_OWNER_INSTANCE,
} from '../../core/contract';
import { batchFleetStack } from './batch-fleet-fixture';
import { evaluate, policyOfRole, type IamRequest } from './batch-iam-evaluator';
import { ensureBundles, type Statement } from './support';

beforeAll(ensureBundles);

const ARN = 'arn:aws:batch:us-east-1:123456789012';
const RUN = 'r20250101t120000-0123456789abcdef';
const FS = 'arn:aws:elasticfilesystem:us-east-1:123456789012:file-system/fs-0123456789abcdef0';

let submitter: Statement[];
let teardown: Statement[];
let submitFunctionRole: Statement[];
let queueArn: string;
let jobRoleArn: string;
let submitFunctionArn: string;

beforeAll(() => {
  const { stack, fleet, template } = batchFleetStack();
  fleet.grantSubmit(new iam.Role(stack, 'Submitter', { assumedBy: new iam.AccountRootPrincipal() }));
  const t = template();
  submitter = policyOfRole(t, 'Submitter');
  teardown = policyOfRole(t, 'FleetTeardownRole');
  submitFunctionRole = policyOfRole(t, 'FleetSubmitRole');
  const fnId = Object.entries(t.findResources('AWS::Lambda::Function')).find(
    ([, r]) =>
      (r as { Properties: { FunctionName?: string } }).Properties.FunctionName ===
      'mountfleet-train-batch-submit',
  )![0];
  submitFunctionArn = `<GetAtt:${fnId}.Arn>`;
  const queueId = Object.keys(t.findResources('AWS::Batch::JobQueue'))[0];
  queueArn = `<Ref:${queueId}>`;
  const jobRoleId = Object.keys(t.findResources('AWS::IAM::Role')).find((k) => k.startsWith('FleetJobRole'))!;
  jobRoleArn = `<GetAtt:${jobRoleId}.Arn>`;
});

/** The fleet's own functions: they check every job definition first, then make and end runs. */
const runnerCases: Array<[string, () => IamRequest, string]> = [
  ['SubmitJob to a fleet queue', () => ({ action: 'batch:SubmitJob', resource: queueArn }), 'allowed'],
  [
    'SubmitJob to another queue',
    () => ({ action: 'batch:SubmitJob', resource: `${ARN}:job-queue/someone-elses` }),
    'implicit-deny',
  ],
  [
    "SubmitJob with a run's definition (revision in the ARN)",
    () => ({ action: 'batch:SubmitJob', resource: `${ARN}:job-definition/mf-train-${RUN}:1` }),
    'allowed',
  ],
  [
    'SubmitJob with any job definition (the function checks its contents first; IAM cannot)',
    () => ({ action: 'batch:SubmitJob', resource: `${ARN}:job-definition/encode:4` }),
    'allowed',
  ],
  [
    'RegisterJobDefinition of a run definition, not privileged',
    () => ({
      action: 'batch:RegisterJobDefinition',
      resource: `${ARN}:job-definition/mf-train-${RUN}`,
      context: { 'batch:Privileged': 'false' },
    }),
    'allowed',
  ],
  [
    "RegisterJobDefinition of fleet train-dev's run definition",
    () => ({
      action: 'batch:RegisterJobDefinition',
      resource: `${ARN}:job-definition/mf-train-dev-${RUN}`,
      context: { 'batch:Privileged': 'false' },
    }),
    'implicit-deny',
  ],
  [
    "RegisterJobDefinition of a user's definition",
    () => ({
      action: 'batch:RegisterJobDefinition',
      resource: `${ARN}:job-definition/encode`,
      context: { 'batch:Privileged': 'false' },
    }),
    'implicit-deny',
  ],
  [
    'RegisterJobDefinition of a privileged run definition',
    () => ({
      action: 'batch:RegisterJobDefinition',
      resource: `${ARN}:job-definition/mf-train-${RUN}`,
      context: { 'batch:Privileged': 'true' },
    }),
    'explicit-deny',
  ],
  [
    "DeregisterJobDefinition of a run definition's revision",
    () => ({ action: 'batch:DeregisterJobDefinition', resource: `${ARN}:job-definition/mf-train-${RUN}:3` }),
    'allowed',
  ],
  [
    "DeregisterJobDefinition of a user's definition",
    () => ({ action: 'batch:DeregisterJobDefinition', resource: `${ARN}:job-definition/encode:3` }),
    'implicit-deny',
  ],
  [
    'PassRole of the job role to Batch',
    () => ({
      action: 'iam:PassRole',
      resource: jobRoleArn,
      context: { 'iam:PassedToService': 'batch.amazonaws.com' },
    }),
    'allowed',
  ],
  [
    'PassRole of the job role to EC2',
    () => ({
      action: 'iam:PassRole',
      resource: jobRoleArn,
      context: { 'iam:PassedToService': 'ec2.amazonaws.com' },
    }),
    'implicit-deny',
  ],
  [
    'PassRole of another role',
    () => ({
      action: 'iam:PassRole',
      resource: 'arn:aws:iam::123456789012:role/admin',
      context: { 'iam:PassedToService': 'batch.amazonaws.com' },
    }),
    'implicit-deny',
  ],
  [
    "CreateFileSystem with the fleet tag and a Batch run's keys, encrypted",
    () => ({
      action: 'elasticfilesystem:CreateFileSystem',
      resource: '*',
      context: {
        [`aws:RequestTag/${TAG_FLEET}`]: 'train',
        'aws:TagKeys': [...BATCH_SCRATCH_CREATE_TAG_KEYS],
        'elasticfilesystem:Encrypted': 'true',
      },
    }),
    'allowed',
  ],
  [
    "CreateFileSystem with another fleet's tag",
    () => ({
      action: 'elasticfilesystem:CreateFileSystem',
      resource: '*',
      context: {
        [`aws:RequestTag/${TAG_FLEET}`]: 'train-dev',
        'aws:TagKeys': [TAG_FLEET],
        'elasticfilesystem:Encrypted': 'true',
      },
    }),
    'implicit-deny',
  ],
  [
    "CreateFileSystem with an instance's owner tag",
    () => ({
      action: 'elasticfilesystem:CreateFileSystem',
      resource: '*',
      context: {
        [`aws:RequestTag/${TAG_FLEET}`]: 'train',
        'aws:TagKeys': [TAG_FLEET, TAG_OWNER_INSTANCE],
        'elasticfilesystem:Encrypted': 'true',
      },
    }),
    'implicit-deny',
  ],
  [
    "TagResource with the job's keys on a fleet file system",
    () => ({
      action: 'elasticfilesystem:TagResource',
      resource: FS,
      context: {
        [`aws:ResourceTag/${TAG_FLEET}`]: 'train',
        'aws:TagKeys': [TAG_BATCH_JOB, TAG_BATCH_ATTEMPT],
      },
    }),
    'allowed',
  ],
  [
    'TagResource that would move a file system to another fleet',
    () => ({
      action: 'elasticfilesystem:TagResource',
      resource: FS,
      context: { [`aws:ResourceTag/${TAG_FLEET}`]: 'train', 'aws:TagKeys': [TAG_FLEET] },
    }),
    'implicit-deny',
  ],
  [
    'DeleteFileSystem of a fleet file system',
    () => ({
      action: 'elasticfilesystem:DeleteFileSystem',
      resource: FS,
      context: { [`aws:ResourceTag/${TAG_FLEET}`]: 'train' },
    }),
    'allowed',
  ],
  [
    "DeleteFileSystem of another fleet's file system",
    () => ({
      action: 'elasticfilesystem:DeleteFileSystem',
      resource: FS,
      context: { [`aws:ResourceTag/${TAG_FLEET}`]: 'train-dev' },
    }),
    'implicit-deny',
  ],
  [
    'DeleteFileSystem of an untagged file system',
    () => ({ action: 'elasticfilesystem:DeleteFileSystem', resource: FS }),
    'explicit-deny',
  ],
  [
    "TagResource of a new job with the fleet's tag (SubmitJob with tags)",
    () => ({
      action: 'batch:TagResource',
      resource: `${ARN}:job/0f1e2d3c-4b5a-6978-8a9b-0c1d2e3f4a5b`,
      context: { [`aws:RequestTag/${TAG_FLEET}`]: 'train', 'aws:TagKeys': [...BATCH_RUN_TAG_KEYS] },
    }),
    'allowed',
  ],
  [
    "TagResource of a new job with a key that is not a run's",
    () => ({
      action: 'batch:TagResource',
      resource: `${ARN}:job/0f1e2d3c-4b5a-6978-8a9b-0c1d2e3f4a5b`,
      context: { [`aws:RequestTag/${TAG_FLEET}`]: 'train', 'aws:TagKeys': [TAG_FLEET, 'cost-center'] },
    }),
    'implicit-deny',
  ],
  [
    "TagResource of a run's new revision with the run's tags (RegisterJobDefinition with tags)",
    () => ({
      action: 'batch:TagResource',
      resource: `${ARN}:job-definition/mf-train-${RUN}:1`,
      context: { [`aws:RequestTag/${TAG_FLEET}`]: 'train', 'aws:TagKeys': [...BATCH_RUN_TAG_KEYS] },
    }),
    'allowed',
  ],
  [
    "TagResource of a run's revision with a key that is not a run's",
    () => ({
      action: 'batch:TagResource',
      resource: `${ARN}:job-definition/mf-train-${RUN}:1`,
      context: { [`aws:RequestTag/${TAG_FLEET}`]: 'train', 'aws:TagKeys': [TAG_BATCH_SCRATCH_PATH] },
    }),
    'implicit-deny',
  ],
  [
    "TagResource of a job with another fleet's tag",
    () => ({
      action: 'batch:TagResource',
      resource: `${ARN}:job/0f1e2d3c-4b5a-6978-8a9b-0c1d2e3f4a5b`,
      context: { [`aws:RequestTag/${TAG_FLEET}`]: 'train-dev' },
    }),
    'implicit-deny',
  ],
  ['DescribeJobs (no resource type)', () => ({ action: 'batch:DescribeJobs', resource: '*' }), 'allowed'],
  [
    'CancelJob (not granted)',
    () => ({ action: 'batch:CancelJob', resource: `${ARN}:job/x` }),
    'implicit-deny',
  ],
];

describe.each([
  ['the submit function role', () => submitFunctionRole],
  ['the teardown role', () => teardown],
])('%s', (_name, policy) => {
  test.each(runnerCases)('%s', (_case, request, expected) => {
    expect(evaluate(policy(), request())).toBe(expected);
  });
});

/** A submitter: nothing but invoking the submit function and reading state. */
const submitterCases: Array<[string, () => IamRequest, string]> = [
  [
    'InvokeFunction of the submit function',
    () => ({ action: 'lambda:InvokeFunction', resource: submitFunctionArn }),
    'allowed',
  ],
  [
    'InvokeFunction of another function',
    () => ({
      action: 'lambda:InvokeFunction',
      resource: 'arn:aws:lambda:us-east-1:123456789012:function:admin-tool',
    }),
    'implicit-deny',
  ],
  ['SubmitJob to a fleet queue', () => ({ action: 'batch:SubmitJob', resource: queueArn }), 'implicit-deny'],
  [
    "SubmitJob with a run's definition",
    () => ({ action: 'batch:SubmitJob', resource: `${ARN}:job-definition/mf-train-${RUN}:1` }),
    'implicit-deny',
  ],
  [
    'RegisterJobDefinition of a run definition (it could bind / or the Docker socket)',
    () => ({
      action: 'batch:RegisterJobDefinition',
      resource: `${ARN}:job-definition/mf-train-${RUN}`,
      context: { 'batch:Privileged': 'false' },
    }),
    'implicit-deny',
  ],
  [
    'PassRole of the job role',
    () => ({
      action: 'iam:PassRole',
      resource: jobRoleArn,
      context: { 'iam:PassedToService': 'batch.amazonaws.com' },
    }),
    'implicit-deny',
  ],
  [
    'CreateFileSystem with the fleet tag',
    () => ({
      action: 'elasticfilesystem:CreateFileSystem',
      resource: '*',
      context: {
        [`aws:RequestTag/${TAG_FLEET}`]: 'train',
        'aws:TagKeys': [...BATCH_SCRATCH_CREATE_TAG_KEYS],
        'elasticfilesystem:Encrypted': 'true',
      },
    }),
    'implicit-deny',
  ],
  [
    "DeleteFileSystem of another run's file system",
    () => ({
      action: 'elasticfilesystem:DeleteFileSystem',
      resource: FS,
      context: { [`aws:ResourceTag/${TAG_FLEET}`]: 'train' },
    }),
    'implicit-deny',
  ],
  [
    "ClientMount of another run's file system",
    () => ({
      action: 'elasticfilesystem:ClientMount',
      resource: FS,
      context: { [`aws:ResourceTag/${TAG_FLEET}`]: 'train' },
    }),
    'implicit-deny',
  ],
  [
    'TagResource of a job',
    () => ({
      action: 'batch:TagResource',
      resource: `${ARN}:job/x`,
      context: { [`aws:RequestTag/${TAG_FLEET}`]: 'train' },
    }),
    'implicit-deny',
  ],
  ['DescribeJobs (no resource type)', () => ({ action: 'batch:DescribeJobs', resource: '*' }), 'allowed'],
  ['ListJobs', () => ({ action: 'batch:ListJobs', resource: '*' }), 'allowed'],
  [
    'DescribeJobQueues (finds the function)',
    () => ({ action: 'batch:DescribeJobQueues', resource: '*' }),
    'allowed',
  ],
  [
    'DescribeFileSystems (batch status)',
    () => ({ action: 'elasticfilesystem:DescribeFileSystems', resource: '*' }),
    'allowed',
  ],
  [
    'GetMetricData (burst credit in batch status)',
    () => ({ action: 'cloudwatch:GetMetricData', resource: '*' }),
    'allowed',
  ],
];

describe('grantSubmit', () => {
  test.each(submitterCases)('%s', (_case, request, expected) => {
    expect(evaluate(submitter, request())).toBe(expected);
  });
});

test('the evaluator refuses a condition operator it does not implement (a test cannot pass by ignoring one)', () => {
  const s = { Effect: 'Allow', Action: 'x:Y', Resource: '*', Condition: { NumericLessThan: { k: '1' } } };
  expect(() => evaluate([s], { action: 'x:Y', resource: '*', context: { k: '0' } })).toThrow(
    /NumericLessThan/,
  );
});
