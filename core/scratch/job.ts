/**
 * The user's command (CMD), run in its own process group so that a signal reaches the whole job (the
 * shell, its children, their children) and a Ctrl-C in a terminal reaches mountfleet first, which then
 * decides what the job gets. Its exit status is passed through shell-style: 128 + signal number when a
 * signal ended it, 127 when the program does not exist, 126 when it cannot be executed.
 */
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { constants } from 'node:os';

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

/**
 * The live members of process group `pgid`, from /proc. Not `kill(-pgid, 0)`: an orphan that died is a
 * zombie until something reaps it, and in a container PID 1 may never do so.
 */
export function processGroupMembers(pgid: number): number[] {
  const members: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${name}/stat`, 'utf8');
    } catch {
      continue; // gone meanwhile
    }
    // pid (comm) state ppid pgrp ...: comm may hold spaces and parentheses, so split after the last ')'.
    const [state, , pgrp] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (Number(pgrp) === pgid && state !== 'Z' && state !== 'X') members.push(Number(name));
  }
  return members;
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
