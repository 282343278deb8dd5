/** The stand-ins for what cannot run here, and helpers around the mounts they make. */
import { readFileSync } from 'node:fs';
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

/** Mount points below `dir`, from this process's mount table. */
export function mountsUnder(dir: string): string[] {
  return readFileSync('/proc/self/mountinfo', 'utf8')
    .split('\n')
    .map((l) => l.split(' ')[4])
    .filter((p): p is string => p !== undefined && p.startsWith(dir + '/'));
}
