/**
 * The user's command (CMD), run in its own process group so that a signal reaches the whole job (the
 * shell, its children, their children) and a Ctrl-C in a terminal reaches mountfleet first, which then
 * decides what the job gets. Where systemd manages the host it also runs in a transient scope of its own
 * (`systemd-run --scope`): a process that leaves the group with `setsid` stays in the scope's cgroup, so
 * stopping the job reaches it too. Its exit status is passed through shell-style: 128 + signal number when a
 * signal ended it, 127 when the program does not exist, 126 when it cannot be executed.
 */
import { spawn, spawnSync } from 'node:child_process';
import { accessSync, constants as fsConstants, existsSync, statSync } from 'node:fs';
import { constants } from 'node:os';
import { delimiter, join } from 'node:path';
import { controlGroupMembers, processGroupMembers } from '../system';

/** The transient systemd scope a job runs in, and the programs that make and signal it. */
export interface JobScope {
  /** The scope's unit name, `….scope`. */
  readonly unit: string;
  readonly systemdRun: string;
  readonly systemctl: string;
}

/** How long a `systemctl kill` may take before the job is signalled through its process group alone. */
const SYSTEMCTL_TIMEOUT_MS = 5000;

/**
 * The scope for a job where systemd manages the host (`/run/systemd/system` exists), else undefined.
 * MOUNTFLEET_SYSTEMD_BIN names a directory whose `systemd-run` and `systemctl` are used instead, and turns
 * scopes on without that check (tests use stand-ins there; see test/support/systemd-standin).
 */
export function systemdScopeFor(
  fleetId: string,
  jobId: string,
  env: NodeJS.ProcessEnv = process.env,
): JobScope | undefined {
  const bin = env.MOUNTFLEET_SYSTEMD_BIN;
  if (!bin && !existsSync('/run/systemd/system')) return undefined;
  const systemdRun = bin ? join(bin, 'systemd-run') : findProgram('systemd-run', env.PATH);
  const systemctl = bin ? join(bin, 'systemctl') : findProgram('systemctl', env.PATH);
  if (typeof systemdRun !== 'string' || typeof systemctl !== 'string') return undefined;
  // Unit names take [A-Za-z0-9:_.\-]; a job id may also hold / = + @. The pid keeps a leftover scope of a
  // killed earlier run of the same job from blocking this one.
  const name = `${fleetId}-${jobId}`.replace(/[^A-Za-z0-9:_.-]/g, '_');
  return { unit: `mountfleet-scratch-${name}-${process.pid}.scope`, systemdRun, systemctl };
}

/** The program's path, or the shell-style status (127 missing, 126 not executable) with the reason. */
function findProgram(command: string, path: string | undefined): string | { status: number; error: string } {
  const candidates = command.includes('/')
    ? [command]
    : (path ?? '')
        .split(delimiter)
        .filter(Boolean)
        .map((dir) => join(dir, command));
  let notExecutable: string | undefined;
  for (const candidate of candidates) {
    try {
      if (!statSync(candidate).isFile()) continue;
      accessSync(candidate, fsConstants.X_OK);
      return candidate;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'EACCES') notExecutable ??= candidate;
    }
  }
  return notExecutable
    ? { status: 126, error: `${command}: ${notExecutable} is not executable` }
    : { status: 127, error: `${command}: not found` };
}

export interface JobExit {
  /** The status a shell would report. */
  readonly status: number;
  readonly signal?: NodeJS.Signals;
  /** Why the job could not start, when it could not. */
  readonly startError?: string;
}

export interface RunningJob {
  readonly pid: number | undefined;
  /**
   * Lets CMD run. The job is started held at a gate (a shell waiting on a pipe from this process, which then
   * execs CMD in its place), so that whatever must know its process group first (runner-watch.ts) knows it
   * before CMD can do anything; if this process dies before opening the gate, CMD never runs.
   */
  openGate(): void;
  readonly exited: Promise<JobExit>;
  /** Sends a signal to the job's whole process group (the leader may be gone); false when nobody is left. */
  kill(signal: NodeJS.Signals): boolean;
  /** Live (not zombie) processes still in the job's process group, the leader included. */
  remaining(): number[];
}

export function signalNumber(signal: NodeJS.Signals): number {
  return constants.signals[signal];
}

/**
 * The gate: wait for a line on fd 3, close it, then become CMD. EOF instead of the line means the runner died
 * first: CMD is not run (exit status 125, never CMD's own).
 */
const GATE = 'read -r _ <&3 || exit 125; exec 3<&-; exec "$@"';

export function startJob(
  command: string,
  args: readonly string[],
  options: { readonly env: NodeJS.ProcessEnv; readonly cwd?: string; readonly scope?: JobScope },
): RunningJob {
  const { scope } = options;
  // Found first, so that a missing or non-executable program gets a shell's status (127/126) and a message of
  // ours rather than the gate's or systemd-run's own failure.
  const found = findProgram(command, options.env.PATH);
  if (typeof found !== 'string') return notStarted(found.status, found.error);
  // The gate comes first and closes its pipe before it execs anything, so no program (systemd-run included)
  // has to pass the descriptor on.
  const gatedCommand = scope
    ? [scope.systemdRun, '--scope', '--quiet', '--collect', `--unit=${scope.unit}`, '--', found, ...args]
    : [found, ...args];
  const child = spawn('/bin/sh', ['-c', GATE, 'mountfleet-job', ...gatedCommand], {
    env: options.env,
    cwd: options.cwd,
    stdio: ['inherit', 'inherit', 'inherit', 'pipe'],
    detached: true,
  });
  const gate = child.stdio[3] as NodeJS.WritableStream | null;
  gate?.on('error', () => undefined); // the job may be gone before the gate opens
  let done = false;
  const exited = new Promise<JobExit>((resolve) => {
    child.once('error', (err: NodeJS.ErrnoException) => {
      done = true;
      resolve({ status: err.code === 'ENOENT' ? 127 : 126, startError: `${command}: ${err.message}` });
    });
    child.once('exit', (code, signal) => {
      done = true;
      if (signal) resolve({ status: 128 + signalNumber(signal), signal });
      else resolve({ status: code ?? 1 });
    });
  });
  const remaining = (): number[] => {
    const members = new Set(child.pid === undefined ? [] : processGroupMembers(child.pid));
    if (scope) for (const pid of controlGroupMembers(scope.unit)) members.add(pid);
    return [...members];
  };
  return {
    pid: child.pid,
    openGate() {
      gate?.end('go\n');
    },
    exited,
    kill(signal) {
      if (child.pid === undefined || (done && remaining().length === 0)) return false;
      let sent = false;
      try {
        process.kill(-child.pid, signal);
        sent = true;
      } catch {
        // the group is gone; the scope may still hold processes that left it
      }
      if (scope) {
        const r = spawnSync(scope.systemctl, ['kill', `--signal=${signal}`, scope.unit], {
          stdio: 'ignore',
          timeout: SYSTEMCTL_TIMEOUT_MS,
        });
        sent ||= r.status === 0;
      }
      return sent;
    },
    remaining,
  };
}

/** A job that never started: its status is already known. */
function notStarted(status: number, startError: string): RunningJob {
  return {
    pid: undefined,
    openGate: () => undefined,
    exited: Promise.resolve({ status, startError }),
    kill: () => false,
    remaining: () => [],
  };
}
