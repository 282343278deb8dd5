/**
 * The user's command (CMD), run in its own process group so that a signal reaches the whole job (the
 * shell, its children, their children) and a Ctrl-C in a terminal reaches mountfleet first, which then
 * decides what the job gets. Its exit status is passed through shell-style: 128 + signal number when a
 * signal ended it, 127 when the program does not exist, 126 when it cannot be executed.
 */
import { spawn } from 'node:child_process';
import { constants } from 'node:os';
import { processGroupMembers } from '../processes';

export interface JobExit {
  /** The status a shell would report. */
  readonly status: number;
  readonly signal?: NodeJS.Signals;
  /** Why the job could not start, when it could not. */
  readonly startError?: string;
}

export interface RunningJob {
  readonly pid: number | undefined;
  readonly exited: Promise<JobExit>;
  /** Sends a signal to the job's whole process group (the leader may be gone); false when nobody is left. */
  kill(signal: NodeJS.Signals): boolean;
  /** Live (not zombie) processes still in the job's process group, the leader included. */
  remaining(): number[];
}

export function signalNumber(signal: NodeJS.Signals): number {
  return constants.signals[signal];
}

export function startJob(
  command: string,
  args: readonly string[],
  options: { readonly env: NodeJS.ProcessEnv; readonly cwd?: string },
): RunningJob {
  const child = spawn(command, args, {
    env: options.env,
    cwd: options.cwd,
    stdio: 'inherit',
    detached: true,
  });
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
  return {
    pid: child.pid,
    exited,
    kill(signal) {
      if (child.pid === undefined || (done && processGroupMembers(child.pid).length === 0)) return false;
      try {
        process.kill(-child.pid, signal);
        return true;
      } catch {
        return false;
      }
    },
    remaining: () => (child.pid === undefined ? [] : processGroupMembers(child.pid)),
  };
}
