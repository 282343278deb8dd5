/**
 * Operator views of a fleet's scratch file systems: `scratch list` and `scratch delete`. One
 * DescribeFileSystems page per 100 file systems; each entry already carries the tags, state, age and
 * mount-target count, so there is no call per file system.
 */
import { DescribeFileSystemsCommand, type EFSClient, type FileSystemDescription } from '@aws-sdk/client-efs';
import { InUseError, UsageError, errorName, systemClock } from '../common';
import {
  teardownFileSystem,
  type TeardownOptions,
  type TeardownOutcome,
  foreignReason,
  listFleetFileSystemDescriptions,
  tagValue,
} from '../efs';
import { type FileSystemFacts, judgeRun, type LivenessClients } from '../reaper';
import { TAG_FLEET, TAG_JOB, TAG_MARKED_IDLE_AT, TAG_OWNER_INSTANCE, TAG_RUN } from '../contract';

export interface ScratchFileSystemSummary {
  readonly fileSystemId: string;
  readonly job?: string;
  /** The run that created it (the only one that ever mounts or deletes it). */
  readonly run?: string;
  readonly ownerInstance?: string;
  readonly state: string;
  readonly availabilityZone?: string;
  readonly createdAt?: string;
  readonly ageSeconds?: number;
  readonly mountTargets: number;
  readonly sizeBytes?: number;
  /** Set when the reaper has seen it idle once (it deletes on a later run if still idle). */
  readonly markedIdleAt?: string;
  /** Why the fleet did not make it although it carries the fleet tag: never deleted by the reaper. */
  readonly foreign?: string;
}

function summarize(fs: FileSystemDescription, fleetId: string, now: number): ScratchFileSystemSummary {
  const created = fs.CreationTime?.getTime();
  const foreign = foreignReason(fs, fleetId);
  return {
    fileSystemId: fs.FileSystemId!,
    job: tagValue(fs, TAG_JOB),
    run: tagValue(fs, TAG_RUN),
    ownerInstance: tagValue(fs, TAG_OWNER_INSTANCE),
    state: fs.LifeCycleState ?? 'unknown',
    availabilityZone: fs.AvailabilityZoneName,
    createdAt: fs.CreationTime?.toISOString(),
    ageSeconds: created === undefined ? undefined : Math.max(0, Math.round((now - created) / 1000)),
    mountTargets: fs.NumberOfMountTargets ?? 0,
    sizeBytes: fs.SizeInBytes?.Value,
    markedIdleAt: tagValue(fs, TAG_MARKED_IDLE_AT),
    ...(foreign === undefined ? {} : { foreign }),
  };
}

/** The fleet's scratch file systems (tagged `mountfleet:fleet=<fleet>`), oldest first. */
export async function listScratchFileSystems(
  efs: EFSClient,
  fleetId: string,
  now: number = Date.now(),
): Promise<ScratchFileSystemSummary[]> {
  const found = (await listFleetFileSystemDescriptions(efs, fleetId))
    .filter((fs) => fs.LifeCycleState !== 'deleted')
    .map((fs) => summarize(fs, fleetId, now));
  return found.sort((a, b) => (a.createdAt ?? '').localeCompare(b.createdAt ?? ''));
}

/** The run a file system belongs to, from its tags: what a refusal names. */
function describeRun(f: Pick<FileSystemFacts, 'jobId' | 'runId' | 'ownerInstanceId'>): string {
  return (
    `job ${f.jobId ?? '(no job tag)'}, run ${f.runId ?? '(no run tag)'}, ` +
    `owner instance ${f.ownerInstanceId ?? '(no owner tag)'}`
  );
}

/** `scratch delete` without --force of a file system whose run may still be using it (exit 75). */
export class RunAliveError extends InUseError {
  override readonly name = 'RunAliveError';
  constructor(
    readonly fileSystemId: string,
    readonly facts: FileSystemFacts,
    readonly evidence: string,
  ) {
    super(
      `refusing to delete ${fileSystemId}: its run may still be using it — ${describeRun(facts)}; ` +
        `re-checked just now: ${evidence}. A run deletes its own file system when it ends (and the reaper what a ` +
        'lost run leaves behind); --force deletes it now, and the job loses its scratch',
    );
  }
}

export type DeleteOutcome = TeardownOutcome & {
  /** What the re-check right before deleting found: the run over, or alive (deleted only with --force). */
  readonly run?: 'over' | 'alive';
  readonly evidence?: string;
};

/**
 * Deletes one scratch file system (mount targets first), refusing anything not tagged with this fleet — an
 * operator's typo must not delete someone else's file system — and, without `force`, anything the reaper
 * calls foreign (the fleet tag without the fleet's CreationToken prefix, Regional, backups on) and anything
 * whose run may still be using it: right before the first irreversible call, the file system is read again
 * and its run judged on the reaper's evidence (core/reaper/liveness.ts); a live run's is refused
 * (RunAliveError) unless `force`.
 */
export async function deleteScratchFileSystem(
  clients: LivenessClients,
  fleetId: string,
  fileSystemId: string,
  options: TeardownOptions & { readonly force?: boolean } = {},
): Promise<DeleteOutcome> {
  const { efs } = clients;
  let fs: FileSystemDescription | undefined;
  try {
    fs = (await efs.send(new DescribeFileSystemsCommand({ FileSystemId: fileSystemId }))).FileSystems?.[0];
  } catch (err) {
    if (errorName(err) !== 'FileSystemNotFound') throw err;
  }
  if (fs === undefined) return { status: 'already-gone', mountTargetsDeleted: 0 };
  const owner = tagValue(fs, TAG_FLEET);
  if (owner !== fleetId) {
    throw new UsageError(
      owner === undefined
        ? `${fileSystemId} is not a mountfleet scratch file system (no ${TAG_FLEET} tag): refusing to delete it`
        : `${fileSystemId} belongs to fleet ${owner}, not ${fleetId}: refusing to delete it`,
    );
  }
  const foreign = foreignReason(fs, fleetId);
  if (foreign !== undefined) {
    if (!options.force) {
      throw new UsageError(
        `${fileSystemId} carries ${TAG_FLEET}=${fleetId} but was not made by the fleet (${foreign}): the reaper ` +
          'never deletes such a file system; pass --force to delete it anyway',
      );
    }
    options.onProgress?.(
      `--force: deleting ${fileSystemId} although it was not made by the fleet (${foreign})`,
    );
  }
  const clock = options.clock ?? systemClock;
  let verdict: Pick<DeleteOutcome, 'run' | 'evidence'> = {};
  const outcome = await teardownFileSystem(efs, fileSystemId, {
    ...options,
    beforeDeleting: async (mountTargets) => {
      const run = await judgeRun(clients, fleetId, fileSystemId, mountTargets, clock.now());
      if (run.status === 'gone') return;
      verdict = { run: run.status, evidence: run.evidence };
      if (run.status === 'over') {
        options.onProgress?.(`${fileSystemId}: its run is over (${run.evidence}): deleting`);
      } else if (!options.force) {
        throw new RunAliveError(fileSystemId, run.facts, run.evidence);
      } else {
        options.onProgress?.(
          `--force: deleting ${fileSystemId} although its run may still be using it (${describeRun(run.facts)}; ` +
            `${run.evidence}): the job loses its scratch`,
        );
      }
      await options.beforeDeleting?.(mountTargets);
    },
  });
  return { ...outcome, ...verdict };
}
