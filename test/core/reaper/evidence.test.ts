/**
 * The event fast path and the batched read path, counted by the fault proxy. The proxy also plays EC2's
 * real limit that moto does not enforce: more than 200 values in one filter is FilterLimitExceeded.
 */
import { TerminateInstancesCommand } from '@aws-sdk/client-ec2';
import { CreateFileSystemCommand } from '@aws-sdk/client-efs';
import { cloudWatchClient, ec2Client } from '../../../core/aws/clients';
import { listFleetFileSystems, lookupOwners, readConnections } from '../../../core/reaper/evidence';
import { OWNER_VISIBILITY_MINUTES } from '../../../core/reaper/decide';
import { reap } from '../../../core/reaper/reaper';
import { reaperSettingsFromFlags } from '../../../core/contract/reaper-settings';
import type { RequestInfo } from '../../support/fault-proxy';
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
} from './scenario';
import { TAG_MARKED_IDLE_AT } from '../../../core/contract/tags';

/** The largest `Filter.N.Value.M` index in an EC2 query request. */
function filterValues(request: RequestInfo): number {
  const indexes = [...(request.body ?? '').matchAll(/Filter\.\d+\.Value\.(\d+)=/g)].map((m) => Number(m[1]));
  return Math.max(0, ...indexes);
}

describe('reaper reads and the event fast path (emulator + fault proxy)', () => {
  const emu = useReaperEmulator();

  beforeEach(() => {
    emu.proxy.clear();
    emu.proxy.addRule({
      service: 'ec2',
      operation: 'DescribeInstances',
      match: (r) => filterValues(r) > 200,
      fault: {
        kind: 'error',
        status: 400,
        code: 'FilterLimitExceeded',
        message: 'The maximum number of filter values specified on a single call is 200',
      },
    });
  });

  it('fast path: reaps only the named instance’s file systems, on the event’s evidence, with the same vetoes', async () => {
    const c = reaperClients();
    const net = await createNetwork(c.ec2, 1);
    // A Spot interruption warning arrives while the instance still runs.
    const [interrupted] = await launchOwners(c.ec2, 'f1', 'running');
    const [otherGone] = await launchOwners(c.ec2, 'f1', 'terminated');
    const clock = clockAt(60);
    const idle = await createFileSystem(c.efs, net, { fleet: 'f1', owner: interrupted, mountTarget: true });
    const busy = await createFileSystem(c.efs, net, { fleet: 'f1', owner: interrupted, mountTarget: true });
    // No datapoints yet: the instance still runs for two minutes and may be using it.
    const silent = await createFileSystem(c.efs, net, { fleet: 'f1', owner: interrupted, mountTarget: true });
    const otherOwner = await createFileSystem(c.efs, net, {
      fleet: 'f1',
      owner: otherGone,
      mountTarget: true,
    });
    const otherFleet = await createFileSystem(c.efs, net, { fleet: 'f2', owner: interrupted });
    await seedConnections(c.cloudwatch, [busy], [1], clock.now());
    await seedConnections(c.cloudwatch, [idle], [0, 0, 0], clock.now());
    emu.proxy.resetStats();

    const report = await reap(c, reaperSettingsFromFlags({ fleetId: 'f1' }), {
      clock,
      goneInstance: {
        instanceId: interrupted,
        cause: 'Spot interruption warning (terminate)',
        confirmed: false,
      },
    });

    expect(report).toMatchObject({ scanned: 3, deleted: [idle], failed: [] });
    expect(report.kept).toEqual([
      { id: busy, reason: expect.stringMatching(/in use/) },
      {
        id: silent,
        reason: expect.stringMatching(
          /^Spot interruption warning \(terminate\) for owner .*: instance still running, no datapoints — waiting for it to end$/,
        ),
      },
    ]);
    // One lookup, for the file system without datapoints: EC2 says its owner still runs.
    expect(emu.proxy.count('ec2', 'DescribeInstances')).toBe(1);
    const left = await describeAll(c.efs);
    expect([...left.keys()].sort()).toEqual([busy, silent, otherOwner, otherFleet].sort());

    // The instance ends, and the termination event (checked with EC2) confirms it: no datapoints no
    // longer keeps it.
    await c.ec2.send(new TerminateInstancesCommand({ InstanceIds: [interrupted] }));
    const ended = await reap(c, reaperSettingsFromFlags({ fleetId: 'f1' }), {
      clock,
      goneInstance: {
        instanceId: interrupted,
        cause: 'state-change notification (terminated)',
        confirmed: true,
      },
    });
    expect(ended).toMatchObject({ deleted: [silent], failed: [] });
  });

  it('fast path: a confirmed end of the owner lifts the grace period, a warning does not', async () => {
    const c = reaperClients();
    const net = await createNetwork(c.ec2, 1);
    const [owner] = await launchOwners(c.ec2, 'f1', 'terminated');
    const clock = clockAt(2); // two minutes old: well inside the 30-minute grace period
    const young = await createFileSystem(c.efs, net, { fleet: 'f1', owner, mountTarget: true });
    const warning = { instanceId: owner, cause: 'Spot interruption warning (terminate)', confirmed: false };
    const terminated = {
      instanceId: owner,
      cause: 'state-change notification (terminated)',
      confirmed: true,
    };
    const settings = reaperSettingsFromFlags({ fleetId: 'f1' });

    const warned = await reap(c, settings, { clock, goneInstance: warning });
    expect(warned.kept).toEqual([{ id: young, reason: expect.stringMatching(/^young/) }]);

    const ended = await reap(c, settings, { clock, goneInstance: terminated });
    expect(ended).toMatchObject({ deleted: [young], kept: [], failed: [] });
    expect([...(await describeAll(c.efs)).keys()]).toEqual([]);
  });

  it('fast path: an end the event claims lifts the grace period only when EC2 bears it out', async () => {
    const c = reaperClients();
    const net = await createNetwork(c.ec2, 1);
    const [stillRunning] = await launchOwners(c.ec2, 'f1', 'running');
    const clock = clockAt(2);
    const young = await createFileSystem(c.efs, net, { fleet: 'f1', owner: stillRunning, mountTarget: true });
    const vanished = await createFileSystem(c.efs, net, {
      fleet: 'f1',
      owner: UNKNOWN_INSTANCE,
      mountTarget: true,
    });
    const settings = reaperSettingsFromFlags({ fleetId: 'f1' });
    const claim = (instanceId: string) => ({
      instanceId,
      cause: 'state-change notification (terminated)',
      confirmed: true,
    });
    emu.proxy.resetStats();

    // A stale, replayed or forged event: EC2 says the instance runs.
    const contradicted = await reap(c, settings, { clock, goneInstance: claim(stillRunning) });
    expect(contradicted).toMatchObject({ deleted: [], failed: [] });
    expect(contradicted.kept).toEqual([{ id: young, reason: expect.stringMatching(/^young/) }]);
    // One batched lookup on the instance-id filter, never InstanceIds (an unknown id fails that call).
    const lookups = emu.proxy.requests().filter((r) => r.operation === 'DescribeInstances');
    expect(lookups).toHaveLength(1);

    // Past the grace period too the claim counts for nothing: a running owner's idle file system is only
    // marked (two-phase), as on a scheduled run, never deleted as "going".
    const later = clockAt(60);
    await seedConnections(c.cloudwatch, [young], [0, 0, 0], later.now());
    const ordinary = await reap(c, settings, { clock: later, goneInstance: claim(stillRunning) });
    expect(ordinary).toMatchObject({ deleted: [], marked: [young], failed: [] });

    // Not found is gone — terminated instances vanish from DescribeInstances after about an hour — but only
    // past EC2's visibility window: a new instance can be missing from its answers for minutes.
    const tooSoon = await reap(c, settings, { clock, goneInstance: claim(UNKNOWN_INSTANCE) });
    expect(tooSoon).toMatchObject({ deleted: [], failed: [] });
    expect(tooSoon.kept).toEqual([
      {
        id: vanished,
        reason: expect.stringMatching(/is not known to EC2, but the file system is [12] min old/),
      },
    ]);
    const confirmed = await reap(c, settings, {
      clock: clockAt(OWNER_VISIBILITY_MINUTES),
      goneInstance: claim(UNKNOWN_INSTANCE),
    });
    expect(confirmed).toMatchObject({ deleted: [vanished], kept: [], failed: [] });
    expect([...(await describeAll(c.efs)).keys()]).toEqual([young]);
  });

  it('fast path: connections in the window still veto a confirmed end', async () => {
    const c = reaperClients();
    const net = await createNetwork(c.ec2, 1);
    const [owner] = await launchOwners(c.ec2, 'f1', 'terminated');
    const clock = clockAt(2);
    const busy = await createFileSystem(c.efs, net, { fleet: 'f1', owner, mountTarget: true });
    await seedConnections(c.cloudwatch, [busy], [1], clock.now());

    const report = await reap(c, reaperSettingsFromFlags({ fleetId: 'f1' }), {
      clock,
      goneInstance: { instanceId: owner, cause: 'state-change notification (terminated)', confirmed: true },
    });

    expect(report).toMatchObject({ deleted: [], failed: [] });
    expect(report.kept).toEqual([{ id: busy, reason: expect.stringMatching(/in use/) }]);
  });

  it('deletes an orphan with a mount target in the fewest EFS calls: its mount targets are read once', async () => {
    const c = reaperClients();
    const net = await createNetwork(c.ec2, 1);
    const [terminated] = await launchOwners(c.ec2, 'f1', 'terminated');
    const orphan = await createFileSystem(c.efs, net, { fleet: 'f1', owner: terminated, mountTarget: true });
    emu.proxy.resetStats();

    const report = await reap(c, reaperSettingsFromFlags({ fleetId: 'f1' }), { clock: clockAt(60) });

    expect(report).toMatchObject({ deleted: [orphan], failed: [] });
    // DescribeFileSystems twice: the listing, and the re-check right before the first delete.
    const efs = Object.fromEntries(
      Object.entries(emu.proxy.stats().byOperation)
        .filter(([op]) => op.startsWith('efs:'))
        .map(([op, st]) => [op, st.requests]),
    );
    expect(efs).toEqual({
      'efs:DescribeFileSystems': 2,
      'efs:DescribeMountTargets': 1,
      'efs:DeleteMountTarget': 1,
      'efs:DeleteFileSystem': 1,
    });
  });

  it('marks idle file systems 20 to a tagging call, with no EFS TagResource', async () => {
    const c = reaperClients();
    const net = await createNetwork(c.ec2, 1);
    const [running] = await launchOwners(c.ec2, 'f1', 'running');
    const clock = clockAt(60);
    const ids: string[] = [];
    for (let i = 0; i < 25; i++) {
      ids.push(await createFileSystem(c.efs, net, { fleet: 'f1', owner: running, mountTarget: true }));
    }
    await seedConnections(c.cloudwatch, ids, [0, 0, 0], clock.now());
    emu.proxy.resetStats();

    const report = await reap(c, reaperSettingsFromFlags({ fleetId: 'f1' }), { clock });

    expect(report).toMatchObject({ deleted: [], failed: [] });
    expect([...report.marked].sort()).toEqual([...ids].sort());
    expect(emu.proxy.count('tagging', 'TagResources')).toBe(2);
    expect(emu.proxy.count('efs', 'TagResource')).toBe(0);
    const marked = new Date(clock.now()).toISOString();
    for (const fs of (await describeAll(c.efs)).values()) expect(tagOf(fs, TAG_MARKED_IDLE_AT)).toBe(marked);

    // Back in use: the marks come off the same way.
    await seedConnections(c.cloudwatch, ids, [1], clock.now(), 6);
    emu.proxy.resetStats();
    const again = await reap(c, reaperSettingsFromFlags({ fleetId: 'f1' }), { clock });
    expect(again.unmarked).toHaveLength(25);
    expect(emu.proxy.count('tagging', 'UntagResources')).toBe(2);
    expect(emu.proxy.count('efs', 'UntagResource')).toBe(0);
    for (const fs of (await describeAll(c.efs)).values())
      expect(tagOf(fs, TAG_MARKED_IDLE_AT)).toBeUndefined();
  });

  it('lists file systems in pages of 100', async () => {
    const c = reaperClients();
    const pageSizes: (string | null)[] = [];
    emu.proxy.addRule({
      service: 'efs',
      operation: 'DescribeFileSystems',
      // Observes only: the rule never fires.
      match: (r) => {
        pageSizes.push(r.query.get('MaxItems'));
        return false;
      },
      fault: { kind: 'delay', ms: 0 },
    });
    for (const [i, fleet] of ['f1', 'f1', 'f2'].entries()) {
      await c.efs.send(
        new CreateFileSystemCommand({
          CreationToken: `page-${i}`,
          Tags: [{ Key: 'mountfleet:fleet', Value: fleet }],
        }),
      );
    }
    expect(await listFleetFileSystems(c.efs, 'f1')).toHaveLength(2);
    expect(pageSizes).toEqual(['100']);
  });

  it('reads connections for 501 file systems in two GetMetricData calls', async () => {
    const ids = Array.from({ length: 501 }, (_, i) => `fs-${i.toString(16).padStart(8, '0')}`);
    const end = Date.now();
    await seedConnections(cloudWatchClient(), [ids[0]], [2], end, 5);
    await seedConnections(cloudWatchClient(), [ids[500]], [0, 0], end, 5);
    emu.proxy.resetStats();

    const read = await readConnections(cloudWatchClient(), ids, {
      start: new Date(end - 30 * 60_000),
      end: new Date(end),
    });

    expect(emu.proxy.count('cloudwatch', 'GetMetricData')).toBe(2);
    expect(read.get(ids[0])).toEqual({ kind: 'in-use', connections: 2 });
    expect(read.get(ids[500])).toEqual({ kind: 'idle' });
    expect(read.get(ids[250])).toEqual({ kind: 'no-data' });
  });

  it('looks up 250 owners in two DescribeInstances calls without exceeding 200 filter values', async () => {
    const ec2 = ec2Client();
    const fleet = await launchOwners(ec2, 'f1', 'running', 205);
    const terminated = await launchOwners(ec2, 'f1', 'terminated', 3);
    const untagged = await launchOwners(ec2, 'other', 'running', 2); // owners that lack this fleet's tag
    const unknown = Array.from({ length: 40 }, (_, i) => `i-0${i.toString(16).padStart(16, '0')}`);
    emu.proxy.resetStats();

    const owners = await lookupOwners(ec2, 'f1', [...fleet, ...terminated, ...untagged, ...unknown]);

    expect(emu.proxy.count('ec2', 'DescribeInstances')).toBe(2);
    expect(emu.proxy.stats().byOperation['ec2:DescribeInstances'].faulted).toBe(0);
    for (const id of [...fleet, ...untagged])
      expect(owners.get(id)).toEqual({ kind: 'present', state: 'running' });
    for (const id of terminated)
      expect(owners.get(id)).toEqual({ kind: 'gone', ownerState: 'gone', detail: 'is terminated' });
    for (const id of unknown) expect(owners.get(id)?.kind).toBe('gone');
  });

  it('never takes a failed owner lookup for a gone owner', async () => {
    const ec2 = ec2Client({ maxAttempts: 1 });
    emu.proxy.addRule({
      service: 'ec2',
      operation: 'DescribeInstances',
      fault: { kind: '5xx', status: 503 },
    });
    const owners = await lookupOwners(ec2, 'f1', [UNKNOWN_INSTANCE]);
    expect(owners.get(UNKNOWN_INSTANCE)).toMatchObject({ kind: 'lookup-failed' });
  });
});
