/**
 * A private mount (and PID) namespace for real mounts in tests: mounts made in it are invisible to the
 * machine, and everything started in it dies with it, even when the test process is SIGKILLed (the
 * holder is PID 1 of its PID namespace and dies with `unshare`, which dies with us).
 *
 *   const ns = await MountNamespace.start();
 *   await ns.run(['mount-s3', 'bucket', dir]);   // runs inside (nsenter)
 *   readFileSync(ns.path(`${dir}/key`));          // reads through /proc/PID/root, i.e. its mount table
 *   await ns.stop();
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { REPO_ROOT } from './moto';

const run = promisify(execFile);

/** tsx's loader: `node --import` it to run a TypeScript file. */
export const TSX_LOADER = `file://${join(REPO_ROOT, 'node_modules/tsx/dist/loader.mjs')}`;

/**
 * Arguments for `unshare` that run a TypeScript file (through tsx) in a private mount namespace of its own;
 * `unshareFlags` go before the command (e.g. a PID namespace as well).
 */
export function unshareTsxArgs(
  script: string,
  args: readonly string[],
  unshareFlags: readonly string[] = [],
): string[] {
  return [
    '--mount',
    '--propagation',
    'private',
    ...unshareFlags,
    '--',
    process.execPath,
    '--no-warnings',
    '--import',
    TSX_LOADER,
    script,
    ...args,
  ];
}

export interface RunResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

export class MountNamespace {
  private constructor(
    private readonly unshare: ChildProcess,
    /** Host PID of the namespace's PID 1. */
    readonly holderPid: number,
  ) {}

  static async start(): Promise<MountNamespace> {
    const unshare = spawn(
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
        'sleep',
        'infinity',
      ],
      { stdio: 'ignore' },
    );
    const deadline = Date.now() + 5000;
    while (Date.now() < deadline) {
      const children = readChildren(unshare.pid!);
      if (children.length > 0) return new MountNamespace(unshare, children[0]);
      await new Promise((r) => setTimeout(r, 20));
    }
    unshare.kill('SIGKILL');
    throw new Error('unshare did not start its namespace in 5 s');
  }

  /** Runs a program inside the namespace and returns its exit status and output (bounded). */
  async run(
    argv: readonly string[],
    options: { env?: NodeJS.ProcessEnv; timeoutMs?: number } = {},
  ): Promise<RunResult> {
    try {
      const { stdout, stderr } = await run(
        'nsenter',
        ['-t', String(this.holderPid), '--mount', '--pid', '--', ...argv],
        { env: options.env ?? process.env, timeout: options.timeoutMs ?? 40_000, killSignal: 'SIGKILL' },
      );
      return { code: 0, stdout, stderr };
    } catch (error) {
      const e = error as { code?: unknown; stdout?: string; stderr?: string };
      if (typeof e.code !== 'number') throw error;
      return { code: e.code, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
    }
  }

  /** Starts a long-running program inside the namespace (e.g. `mount-s3 --foreground`) and returns it. */
  spawn(argv: readonly string[], env: NodeJS.ProcessEnv = process.env): ChildProcess {
    return spawn('nsenter', ['-t', String(this.holderPid), '--mount', '--pid', '--', ...argv], {
      env,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
  }

  /** A path inside the namespace, reachable from here (it follows the namespace's mounts). */
  path(p: string): string {
    return `/proc/${this.holderPid}/root${p}`;
  }

  /** Whether something is mounted exactly at `p` in the namespace, and its file system type. */
  mountAt(p: string): string | undefined {
    for (const line of readFileSync(`/proc/${this.holderPid}/mountinfo`, 'utf8').split('\n')) {
      const fields = line.split(' ');
      if (fields[4] === p) return fields[fields.indexOf('-') + 1];
    }
    return undefined;
  }

  /**
   * Host PIDs of processes in the namespace running `program` with `argument`, until they have fully
   * exited: a zombie counts while any of its threads still runs (and may hold `/dev/fuse` open).
   */
  pidsOf(program: string, argument: string): number[] {
    const ns = readlinkSync(`/proc/${this.holderPid}/ns/mnt`);
    const pids: number[] = [];
    for (const entry of readdirSync('/proc')) {
      if (!/^\d+$/.test(entry) || Number(entry) === this.holderPid) continue;
      try {
        if (readlinkSync(`/proc/${entry}/ns/mnt`) !== ns) continue;
        const state = readFileSync(`/proc/${entry}/stat`, 'utf8').replace(/^.*\) /, '')[0];
        const argv = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0');
        const exited = state === 'Z' && readdirSync(`/proc/${entry}/task`).length === 1;
        if (!exited && argv[0] === program && argv.includes(argument)) pids.push(Number(entry));
      } catch {
        // gone meanwhile
      }
    }
    return pids;
  }

  /** Kills everything in the namespace (its mounts go with it) and waits for the holder to end. */
  async stop(): Promise<void> {
    if (this.unshare.exitCode !== null || this.unshare.signalCode !== null) return;
    const exited = new Promise<void>((r) => this.unshare.once('exit', () => r()));
    this.unshare.kill('SIGKILL');
    await exited;
  }
}

function readChildren(pid: number): number[] {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8')
      .trim()
      .split(/\s+/)
      .filter(Boolean)
      .map(Number);
  } catch {
    return [];
  }
}
