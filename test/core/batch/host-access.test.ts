/** What a job definition may ask of a fleet's host (pure: the emulator tests run the same checks end to end). */
import type { ContainerProperties, JobDefinition } from '@aws-sdk/client-batch';
import { allowedContainer, hostAccessProblems } from '../../../core/batch/host-access';

const ROLE = 'arn:aws:iam::123456789012:role/fleet-job';
const rules = { mountPaths: ['/mnt/data', '/mnt/models/'], jobRoleArn: ROLE };

/** The fleet's own kind of job definition: both paths bound read-only, the job role. */
function fleetDefinition(container: Partial<ContainerProperties> = {}): JobDefinition {
  return {
    jobDefinitionName: 'train',
    jobDefinitionArn: 'arn:aws:batch:us-east-1:123456789012:job-definition/train:3',
    revision: 3,
    type: 'container',
    containerProperties: {
      image: 'public.ecr.aws/docker/library/python:3.12',
      command: ['python', 'train.py'],
      jobRoleArn: ROLE,
      resourceRequirements: [{ type: 'VCPU', value: '4' }],
      volumes: [
        { name: 'data', host: { sourcePath: '/mnt/data' } },
        { name: 'models', host: { sourcePath: '/mnt/models' } },
      ],
      mountPoints: [
        { sourceVolume: 'data', containerPath: '/data', readOnly: true },
        { sourceVolume: 'models', containerPath: '/mnt/models', readOnly: true },
      ],
      linuxParameters: { sharedMemorySize: 1024, initProcessEnabled: true, tmpfs: [] },
      ...container,
    },
  };
}

describe('hostAccessProblems', () => {
  it('allows the fleet paths read-only, the job role, and fields that stay inside the container', () => {
    expect(hostAccessProblems(fleetDefinition(), rules)).toEqual([]);
    expect(
      hostAccessProblems(
        fleetDefinition({ jobRoleArn: undefined, executionRoleArn: ROLE, user: '0' }),
        rules,
      ),
    ).toEqual([]);
  });

  it('names every problem with its field: another path, a writable bind, a Docker volume, an unknown volume', () => {
    const jd = fleetDefinition({
      volumes: [
        { name: 'data', host: { sourcePath: '/mnt/data' } },
        { name: 'socket', host: { sourcePath: '/var/run/docker.sock' } },
        { name: 'scratchpad' },
      ],
      mountPoints: [
        { sourceVolume: 'data', containerPath: '/data', readOnly: false },
        { sourceVolume: 'socket', containerPath: '/var/run/docker.sock', readOnly: true },
        { sourceVolume: 'nope', containerPath: '/x', readOnly: true },
      ],
    });
    expect(hostAccessProblems(jd, rules)).toEqual([
      expect.stringMatching(
        /^containerProperties\.volumes\[1\]\.host\.sourcePath \/var\/run\/docker\.sock: not one of the fleet's Mountpoint paths \(\/mnt\/data, \/mnt\/models\)/,
      ),
      expect.stringMatching(/^containerProperties\.volumes\[2\] \(scratchpad\): a Docker volume on the host/),
      expect.stringMatching(/^containerProperties\.mountPoints\[0\] \(data at \/data\): must be readOnly/),
      'containerProperties.mountPoints[2].sourceVolume nope: no volume of that name',
    ]);
  });

  it('a path that only looks like a fleet path is another path (no prefix match, no traversal)', () => {
    for (const sourcePath of ['/mnt/data2', '/mnt/data/../../etc', '/mnt', '/mnt/data/sub']) {
      const jd = fleetDefinition({
        volumes: [{ name: 'v', host: { sourcePath } }],
        mountPoints: [{ sourceVolume: 'v', containerPath: '/v', readOnly: true }],
      });
      expect(hostAccessProblems(jd, rules)).toEqual([
        expect.stringContaining(`sourcePath ${sourcePath}: not one of the fleet's Mountpoint paths`),
      ]);
    }
  });

  it('refuses privilege, devices, another role, an EFS volume and Linux parameters it does not know', () => {
    const jd = fleetDefinition({
      privileged: true,
      executionRoleArn: 'arn:aws:iam::123456789012:role/admin',
      linuxParameters: {
        devices: [{ hostPath: '/dev/mem' }],
        swappiness: 10,
        capabilities: { add: ['SYS_ADMIN'] },
      } as never,
      volumes: [
        { name: 'data', host: { sourcePath: '/mnt/data' } },
        { name: 'models', host: { sourcePath: '/mnt/models' } },
        { name: 'efs', efsVolumeConfiguration: { fileSystemId: 'fs-0123456789abcdef0' } },
      ],
    });
    expect(hostAccessProblems(jd, rules)).toEqual([
      expect.stringMatching(
        /^containerProperties\.executionRoleArn arn:aws:iam::123456789012:role\/admin: jobs of this fleet run as its job role/,
      ),
      expect.stringMatching(/^containerProperties\.volumes\[2\] \(efs\): an EFS volume/),
      expect.stringMatching(/^containerProperties\.privileged: a privileged container owns the host/),
      expect.stringMatching(/^containerProperties\.linuxParameters\.devices \(\/dev\/mem\): a host device/),
      'containerProperties.linuxParameters.capabilities: not a field mountfleet checks, so it is refused',
    ]);
  });

  it('refuses fields it does not check (a field Batch adds later is refused until checked), Fargate, other job types', () => {
    const jd: JobDefinition = {
      ...fleetDefinition({ ephemeralStorage: { sizeInGiB: 50 }, hostNetworkPrivileges: true } as never),
      platformCapabilities: ['FARGATE'],
      nodeProperties: { numNodes: 2, mainNode: 0, nodeRangeProperties: [] },
    };
    expect(hostAccessProblems(jd, rules)).toEqual([
      'nodeProperties: mountfleet submits single-container ECS jobs (containerProperties) only',
      'platformCapabilities FARGATE: the fleet runs jobs on EC2 instances; use EC2',
      'containerProperties.ephemeralStorage: a Fargate setting; the fleet runs jobs on EC2 instances',
      'containerProperties.hostNetworkPrivileges: not a field mountfleet checks, so it is refused (it may give the job more of the host)',
    ]);
    expect(hostAccessProblems({ ...fleetDefinition(), containerProperties: undefined }, rules)).toEqual([
      'containerProperties: missing (a container job definition is needed)',
    ]);
  });
});

describe('allowedContainer', () => {
  it('keeps the allowed fields only: what a run revision is built from', () => {
    const container = { ...fleetDefinition().containerProperties!, unknownField: 'x' } as ContainerProperties;
    const kept = allowedContainer(container);
    expect(kept).not.toHaveProperty('unknownField');
    expect(kept).toMatchObject({ image: container.image, volumes: container.volumes, jobRoleArn: ROLE });
  });
});
