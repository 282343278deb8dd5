/**
 * Every evidence combination the reaper knows, against the emulator, in real and dry-run modes: one file
 * system per case, all decided together by the same runs (one at +10 min for the young case, one at +60 min
 * for the rest), as a real fleet's would be. What moto never reports (lifecycle states error, creating,
 * deleting; a Regional file system; the automatic-backup system tag) is injected by the fault proxy
 * rewriting DescribeFileSystems answers.
 */
import { reap, type Outcome } from '../../../core/reaper/reaper';
import type { ReapReport } from '../../../core/reaper/report';
import { reaperSettingsFromFlags } from '../../../core/contract/reaper-settings';
import { TAG_MARKED_IDLE_AT } from '../../../core/contract/tags';
import type { FileSystemDescription } from '@aws-sdk/client-efs';
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
  type FieldChange,
  type OwnerState,
} from './scenario';

const FLEET = 'f1';

interface Case {
  readonly name: string;
  readonly owner?: OwnerState | 'unknown';
  readonly mountTarget?: boolean;
  /** Fleet tag; FLEET when unset, none when null. */
  readonly fleet?: string | null;
  /** Minutes since creation at decision time. @default 60 (past the 30-minute grace period) */
  readonly ageMinutes?: number;
  /** Per-minute ClientConnections datapoints inside the window; none when unset. */
  readonly connections?: number[];
  readonly markedMinutesAgo?: number;
  /** `mountfleet:teardown-started-at` this long before the run. */
  readonly teardownMinutesAgo?: number;
  readonly lifecycle?: string;
  /** CreationToken; the fleet's own form when unset. */
  readonly token?: string;
  /** DescribeFileSystems fields as the proxy shows them (what moto cannot make). */
  readonly describe?: Record<string, FieldChange>;
  /** 'absent': not a candidate, missing from the report and untouched. */
  readonly expect: Outcome | 'absent';
  readonly reason?: RegExp;
}

const CASES: Case[] = [
  {
    name: 'young (owner gone, no mount target)',
    owner: 'terminated',
    ageMinutes: 10,
    expect: 'kept',
    reason: /young/,
  },
  {
    name: 'in use (owner gone)',
    owner: 'terminated',
    mountTarget: true,
    connections: [0, 1, 0],
    expect: 'kept',
    reason: /in use/,
  },
  { name: 'no mount target after grace', owner: 'running', expect: 'deleted' },
  {
    name: 'owner terminated',
    owner: 'terminated',
    mountTarget: true,
    expect: 'deleted',
    reason: /terminated/,
  },
  {
    name: 'owner unknown to EC2',
    owner: 'unknown',
    mountTarget: true,
    connections: [0, 0],
    expect: 'deleted',
    reason: /unknown/,
  },
  {
    name: 'owner running and idle: first sighting',
    owner: 'running',
    mountTarget: true,
    connections: [0, 0, 0],
    expect: 'marked',
  },
  {
    name: 'owner running and idle: marked a window ago',
    owner: 'running',
    mountTarget: true,
    connections: [0, 0],
    markedMinutesAgo: 40,
    expect: 'deleted',
    reason: /still idle/,
  },
  {
    name: 'owner running and idle: marked recently',
    owner: 'running',
    mountTarget: true,
    connections: [0, 0],
    markedMinutesAgo: 10,
    expect: 'kept',
    reason: /marked 10 min ago/,
  },
  {
    name: 'metrics missing (owner running)',
    owner: 'running',
    mountTarget: true,
    expect: 'kept',
    reason: /no ClientConnections datapoints/,
  },
  { name: 'metrics missing (owner gone)', owner: 'terminated', mountTarget: true, expect: 'deleted' },
  {
    name: 'owner stopped and idle',
    owner: 'stopped',
    mountTarget: true,
    connections: [0],
    expect: 'deleted',
    reason: /stopped: a stopped instance keeps no NFS mount/,
  },
  {
    name: 'owner stopped, no datapoints',
    owner: 'stopped',
    mountTarget: true,
    expect: 'deleted',
    reason: /stopped/,
  },
  {
    name: 'teardown started past the grace period, owner running, no datapoints',
    owner: 'running',
    mountTarget: true,
    teardownMinutesAgo: 45,
    expect: 'deleted',
    reason: /^teardown started 45 min ago and did not finish/,
  },
  {
    name: 'teardown started recently, owner running, no datapoints',
    owner: 'running',
    mountTarget: true,
    teardownMinutesAgo: 5,
    expect: 'kept',
    reason: /no ClientConnections datapoints/,
  },
  {
    name: 'foreign: CreationToken not the fleet’s',
    owner: 'terminated',
    token: 'precious-dataset',
    expect: 'foreign',
    reason: /^foreign: CreationToken "precious-dataset" does not start with "mf\/f1\/"/,
  },
  {
    name: 'foreign: another fleet’s CreationToken',
    owner: 'terminated',
    token: 'mf/f10/job-1',
    expect: 'foreign',
    reason: /^foreign: CreationToken/,
  },
  {
    name: 'foreign: Regional (not One Zone)',
    owner: 'terminated',
    describe: { AvailabilityZoneName: null, AvailabilityZoneId: null },
    expect: 'foreign',
    reason: /^foreign: not a One Zone file system/,
  },
  {
    name: 'foreign: automatic backups on',
    owner: 'terminated',
    mountTarget: true,
    describe: {
      Tags: (tags: unknown) => [
        ...(tags as object[]),
        { Key: 'aws:elasticfilesystem:default-backup', Value: 'enabled' },
      ],
    },
    expect: 'foreign',
    reason: /^foreign: automatic backups are on/,
  },
  {
    name: 'lifecycle error (owner running, mount target)',
    owner: 'running',
    mountTarget: true,
    lifecycle: 'error',
    expect: 'deleted',
    reason: /error/,
  },
  {
    name: 'lifecycle error but in use',
    owner: 'running',
    mountTarget: true,
    lifecycle: 'error',
    connections: [2],
    expect: 'kept',
    reason: /in use/,
  },
  { name: 'creating', owner: 'terminated', lifecycle: 'creating', expect: 'kept', reason: /creating/ },
  {
    name: 'deleting',
    owner: 'terminated',
    lifecycle: 'deleting',
    expect: 'kept',
    reason: /deletion already in progress/,
  },
  { name: 'untagged', fleet: null, owner: 'terminated', expect: 'absent' },
  { name: 'other fleet', fleet: 'other', owner: 'terminated', expect: 'absent' },
  {
    name: 'marked, then back in use',
    owner: 'running',
    mountTarget: true,
    connections: [0, 3],
    markedMinutesAgo: 40,
    expect: 'unmarked',
  },
];

describe('reap (emulator): one file system per evidence combination', () => {
  const emu = useReaperEmulator();

  interface Observed {
    readonly outcomes: string[];
    readonly reason?: string;
    readonly before?: FileSystemDescription;
    readonly after?: FileSystemDescription;
    readonly scanned: number;
    readonly markedAt: string;
  }

  /** Builds every case in a fresh emulator, runs the reaper, and records what happened to each file system. */
  async function runAll(dryRun: boolean): Promise<Map<string, Observed>> {
    await emu.reset();
    emu.proxy.clear();
    const clients = reaperClients();
    const net = await createNetwork(clients.ec2, 1);
    const owners: Record<string, string> = { unknown: UNKNOWN_INSTANCE };
    for (const state of ['running', 'stopped', 'terminated'] as const) {
      owners[state] = (await launchOwners(clients.ec2, FLEET, state))[0];
    }
    const base = Date.now();
    const youngClock = clockAt(10, base);
    const clock = clockAt(60, base);
    const ids = new Map<string, string>();
    const described: Record<string, Record<string, FieldChange>> = {};
    for (const c of CASES) {
      const id = await createFileSystem(clients.efs, net, {
        fleet: c.fleet === null ? undefined : (c.fleet ?? FLEET),
        owner: c.owner ? owners[c.owner] : undefined,
        mountTarget: c.mountTarget,
        markedIdleAt:
          c.markedMinutesAgo === undefined
            ? undefined
            : new Date(clock.now() - c.markedMinutesAgo * 60_000).toISOString(),
        teardownStartedAt:
          c.teardownMinutesAgo === undefined
            ? undefined
            : new Date(clock.now() - c.teardownMinutesAgo * 60_000).toISOString(),
        token: c.token,
      });
      ids.set(c.name, id);
      if (c.connections) await seedConnections(clients.cloudwatch, [id], c.connections, clock.now());
      described[id] = { ...c.describe, ...(c.lifecycle ? { LifeCycleState: c.lifecycle } : {}) };
    }
    emu.proxy.addRule({
      service: 'efs',
      operation: 'DescribeFileSystems',
      fault: { kind: 'rewrite', rewrite: withDescription(described) },
    });
    const before = await describeAll(clients.efs);

    const settings = reaperSettingsFromFlags({ fleetId: FLEET, dryRun });
    const observe = async (runClock: typeof clock, cases: Case[]) => {
      const reasons = new Map<string, string>();
      const report = await reap(clients, settings, {
        clock: runClock,
        onDecision: (d) => reasons.set(d.fileSystemId, d.reason),
      });
      const after = await describeAll(clients.efs);
      return cases.map((c): [string, Observed] => {
        const id = ids.get(c.name)!;
        return [
          c.name,
          {
            outcomes: outcomesOf(report, id),
            reason: reasons.get(id),
            before: before.get(id),
            after: after.get(id),
            scanned: report.scanned,
            markedAt: new Date(runClock.now()).toISOString(),
          },
        ];
      });
    };
    const young = CASES.filter((c) => c.ageMinutes !== undefined);
    const rest = CASES.filter((c) => c.ageMinutes === undefined);
    return new Map([...(await observe(youngClock, young)), ...(await observe(clock, rest))]);
  }

  function outcomesOf(report: ReapReport, id: string): Outcome[] {
    const lists: Record<Outcome, string[]> = {
      deleted: report.deleted,
      marked: report.marked,
      unmarked: report.unmarked,
      kept: report.kept.map((k) => k.id),
      foreign: report.foreign.map((k) => k.id),
      failed: report.failed.map((f) => f.id),
    };
    return (Object.keys(lists) as Outcome[]).filter((k) => lists[k].includes(id));
  }

  describe.each([
    ['real', false],
    ['dry-run', true],
  ] as const)('%s', (_mode, dryRun) => {
    let observed: Map<string, Observed>;
    beforeAll(async () => {
      observed = await runAll(dryRun);
    }, 120_000);

    it("scans exactly this fleet's file systems", () => {
      // The young file system was kept by the +10 min run, so the +60 min run sees every candidate.
      const scanned = observed.get(CASES.find((c) => c.ageMinutes === undefined)!.name)!.scanned;
      expect(scanned).toBe(CASES.filter((c) => c.expect !== 'absent').length);
    });

    it.each(CASES.map((c) => [c.name, c] as const))('%s', (name, c) => {
      const o = observed.get(name)!;
      expect(o.outcomes).toEqual(c.expect === 'absent' ? [] : [c.expect]);
      if (c.expect === 'absent') expect(o.reason).toBeUndefined();
      if (c.reason) expect(o.reason).toMatch(c.reason);

      if (dryRun || c.expect === 'absent' || c.expect === 'kept' || c.expect === 'foreign') {
        expect(o.after).toBeDefined();
        expect(tagOf(o.after, TAG_MARKED_IDLE_AT)).toBe(tagOf(o.before, TAG_MARKED_IDLE_AT));
      } else if (c.expect === 'deleted') {
        expect(o.after).toBeUndefined();
      } else if (c.expect === 'marked') {
        expect(tagOf(o.after, TAG_MARKED_IDLE_AT)).toBe(o.markedAt);
      } else {
        expect(o.after).toBeDefined();
        expect(tagOf(o.after, TAG_MARKED_IDLE_AT)).toBeUndefined();
      }
    });
  });
});
