/**
 * Listing a fleet's scratch file systems, shared by the reaper, `scratch list|delete` and the sandbox:
 * one DescribeFileSystems page per 100 (each entry already carries tags, state, age and mount-target
 * count, so nothing is read per file system). File systems without this fleet's tag are dropped here.
 */
import { DescribeFileSystemsCommand, type EFSClient, type FileSystemDescription } from '@aws-sdk/client-efs';
import { TAG_FLEET } from './tags';

export const DESCRIBE_FILE_SYSTEMS_PAGE = 100;

/** The value of a tag on a described resource. */
export function tagValue(
  resource: { Tags?: { Key?: string; Value?: string }[] },
  key: string,
): string | undefined {
  return resource.Tags?.find((t) => t.Key === key)?.Value;
}

/** Every file system tagged `mountfleet:fleet` = fleetId. */
export async function listFleetFileSystemDescriptions(
  efs: EFSClient,
  fleetId: string,
): Promise<FileSystemDescription[]> {
  const found: FileSystemDescription[] = [];
  let marker: string | undefined;
  do {
    const page = await efs.send(
      new DescribeFileSystemsCommand({ MaxItems: DESCRIBE_FILE_SYSTEMS_PAGE, Marker: marker }),
    );
    found.push(
      ...(page.FileSystems ?? []).filter((fs) => fs.FileSystemId && tagValue(fs, TAG_FLEET) === fleetId),
    );
    marker = page.NextMarker || undefined;
  } while (marker);
  return found;
}
