/**
 * BatchComputeFleet's template: MIME multipart user data that writes the ECS start gate first, IMDSv2 hop limit 1,
 * shutdown that terminates, agent.json with containers and no scratch, the AMI and the launch-template version
 * named by every compute environment, no service role, a queue per zone tagged per the contract,
 * FleetJobDefinition's read-only host volumes, the teardown rule, cdk-nag AwsSolutions, and bad input refused at
 * synth with the construct path and the prop.
 */
import { Duration, Validations } from 'aws-cdk-lib';
import { Match, type Template } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks } from 'cdk-nag';
import {
  BATCH_FINAL_STATES,
  BATCH_FUNCTION_ENV,
  TAG_BATCH_AZ_ID,
  TAG_BATCH_MOUNT_PATHS,
  TAG_BATCH_SCRATCH_PATH,
  TAG_BATCH_SCRATCH_SECURITY_GROUP,
  TAG_BATCH_SCRATCH_SUBNET,
  TAG_BATCH_SUBMIT_FUNCTION,
  TAG_FLEET,
} from '../../core/contract';
import { FleetJobDefinition, type BatchComputeFleetProps } from '../../lib';
import { ECS_GATE_PATH, ecsGateScript } from '../../lib/private/batch-ecs-gate';
import { imdsRules } from '../../lib/private/batch-imds-rules';
import { ECS_DROP_IN_PATH, ECS_TASK_SLICE_PATH, ecsTaskSlice } from '../../lib/private/batch-user-data';
import { batchFleetStack } from './batch-fleet-fixture';
import { agentJsonOf, ensureBundles, renderJoin } from './support';

beforeAll(ensureBundles);

type Resource = { Properties: Record<string, unknown> };
const only = (resources: Record<string, unknown>) => {
  const values = Object.values(resources) as Resource[];
  expect(values).toHaveLength(1);
  return values[0];
};

/** The content of a file the user data writes with writeFileCommand. */
const writtenFile = (userData: string, path: string) =>
  new RegExp(`cat > ${path} <<'MOUNTFLEET_EOF'\n([^]*?)\nMOUNTFLEET_EOF\nchmod`).exec(userData)?.[1];

describe('launch template', () => {
  const { template } = batchFleetStack();
  const t = template();
  const lt = only(t.findResources('AWS::EC2::LaunchTemplate'));
  const data = lt.Properties.LaunchTemplateData as Record<string, unknown>;
  const userData = renderJoin(data.UserData);

  test('user data is MIME multipart (Batch refuses anything else) with one shell-script part', () => {
    expect(userData).toMatch(/^Content-Type: multipart\/mixed; boundary="([^"]+)"\nMIME-Version: 1\.0/);
    const boundary = /boundary="([^"]+)"/.exec(userData)![1];
    expect(userData.split(`--${boundary}\n`).filter((p) => p.includes('text/x-shellscript'))).toHaveLength(1);
    expect(userData.trimEnd().endsWith(`--${boundary}--`)).toBe(true);
  });

  test("every ECS start runs the gate with the fleet's mount paths, within a start timeout above its bound", () => {
    const dropIn = writtenFile(userData, ECS_DROP_IN_PATH)!;
    expect(dropIn).toContain(`\n[Service]\nExecStartPre=${ECS_GATE_PATH} "/mnt/imagenet" "/mnt/outputs"\n`);
    expect(Number(/^TimeoutStartSec=(\d+)$/m.exec(dropIn)![1])).toBeGreaterThan(900);
    expect(dropIn).not.toMatch(/Requires=|After=/);
    expect(writtenFile(userData, ECS_GATE_PATH)).toBe(ecsGateScript().replace(/\n$/, ''));
    expect(ecsGateScript()).toContain(imdsRules());
    expect(writtenFile(userData, ECS_TASK_SLICE_PATH)).toBe(ecsTaskSlice().replace(/\n$/, ''));
    // The ready unit and the restart of a running ECS agent are gone: the gate is the one way in.
    expect(userData).not.toContain('mountfleet-mounts-ready');
    expect(userData).not.toContain('try-restart');
  });

  test('the gate, its slice, its drop-in and the task cgroup setting come first, before any step that can fail', () => {
    const script = userData.slice(userData.indexOf('#!/bin/bash'));
    const firstRetry = script.search(/^retry /m);
    expect(firstRetry).toBeGreaterThan(0);
    expect(script.indexOf('set -euo pipefail')).toBeLessThan(script.indexOf(`cat > ${ECS_GATE_PATH} `));
    for (const step of [
      `cat > ${ECS_GATE_PATH} `,
      `cat > ${ECS_TASK_SLICE_PATH} `,
      `cat > ${ECS_DROP_IN_PATH} `,
      "|| echo 'ECS_ENABLE_TASK_CPU_MEM_LIMIT=true' >> /etc/ecs/ecs.config",
      'systemctl daemon-reload',
    ]) {
      expect(script.indexOf(step)).toBeGreaterThan(-1);
      expect(script.indexOf(step)).toBeLessThan(firstRetry);
    }
    // nft, which the gate loads the rules with, is installed with the other packages (before the agent starts).
    expect(script).toMatch(/^command -v nft >\/dev\/null \|\| retry dnf install -y nftables$/m);
    expect(script.indexOf('retry dnf install -y nftables')).toBeLessThan(
      script.indexOf('systemctl enable --now mountfleet-agent.service'),
    );
  });

  test('agent.json: job containers with the contract defaults, and no scratch (the submit function makes it)', () => {
    const agentJson = agentJsonOf(t);
    expect(agentJson.containers).toEqual({});
    expect(agentJson).not.toHaveProperty('scratch');
  });

  test('IMDSv2 required with hop limit 1, shutdown terminates, encrypted gp3 root, the ECS-optimized AL2023 AMI', () => {
    expect(data.MetadataOptions).toEqual({
      HttpEndpoint: 'enabled',
      HttpPutResponseHopLimit: 1,
      HttpTokens: 'required',
    });
    expect(data.InstanceInitiatedShutdownBehavior).toBe('terminate');
    expect(JSON.stringify(data.BlockDeviceMappings)).toContain('"Encrypted":true');
    const params = t.toJSON().Parameters as Record<string, { Default?: string }>;
    expect(Object.values(params).map((p) => p.Default)).toContain(
      '/aws/service/ecs/optimized-ami/amazon-linux-2023/recommended/image_id',
    );
  });

  test('every compute environment names the launch template by id and its LatestVersionNumber, and no service role', () => {
    const ces = Object.values(t.findResources('AWS::Batch::ComputeEnvironment')) as Resource[];
    expect(ces).toHaveLength(2);
    const ltId = Object.keys(t.findResources('AWS::EC2::LaunchTemplate'))[0];
    for (const ce of ces) {
      const cr = ce.Properties.ComputeResources as Record<string, Record<string, unknown>>;
      expect(cr.LaunchTemplate).toEqual({
        LaunchTemplateId: { Ref: ltId },
        Version: { 'Fn::GetAtt': [ltId, 'LatestVersionNumber'] },
      });
      // Infrastructure updates need Batch's service-linked role, which it uses when none is named.
      expect(ce.Properties).not.toHaveProperty('ServiceRole');
      expect(ce.Properties.ReplaceComputeEnvironment).toBe(false);
      expect(ce.Properties.UpdatePolicy).toEqual({
        JobExecutionTimeoutMinutes: 30,
        TerminateJobsOnUpdate: false,
      });
    }
  });

  test('a serviceRole prop (gone; a JavaScript caller of before could still pass one) names no service role', () => {
    const serviceRole = { roleArn: 'arn:aws:iam::123456789012:role/batch-service' };
    const t2 = batchFleetStack({ serviceRole } as Partial<BatchComputeFleetProps>).template();
    for (const ce of Object.values(t2.findResources('AWS::Batch::ComputeEnvironment')) as Resource[]) {
      expect(ce.Properties).not.toHaveProperty('ServiceRole');
    }
  });
});

describe('the AMI', () => {
  const ec2ConfigurationOf = (t: Template) =>
    (Object.values(t.findResources('AWS::Batch::ComputeEnvironment')) as Resource[]).map(
      (ce) => (ce.Properties.ComputeResources as { Ec2Configuration?: unknown }).Ec2Configuration,
    );

  test("every compute environment names the launch template's AMI (its SSM parameter, read at every deploy)", () => {
    const t = batchFleetStack().template();
    const lt = only(t.findResources('AWS::EC2::LaunchTemplate'));
    const imageId = (lt.Properties.LaunchTemplateData as { ImageId: { Ref: string } }).ImageId;
    const params = t.toJSON().Parameters as Record<string, { Type: string; Default?: string }>;
    expect(params[imageId.Ref]).toEqual({
      Type: 'AWS::SSM::Parameter::Value<AWS::EC2::Image::Id>',
      Default: '/aws/service/ecs/optimized-ami/amazon-linux-2023/recommended/image_id',
    });
    expect(ec2ConfigurationOf(t)).toEqual([
      [{ ImageType: 'ECS_AL2023', ImageIdOverride: imageId }],
      [{ ImageType: 'ECS_AL2023', ImageIdOverride: imageId }],
    ]);
  });

  test('GPU instance types: the NVIDIA image type and the GPU AMI', () => {
    const t = batchFleetStack({ instanceTypes: ['g5.xlarge'], azIds: ['use1-az4'] }).template();
    const [[configuration]] = ec2ConfigurationOf(t) as Array<
      Array<{ ImageType: string; ImageIdOverride: { Ref: string } }>
    >;
    expect(configuration.ImageType).toBe('ECS_AL2023_NVIDIA');
    const params = t.toJSON().Parameters as Record<string, { Default?: string }>;
    expect(params[configuration.ImageIdOverride.Ref].Default).toBe(
      '/aws/service/ecs/optimized-ami/amazon-linux-2023/gpu/recommended/image_id',
    );
  });
});

describe('zones', () => {
  test('one Spot environment and one queue per zone, in its subnet, tagged per the contract', () => {
    const t = batchFleetStack().template();
    for (const azId of ['use1-az4', 'use1-az6']) {
      t.hasResourceProperties('AWS::Batch::ComputeEnvironment', {
        ComputeResources: Match.objectLike({
          Type: 'SPOT',
          AllocationStrategy: 'SPOT_PRICE_CAPACITY_OPTIMIZED',
          Subnets: [{ Ref: Match.stringLikeRegexp(`^NetworkSubnet${azId.replace('-', '')}`) }],
          InstanceTypes: ['m6i.large', 'm6a.large', 'm5.large', 'm7i.large'],
          InstanceRole: { 'Fn::GetAtt': [Match.stringLikeRegexp('^FleetInstanceProfile'), 'Arn'] },
        }),
      });
      t.hasResourceProperties('AWS::Batch::JobQueue', {
        Tags: {
          [TAG_FLEET]: 'train',
          [TAG_BATCH_AZ_ID]: azId,
          [TAG_BATCH_MOUNT_PATHS]: '/mnt/imagenet:/mnt/outputs',
          [TAG_BATCH_SCRATCH_SUBNET]: {
            Ref: Match.stringLikeRegexp(`^NetworkSubnet${azId.replace('-', '')}`),
          },
          [TAG_BATCH_SCRATCH_SECURITY_GROUP]: {
            'Fn::GetAtt': [Match.stringLikeRegexp('^ScratchSecurityGroup'), 'GroupId'],
          },
        },
      });
    }
    expect(Object.keys(t.findResources('AWS::Batch::JobQueue'))).toHaveLength(2);
  });

  test('On-Demand capacity adds an environment after Spot in each queue', () => {
    const t = batchFleetStack({ onDemandMaxvCpus: 16, azIds: ['use1-az4'] }).template();
    const queue = only(t.findResources('AWS::Batch::JobQueue'));
    const order = queue.Properties.ComputeEnvironmentOrder as Array<{ ComputeEnvironment: { Ref: string } }>;
    expect(order.map((o) => o.ComputeEnvironment.Ref)).toEqual([
      expect.stringMatching(/Spot/),
      expect.stringMatching(/OnDemand/),
    ]);
    t.hasResourceProperties('AWS::Batch::ComputeEnvironment', {
      ComputeResources: Match.objectLike({
        Type: 'EC2',
        AllocationStrategy: 'BEST_FIT_PROGRESSIVE',
        MaxvCpus: 16,
      }),
    });
  });

  test('without scratch the queues carry no scratch tags and there is no teardown (the submit function stays)', () => {
    const t = batchFleetStack({}, { scratch: false }).template();
    for (const q of Object.values(t.findResources('AWS::Batch::JobQueue')) as Resource[]) {
      expect(Object.keys(q.Properties.Tags as object).sort()).toEqual(
        [TAG_BATCH_AZ_ID, TAG_FLEET, TAG_BATCH_MOUNT_PATHS, TAG_BATCH_SUBMIT_FUNCTION].sort(),
      );
    }
    expect(Object.keys(t.findResources('AWS::Events::Rule'))).toHaveLength(0);
    t.resourceCountIs('AWS::Lambda::Function', 1);
    t.hasResourceProperties('AWS::Lambda::Function', { FunctionName: 'mountfleet-train-batch-submit' });
  });
});

describe('the submit function', () => {
  test("named by the fleet, on every queue's tag, with the fleet's settings and time to make a run", () => {
    const t = batchFleetStack().template();
    const queues = Object.values(t.findResources('AWS::Batch::JobQueue')) as Resource[];
    for (const q of queues) {
      expect((q.Properties.Tags as Record<string, unknown>)[TAG_BATCH_SUBMIT_FUNCTION]).toBe(
        'mountfleet-train-batch-submit',
      );
    }
    t.hasResourceProperties('AWS::Lambda::Function', {
      FunctionName: 'mountfleet-train-batch-submit',
      Runtime: 'nodejs22.x',
      Timeout: 900,
      Environment: {
        Variables: {
          [BATCH_FUNCTION_ENV.fleetId]: 'train',
          [BATCH_FUNCTION_ENV.queueArns]: {
            'Fn::Join': [
              '',
              [
                { Ref: Match.stringLikeRegexp('^FleetZoneuse1az4Queue') },
                ',',
                { Ref: Match.stringLikeRegexp('^FleetZoneuse1az6Queue') },
              ],
            ],
          },
          [BATCH_FUNCTION_ENV.mountPaths]: '/mnt/imagenet:/mnt/outputs',
          [BATCH_FUNCTION_ENV.jobRoleArn]: { 'Fn::GetAtt': [Match.stringLikeRegexp('^FleetJobRole'), 'Arn'] },
        },
      },
    });
  });

  test("the fleet's scratch key goes to both functions' environment, and their roles may use it", () => {
    const t = batchFleetStack({}, { scratchKey: true }).template();
    const fns = Object.values(t.findResources('AWS::Lambda::Function')) as Resource[];
    expect(fns).toHaveLength(2);
    for (const fn of fns) {
      const vars = (fn.Properties.Environment as { Variables: Record<string, unknown> }).Variables;
      expect(JSON.stringify(vars[BATCH_FUNCTION_ENV.kmsKeyId])).toMatch(
        /^\{"Fn::GetAtt":\["ScratchKey[0-9A-F]+","Arn"\]\}$/,
      );
    }
    for (const role of ['FleetSubmitRole', 'FleetTeardownRole']) {
      const statements = JSON.stringify(
        Object.values(t.findResources('AWS::IAM::Policy')).filter((p) =>
          JSON.stringify((p as Resource).Properties.Roles).includes(role),
        ),
      );
      expect(statements).toContain('kms:CreateGrant');
      expect(statements).toMatch(/"Fn::GetAtt":\["ScratchKey[0-9A-F]+","Arn"\]/);
    }
  });
});

describe('FleetJobDefinition', () => {
  test('binds every Mountpoint path read-only at the same path, the fleet job role, never privileged, tagged', () => {
    const { stack, fleet, template } = batchFleetStack();
    new FleetJobDefinition(stack, 'Encode', {
      fleet,
      image: 'public.ecr.aws/docker/library/busybox:1',
      command: ['true'],
    });
    const def = only(template().findResources('AWS::Batch::JobDefinition'));
    const c = def.Properties.ContainerProperties as Record<string, unknown>;
    expect(c.Volumes).toEqual([
      { Name: 'mountfleet-mount-0', Host: { SourcePath: '/mnt/imagenet' } },
      { Name: 'mountfleet-mount-1', Host: { SourcePath: '/mnt/outputs' } },
    ]);
    expect(c.MountPoints).toEqual([
      { SourceVolume: 'mountfleet-mount-0', ContainerPath: '/mnt/imagenet', ReadOnly: true },
      { SourceVolume: 'mountfleet-mount-1', ContainerPath: '/mnt/outputs', ReadOnly: true },
    ]);
    expect(c.Privileged).toBe(false);
    expect(c.JobRoleArn).toEqual({ 'Fn::GetAtt': [expect.stringMatching(/^FleetJobRole/), 'Arn'] });
    expect(def.Properties.Tags).toEqual({ [TAG_FLEET]: 'train', [TAG_BATCH_SCRATCH_PATH]: '/scratch' });
  });

  test('refuses a name in the per-run prefix and a scratch path on a mount', () => {
    const { stack, fleet } = batchFleetStack();
    expect(
      () => new FleetJobDefinition(stack, 'A', { fleet, image: 'x', jobDefinitionName: 'mf-train-x' }),
    ).toThrow(/^Test\/A: jobDefinitionName: "mf-train-x" .*starts with mf-train-/);
    expect(
      () => new FleetJobDefinition(stack, 'B', { fleet, image: 'x', scratchPath: '/mnt/imagenet' }),
    ).toThrow(/^Test\/B: scratchPath: \/mnt\/imagenet is a Mountpoint path of the fleet/);
  });
});

describe('teardown', () => {
  test("the rule takes the fleet's queues' SUCCEEDED and FAILED Batch job state changes to the function", () => {
    const t = batchFleetStack().template();
    const rule = only(t.findResources('AWS::Events::Rule'));
    const pattern = rule.Properties.EventPattern as Record<string, unknown>;
    expect(pattern.source).toEqual(['aws.batch']);
    expect(pattern['detail-type']).toEqual(['Batch Job State Change']);
    const detail = pattern.detail as { status: string[]; jobQueue: unknown[] };
    expect(detail.status).toEqual([...BATCH_FINAL_STATES]);
    expect(detail.jobQueue).toEqual([
      { Ref: expect.stringMatching(/^FleetZoneuse1az4Queue/) },
      { Ref: expect.stringMatching(/^FleetZoneuse1az6Queue/) },
    ]);
    t.hasResourceProperties('AWS::Lambda::Function', {
      Runtime: 'nodejs22.x',
      Environment: { Variables: { FLEET_ID: 'train', BATCH_QUEUE_ARNS: Match.anyValue() } },
    });
  });
});

describe('the functions', () => {
  test('keep the logical ids of their log group, role, policy, function and dead-letter queue (a new id replaces the resource on deploy)', () => {
    const t = batchFleetStack().template();
    const ids = Object.keys(t.toJSON().Resources as object).filter((id) =>
      /^Fleet(Submit|Teardown)(LogGroup|DeadLetterQueue|Role|RoleDefaultPolicy|Function)[0-9A-F]{8}$/.test(
        id,
      ),
    );
    expect(ids.sort()).toEqual([
      'FleetSubmitFunctionD81DCD51',
      'FleetSubmitLogGroup759481ED',
      'FleetSubmitRoleC483ED70',
      'FleetSubmitRoleDefaultPolicy9514B545',
      'FleetTeardownDeadLetterQueue4A14DD75',
      'FleetTeardownFunction4067F9E2',
      'FleetTeardownLogGroupD0478899',
      'FleetTeardownRoleDefaultPolicy02255AEE',
      'FleetTeardownRoleE9FDA38F',
    ]);
    // The teardown's failed events and invocations land in its queue; the submit function is invoked synchronously.
    t.hasResourceProperties('AWS::Lambda::Function', {
      FunctionName: Match.absent(),
      DeadLetterConfig: { TargetArn: { 'Fn::GetAtt': ['FleetTeardownDeadLetterQueue4A14DD75', 'Arn'] } },
    });
    t.hasResourceProperties('AWS::Lambda::Function', {
      FunctionName: 'mountfleet-train-batch-submit',
      DeadLetterConfig: Match.absent(),
    });
  });
});

describe('bad input', () => {
  test('a zone the network has no subnet in', () => {
    expect(() => batchFleetStack({ azIds: ['use1-az1'] })).toThrow(
      /^Test\/Fleet: azIds\[0\]: the network has no subnet in use1-az1/,
    );
  });

  test('mount paths too long for the queue tag', () => {
    const long = Array.from({ length: 9 }, (_, i) => `/mnt/${'d'.repeat(25)}${i}`);
    expect(() => batchFleetStack({}, { mountPaths: long })).toThrow(
      /^Test\/Fleet: mounts: the mount paths joined by ':' are 2\d\d characters, more than the 256/,
    );
  });

  test('a queue asked for in a zone the fleet does not run in', () => {
    const { fleet } = batchFleetStack();
    expect(fleet.jobQueueFor('use1-az6')).toBe(fleet.zones[1].jobQueue);
    expect(() => fleet.jobQueueFor('use1-az1')).toThrow(
      /^Test\/Fleet: jobQueueFor\(use1-az1\): no job queue in use1-az1 — the fleet has queues in use1-az4, use1-az6$/,
    );
  });

  test('a mount path with the end marker of the heredoc that writes the ECS drop-in', () => {
    expect(() => batchFleetStack({}, { mountPaths: ['/mnt/MOUNTFLEET_EOF'] })).toThrow(
      /^Test\/Fleet: mounts: \/etc\/systemd\/system\/ecs\.service\.d\/10-mountfleet\.conf of the user data would contain MOUNTFLEET_EOF, which ends its heredoc — take "MOUNTFLEET_EOF" out of the mount paths$/,
    );
  });

  test('no capacity, and an update timeout out of range', () => {
    expect(() => batchFleetStack({ spotMaxvCpus: 0 })).toThrow(
      /^Test\/Fleet: spotMaxvCpus: and onDemandMaxvCpus are both 0/,
    );
    expect(() => batchFleetStack({ updateTimeout: Duration.days(6) })).toThrow(
      /^Test\/Fleet: updateTimeout: 8640 minutes/,
    );
  });
});

test('cdk-nag AwsSolutions: no unacknowledged finding', () => {
  const { stack, fleet } = batchFleetStack({ onDemandMaxvCpus: 8 });
  new FleetJobDefinition(stack, 'Encode', { fleet, image: 'public.ecr.aws/docker/library/busybox:1' });
  const pack = new AwsSolutionsChecks(stack);
  Validations.of(stack).addPlugins(pack);
  const { violations } = pack.validateScope(stack);
  expect(
    violations.map((v) => `${v.ruleName} ${v.violatingResources.map((r) => r.constructPath).join(',')}`),
  ).toEqual([]);
});
