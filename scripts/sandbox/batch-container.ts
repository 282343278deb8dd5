/**
 * STAND-IN for the container the ECS agent starts for a Batch job (no Docker daemon or images here). Each job
 * runs its command in a private mount and PID namespace of its own (`unshare`), chrooted into a root that
 * holds what a container gets from Batch:
 *   - the "image": the host's own /usr and /etc, bound read-only (no image is pulled);
 *   - the job definition's host volumes, bound from the played instance's paths, read-only where the mount
 *     point says so (the fleet's Mountpoint paths);
 *   - its EFS volume, mounted at start through the EFS mount helper stand-in (a private tmpfs, options checked
 *     as efs-utils would: `tls,iam`, as ECS mounts a volume with transit encryption and IAM authorization);
 *   - Batch's variables: AWS_BATCH_JOB_ID, AWS_BATCH_JOB_ATTEMPT, AWS_BATCH_JQ_NAME, AWS_BATCH_CE_NAME, then
 *     the job's environment.
 * The command must not start with a NAME=VALUE word (`env` would take it for a variable).
 * Its mounts are made once, at start, in its own namespace: as on ECS, a mount made on the host later is not
 * seen inside. Stopping it kills the namespace (its PID 1 and every process in it) like a lost instance.
 * Standard input: a Batch container's is empty (end of file at once; `closeInput()` gives that). Until then it is
 * a pipe the sandbox holds open and never writes to, so a job that reads it blocks until its instance goes
 * away: how the sandbox keeps a job running until it takes the instance from under it, whatever the machine's
 * speed (no sleep to outlast).
 */
import { spawn } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { MOUNT_HELPER_STANDIN } from '../../test/support/standins';

/** A bind of a host path into the container. */
export interface HostBind {
  readonly hostPath: string;
  readonly containerPath: string;
  readonly readOnly: boolean;
}

export interface ContainerSpec {
  readonly jobId: string;
  /** Batch's attempt number of this job (each mountfleet attempt is a Batch job of its own: 1). */
  readonly attempt: number;
  readonly queueName: string;
  readonly computeEnvironmentName: string;
  readonly command: readonly string[];
  readonly environment: Readonly<Record<string, string>>;
  readonly binds: readonly HostBind[];
  /** EFS volumes: the file system and where the container sees it. */
  readonly efs: readonly { readonly fileSystemId: string; readonly containerPath: string }[];
  /** A directory of the sandbox's work directory for this container's root and mount log. */
  readonly dir: string;
}

export interface RunningContainer {
  /** The command's exit code, or null when it was killed. */
  readonly exited: Promise<number | null>;
  output(): string;
  /** Kills everything in the container at once (the instance went away). */
  kill(): void;
  /** Ends the container's standard input (a read of it then sees end of file, as in a Batch container). */
  closeInput(): void;
}

/** The shell run as the container's PID 1 (before the exec): builds the root, then chroots into it. */
const SETUP = String.raw`
set -eu
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
  mkdir -p "$root$target"; mount --bind "$host" "$root$target"
  [ "$mode" = ro ] && mount -o remount,bind,ro "$root$target"
done
printf '%s\n' "$MF_EFS" | while IFS='|' read -r fs target; do
  [ -n "$fs" ] || continue
  mkdir -p "$root$target"; "$MF_EFS_HELPER" "$fs:/" "$root$target" -o tls,iam
done
exec chroot "$root" /usr/bin/env -i PATH=/usr/local/bin:/usr/bin:/bin HOME=/root "$@"
`;

/** NAME=VALUE arguments for `env` (each one argument: no shell splitting of values). */
function envArgs(env: Readonly<Record<string, string>>): string[] {
  for (const key of Object.keys(env))
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(key))
      throw new Error(`container stand-in: bad variable name ${key}`);
  return Object.entries(env).map(([k, v]) => `${k}=${v}`);
}

/** Starts the job's container; it runs until its command exits or `kill()`. */
export function startContainer(spec: ContainerSpec): RunningContainer {
  const root = join(spec.dir, 'root');
  mkdirSync(root, { recursive: true });
  const env: Record<string, string> = {
    AWS_BATCH_JOB_ID: spec.jobId,
    AWS_BATCH_JOB_ATTEMPT: String(spec.attempt),
    AWS_BATCH_JQ_NAME: spec.queueName,
    AWS_BATCH_CE_NAME: spec.computeEnvironmentName,
    ...spec.environment,
  };
  const child = spawn(
    'setpriv',
    [
      '--pdeathsig',
      'KILL',
      '--',
      'unshare',
      '--mount',
      '--propagation',
      'private',
      '--pid',
      '--fork',
      '--kill-child',
      '--',
      'sh',
      '-c',
      SETUP,
      'container-standin',
      ...envArgs(env),
      ...spec.command,
    ],
    {
      env: {
        PATH: process.env.PATH,
        MF_ROOT: root,
        MF_BINDS: spec.binds
          .map((b) => `${b.hostPath}|${b.containerPath}|${b.readOnly ? 'ro' : 'rw'}`)
          .join('\n'),
        MF_EFS: spec.efs.map((e) => `${e.fileSystemId}|${e.containerPath}`).join('\n'),
        MF_EFS_HELPER: MOUNT_HELPER_STANDIN,
        MOUNTFLEET_STANDIN_MOUNT_LOG: join(spec.dir, 'efs-mounts.jsonl'),
      },
      stdio: ['pipe', 'pipe', 'pipe'],
    },
  );
  let output = '';
  const add = (d: Buffer) => (output = (output + d.toString()).slice(-8000));
  child.stdout.on('data', add);
  child.stderr.on('data', add);
  child.stdin.on('error', () => undefined); // the container may be gone before its input is closed
  const exited = new Promise<number | null>((resolve) =>
    child.once('exit', (code, signal) => resolve(signal ? null : code)),
  );
  return {
    exited,
    output: () => output,
    kill: () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    },
    closeInput: () => child.stdin.end(),
  };
}
