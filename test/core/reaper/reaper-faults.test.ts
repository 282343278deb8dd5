/**
 * Throttling and server errors on every operation of every service (deterministic, seeded): the reaper may
 * fail to finish, but never deletes what it should keep; once the faults stop, two runs clear every orphan.
 * And the race between listing and deleting: a mount target that appears in between.
 */
import {
  CreateMountTargetCommand,
  DescribeMountTargetsCommand,
  TagResourceCommand,
  type Tag,
} from '@aws-sdk/client-efs';
import { reap } from '../../../core/reaper/reaper';
import type { ReapReport } from '../../../core/reaper/report';
import { reaperSettingsFromFlags } from '../../../core/contract/reaper-settings';
import {
  TAG_JOB,
  TAG_MARKED_IDLE_AT,
  TAG_OWNER_INSTANCE,
  TAG_TEARDOWN_STARTED_AT,
} from '../../../core/contract/tags';
import { createNetwork } from '../../support/fixtures';
import {
  UNKNOWN_INSTANCE,
  clockAt,
  createFileSystem,
  describeAll,
  launchOwners,
  reaperClients,
  seedConnections,
  tagOf,
  useReaperEmulator,
  withDescription,
  withLifecycleState,
} from './scenario';

/** mulberry32: a small seeded PRNG so the fault pattern is the same on every run. */
function seeded(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe('reap under throttling and 5xx (emulator + fault proxy)', () => {
  const emu = useReaperEmulator({ random: seeded(42) });

  it('deletes nothing it should keep, and every orphan is gone two runs after the faults stop', async () => {
    const setup = reaperClients();
    const net = await createNetwork(setup.ec2, 1);
    const [running] = await launchOwners(setup.ec2, 'f1', 'running');
    const [terminated] = await launchOwners(setup.ec2, 'f1', 'terminated');
    const clock = clockAt(60);
    const fs = (spec: Parameters<typeof createFileSystem>[2]) => createFileSystem(setup.efs, net, spec);

    const keep = {
      inUseOwnerGone: await fs({ fleet: 'f1', owner: terminated, mountTarget: true }),
      ownerRunningNoData: await fs({ fleet: 'f1', owner: running, mountTarget: true }),
      otherFleet: await fs({ fleet: 'f2', owner: terminated }),
    };
    const orphans = {
      ownerTerminated: await fs({ fleet: 'f1', owner: terminated, mountTarget: true }),
      noMountTarget: await fs({ fleet: 'f1', owner: running }),
      ownerUnknown: await fs({ fleet: 'f1', owner: UNKNOWN_INSTANCE, mountTarget: true }),
      idleTwoPhase: await fs({ fleet: 'f1', owner: running, mountTarget: true }),
    };
    // One datapoint a minute for the hour around the runs, so both runs' windows see the same picture.
    const hour = (value: number) => Array.from({ length: 60 }, () => value);
    await seedConnections(setup.cloudwatch, [keep.inUseOwnerGone], hour(1), clock.now(), -25);
    await seedConnections(
      setup.cloudwatch,
      [orphans.ownerUnknown, orphans.idleTwoPhase],
      hour(0),
      clock.now(),
      -25,
    );

    // Fresh clients for the reaper: their adaptive retry state starts clean, as in a new Lambda container.
    const clients = reaperClients();
    const settings = reaperSettingsFromFlags({ fleetId: 'f1' });
    // Every read operation fails at least once for sure; then a random 52% of all requests fail.
    for (const [service, operation] of [
      ['efs', 'DescribeFileSystems'],
      ['cloudwatch', 'GetMetricData'],
      ['ec2', 'DescribeInstances'],
    ]) {
      emu.proxy.addRule({ service, operation, fault: { kind: '5xx', status: 503 }, times: 1 });
    }
    emu.proxy.addRule({ service: '*', fault: { kind: 'throttle' }, probability: 0.3 });
    emu.proxy.addRule({ service: '*', fault: { kind: '5xx', status: 500 }, probability: 0.2 });
    emu.proxy.addRule({ service: '*', fault: { kind: '5xx', status: 503 }, probability: 0.1 });
    emu.proxy.resetStats();

    let faulty: ReapReport | Error;
    try {
      faulty = await reap(clients, settings, { clock, concurrency: 4 });
    } catch (err) {
      faulty = err as Error; // listing itself gave up: the run fails, having touched nothing
    }
    const faultStats = emu.proxy.stats();
    emu.proxy.clear();

    expect(faultStats.total.faulted).toBeGreaterThan(10);
    for (const service of ['efs', 'ec2', 'cloudwatch'])
      expect(faultStats.byService[service]?.faulted).toBeGreaterThan(0);
    let left = await describeAll(setup.efs);
    for (const id of Object.values(keep)) expect(left.has(id)).toBe(true);
    if (!(faulty instanceof Error)) {
      expect(faulty.deleted).not.toEqual(expect.arrayContaining([keep.inUseOwnerGone]));
    }

    await reap(clients, settings, { clock });
    clock.advance(settings.idleWindowMinutes);
    const last = await reap(clients, settings, { clock });

    left = await describeAll(setup.efs);
    for (const id of Object.values(orphans)) expect(left.has(id)).toBe(false);
    for (const id of Object.values(keep)) expect(left.has(id)).toBe(true);
    expect(last.failed).toEqual([]);
  });

  it('keeps a file system whose mount target is still being created or updated, even with grace 0', async () => {
    emu.proxy.clear();
    const setup = reaperClients();
    const net = await createNetwork(setup.ec2, 1);
    const [terminated] = await launchOwners(setup.ec2, 'f1', 'terminated');
    const clock = clockAt(1); // a minute old: past a grace period of 0
    const creating = await createFileSystem(setup.efs, net, {
      fleet: 'f1',
      owner: terminated,
      mountTarget: true,
    });
    const updating = await createFileSystem(setup.efs, net, {
      fleet: 'f1',
      owner: terminated,
      mountTarget: true,
    });
    const settled = await createFileSystem(setup.efs, net, {
      fleet: 'f1',
      owner: terminated,
      mountTarget: true,
    });
    // moto makes every mount target available at once: show two as AWS does while they settle.
    emu.proxy.addRule({
      service: 'efs',
      operation: 'DescribeMountTargets',
      fault: {
        kind: 'rewrite',
        rewrite: withDescription({
          [creating]: { LifeCycleState: 'creating' },
          [updating]: { LifeCycleState: 'updating' },
        }),
      },
    });
    emu.proxy.resetStats();

    const report = await reap(reaperClients(), reaperSettingsFromFlags({ fleetId: 'f1', graceMinutes: 0 }), {
      clock,
    });
    emu.proxy.clear();

    expect(report).toMatchObject({ deleted: [settled], failed: [] });
    expect(report.kept).toEqual(
      expect.arrayContaining([
        { id: creating, reason: expect.stringMatching(/; mount target fsmt-\w+ is creating: in use; /) },
        { id: updating, reason: expect.stringMatching(/; mount target fsmt-\w+ is updating: in use; /) },
      ]),
    );
    expect(emu.proxy.count('efs', 'DeleteMountTarget')).toBe(1);
    const left = await describeAll(setup.efs);
    expect([...left.keys()].sort()).toEqual([creating, updating].sort());
    for (const id of [creating, updating]) expect(left.get(id)?.NumberOfMountTargets).toBe(1);
  });

  it('two reapers at once: every orphan deleted, nothing failed, nothing else touched', async () => {
    emu.proxy.clear();
    const setup = reaperClients();
    const net = await createNetwork(setup.ec2, 1);
    const [running] = await launchOwners(setup.ec2, 'f1', 'running');
    const [terminated] = await launchOwners(setup.ec2, 'f1', 'terminated');
    const clock = clockAt(60);
    const orphans: string[] = [];
    for (let i = 0; i < 6; i++) {
      orphans.push(
        await createFileSystem(setup.efs, net, { fleet: 'f1', owner: terminated, mountTarget: i % 2 === 0 }),
      );
    }
    const inUse = await createFileSystem(setup.efs, net, { fleet: 'f1', owner: running, mountTarget: true });
    const idle = await createFileSystem(setup.efs, net, { fleet: 'f1', owner: running, mountTarget: true });
    const foreign = await createFileSystem(setup.efs, net, {
      fleet: 'f1',
      owner: terminated,
      token: 'keep-me',
    });
    await seedConnections(setup.cloudwatch, [inUse], [1], clock.now());
    await seedConnections(setup.cloudwatch, [idle], [0, 0, 0], clock.now());
    const settings = reaperSettingsFromFlags({ fleetId: 'f1' });

    const [a, b] = await Promise.all([
      reap(reaperClients(), settings, { clock }),
      reap(reaperClients(), settings, { clock }),
    ]);

    for (const report of [a, b]) {
      expect(report.failed).toEqual([]);
      expect([...report.deleted].sort()).toEqual([...orphans].sort()); // "already gone" is done too
      expect(report.marked).toEqual([idle]);
      expect(report.foreign.map((f) => f.id)).toEqual([foreign]);
    }
    const left = await describeAll(setup.efs);
    expect([...left.keys()].sort()).toEqual([inUse, idle, foreign].sort());
    expect(tagOf(left.get(idle), TAG_MARKED_IDLE_AT)).toBe(new Date(clock.now()).toISOString());
  });

  it('retries DeleteFileSystem only while EFS refuses it, without reading the mount targets again', async () => {
    emu.proxy.clear();
    const setup = reaperClients();
    const net = await createNetwork(setup.ec2, 1);
    const [terminated] = await launchOwners(setup.ec2, 'f1', 'terminated');
    const orphan = await createFileSystem(setup.efs, net, {
      fleet: 'f1',
      owner: terminated,
      mountTarget: true,
    });
    // As in AWS while the deleted mount target finishes deleting (moto removes it at once).
    emu.proxy.addRule({
      service: 'efs',
      operation: 'DeleteFileSystem',
      fault: { kind: 'error', status: 409, code: 'FileSystemInUse', message: 'File system is in use' },
      times: 2,
    });
    emu.proxy.resetStats();

    const report = await reap(reaperClients(), reaperSettingsFromFlags({ fleetId: 'f1' }), {
      clock: clockAt(60),
    });
    emu.proxy.clear();

    expect(report).toMatchObject({ deleted: [orphan], failed: [] });
    expect(emu.proxy.count('efs', 'DescribeMountTargets')).toBe(1);
    expect(emu.proxy.count('efs', 'DeleteMountTarget')).toBe(1);
    expect(emu.proxy.count('efs', 'DeleteFileSystem')).toBe(3);
    expect((await describeAll(setup.efs)).has(orphan)).toBe(false);
  });

  it('waits for the mount targets of many file systems at once, not one after another', async () => {
    emu.proxy.clear();
    const setup = reaperClients();
    const net = await createNetwork(setup.ec2, 1);
    const [terminated] = await launchOwners(setup.ec2, 'f1', 'terminated');
    const orphans: string[] = [];
    for (let i = 0; i < 8; i++) {
      orphans.push(
        await createFileSystem(setup.efs, net, { fleet: 'f1', owner: terminated, mountTarget: true }),
      );
    }
    // Each file system's mount target takes two DeleteFileSystem tries to finish deleting, as in AWS.
    const refusals = new Map<string, number>();
    emu.proxy.addRule({
      service: 'efs',
      operation: 'DeleteFileSystem',
      match: (r) => {
        const n = refusals.get(r.path) ?? 0;
        refusals.set(r.path, n + 1);
        return n < 2;
      },
      fault: { kind: 'error', status: 409, code: 'FileSystemInUse', message: 'File system is in use' },
    });
    const clock = clockAt(60);
    const started = clock.now();
    emu.proxy.resetStats();

    const report = await reap(reaperClients(), reaperSettingsFromFlags({ fleetId: 'f1' }), {
      clock,
      concurrency: 4,
    });
    emu.proxy.clear();

    expect([...report.deleted].sort()).toEqual([...orphans].sort());
    expect(emu.proxy.count('efs', 'DeleteFileSystem')).toBe(3 * 8);
    // Two backoff rounds for all eight together (at most 1 s + 2 s), where waiting per file system with
    // four workers would take four times as long.
    expect(clock.now() - started).toBeLessThanOrEqual(3000);
  });

  it('records a file system the batched mark could not tag as failed, and marks the rest', async () => {
    emu.proxy.clear();
    const setup = reaperClients();
    const net = await createNetwork(setup.ec2, 1);
    const [running] = await launchOwners(setup.ec2, 'f1', 'running');
    const clock = clockAt(60);
    const refused = await createFileSystem(setup.efs, net, {
      fleet: 'f1',
      owner: running,
      mountTarget: true,
    });
    const fine = await createFileSystem(setup.efs, net, { fleet: 'f1', owner: running, mountTarget: true });
    await seedConnections(setup.cloudwatch, [refused, fine], [0, 0, 0], clock.now());
    const refusedArn = (await describeAll(setup.efs)).get(refused)!.FileSystemArn!;
    // TagResources answers per ARN: one throttled and one 5xx call first, then a refusal for one ARN.
    emu.proxy.addRule({
      service: 'tagging',
      operation: 'TagResources',
      fault: { kind: 'throttle' },
      times: 1,
    });
    emu.proxy.addRule({ service: 'tagging', operation: 'TagResources', fault: { kind: '5xx' }, times: 1 });
    emu.proxy.addRule({
      service: 'tagging',
      operation: 'TagResources',
      fault: {
        kind: 'rewrite',
        rewrite: () =>
          JSON.stringify({
            FailedResourcesMap: {
              [refusedArn]: { StatusCode: 403, ErrorCode: 'AccessDeniedException', ErrorMessage: 'denied' },
            },
          }),
      },
    });

    const report = await reap(reaperClients(), reaperSettingsFromFlags({ fleetId: 'f1' }), { clock });
    emu.proxy.clear();

    expect(report.marked).toEqual([fine]);
    expect(report.failed).toEqual([{ id: refused, error: 'AccessDeniedException: denied' }]);
    expect(emu.proxy.count('tagging', 'TagResources')).toBe(3);
  });

  it('keeps a file system whose mount target appeared after the listing, unless other evidence condemns it', async () => {
    emu.proxy.clear();
    const setup = reaperClients();
    const net = await createNetwork(setup.ec2, 1);
    const [running] = await launchOwners(setup.ec2, 'f1', 'running');
    const clock = clockAt(60);
    // Both have no mount target when listed; one is decided on that alone, the other on its error state.
    const settingUp = await createFileSystem(setup.efs, net, { fleet: 'f1', owner: running });
    const broken = await createFileSystem(setup.efs, net, { fleet: 'f1', owner: running });
    emu.proxy.addRule({
      service: 'efs',
      operation: 'DescribeFileSystems',
      fault: { kind: 'rewrite', rewrite: withLifecycleState({ [broken]: 'error' }) },
    });
    const clients = reaperClients();
    // Someone creates a mount target between the reaper's listing and its first DeleteFileSystem.
    const appeared = new Set<string>();
    clients.efs.middlewareStack.add(
      (next, context) => async (args) => {
        const { FileSystemId } = args.input as { FileSystemId?: string };
        if (
          context.commandName === 'DeleteFileSystemCommand' &&
          FileSystemId &&
          !appeared.has(FileSystemId)
        ) {
          appeared.add(FileSystemId);
          await setup.efs.send(
            new CreateMountTargetCommand({
              FileSystemId,
              SubnetId: net.subnets[0].subnetId,
              SecurityGroups: [net.securityGroupId],
            }),
          );
        }
        return next(args);
      },
      { step: 'initialize', name: 'mountTargetAppears' },
    );

    const report = await reap(clients, reaperSettingsFromFlags({ fleetId: 'f1' }), { clock });
    emu.proxy.clear();

    expect(report).toMatchObject({ deleted: [broken], failed: [] });
    expect(report.kept).toEqual([
      {
        id: settingUp,
        reason: expect.stringMatching(
          /^no mount target .*; a mount target appeared since the re-check; decided again next run$/,
        ),
      },
    ]);
    const left = await describeAll(setup.efs);
    expect([...left.keys()]).toEqual([settingUp]);
    const mountTargets = await setup.efs.send(new DescribeMountTargetsCommand({ FileSystemId: settingUp }));
    expect(mountTargets.MountTargets).toHaveLength(1);
  });

  it('re-checks a batch with one page right before its first delete, and spares any whose tags or state changed since the decision', async () => {
    emu.proxy.clear();
    const setup = reaperClients();
    const net = await createNetwork(setup.ec2, 1);
    const [terminated] = await launchOwners(setup.ec2, 'f1', 'terminated');
    const [newOwner] = await launchOwners(setup.ec2, 'f1', 'running');
    const clock = clockAt(60);
    const orphan = (mountTarget: boolean) =>
      createFileSystem(setup.efs, net, { fleet: 'f1', owner: terminated, mountTarget });
    // Every one is decided "delete: owner terminated"; between that decision and the batch's re-check, someone
    // acts on four of them (an old agent adopting one, a reaper marking one, a teardown starting, a re-run).
    const changes: Record<string, Tag> = {
      [await orphan(true)]: { Key: TAG_OWNER_INSTANCE, Value: newOwner },
      [await orphan(true)]: { Key: TAG_MARKED_IDLE_AT, Value: new Date(clock.now()).toISOString() },
      [await orphan(false)]: { Key: TAG_TEARDOWN_STARTED_AT, Value: new Date(clock.now()).toISOString() },
      [await orphan(false)]: { Key: TAG_JOB, Value: 'a-re-run' },
    };
    const untouched = [await orphan(true), await orphan(false), await orphan(true)];
    const clients = reaperClients();
    // The changes land just before the run's second DescribeFileSystems: its listing is one page (seven file
    // systems), so that is the re-check of the one batch, made after every decision and before any delete.
    let listings = 0;
    clients.efs.middlewareStack.add(
      (next, context) => async (args) => {
        if (context.commandName === 'DescribeFileSystemsCommand' && ++listings === 2) {
          for (const [id, tag] of Object.entries(changes)) {
            await setup.efs.send(new TagResourceCommand({ ResourceId: id, Tags: [tag] }));
          }
        }
        return next(args);
      },
      { step: 'initialize', name: 'someoneActsMeanwhile' },
    );
    emu.proxy.resetStats();

    const report = await reap(clients, reaperSettingsFromFlags({ fleetId: 'f1' }), { clock });

    expect(listings).toBe(2);
    expect(emu.proxy.count('efs', 'DescribeFileSystems')).toBe(2);
    expect(report.failed).toEqual([]);
    expect([...report.deleted].sort()).toEqual([...untouched].sort());
    expect(report.kept).toHaveLength(4);
    for (const [id, tag] of Object.entries(changes)) {
      expect(report.kept).toContainEqual({
        id,
        reason: expect.stringContaining(`re-checked before deleting: ${tag.Key} changed from `),
      });
    }
    const left = await describeAll(setup.efs);
    expect([...left.keys()].sort()).toEqual(Object.keys(changes).sort());
    for (const id of Object.keys(changes)) {
      const targets = await setup.efs.send(new DescribeMountTargetsCommand({ FileSystemId: id }));
      expect(targets.MountTargets!.length).toBe(left.get(id)!.NumberOfMountTargets);
    }
  });
});
