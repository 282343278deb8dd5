/**
 * A job never outlives its runner unnoticed. The job runs in a process group (and scope) of its own so that
 * mountfleet decides what it gets on a stop; the price is that a `scratch run` killed outright (SIGKILL, OOM
 * killer) would leave the job running on a file system nobody will tear down, holding a mount no later run
 * knows about.
 *
 * So each run starts a small watcher next to the job: a shell in a session of its own whose stdin is a pipe
 * from the runner. The runner writes `done` when its own supervision is over; if the pipe closes without
 * it, the runner died, and the watcher does what the runner would have: SIGTERM to the job's process group
 * (and scope), the grace period, SIGKILL, then a lazy unmount of the run's mount — only while that mount is
 * still the one at the path (same mount id, device and mount point). The file system itself is left to the
 * reaper, which finds it idle once the mount is gone (no run ever touches another run's file system).
 *
 * The watcher also inherits the run's lock descriptors (core/scratch/lock.ts), so the job id and the path
 * stay held until the job is stopped and unmounted: a retry on this instance waits for that, or is refused
 * with the holder named, instead of mounting over a job that still writes.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import type { MountEntry } from '../mountinfo';
import type { JobScope } from './job';

/** What the watcher must stop and unmount if the runner dies. */
export interface WatchedRun {
  /** The job's process group id (its leader's pid). */
  readonly processGroup: number;
  readonly scope?: JobScope;
  readonly graceSeconds: number;
  /** The run's mount, as /proc/self/mountinfo showed it. */
  readonly mount?: MountEntry;
  /** Descriptors of the run's locks: the watcher holds them until it is done. */
  readonly lockFds: readonly number[];
  readonly jobId: string;
}

export interface RunnerWatch {
  /** The runner finished supervising the job itself: the watcher exits without touching anything. */
  release(): void;
}

/** mountinfo's escaping of a path (octal for space, tab, newline and backslash), to compare fields as awk sees them. */
export function escapeMountinfo(path: string): string {
  return path.replace(/[ \t\n\\]/g, (c) => `\\${c.charCodeAt(0).toString(8).padStart(3, '0')}`);
}

/**
 * $1 process group, $2 grace seconds, $3 scope unit ('' for none), $4 systemctl, $5 mount id ('' for none),
 * $6 device, $7 mount point (mountinfo-escaped), $8 job id. Every wait is bounded by the grace period.
 */
const WATCHER = `
trap '' PIPE HUP INT
read -r said || said=
[ "$said" = done ] && exit 0
say() { printf 'mountfleet scratch: %s\\n' "$*" >&2 2>/dev/null || true; }
signal() {
  kill -s "$1" -- "-$pg" 2>/dev/null
  [ -n "$unit" ] && "$systemctl" kill --signal="$1" "$unit" >/dev/null 2>&1
  return 0
}
pg=$1 grace=$2 unit=$3 systemctl=$4
say "the runner of job $8 died: stopping the job (process group $pg) and unmounting its scratch"
signal TERM
waited=0
while kill -0 -- "-$pg" 2>/dev/null && [ "$waited" -lt "$grace" ]; do sleep 1; waited=$((waited + 1)); done
signal KILL
if [ -n "$5" ] && awk -v id="$5" -v dev="$6" -v mp="$7" '$1 == id && $3 == dev && $5 == mp { found = 1 } END { exit !found }' /proc/self/mountinfo; then
  umount -l "$7" 2>/dev/null || say "cannot unmount $7: unmount it by hand"
fi
`;

/** Starts the watcher for a running job (see the file comment). */
export function watchRunner(run: WatchedRun): RunnerWatch {
  const args = [
    String(run.processGroup),
    String(run.graceSeconds),
    run.scope?.unit ?? '',
    run.scope?.systemctl ?? '',
    run.mount ? String(run.mount.id) : '',
    run.mount?.device ?? '',
    run.mount ? escapeMountinfo(run.mount.mountPoint) : '',
    run.jobId,
  ];
  const watcher: ChildProcess = spawn('/bin/sh', ['-c', WATCHER, 'mountfleet-runner-watch', ...args], {
    // stdin: the pipe whose end tells the runner's fate; stderr: the runner's, for the one line it may say.
    stdio: ['pipe', 'ignore', 'inherit', ...run.lockFds],
    detached: true,
  });
  watcher.on('error', () => undefined);
  watcher.stdin?.on('error', () => undefined);
  // Neither the process nor its pipe may keep the runner's event loop alive.
  watcher.unref();
  (watcher.stdin as unknown as { unref?: () => void } | null)?.unref?.();
  let released = false;
  return {
    release() {
      if (released) return;
      released = true;
      watcher.stdin?.end('done\n');
    },
  };
}
