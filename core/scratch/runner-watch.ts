/**
 * A job never outlives its runner unnoticed. The job runs in a process group (and scope) of its own so that
 * mountfleet decides what it gets on a stop; the price is that a `scratch run` killed outright (SIGKILL, OOM
 * killer) would leave the job running on a file system nobody will tear down, holding a mount no later run
 * knows about.
 *
 * So each run starts a small watcher before the job: a POSIX shell (dash on Debian, Ubuntu and most container
 * images; bash elsewhere) in a session of its own whose stdin is a pipe from the runner. The job is spawned
 * held at a gate (job.ts); the runner writes the job's process group to the watcher and opens the gate only
 * once the watcher has answered that it has it (its signal traps set by then), so CMD never runs unwatched. Once every process of the job is gone the
 * runner writes `exited` (from then on the group's number may belong to someone else: it is never signalled
 * again), and it writes `done` only when teardown is over: the run is done when teardown is, so a runner
 * killed during teardown (in the last CloudWatch read, say) still has its mount taken down. If the pipe
 * closes without `done`, the runner died, and the watcher does what the runner would have: SIGTERM to the
 * job's process group (and scope), the grace period, SIGKILL — unless the job had already exited — then a lazy
 * unmount of the run's mount, only while that mount is still the one at the path (same mount id, device and
 * mount point). The file system itself is left to the reaper, which finds it idle once the mount is gone (no
 * run ever touches another run's file system).
 *
 * The watcher ignores SIGTERM (and the terminal's signals): what kills the runner often signals the watcher
 * in the same breath — `systemctl stop` of the unit, systemd's `OOMPolicy=stop` after the OOM killer took the
 * runner — and that is exactly when the job must still be stopped and unmounted. Only SIGKILL stops it (give
 * a unit that runs `scratch run` a TimeoutStopSec above the grace period plus teardown).
 *
 * The watcher also inherits the run's lock descriptors (core/system/lock.ts), so the job id and the path stay held
 * until the job is stopped and unmounted: a retry on this instance waits for that, or is refused with the
 * holder named, instead of mounting over a job that still writes. Were the runner killed before opening the
 * gate, CMD never runs (the gate sees EOF and exits). Safety does not rest on the watcher anyway: a job's file
 * system is never touched by another run, and stays in use to the reaper while mounted.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { type MountEntry } from '../system';
import type { JobScope } from './job';

/** What the watcher must stop and unmount if the runner dies. */
interface WatchedRun {
  readonly scope?: JobScope;
  readonly graceSeconds: number;
  /** The run's mount, as /proc/self/mountinfo showed it. */
  readonly mount?: MountEntry;
  /** Descriptors of the run's locks: the watcher holds them until it is done. */
  readonly lockFds: readonly number[];
  readonly jobId: string;
}

export interface RunnerWatch {
  /**
   * The job is held at its gate as this process group: the watcher stops it if the runner dies from now on.
   * `armed` runs once the watcher has it (or could not be told: a watcher that failed to start must not hold
   * the job back).
   */
  arm(processGroup: number, armed: () => void): void;
  /** Every process of the job is gone: the watcher no longer signals its group, but still unmounts. */
  jobGone(): void;
  /** Teardown is over (or no job ever started): the watcher exits untouched. */
  release(): void;
}

/** mountinfo's escaping of a path (octal for space, tab, newline and backslash), to compare fields as awk sees them. */
export function escapeMountinfo(path: string): string {
  return path.replace(/[ \t\n\\]/g, (c) => `\\${c.charCodeAt(0).toString(8).padStart(3, '0')}`);
}

/**
 * The watcher, in POSIX sh (run and tested under dash and bash). stdin: the job's process group, then maybe
 * `exited`, then `done`; stdout: `armed` once it has the group, then closed. $1 grace seconds, $2 scope unit ('' for none), $3 systemctl, $4 mount id ('' for
 * none), $5 device, $6 mount point as mountinfo escapes it, $7 the mount point, $8 job id. Every wait is
 * bounded by the grace period. `kill -s SIG -- -PG` is the form both shells take for a process group (dash
 * refuses `kill -0 -- -PG`). It ignores SIGPIPE (its stderr is the dead runner's, maybe a closed pipe), SIGTERM
 * (see the file comment) and the terminal's signals.
 */
export const WATCHER_SCRIPT = `
trap '' PIPE HUP INT TERM
read -r pg || exit 0
case "$pg" in ''|*[!0-9]*) exit 0 ;; esac
echo armed
exec >&-
grace=$1 unit=$2 systemctl=$3 mount_id=$4 mount_dev=$5 mount_escaped=$6 mount_point=$7 job=$8
job_gone=
while read -r said; do
  case "$said" in
    exited) job_gone=1 ;;
    done) exit 0 ;;
  esac
done
say() { printf 'mountfleet scratch: %s\n' "$*" >&2 2>/dev/null || true; }
signal() {
  kill -s "$1" -- "-$pg" 2>/dev/null
  [ -n "$unit" ] && "$systemctl" kill --signal="$1" "$unit" >/dev/null 2>&1
  return 0
}
ours() {
  while read -r id _parent dev _root mp _rest; do
    [ "$id" = "$mount_id" ] && [ "$dev" = "$mount_dev" ] && [ "$mp" = "$mount_escaped" ] && return 0
  done </proc/self/mountinfo
  return 1
}
if [ -z "$job_gone" ]; then
  say "the runner of job $job died: stopping the job (process group $pg) and unmounting its scratch"
  signal TERM
  waited=0
  while kill -s 0 -- "-$pg" 2>/dev/null && [ "$waited" -lt "$grace" ]; do sleep 1; waited=$((waited + 1)); done
  signal KILL
else
  say "the runner of job $job died before its teardown was over: unmounting its scratch"
fi
if [ -n "$mount_id" ] && ours; then
  umount -l "$mount_point" 2>/dev/null || say "cannot unmount $mount_point: unmount it by hand"
fi
`;

/** Starts the watcher for a job about to start (see the file comment); arm() it once the job runs. */
export function watchRunner(run: WatchedRun): RunnerWatch {
  const args = [
    String(run.graceSeconds),
    run.scope?.unit ?? '',
    run.scope?.systemctl ?? '',
    run.mount ? String(run.mount.id) : '',
    run.mount?.device ?? '',
    run.mount ? escapeMountinfo(run.mount.mountPoint) : '',
    run.mount?.mountPoint ?? '',
    run.jobId,
  ];
  const watcher: ChildProcess = spawn('/bin/sh', ['-c', WATCHER_SCRIPT, 'mountfleet-runner-watch', ...args], {
    // stdin: the pipe whose end tells the runner's fate; stderr: the runner's, for the one line it may say.
    stdio: ['pipe', 'pipe', 'inherit', ...run.lockFds],
    detached: true,
  });
  watcher.on('error', () => undefined);
  watcher.stdin?.on('error', () => undefined);
  // Neither the process nor its pipes may keep the runner's event loop alive.
  watcher.unref();
  for (const pipe of [watcher.stdin, watcher.stdout])
    (pipe as unknown as { unref?: () => void } | null)?.unref?.();
  let released = false;
  return {
    arm(processGroup, armed) {
      if (released || !watcher.stdin || !watcher.stdout) return armed();
      // `armed` back from the watcher: it has the group and its traps are set (a SIGTERM before them would
      // end it). A watcher that is gone or never started says nothing: the job must not wait for it.
      let answered = false;
      const answer = () => {
        if (answered) return;
        answered = true;
        armed();
      };
      watcher.stdout.once('data', answer);
      watcher.stdout.once('close', answer);
      watcher.once('error', answer);
      watcher.stdin.write(`${processGroup}\n`);
    },
    jobGone() {
      if (!released) watcher.stdin?.write('exited\n');
    },
    release() {
      if (released) return;
      released = true;
      watcher.stdin?.end('done\n');
    },
  };
}
