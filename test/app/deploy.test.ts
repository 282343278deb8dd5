/**
 * The bundled app deployed with the real CDK CLI into a fresh moto server of its own (so bootstrap and
 * deploy cannot collide with other test files): bootstrap, deploy (sandbox profile: everything, with named
 * Express cache buckets — moto skips directory buckets and alarms, and nothing refers to them by Ref or
 * GetAtt), check the resources through the SDK, destroy.
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AutoScalingClient, DescribeAutoScalingGroupsCommand } from '@aws-sdk/client-auto-scaling';
import {
  DescribeLaunchTemplatesCommand,
  DescribeSecurityGroupsCommand,
  DescribeSubnetsCommand,
  EC2Client,
} from '@aws-sdk/client-ec2';
import {
  GetFunctionConfigurationCommand,
  LambdaClient,
  ResourceNotFoundException,
} from '@aws-sdk/client-lambda';
import { EMULATOR_ACCOUNT, EMULATOR_REGION, emulatorEnv, expectSuccess, runCdk } from '../support/cdk-cli';
import { MotoServer } from '../support/moto';
import { ensureBundles } from '../lib/support';

const SANDBOX = ['-c', 'mountfleetConfig=examples/sandbox.config.json'];
let moto: MotoServer;
let env: NodeJS.ProcessEnv;
const out = mkdtempSync(join(tmpdir(), 'mf-deploy-'));

beforeAll(async () => {
  ensureBundles();
  moto = await MotoServer.start();
  env = emulatorEnv(moto.endpoint);
}, 30000);

afterAll(async () => {
  await moto?.stop();
});

test('bootstrap, deploy, inspect and destroy the sandbox stack in the emulator', async () => {
  expectSuccess(
    await runCdk(['bootstrap', `aws://${EMULATOR_ACCOUNT}/${EMULATOR_REGION}`, '-o', out, ...SANDBOX], {
      env,
    }),
    'cdk bootstrap',
  );
  const outputsFile = join(out, 'outputs.json');
  expectSuccess(
    await runCdk(
      [
        'deploy',
        'Mountfleet',
        '--method=direct',
        '--require-approval',
        'never',
        '--outputs-file',
        outputsFile,
        '-o',
        out,
        ...SANDBOX,
      ],
      { env },
    ),
    'cdk deploy',
  );
  const outputs = (JSON.parse(readFileSync(outputsFile, 'utf8')) as Record<string, Record<string, string>>)
    .Mountfleet;
  expect(Object.keys(outputs).sort()).toEqual([
    'AutoScalingGroupName',
    'ReaperFunctionName',
    'ScratchSecurityGroupId',
  ]);

  const clientConfig = {
    region: EMULATOR_REGION,
    endpoint: moto.endpoint,
    credentials: { accessKeyId: 'testing', secretAccessKey: 'testing' },
  };
  const ec2 = new EC2Client(clientConfig);
  const groups = await ec2.send(
    new DescribeSecurityGroupsCommand({ GroupIds: [outputs.ScratchSecurityGroupId] }),
  );
  expect(groups.SecurityGroups?.[0].Description).toMatch(/EFS scratch mount targets of fleet sandbox/);
  const fleetGroup = (await ec2.send(new DescribeSecurityGroupsCommand({}))).SecurityGroups?.find((g) =>
    g.Description?.startsWith('mountfleet fleet sandbox'),
  );
  expect(groups.SecurityGroups?.[0].IpPermissions).toEqual([
    expect.objectContaining({
      IpProtocol: 'tcp',
      FromPort: 2049,
      ToPort: 2049,
      UserIdGroupPairs: [expect.objectContaining({ GroupId: fleetGroup?.GroupId })],
    }),
  ]);

  const templates = await ec2.send(new DescribeLaunchTemplatesCommand({}));
  expect(templates.LaunchTemplates?.length).toBe(1);
  const subnets = await ec2.send(
    new DescribeSubnetsCommand({
      Filters: [{ Name: 'cidr-block', Values: ['10.64.0.0/20', '10.64.16.0/20'] }],
    }),
  );
  expect(subnets.Subnets?.length).toBe(2);

  const asg = new AutoScalingClient(clientConfig);
  const group = await asg.send(
    new DescribeAutoScalingGroupsCommand({ AutoScalingGroupNames: [outputs.AutoScalingGroupName] }),
  );
  expect(group.AutoScalingGroups?.[0]).toMatchObject({ MinSize: 0, MaxSize: 4 });

  const lambda = new LambdaClient(clientConfig);
  const getReaper = () =>
    lambda.send(new GetFunctionConfigurationCommand({ FunctionName: outputs.ReaperFunctionName }));
  const config = await getReaper();
  expect(config).toMatchObject({ Runtime: 'nodejs22.x', Handler: 'index.handler' });
  expect(config.Environment?.Variables?.MOUNTFLEET_FLEET_ID).toBe('sandbox');

  expectSuccess(
    await runCdk(['destroy', 'Mountfleet', '--force', '-o', out, ...SANDBOX], { env }),
    'cdk destroy',
  );
  await expect(getReaper()).rejects.toBeInstanceOf(ResourceNotFoundException);
}, 240000);
