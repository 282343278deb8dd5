/**
 * judgeRun (core/reaper/liveness.ts), the verdict `scratch delete` acts on, against the emulator: each of its
 * rules on a real file system, owner instance and ClientConnections datapoints, and the reads it makes. `now`
 * is moved ahead of the real time where a rule needs an older file system (moto stamps CreationTime itself).
 */
import type { MountTargetDescription } from '@aws-sdk/client-efs';
import { cloudWatchClient, ec2Client, efsClient } from '../../../core/aws/clients';
import { judgeRun, type LivenessClients } from '../../../core/reaper/liveness';
import {
  createFileSystem,
  launchOwners,
  seedConnections,
  UNKNOWN_INSTANCE,
  useReaperEmulator,
} from './scenario';
import { createNetwork, type TestNetwork } from '../../support/fixtures';

const MINUTE = 60_000;

describe('judgeRun: is the run of a scratch file system over? (emulator)', () => {
  const emu = useReaperEmulator();
  let clients: LivenessClients;
  let net: TestNetwork;

  beforeEach(async () => {
    emu.proxy.clear();
    emu.proxy.resetStats();
    // Fresh clients (adaptive retry state included), with few attempts: a failed read is a verdict here.
    clients = {
      efs: efsClient({ maxAttempts: 2 }),
      ec2: ec2Client({ maxAttempts: 2 }),
      cloudwatch: cloudWatchClient({ maxAttempts: 2 }),
    };
    net = await createNetwork(clients.ec2, 1);
  });

  const judge = (id: string, now = Date.now(), mountTargets: Partial<MountTargetDescription>[] = []) =>
    judgeRun(clients, 'f1', id, mountTargets as MountTargetDescription[], now);

  it('over when EC2 says the owner is gone or stopped, however new the file system and whatever its connections', async () => {
    const [terminated] = await launchOwners(clients.ec2, 'f1', 'terminated');
    const [stopped] = await launchOwners(clients.ec2, 'f1', 'stopped');
    for (const owner of [terminated, stopped]) {
      const id = await createFileSystem(clients.efs, net, { fleet: 'f1', owner, mountTarget: true });
      await seedConnections(clients.cloudwatch, [id], [1, 1], Date.now());
      expect(await judge(id)).toMatchObject({
        status: 'over',
        evidence: expect.stringMatching(`^owner ${owner} is (terminated|stopped)`),
      });
    }
    expect(emu.proxy.count('cloudwatch', 'GetMetricData')).toBe(0);
  });

  it('an owner EC2 does not know: alive while the file system is within EC2 consistency window, over after', async () => {
    const id = await createFileSystem(clients.efs, net, {
      fleet: 'f1',
      owner: UNKNOWN_INSTANCE,
      mountTarget: true,
    });
    expect(await judge(id)).toMatchObject({
      status: 'alive',
      evidence: expect.stringMatching(
        `^owner ${UNKNOWN_INSTANCE} is unknown to EC2 .*, but the file system is too new for that to mean it is gone; the reaper keeps it: young`,
      ),
    });
    expect(await judge(id, Date.now() + 11 * MINUTE)).toMatchObject({ status: 'over' });
  });

  it('alive while the owner runs and the reaper keeps it: young, in use, no datapoints, or idle but not yet marked', async () => {
    const [owner] = await launchOwners(clients.ec2, 'f1', 'running');
    const young = await createFileSystem(clients.efs, net, { fleet: 'f1', owner, mountTarget: true });
    expect(await judge(young)).toEqual({
      status: 'alive',
      facts: expect.objectContaining({ id: young, ownerInstanceId: owner }),
      evidence: `owner ${owner} is running; the reaper keeps it: young: created 0 min ago, grace period 30 min`,
    });

    const now = Date.now() + 60 * MINUTE;
    const inUse = await createFileSystem(clients.efs, net, { fleet: 'f1', owner, mountTarget: true });
    await seedConnections(clients.cloudwatch, [inUse], [0, 2, 0], now);
    expect(await judge(inUse, now)).toMatchObject({
      status: 'alive',
      evidence: `owner ${owner} is running; the reaper keeps it: in use: 2 client connection(s) in the last 30 min`,
    });
    const noData = await createFileSystem(clients.efs, net, { fleet: 'f1', owner, mountTarget: true });
    expect(await judge(noData, now)).toMatchObject({
      status: 'alive',
      evidence: expect.stringMatching(
        /the reaper keeps it: owner i-\w+ running; no ClientConnections datapoints/,
      ),
    });
    const idle = await createFileSystem(clients.efs, net, { fleet: 'f1', owner, mountTarget: true });
    await seedConnections(clients.cloudwatch, [idle], [0, 0, 0], now);
    expect(await judge(idle, now)).toMatchObject({
      status: 'alive',
      evidence: expect.stringMatching(
        /0 connections over the last 30 min: marking mountfleet:marked-idle-at$/,
      ),
    });
  });

  it('over when the reaper would delete it now: idle, and marked idle a full window ago', async () => {
    const [owner] = await launchOwners(clients.ec2, 'f1', 'running');
    const now = Date.now() + 60 * MINUTE;
    const id = await createFileSystem(clients.efs, net, {
      fleet: 'f1',
      owner,
      mountTarget: true,
      markedIdleAt: new Date(now - 40 * MINUTE).toISOString(),
    });
    await seedConnections(clients.cloudwatch, [id], [0, 0, 0], now);
    expect(await judge(id, now)).toMatchObject({
      status: 'over',
      evidence: expect.stringMatching(
        /^the reaper would delete it now: .*still idle 40 min after being marked$/,
      ),
    });
  });

  it('over once its run started its teardown, even with its owner running; alive while a mount target is being created', async () => {
    const [owner] = await launchOwners(clients.ec2, 'f1', 'running');
    const id = await createFileSystem(clients.efs, net, {
      fleet: 'f1',
      owner,
      mountTarget: true,
      teardownStartedAt: new Date().toISOString(),
    });
    expect(await judge(id)).toMatchObject({
      status: 'over',
      evidence: expect.stringMatching(
        /^its run started its teardown at .* \(mountfleet:teardown-started-at\)$/,
      ),
    });
    expect(emu.proxy.count('ec2', 'DescribeInstances')).toBe(0); // nothing more to read
    expect(await judge(id, Date.now(), [{ LifeCycleState: 'creating' }])).toMatchObject({
      status: 'alive',
      evidence: expect.stringMatching(/is creating: someone is setting it up$/),
    });
  });

  it('never takes a failed owner lookup or unreadable metrics for the end of the run', async () => {
    const [owner] = await launchOwners(clients.ec2, 'f1', 'running');
    const id = await createFileSystem(clients.efs, net, { fleet: 'f1', owner, mountTarget: true });
    emu.proxy.addRule({ service: 'ec2', operation: 'DescribeInstances', fault: { kind: 'throttle' } });
    emu.proxy.addRule({ service: 'cloudwatch', operation: 'GetMetricData', fault: { kind: '5xx' } });
    expect(await judge(id, Date.now() + 60 * MINUTE)).toMatchObject({
      status: 'alive',
      evidence: expect.stringMatching(
        `^owner ${owner} could not be looked up \\(RequestLimitExceeded.*the reaper keeps it: ClientConnections unreadable`,
      ),
    });
  });

  it('gone when DescribeFileSystems does not find it', async () => {
    expect(await judge('fs-0123456789abcdef0')).toEqual({ status: 'gone' });
  });
});
