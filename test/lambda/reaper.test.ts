/**
 * The reaper Lambda handler, invoked directly against the emulator (moto's Lambda cannot run it) with a
 * stand-in context. Checks the report it returns, the EMF metrics and the one log line per decision.
 */
import { TerminateInstancesCommand } from '@aws-sdk/client-ec2';
import { efsClient } from '../../core/aws/clients';
import { REAPER_METRIC_NAMES } from '../../core/contract/metric-names';
import { useEmulator } from '../support/emulator';
import {
  createFileSystem,
  describeAll,
  reaperClients,
  seedConnections,
  seedFleet,
} from '../core/reaper/scenario';

type Handler = typeof import('../../lambda/reaper/index').handler;

const ENV = {
  MOUNTFLEET_FLEET_ID: 'f1',
  MOUNTFLEET_DRY_RUN: 'false',
  // moto stamps CreationTime with the real time: no grace period, so the handler's real clock can act.
  MOUNTFLEET_GRACE_MINUTES: '0',
  MOUNTFLEET_IDLE_WINDOW_MINUTES: '30',
  MOUNTFLEET_METRIC_LAG_MINUTES: '5',
  MOUNTFLEET_MAX_DELETIONS_PER_RUN: '100',
  MOUNTFLEET_DEADLINE_MARGIN_SECONDS: '60',
};

const context = (remainingMs = 600_000) => ({ getRemainingTimeInMillis: () => remainingMs });

describe('reaper Lambda handler (emulator)', () => {
  useEmulator();
  let handler: Handler;
  let stdout: string[];
  let writeSpy: jest.SpyInstance;

  beforeAll(() => {
    Object.assign(process.env, ENV);
    // The handler builds its clients at module load, as in a Lambda container: load it once the
    // emulator's endpoint is in the environment.
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    handler = (require('../../lambda/reaper/index') as { handler: Handler }).handler;
  });
  beforeEach(() => {
    Object.assign(process.env, ENV);
    stdout = [];
    writeSpy = jest.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
      stdout.push(String(chunk));
      return true;
    });
  });
  afterEach(() => writeSpy.mockRestore());
  afterAll(() => {
    for (const key of Object.keys(ENV)) delete process.env[key];
  });

  const jsonLines = () =>
    stdout
      .join('')
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as Record<string, unknown>);

  /** seedFleet's fleet, and an idle file system of the running owner (marked on a first sighting). */
  async function fleetWithOrphans() {
    const clients = reaperClients();
    const f = await seedFleet(clients);
    const idle = await createFileSystem(clients.efs, f.net, {
      fleet: 'f1',
      owner: f.running,
      mountTarget: true,
    });
    await seedConnections(clients.cloudwatch, [idle], [0, 0], Date.now());
    return { ...f, idle };
  }

  it('scheduled event: returns the report, logs each decision, publishes EMF counts with the Fleet dimension', async () => {
    const f = await fleetWithOrphans();

    const report = await handler(
      { 'detail-type': 'Scheduled Event', source: 'aws.events', detail: {} },
      context(),
    );

    expect(report).toMatchObject({ fleet: 'f1', dryRun: false, scanned: 3, deleted: [f.orphan], failed: [] });
    expect((await describeAll(efsClient())).has(f.orphan)).toBe(false);
    const lines = jsonLines();
    const decisions = lines.filter((l) => l.message === 'decision');
    expect(decisions.map((d) => d.fileSystemId).sort()).toEqual([f.orphan, f.inUse, f.idle].sort());
    expect(decisions.find((d) => d.fileSystemId === f.orphan)).toMatchObject({
      level: 'INFO',
      outcome: 'deleted',
      fleet: 'f1',
      trigger: 'schedule',
      reason: expect.stringMatching(/terminated/),
    });
    const emf = lines.find((l) => l._aws !== undefined) as {
      _aws: {
        CloudWatchMetrics: {
          Namespace: string;
          Dimensions: string[][];
          Metrics: { Name: string; Unit: string }[];
        }[];
      };
      [metric: string]: unknown;
    };
    expect(emf._aws.CloudWatchMetrics[0].Namespace).toBe('Mountfleet/Reaper');
    expect(emf._aws.CloudWatchMetrics[0].Dimensions).toEqual([['Fleet']]);
    // Exactly the contract's names, which the construct's alarms and the dashboard chart (Foreign included).
    expect(emf._aws.CloudWatchMetrics[0].Metrics.map((m) => m.Name).sort()).toEqual(
      [...REAPER_METRIC_NAMES].sort(),
    );
    expect(emf).toMatchObject({
      Fleet: 'f1',
      Scanned: 3,
      Deleted: 1,
      Kept: 1,
      Marked: 1,
      Unmarked: 0,
      Foreign: 0,
      Failed: 0,
    });
  });

  it('state-change event (terminated): reaps that instance’s file systems only', async () => {
    const f = await fleetWithOrphans();
    await reaperClients().ec2.send(new TerminateInstancesCommand({ InstanceIds: [f.running] }));

    const report = await handler(
      {
        'detail-type': 'EC2 Instance State-change Notification',
        source: 'aws.ec2',
        detail: { 'instance-id': f.running, state: 'terminated' },
      },
      context(),
    );

    // The event, confirmed by EC2, is the owner evidence; the connection veto still holds for the busy one.
    expect(report).toMatchObject({ scanned: 2, deleted: [f.idle], kept: [{ id: f.inUse }] });
    expect((await describeAll(efsClient())).has(f.orphan)).toBe(true);
  });

  it('ignores events that do not mean an instance is going', async () => {
    const result = await handler(
      {
        'detail-type': 'EC2 Instance State-change Notification',
        detail: { 'instance-id': 'i-0123456789abcdef0', state: 'running' },
      },
      context(),
    );
    expect(result).toEqual({ ignored: expect.stringMatching(/not going away/) });
  });

  it('starts no deletion when less than the deadline margin remains', async () => {
    const f = await fleetWithOrphans();

    const report = await handler({ 'detail-type': 'Scheduled Event' }, context(30_000));

    expect(report).toMatchObject({ deleted: [], marked: [] });
    expect('kept' in report && report.kept.find((k) => k.id === f.orphan)?.reason).toMatch(/out of time/);
    expect((await describeAll(efsClient())).has(f.orphan)).toBe(true);
  });

  it('fails with a message naming the bad variable', async () => {
    process.env.MOUNTFLEET_IDLE_WINDOW_MINUTES = 'half an hour';
    await expect(handler({}, context())).rejects.toThrow(
      /MOUNTFLEET_IDLE_WINDOW_MINUTES="half an hour": must be a whole number from 5 to 1440/,
    );
  });
});
