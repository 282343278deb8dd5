/**
 * Operator views of a fleet's scratch file systems: `scratch list` and `scratch delete`. One
 * DescribeFileSystems page per 100 file systems; each entry already carries the tags, state, age and
 * mount-target count, so there is no call per file system.
 */
import { DescribeFileSystemsCommand, type EFSClient, type FileSystemDescription } from '@aws-sdk/client-efs';
import { teardownFileSystem, type TeardownOptions, type TeardownOutcome } from '../efs-teardown';
import { TAG_FLEET, TAG_JOB, TAG_MARKED_IDLE_AT, TAG_OWNER_INSTANCE } from '../tags';
import { errorName } from '../errors';
import { listFleetFileSystemDescriptions, tagValue } from '../fleet-file-systems';

export interface ScratchFileSystemSummary {
  readonly fileSystemId: string;
  readonly job?: string;
  readonly ownerInstance?: string;
  readonly state: string;
  readonly availabilityZone?: string;
  readonly createdAt?: string;
  readonly ageSeconds?: number;
  readonly mountTargets: number;
  readonly sizeBytes?: number;
  /** Set when the reaper has seen it idle once (it deletes on a later run if still idle). */
  readonly markedIdleAt?: string;
}

export function summarize(fs: FileSystemDescription, now: number): ScratchFileSystemSummary {
  const created = fs.CreationTime?.getTime();
  return {
    fileSystemId: fs.FileSystemId!,
    job: tagValue(fs, TAG_JOB),
    ownerInstance: tagValue(fs, TAG_OWNER_INSTANCE),
    state: fs.LifeCycleState ?? 'unknown',
    availabilityZone: fs.AvailabilityZoneName,
    createdAt: fs.CreationTime?.toISOString(),
    ageSeconds: created === undefined ? undefined : Math.max(0, Math.round((now - created) / 1000)),
    mountTargets: fs.NumberOfMountTargets ?? 0,
    sizeBytes: fs.SizeInBytes?.Value,
    markedIdleAt: tagValue(fs, TAG_MARKED_IDLE_AT),
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
    .map((fs) => summarize(fs, now));
  return found.sort((a, b) => (a.createdAt ?? '').localeCompare(b.createdAt ?? ''));
}

export class NotThisFleetsError extends Error {
  override readonly name = 'NotThisFleetsError';
}

/**
 * Deletes one scratch file system (mount targets first), refusing anything not tagged with this fleet:
 * an operator's typo must not delete someone else's file system.
 */
export async function deleteScratchFileSystem(
  efs: EFSClient,
  fleetId: string,
  fileSystemId: string,
  options: TeardownOptions = {},
): Promise<TeardownOutcome> {
  let fs: FileSystemDescription | undefined;
  try {
    fs = (await efs.send(new DescribeFileSystemsCommand({ FileSystemId: fileSystemId }))).FileSystems?.[0];
  } catch (err) {
    if (errorName(err) !== 'FileSystemNotFound') throw err;
  }
  if (fs === undefined) return { status: 'already-gone', mountTargetsDeleted: 0 };
  const owner = tagValue(fs, TAG_FLEET);
  if (owner !== fleetId) {
    throw new NotThisFleetsError(
      owner === undefined
        ? `${fileSystemId} is not a mountfleet scratch file system (no ${TAG_FLEET} tag): refusing to delete it`
        : `${fileSystemId} belongs to fleet ${owner}, not ${fleetId}: refusing to delete it`,
    );
  }
  return teardownFileSystem(efs, fileSystemId, options);
}
