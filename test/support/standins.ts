/** The stand-ins for what cannot run here, and helpers around the mounts they make. */
import { existsSync, readdirSync, readFileSync, rmdirSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from './moto';

/** STAND-IN for efs-utils' mount.efs (NFS to EFS cannot run here): mounts a tmpfs, records its options. */
export const MOUNT_HELPER_STANDIN = join(
  REPO_ROOT,
  'test',
  'support',
  'efs-mount-helper-standin',
  'mount.efs-standin',
);

/**
 * STAND-INS for `systemd-run --scope` and `systemctl kill` (no systemd here): they put a job in a real cgroup v2
 * directory of its own and signal everything in it. Point MOUNTFLEET_SYSTEMD_BIN at this directory.
 */
export const SYSTEMD_STANDIN_BIN = join(REPO_ROOT, 'test', 'support', 'systemd-standin');

/** Removes the stand-in's scope cgroups that are empty (what systemd's --collect does for a real scope). */
export function removeEmptySystemdStandinScopes(): void {
  const root = readFileSync('/proc/self/mounts', 'utf8')
    .split('\n')
    .map((l) => l.split(' '))
    .find((f) => f[2] === 'cgroup2')?.[1];
  if (!root || !existsSync(join(root, 'mountfleet-standin'))) return;
  for (const unit of readdirSync(join(root, 'mountfleet-standin'))) {
    try {
      rmdirSync(join(root, 'mountfleet-standin', unit)); // refused while a process is still in it
    } catch {
      // not a directory, or not empty yet
    }
  }
}

/** Mount points below `dir`, from this process's mount table. */
export function mountsUnder(dir: string): string[] {
  return readFileSync('/proc/self/mountinfo', 'utf8')
    .split('\n')
    .map((l) => l.split(' ')[4])
    .filter((p): p is string => p !== undefined && p.startsWith(dir + '/'));
}
