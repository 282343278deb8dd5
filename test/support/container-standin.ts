/**
 * STAND-IN for a container as Docker starts it for the ECS agent (no Docker daemon or images here), shared by the
 * agent's tests and the sandbox's Batch jobs (scripts/sandbox/batch-container.ts). Its command runs in a private
 * mount and PID namespace of its own (`unshare`), in a root that holds what a container gets:
 *   - the "image": the host's own /usr and /etc, bound read-only (no image is pulled);
 *   - host volumes bound as Docker binds them: recursively (`mount --rbind`) and rprivate, taken once at start, so a
 *     mount made or replaced on the host later is not seen inside (Docker's default bind propagation;
 *     https://docs.docker.com/engine/storage/bind-mounts/#configure-bind-propagation — ECS mount points have no
 *     propagation field);
 *   - EFS volumes, mounted at start through the EFS mount helper stand-in (`tls,iam`, as ECS mounts a volume with
 *     transit encryption and IAM authorization);
 *   - nothing of the host's mount table but those: the root is pivoted and the host's tree detached, as runc does.
 * With `taskCgroup`, its PID 1 and everything under it run in a leaf cgroup `<taskCgroup>/ecstasks-<name>.slice/
 * docker-<name>.scope`, where the ECS agent puts a task's container on cgroup v2, so the mount agent's container
 * guard finds it there.
 * The command must not start with a NAME=VALUE word (`env` would take it for a variable). Its standard input is a
 * pipe held open until `closeInput()`.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, rmdirSync } from 'node:fs';
import { join } from 'node:path';
import { MOUNT_HELPER_STANDIN } from './standins';

/** A bind of a host path into the container. */
export interface HostBind {
  readonly hostPath: string;
  readonly containerPath: string;
  readonly readOnly: boolean;
}

export interface ContainerStandInSpec {
  /** Names its cgroups; letters, digits, '-' and '_'. */
  readonly name: string;
  readonly command: readonly string[];
  /** The container's whole environment (besides PATH and HOME). */
  readonly environment: Readonly<Record<string, string>>;
  readonly binds: readonly HostBind[];
  /** EFS volumes: the file system and where the container sees it. */
  readonly efs?: readonly { readonly fileSystemId: string; readonly containerPath: string }[];
  /** A directory for this container's root and the EFS helper's mount log. */
  readonly dir: string;
  /** The task cgroup's directory (absolute, in a cgroup v2 file system), for a container the guard can find. */
  readonly taskCgroup?: string;
}

export interface ContainerStandIn {
  /** The command's exit code, or null when it was killed (its main process is gone). */
  readonly exited: Promise<number | null>;
  /**
   * Once exited, when the last process in its cgroup is gone and the cgroup removed (at once without one): a
   * process killed in a FUSE request its server has taken waits for the answer first. Rejects after 3 minutes.
   */
  readonly emptied: Promise<void>;
  /** The signal that ended it, once exited (SIGKILL for a killed container). */
  signal(): NodeJS.Signals | null;
  /** Its stdout and stderr as they came (the last 8000 characters). */
  output(): string;
  /** Its stderr alone: what Docker's log gets from the container's stderr. */
  stderr(): string;
  /** Kills everything in the container at once (the instance went away). */
  kill(): void;
  /** Ends the container's standard input (a read of it then sees end of file, as in a Batch container). */
  closeInput(): void;
  /** Its leaf cgroup, when it runs in one. */
  readonly cgroup?: string;
}

/** The shell run as the container's PID 1 (before the exec): builds the root, pivots into it. */
const SETUP = String.raw`
set -eu
[ -z "$MF_CGROUP" ] || echo 0 > "$MF_CGROUP/cgroup.procs"
root=$MF_ROOT
mount -t tmpfs -o size=16m,mode=0755 container-root "$root"
for d in usr etc; do
  mkdir "$root/$d"; mount --rbind "/$d" "$root/$d"; mount -o remount,bind,ro "$root/$d"
done
for d in bin lib lib64 sbin; do [ -L "/$d" ] && ln -s "$(readlink "/$d")" "$root/$d"; done
mkdir -p "$root/proc" "$root/dev" "$root/tmp" "$root/root"
mount -t proc proc "$root/proc"
mount --rbind /dev "$root/dev"
printf '%s\n' "$MF_BINDS" | while IFS='|' read -r host target mode; do
  [ -n "$host" ] || continue
  mkdir -p "$root$target"; mount --rbind "$host" "$root$target"
  [ "$mode" = ro ] && mount -o remount,bind,ro "$root$target"
done
printf '%s\n' "$MF_EFS" | while IFS='|' read -r fs target; do
  [ -n "$fs" ] || continue
  mkdir -p "$root$target"; "$MF_EFS_HELPER" "$fs:/" "$root$target" -o tls,iam
done
mount --make-rprivate "$root"
cd "$root"
mkdir .old-root
pivot_root . .old-root
umount -l /.old-root
rmdir /.old-root
exec /usr/bin/env -i PATH=/usr/local/bin:/usr/bin:/bin HOME=/root "$@"
`;

/**
 * What Docker's shim does around a container: its stderr is a pipe (Node gives a child a socket), read by a relay
 * outside the container (here `cat`), which passes on what was written last also when the container is killed.
 * The container's PID 1 joins the cgroup itself (SETUP: writing 0 moves the writer), so that, as under Docker, its
 * parent is outside: the shim, which waits for it and ends as it ended (a container killed by SIGKILL by SIGKILL,
 * where unshare --fork would exit 1), its standard input its own (an asynchronous command would get /dev/null); it forks nothing after
 * PID 1 is gone (a dead PID namespace takes no new process).
 * A PID 1 ends once every process in its PID namespace has. setpriv's
 * --pdeathsig survives the exec; `--norc`: bash reads ~/.bashrc when its standard input is a socket.
 */
const SHIM = String.raw`
exec 3>&2
exec 2> >(exec cat >&3)
exec 3>&-
exec unshare --mount --propagation private --pid -- bash --norc -c '
  exec 4<&0
  setpriv --pdeathsig KILL -- "$@" <&4 4<&- &
  exec 4<&-
  wait $!
  code=$?
  [ $code -gt 128 ] && kill -n $((code - 128)) $$
  exit $code
' container-shim "$@"
`;

/** NAME=VALUE arguments for `env` (each one argument: no shell splitting of values). */
function envArgs(env: Readonly<Record<string, string>>): string[] {
  for (const key of Object.keys(env))
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(key))
      throw new Error(`container stand-in: bad variable name ${key}`);
  return Object.entries(env).map(([k, v]) => `${k}=${v}`);
}

/** Starts the container; it runs until its command exits or `kill()`. */
export function startContainerStandIn(spec: ContainerStandInSpec): ContainerStandIn {
  if (!/^[A-Za-z0-9_-]+$/.test(spec.name)) throw new Error(`container stand-in: bad name ${spec.name}`);
  const root = join(spec.dir, 'root');
  mkdirSync(root, { recursive: true });
  const cgroups = spec.taskCgroup
    ? [
        join(spec.taskCgroup, `ecstasks-${spec.name}.slice`),
        join(spec.taskCgroup, `ecstasks-${spec.name}.slice`, `docker-${spec.name}.scope`),
      ]
    : [];
  cgroups.forEach((dir) => mkdirSync(dir));
  const cgroup = cgroups.at(-1);
  const container = ['sh', '-c', SETUP, 'container-standin', ...envArgs(spec.environment), ...spec.command];
  const child = spawn(
    'setpriv',
    ['--pdeathsig', 'KILL', '--', 'bash', '--norc', '-c', SHIM, 'container-shim', ...container],
    {
      env: {
        PATH: process.env.PATH,
        MF_ROOT: root,
        MF_BINDS: spec.binds
          .map((b) => `${b.hostPath}|${b.containerPath}|${b.readOnly ? 'ro' : 'rw'}`)
          .join('\n'),
        MF_EFS: (spec.efs ?? []).map((e) => `${e.fileSystemId}|${e.containerPath}`).join('\n'),
        MF_EFS_HELPER: MOUNT_HELPER_STANDIN,
        MOUNTFLEET_STANDIN_MOUNT_LOG: join(spec.dir, 'efs-mounts.jsonl'),
        MF_CGROUP: cgroup ?? '',
      },
      stdio: ['pipe', 'pipe', 'pipe'],
    },
  );
  let output = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (output = (output + d.toString()).slice(-8000)));
  child.stderr.on('data', (d: Buffer) => {
    output = (output + d.toString()).slice(-8000);
    stderr = (stderr + d.toString()).slice(-8000);
  });
  child.stdin.on('error', () => undefined); // the container may be gone before its input is closed
  // 'close': exited, and the relay has passed on the last of its stderr.
  const exited = new Promise<number | null>((resolve) =>
    child.once('close', (code, signal) => resolve(signal ? null : code)),
  );
  return {
    exited,
    emptied: exited.then(() => removeCgroups(cgroups)),
    signal: () => child.signalCode,
    output: () => output,
    stderr: () => stderr,
    kill: () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    },
    closeInput: () => child.stdin.end(),
    ...(cgroup ? { cgroup } : {}),
  };
}

/** Removes the container's cgroups, deepest first, once the last process in them is gone (bounded: 3 min). */
async function removeCgroups(dirs: readonly string[]): Promise<void> {
  const deadline = Date.now() + 180_000;
  for (const dir of [...dirs].reverse()) {
    while (/populated 1/.test(readFileSync(join(dir, 'cgroup.events'), 'utf8'))) {
      if (Date.now() > deadline)
        throw new Error(`container stand-in: ${dir} still has processes after 3 min`);
      await new Promise((r) => setTimeout(r, 20));
    }
    rmdirSync(dir);
  }
}
