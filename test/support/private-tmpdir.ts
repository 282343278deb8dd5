/**
 * One temporary directory per test run, removed when the run ends. Global setup points TMPDIR at it before
 * the workers and the emulators start, so every temp file of the run — the tests' own, `cdk.out*` of each
 * synthesized App, the agent, Mountpoint, the stand-ins and the CDK CLI they start — lands there and goes
 * with it, also when a test or a killed process could not clean up after itself.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { mountsUnder } from './standins';

const PREFIX = 'mountfleet-jest-';

/**
 * Creates the run's directory under the current temp directory and makes it TMPDIR for what follows. The
 * name carries the run's pid: a run stopped before its teardown (Ctrl-C) leaves its directory, and the next
 * run removes those whose pid is gone. A live pid (another run, here or in another checkout) is left alone.
 */
export function usePrivateTmpdir(parent = tmpdir()): string {
  for (const name of readdirSync(parent)) {
    const pid = Number(/^mountfleet-jest-(\d+)-/.exec(name)?.[1]);
    if (pid && !isAlive(pid)) removePrivateTmpdir(join(parent, name));
  }
  const dir = mkdtempSync(join(parent, `${PREFIX}${process.pid}-`));
  process.env.TMPDIR = dir;
  return dir;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Removes the run's directory. A mount left below it (a test that did not unmount) is detached first,
 * deepest first, and `rm --one-file-system` never descends into a file system that is still mounted there.
 * Returns the mounts it had to detach, for the caller to name.
 */
export function removePrivateTmpdir(dir: string): string[] {
  const mounts = mountsUnder(dir).sort((a, b) => b.length - a.length);
  for (const mount of mounts) spawnSync('umount', ['-l', mount]);
  spawnSync('rm', ['-rf', '--one-file-system', dir], { stdio: 'inherit' });
  return mounts;
}
