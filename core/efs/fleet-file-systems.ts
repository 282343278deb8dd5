/**
 * Listing a fleet's scratch file systems, shared by the reaper, `scratch list|delete` and the sandbox:
 * one DescribeFileSystems page per 100 (each entry already carries tags, state, age and mount-target
 * count, so nothing is read per file system). File systems without this fleet's tag are dropped here; those
 * with it that the fleet did not make are "foreign" (foreignReason), which the reaper never deletes and
 * `scratch delete` deletes only with --force.
 */
import { DescribeFileSystemsCommand, type EFSClient, type FileSystemDescription } from '@aws-sdk/client-efs';
import { creationTokenPrefix, TAG_FLEET } from '../contract';

const DESCRIBE_FILE_SYSTEMS_PAGE = 100;

/** The value of a tag on a described resource. */
export function tagValue(
  resource: { Tags?: { Key?: string; Value?: string }[] },
  key: string,
): string | undefined {
  return resource.Tags?.find((t) => t.Key === key)?.Value;
}

/** Every file system tagged `mountfleet:fleet` = fleetId; `onPage` is told of each page read (the reaper counts them). */
export function listFleetFileSystemDescriptions(
  efs: EFSClient,
  fleetId: string,
  onPage?: () => void,
): Promise<FileSystemDescription[]> {
  return mapFleetFileSystems(efs, fleetId, (fs) => fs, onPage);
}

/**
 * `map` of every file system tagged `mountfleet:fleet` = fleetId, applied page by page: only what it keeps of a
 * description outlives the page (the reaper keeps a few fields of each of up to 100,000).
 */
export async function mapFleetFileSystems<T>(
  efs: EFSClient,
  fleetId: string,
  map: (fs: FileSystemDescription) => T,
  onPage?: () => void,
): Promise<T[]> {
  const found: T[] = [];
  let marker: string | undefined;
  do {
    const page = await efs.send(
      new DescribeFileSystemsCommand({ MaxItems: DESCRIBE_FILE_SYSTEMS_PAGE, Marker: marker }),
    );
    for (const fs of page.FileSystems ?? []) {
      if (fs.FileSystemId && tagValue(fs, TAG_FLEET) === fleetId) found.push(map(fs));
    }
    onPage?.();
    marker = page.NextMarker || undefined;
  } while (marker);
  return found;
}

/** The tag AWS puts on a file system while its automatic backups are on. */
const DEFAULT_BACKUP_TAG = 'aws:elasticfilesystem:default-backup';

/**
 * Why a file system carrying the fleet tag is still not the fleet's scratch, or undefined when it is. The
 * agent makes every scratch file system with the fleet's CreationToken prefix, in One Zone, with backups
 * off; a tag alone is easy to copy onto something precious. Backups are judged from the system tag AWS
 * sets while automatic backups are on (DescribeBackupPolicy would cost a call per file system); a file
 * system that another AWS Backup plan selects carries no such mark, and is protected by the token rule.
 */
export function foreignReason(fs: FileSystemDescription, fleetId: string): string | undefined {
  const prefix = creationTokenPrefix(fleetId);
  if (!fs.CreationToken?.startsWith(prefix)) {
    return `CreationToken ${JSON.stringify(fs.CreationToken ?? '')} does not start with ${JSON.stringify(prefix)}`;
  }
  if (!fs.AvailabilityZoneName) return 'not a One Zone file system';
  if (tagValue(fs, DEFAULT_BACKUP_TAG) === 'enabled') return 'automatic backups are on';
  return undefined;
}
