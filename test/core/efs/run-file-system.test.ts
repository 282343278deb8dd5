/**
 * The one owner of a run's file system (core/efs/run-file-system.ts), against the emulator: provisioning in its
 * steps, with the fleet's key; found again only by the run's token and only with the run's tags; deleted safely,
 * and a file system under the run's token that is not the run's left alone.
 */
import { DescribeFileSystemsCommand, DescribeMountTargetsCommand } from '@aws-sdk/client-efs';
import { ec2Client, efsClient } from '../../../core/aws/clients';
import { creationToken } from '../../../core/contract/creation-token';
import {
  deleteRunFileSystem,
  findRunFileSystem,
  provisionRunFileSystem,
  type ProvisionStep,
} from '../../../core/efs/run-file-system';
import { TAG_FLEET, TAG_RUN } from '../../../core/contract/tags';
import { useEmulator } from '../../support/emulator';
import { createNetwork, createScratchFileSystem, type TestNetwork } from '../../support/fixtures';

const RUN = 'r20261129t000000-00000000000000bb';
const KEY = 'arn:aws:kms:us-east-1:123456789012:key/0d6c1f3e-0000-4000-8000-000000000003';

describe("a run's file system, one owner (emulator)", () => {
  useEmulator();
  let net: TestNetwork;
  const efs = () => efsClient({ maxAttempts: 1 });
  const live = async () =>
    ((await efs().send(new DescribeFileSystemsCommand({}))).FileSystems ?? []).filter(
      (f) => f.LifeCycleState !== 'deleted',
    );

  beforeEach(async () => {
    net = await createNetwork(ec2Client({ maxAttempts: 1 }), 2);
  });

  it('provisions in order (created, available, mount target, ready) with the key, and deletes it again', async () => {
    const steps: ProvisionStep['step'][] = [];
    const made = await provisionRunFileSystem(
      efs(),
      {
        fleetId: 'f1',
        jobId: 'job-1',
        runId: RUN,
        availabilityZoneName: net.subnets[0].availabilityZone,
        subnetId: net.subnets[0].subnetId,
        securityGroupId: net.securityGroupId,
        kmsKeyId: KEY,
      },
      { onStep: (s) => void steps.push(s.step) },
    );

    expect(steps).toEqual([
      'created',
      'available',
      'mount-target',
      'mount-target-created',
      'mount-target-ready',
    ]);
    const [fs] = await live();
    expect(fs).toMatchObject({ FileSystemId: made.fileSystemId, Encrypted: true, KmsKeyId: KEY });
    expect(made.mountTarget.IpAddress).toMatch(/^\d+\.\d+\.\d+\.\d+$/);
    expect(await findRunFileSystem(efs(), { fleetId: 'f1', runId: RUN })).toMatchObject({
      status: 'found',
      fileSystem: { FileSystemId: made.fileSystemId },
    });

    expect(await deleteRunFileSystem(efs(), { fleetId: 'f1', runId: RUN })).toEqual({
      status: 'deleted',
      fileSystemId: made.fileSystemId,
    });
    expect(await live()).toEqual([]);
    expect(await deleteRunFileSystem(efs(), { fleetId: 'f1', runId: RUN })).toEqual({ status: 'not-found' });
  });

  it("a file system under the run's token without the run's tags is not the run's: found as such, never deleted", async () => {
    const id = await createScratchFileSystem(
      efs(),
      { fleet: 'f1', mountTargetSubnet: net.subnets[0] },
      creationToken('f1', RUN),
    );

    expect(await findRunFileSystem(efs(), { fleetId: 'f1', runId: RUN })).toEqual({
      status: 'not-ours',
      fileSystemId: id,
    });
    expect(await deleteRunFileSystem(efs(), { fleetId: 'f1', runId: RUN })).toEqual({
      status: 'not-ours',
      fileSystemId: id,
    });
    const [fs] = await live();
    expect(fs.FileSystemId).toBe(id);
    expect(fs.Tags).not.toContainEqual(expect.objectContaining({ Key: TAG_RUN }));
    expect(fs.Tags).toContainEqual({ Key: TAG_FLEET, Value: 'f1' });
    const targets = await efs().send(new DescribeMountTargetsCommand({ FileSystemId: id }));
    expect(targets.MountTargets).toHaveLength(1);
  });
});
