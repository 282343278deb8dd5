/**
 * A fleet's scratch file systems in the AWS stand-in (aws-standin.ts), tagged as the agent tags them
 * (core/efs/run-create.ts), in the evidence kinds the reaper meets: `seedFleet` builds `count` file systems in
 * FLEET_MIX's proportions, with their owners in EC2, their ClientConnections and their Batch jobs.
 */
import { TAG_BATCH_JOB, TAG_BATCH_QUEUE } from '../../../core/contract/batch';
import { creationToken } from '../../../core/contract/creation-token';
import {
  TAG_FLEET,
  TAG_JOB,
  TAG_MARKED_IDLE_AT,
  TAG_OWNER_INSTANCE,
  TAG_RUN,
  TAG_TEARDOWN_STARTED_AT,
} from '../../../core/contract/tags';
import type { AwsStandIn } from './aws-standin';

const MINUTE = 60_000;

export type Owner = 'running' | 'stopped' | 'terminated' | 'unknown' | 'none';

/** One evidence kind: what its file systems look like, and what the reaper decides for them. */
export interface FleetGroup {
  readonly label: string;
  /** Per 1,000 file systems of the fleet. */
  readonly perThousand: number;
  readonly owner: Owner;
  readonly mountTarget: boolean;
  /** Sum of ClientConnections over the window; no datapoints when unset. */
  readonly connections?: number;
  readonly lifeCycleState?: string;
  readonly markedMinutesAgo?: number;
  readonly teardownMinutesAgo?: number;
  /** A Batch run's, its job in this state (ended 2 h ago when SUCCEEDED). */
  readonly batchJob?: 'RUNNING' | 'SUCCEEDED';
  /** A CreationToken the fleet never makes. */
  readonly foreign?: boolean;
  readonly expect: 'kept' | 'marked' | 'deleted' | 'foreign';
}

/** Most healthy, some orphans of every evidence kind (the 1,000 of bench/reaper.ts, with the kinds it lacked). */
export const FLEET_MIX: readonly FleetGroup[] = [
  { label: 'in use', perThousand: 300, owner: 'running', mountTarget: true, connections: 3, expect: 'kept' },
  {
    label: 'no datapoints, owner running',
    perThousand: 150,
    owner: 'running',
    mountTarget: true,
    expect: 'kept',
  },
  {
    label: 'Batch job running',
    perThousand: 60,
    owner: 'none',
    mountTarget: true,
    connections: 0,
    batchJob: 'RUNNING',
    expect: 'kept',
  },
  {
    label: 'creating',
    perThousand: 20,
    owner: 'running',
    mountTarget: false,
    lifeCycleState: 'creating',
    expect: 'kept',
  },
  {
    label: 'foreign token',
    perThousand: 10,
    owner: 'terminated',
    mountTarget: true,
    foreign: true,
    expect: 'foreign',
  },
  {
    label: 'idle, owner running (first sighting)',
    perThousand: 100,
    owner: 'running',
    mountTarget: true,
    connections: 0,
    expect: 'marked',
  },
  {
    label: 'idle, marked a window ago',
    perThousand: 20,
    owner: 'running',
    mountTarget: true,
    connections: 0,
    markedMinutesAgo: 40,
    expect: 'deleted',
  },
  {
    label: 'owner terminated',
    perThousand: 100,
    owner: 'terminated',
    mountTarget: true,
    connections: 0,
    expect: 'deleted',
  },
  {
    label: 'owner stopped',
    perThousand: 20,
    owner: 'stopped',
    mountTarget: true,
    connections: 0,
    expect: 'deleted',
  },
  { label: 'owner unknown to EC2', perThousand: 40, owner: 'unknown', mountTarget: true, expect: 'deleted' },
  {
    label: 'Batch job ended 2 h ago',
    perThousand: 40,
    owner: 'none',
    mountTarget: true,
    connections: 0,
    batchJob: 'SUCCEEDED',
    expect: 'deleted',
  },
  { label: 'no mount target', perThousand: 100, owner: 'running', mountTarget: false, expect: 'deleted' },
  {
    label: 'teardown stalled',
    perThousand: 20,
    owner: 'running',
    mountTarget: true,
    teardownMinutesAgo: 45,
    expect: 'deleted',
  },
  {
    label: 'lifecycle error',
    perThousand: 20,
    owner: 'running',
    mountTarget: true,
    lifeCycleState: 'error',
    expect: 'deleted',
  },
];

/**
 * A backlog: orphans of every kind that deletes (two in three with a mount target), among one in ten in use.
 * Per 1,000 of the fleet; 900 of them orphans.
 */
export const BACKLOG_MIX: readonly FleetGroup[] = [
  ...FLEET_MIX.filter((g) => g.label === 'in use').map((g) => ({ ...g, perThousand: 100 })),
  ...FLEET_MIX.filter((g) => g.expect === 'deleted' && !g.markedMinutesAgo).map((g) => ({
    ...g,
    perThousand: g.mountTarget ? 100 : 300,
  })),
];

/** Running owners each hold this many of the fleet's file systems (the rest of their runs' went as planned). */
const FILE_SYSTEMS_PER_RUNNING_OWNER = 2;

export interface SeededFleet {
  /** How many of each group, by label, in creation (listing) order. */
  readonly counts: ReadonlyMap<string, number>;
  /** What the reaper should decide, by file system id. */
  readonly expected: ReadonlyMap<string, FleetGroup['expect']>;
}

/**
 * `count` file systems of `fleet` in `mix`'s proportions, each group's spread through the listing (as a year of
 * runs would leave them), all created an hour before `now`; owners and jobs to match.
 */
export function seedFleet(
  standIn: AwsStandIn,
  fleet: string,
  count: number,
  now: number,
  mix: readonly FleetGroup[] = FLEET_MIX,
): SeededFleet {
  const total = mix.reduce((n, g) => n + g.perThousand, 0);
  const sizes = mix.map((g) => Math.round((g.perThousand / total) * count));
  // Interleave the groups: file system i goes to the group whose share is furthest behind.
  const made = mix.map(() => 0);
  const behind = (k: number) => (sizes[k] === 0 ? Infinity : made[k] / sizes[k]);
  const owners = ownerPool(standIn, fleet);
  const counts = new Map<string, number>();
  const expected = new Map<string, FleetGroup['expect']>();
  const first = standIn.created; // runs, jobs and tokens are unique across calls
  for (let i = first; i < first + sizes.reduce((a, b) => a + b, 0); i++) {
    let g = 0;
    for (let k = 1; k < mix.length; k++) {
      if (behind(k) < behind(g)) g = k;
    }
    made[g]++;
    const group = mix[g];
    const run = `run-${i}`;
    const tags: Record<string, string> = {
      [TAG_FLEET]: fleet,
      [TAG_JOB]: `job-${i}`,
      [TAG_RUN]: run,
      Name: `mountfleet-scratch-${fleet}-job-${i}`,
    };
    const owner = owners.next(group.owner);
    if (owner !== undefined) tags[TAG_OWNER_INSTANCE] = owner;
    if (group.markedMinutesAgo !== undefined) {
      tags[TAG_MARKED_IDLE_AT] = new Date(now - group.markedMinutesAgo * MINUTE).toISOString();
    }
    if (group.teardownMinutesAgo !== undefined) {
      tags[TAG_TEARDOWN_STARTED_AT] = new Date(now - group.teardownMinutesAgo * MINUTE).toISOString();
    }
    if (group.batchJob !== undefined) {
      const jobId = `job-${fleet}-${i}`;
      tags[TAG_BATCH_QUEUE] = `${fleet}-az0`;
      tags[TAG_BATCH_JOB] = jobId;
      standIn.addJob(
        jobId,
        group.batchJob === 'RUNNING'
          ? { status: 'RUNNING' }
          : { status: 'SUCCEEDED', stoppedAt: now - 120 * MINUTE },
      );
    }
    const id = standIn.addFileSystem({
      tags,
      creationToken: group.foreign ? `precious-dataset-${i}` : creationToken(fleet, run),
      createdAt: now - 60 * MINUTE,
      lifeCycleState: group.lifeCycleState,
      mountTargets: group.mountTarget ? 1 : 0,
    });
    if (group.connections !== undefined) standIn.setConnections(id, group.connections);
    counts.set(group.label, (counts.get(group.label) ?? 0) + 1);
    expected.set(id, group.expect);
  }
  return { counts, expected };
}

/** Owner instances: running ones shared by FILE_SYSTEMS_PER_RUNNING_OWNER file systems, ended ones one each. */
function ownerPool(standIn: AwsStandIn, fleet: string) {
  const tags = { [TAG_FLEET]: fleet };
  let running: string | undefined;
  let runningUses = 0;
  let unknown = 0;
  return {
    next(owner: Owner): string | undefined {
      switch (owner) {
        case 'none':
          return undefined;
        case 'unknown':
          return `i-f${(unknown++).toString(16).padStart(16, '0')}`;
        case 'running':
          if (running === undefined || runningUses === FILE_SYSTEMS_PER_RUNNING_OWNER) {
            running = standIn.addInstance('running', tags);
            runningUses = 0;
          }
          runningUses++;
          return running;
        default:
          return standIn.addInstance(owner, tags);
      }
    },
  };
}
