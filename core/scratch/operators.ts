/**
 * `scratch list` and `scratch delete` as the command runs them: the fleet (flag or agent.json), the Region,
 * the clients, the call into inventory.ts, then what the result says and the status the command exits with.
 */
import { EXIT_STATUS, formatCompactDuration } from '../common';
import { cloudWatchClient, ec2Client, efsClient } from '../aws';
import {
  deleteScratchFileSystem,
  listScratchFileSystems,
  RunAliveError,
  type DeleteOutcome,
  type ScratchFileSystemSummary,
} from './inventory';
import { loadOptionalAgentConfig, resolveFleetId } from './settings';

/** The fleet an operator command works on: `--fleet`, else agent.json's (`--config`, MOUNTFLEET_CONFIG, the default). */
interface ScratchFleetRequest {
  readonly fleet?: string;
  readonly configPath?: string;
}

/**
 * The Region the command calls, once `--region`/`--profile` are applied and a Region and credentials checked
 * (agent/aws-options.ts); `configRegion` is agent.json's, for when no flag names one.
 */
type ResolveRegion = (configRegion: string | undefined) => Promise<string>;

async function fleetAndRegion(request: ScratchFleetRequest, resolveRegion: ResolveRegion) {
  const config = loadOptionalAgentConfig(request.configPath);
  const fleetId = resolveFleetId(request.fleet, config);
  return { fleetId, region: await resolveRegion(config?.region) };
}

/** `scratch list`: the fleet's scratch file systems, oldest first. */
export async function listScratch(
  request: ScratchFleetRequest,
  resolveRegion: ResolveRegion,
): Promise<{ readonly fleetId: string; readonly fileSystems: ScratchFileSystemSummary[] }> {
  const { fleetId, region } = await fleetAndRegion(request, resolveRegion);
  return { fleetId, fileSystems: await listScratchFileSystems(efsClient({ region }), fleetId) };
}

/** `scratch list` for people: one line per file system under a heading, columns aligned. */
export function scratchListTable(fileSystems: readonly ScratchFileSystemSummary[]): string {
  const rows = [
    ['FILE SYSTEM', 'JOB', 'OWNER', 'AGE', 'STATE', 'ZONE', 'MOUNT TARGETS'],
    ...fileSystems.map((f) => [
      f.fileSystemId,
      f.job ?? '-',
      f.ownerInstance ?? '-',
      f.ageSeconds === undefined ? '-' : formatCompactDuration(f.ageSeconds),
      f.foreign
        ? `${f.state} (foreign: never reaped)`
        : f.markedIdleAt
          ? `${f.state} (marked idle)`
          : f.state,
      f.availabilityZone ?? '-',
      String(f.mountTargets),
    ]),
  ];
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
  return rows
    .map(
      (r) =>
        `${r
          .map((c, i) => c.padEnd(widths[i]))
          .join('  ')
          .trimEnd()}\n`,
    )
    .join('');
}

interface ScratchDeleteRequest extends ScratchFleetRequest {
  readonly fileSystemId: string;
  /** Also a live run's file system, or a foreign one of the fleet. */
  readonly force?: boolean;
}

/** `scratch delete` refused without --force: the file system's run may still be using it (RunAliveError). */
interface DeleteRefused {
  readonly status: 'refused';
  readonly run: 'alive';
  readonly evidence: string;
  readonly jobId?: string;
  readonly runId?: string;
  readonly ownerInstanceId?: string;
}

/** What `scratch delete` did (`--json` prints it), what it says of it, and the status it exits with. */
interface ScratchDeleteReport {
  readonly outcome: DeleteOutcome | DeleteRefused;
  readonly message: string;
  readonly exitStatus: number;
}

/**
 * `scratch delete`: deletes one file system of the fleet (inventory.ts), progress to `log`. A file system
 * the fleet did not make throws a UsageError (exit 2).
 */
export async function deleteScratch(
  request: ScratchDeleteRequest,
  resolveRegion: ResolveRegion,
  log: (line: string) => void,
): Promise<ScratchDeleteReport> {
  const { fleetId, region } = await fleetAndRegion(request, resolveRegion);
  const clients = {
    efs: efsClient({ region }),
    ec2: ec2Client({ region }),
    cloudwatch: cloudWatchClient({ region }),
  };
  const id = request.fileSystemId;
  let outcome: DeleteOutcome;
  try {
    outcome = await deleteScratchFileSystem(clients, fleetId, id, { onProgress: log, force: request.force });
  } catch (err) {
    if (!(err instanceof RunAliveError)) throw err;
    // The same status as any other "held by a live run" (scratch run's 75).
    const { jobId, runId, ownerInstanceId } = err.facts;
    const refused: DeleteRefused = {
      status: 'refused',
      run: 'alive',
      evidence: err.evidence,
      jobId,
      runId,
      ownerInstanceId,
    };
    return { outcome: refused, message: err.message, exitStatus: err.exitStatus };
  }
  switch (outcome.status) {
    case 'deleted':
      return {
        outcome,
        message: `deleted ${id} (${outcome.mountTargetsDeleted} mount target(s) deleted first)`,
        exitStatus: 0,
      };
    case 'already-gone':
      // Nothing was deleted: a typo in the id must not look like success to a script.
      return {
        outcome,
        message: `${id} does not exist (never created, or already deleted): nothing deleted`,
        exitStatus: EXIT_STATUS.failure,
      };
    case 'pending':
      return {
        outcome,
        message: `${id} not deleted yet: ${outcome.reason}; run the command again in a minute`,
        exitStatus: EXIT_STATUS.failure,
      };
  }
}
