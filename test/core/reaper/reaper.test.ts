/**
 * Every evidence combination the reaper knows, against the emulator, in real and dry-run modes. Lifecycle
 * states moto never reports (error, creating, deleting) are injected by the fault proxy rewriting
 * DescribeFileSystems answers.
 */
import { cloudWatchClient, ec2Client, efsClient } from '../../../core/aws';
import { reap, type Outcome, type ReaperClients } from '../../../core/reaper/reaper';
import { reaperSettingsFromFlags } from '../../../core/reaper/settings';
import { TAG_MARKED_IDLE_AT } from '../../../core/tags';
import { useEmulator } from '../../support/emulator';
import { FaultProxy } from '../../support/fault-proxy';
import { createNetwork } from '../../support/fixtures';
import {
  UNKNOWN_INSTANCE,
  clockAt,
  createFileSystem,
  describeAll,
  launchOwners,
  seedConnections,
  tagOf,
  withLifecycleState,
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
  readonly lifecycle?: string;
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
    expect: 'kept',
    reason: /stopped and may resume/,
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
  const emu = useEmulator();
  let proxy: FaultProxy;

  beforeAll(async () => {
    proxy = await FaultProxy.start({ target: emu.endpoint });
    process.env.AWS_ENDPOINT_URL = proxy.endpoint;
  });
  afterEach(() => proxy.clear());
  afterAll(() => proxy.stop());

  const modes = [
    ['real', false],
    ['dry-run', true],
  ] as const;

  describe.each(modes)('%s', (_mode, dryRun) => {
    it.each(CASES.map((c) => [c.name, c] as const))('%s', async (_name, c) => {
      const clients: ReaperClients = { efs: efsClient(), ec2: ec2Client(), cloudwatch: cloudWatchClient() };
      const net = await createNetwork(clients.ec2, 1);
      const owner =
        c.owner === 'unknown'
          ? UNKNOWN_INSTANCE
          : c.owner
            ? (await launchOwners(clients.ec2, FLEET, c.owner))[0]
            : undefined;
      const clock = clockAt(c.ageMinutes ?? 60);
      const markedIdleAt =
        c.markedMinutesAgo === undefined
          ? undefined
          : new Date(clock.now() - c.markedMinutesAgo * 60_000).toISOString();
      const id = await createFileSystem(clients.efs, net, {
        fleet: c.fleet === null ? undefined : (c.fleet ?? FLEET),
        owner,
        mountTarget: c.mountTarget,
        markedIdleAt,
      });
      if (c.connections) await seedConnections(clients.cloudwatch, [id], c.connections, clock.now());
      if (c.lifecycle) {
        proxy.addRule({
          service: 'efs',
          operation: 'DescribeFileSystems',
          fault: { kind: 'rewrite', rewrite: withLifecycleState({ [id]: c.lifecycle }) },
        });
      }
      const before = (await describeAll(clients.efs)).get(id)!;

      const reasons = new Map<string, string>();
      const report = await reap(clients, reaperSettingsFromFlags({ fleetId: FLEET, dryRun }), {
        clock,
        onDecision: (d) => reasons.set(d.fileSystemId, d.reason),
      });

      const lists: Record<Outcome, string[]> = {
        deleted: report.deleted,
        marked: report.marked,
        unmarked: report.unmarked,
        kept: report.kept.map((k) => k.id),
        failed: report.failed.map((f) => f.id),
      };
      const found = (Object.keys(lists) as Outcome[]).filter((k) => lists[k].includes(id));
      expect(found).toEqual(c.expect === 'absent' ? [] : [c.expect]);
      expect(report.scanned).toBe(c.expect === 'absent' ? 0 : 1);
      if (c.reason) expect(reasons.get(id)).toMatch(c.reason);
      if (c.expect === 'kept') expect(report.kept).toEqual([{ id, reason: reasons.get(id) }]);

      const after = (await describeAll(clients.efs)).get(id);
      if (dryRun || c.expect === 'absent' || c.expect === 'kept') {
        expect(after).toBeDefined();
        expect(tagOf(after, TAG_MARKED_IDLE_AT)).toBe(tagOf(before, TAG_MARKED_IDLE_AT));
        return;
      }
      if (c.expect === 'deleted') expect(after).toBeUndefined();
      if (c.expect === 'marked')
        expect(tagOf(after, TAG_MARKED_IDLE_AT)).toBe(new Date(clock.now()).toISOString());
      if (c.expect === 'unmarked') {
        expect(after).toBeDefined();
        expect(tagOf(after, TAG_MARKED_IDLE_AT)).toBeUndefined();
      }
    });
  });
});
