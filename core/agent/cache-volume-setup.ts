/**
 * Preparing the local cache on the instance: the instance-store volume (mdadm, mkfs, mount through a
 * CommandRunner, so tests check the exact commands without formatting disks) and each process's cache
 * directory. What to prepare is planned in cache-volume.ts.
 */
import { closeSync, constants, fchmodSync, fchownSync, mkdirSync, openSync } from 'node:fs';
import { isMountPoint } from '../system';
import { type CacheVolume } from '../tuner';
import { execCommand, type CommandRunner } from './command-runner';

/**
 * Makes the instance-store volume usable: RAID 0 when several disks, ext4 with no reserved
 * blocks (the cache is not a system disk), mounted at the cache directory. Idempotent: a volume already
 * mounted there is kept (the agent may be restarted after boot).
 */
export async function prepareCacheVolume(
  volume: CacheVolume,
  run: CommandRunner = execCommand,
  mounted: (dir: string) => boolean = (dir) => isMountPoint(dir),
): Promise<void> {
  if (volume.kind === 'none') return;
  mkdirSync(volume.directory, { recursive: true, mode: 0o700 });
  if (volume.kind === 'root' || mounted(volume.directory)) return;
  if (volume.devices.length > 1) {
    await run('mdadm', [
      '--create',
      volume.device,
      '--level=0',
      '--run',
      '--force',
      `--raid-devices=${volume.devices.length}`,
      ...volume.devices,
    ]);
  }
  await run('mkfs.ext4', ['-F', '-q', '-m', '0', '-E', 'nodiscard', '-L', 'mountfleet-cache', volume.device]);
  await run('mount', ['-o', 'noatime', volume.device, volume.directory]);
}

/**
 * Makes a process's `--cache` directory, owned by the agent's user and closed to others (cached objects
 * keep no S3 permissions). Mountpoint 1.24 refuses to start without it and, at exit, removes only the
 * `mountpoint-cache` directory it makes inside, so this runs before every start.
 */
export function prepareCacheDirectory(directory: string): void {
  mkdirSync(directory, { recursive: true, mode: 0o700 });
  let fd: number;
  try {
    // Through a descriptor of the directory itself: a symlink put in its place is refused, never followed.
    fd = openSync(directory, constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW);
  } catch (err) {
    throw new Error(
      `cache directory ${directory} is not a directory (a symlink or a file is in the way): ${(err as Error).message}`,
      { cause: err },
    );
  }
  try {
    fchownSync(fd, process.getuid!(), process.getgid!());
    fchmodSync(fd, 0o700);
  } finally {
    closeSync(fd);
  }
}
