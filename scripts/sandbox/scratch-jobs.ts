/** Scratch jobs as a played instance runs them: `mountfleet scratch run`, watched and stopped from here. */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { efsClient } from '../../core/aws/clients';
import { listScratchFileSystems, type ScratchFileSystemSummary } from '../../core/scratch/inventory';
import { runSummarySchema } from '../../core/credit/run-summary';
import { CLI_BUNDLE } from '../../test/support/cli';
import { REPO_ROOT } from '../../test/support/moto';
import type { Cleanups } from './cleanup';
import { waitFor } from './fleet';

/** One `scratch run` job of the sandbox, as the report shows it. */
export interface JobRecord {
  readonly id: string;
  readonly instanceId: string;
  outcome: string;
  exitCode?: number | null;
  fileSystemId?: string;
}

export interface RunningJob {
  readonly child: ChildProcess;
  readonly done: Promise<number | null>;
  /** Where the job's scratch is mounted. */
  readonly path: string;
  output(): string;
  /** Kills the agent and everything it started, as losing the instance would. */
  killAll(): void;
}

/**
 * Starts `mountfleet scratch run` for a job as the played instance would. The job script records its pid
 * first: the agent runs CMD in a process group of its own, so losing the instance means killing both.
 */
export function startJob(
  job: JobRecord,
  env: NodeJS.ProcessEnv,
  script: string,
  cleanups: Cleanups,
): RunningJob {
  const path = join(env.TMPDIR!, 'scratch', job.id);
  const pidFile = join(env.TMPDIR!, `${job.id}.pid`);
  const child = spawn(
    process.execPath,
    [
      CLI_BUNDLE,
      'scratch',
      'run',
      '--job',
      job.id,
      '--path',
      path,
      '--',
      'sh',
      '-c',
      `echo $$ > '${pidFile}'; ${script}`,
    ],
    { cwd: REPO_ROOT, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true },
  );
  let output = '';
  child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
  child.stdout!.on('data', (d: Buffer) => (output += d.toString()));
  const done = new Promise<number | null>((resolve) =>
    child.on('exit', (code, signal) => resolve(code ?? (signal ? -1 : null))),
  );
  const killGroup = (pid: number) => {
    try {
      process.kill(-pid, 'SIGKILL');
    } catch {
      // already gone
    }
  };
  let exited = false;
  void done.then(() => (exited = true));
  const job_: RunningJob = {
    child,
    done,
    path,
    output: () => output,
    killAll: () => {
      killGroup(child.pid!);
      if (existsSync(pidFile)) killGroup(Number(readFileSync(pidFile, 'utf8').trim()));
    },
  };
  // Interrupted or failed: let the agent tear its scratch down (SIGTERM), then make sure nothing is left.
  cleanups.add(`stop job ${job.id}`, async () => {
    if (!exited) {
      child.kill('SIGTERM');
      await Promise.race([done, new Promise((r) => setTimeout(r, 30_000))]);
    }
    job_.killAll();
  });
  return job_;
}

/** This fleet's scratch file systems (core's listing: pages of 100, tags checked), optionally of one job. */
export async function fleetScratch(fleetId: string, jobId?: string): Promise<ScratchFileSystemSummary[]> {
  const all = await listScratchFileSystems(efsClient(), fleetId);
  return jobId === undefined ? all : all.filter((f) => f.job === jobId);
}

/** The id of a job's file system, once the agent has created it. */
export function scratchIdOf(fleetId: string, jobId: string): Promise<string> {
  return waitFor(
    `job ${jobId}'s scratch file system`,
    async () => (await fleetScratch(fleetId, jobId))[0]?.fileSystemId,
  );
}

/** Job 1: writes 8 MiB to its scratch and checks a copy of it. */
export const WRITE_READ_SCRIPT = [
  'set -e',
  'head -c 8388608 /dev/urandom > "$MOUNTFLEET_SCRATCH/data.bin"',
  'sum1=$(sha256sum < "$MOUNTFLEET_SCRATCH/data.bin")',
  'cp "$MOUNTFLEET_SCRATCH/data.bin" "$MOUNTFLEET_SCRATCH/copy.bin"',
  'sum2=$(sha256sum < "$MOUNTFLEET_SCRATCH/copy.bin")',
  '[ "$sum1" = "$sum2" ]',
  'df -h "$MOUNTFLEET_SCRATCH" | tail -1',
].join('; ');

/** The burst-credit guard's account of a finished job, from the run summary on the last line of its stderr. */
export function guardLineOf(output: string): string {
  const parsed = runSummarySchema.safeParse(
    (() => {
      try {
        return JSON.parse(output.trimEnd().split('\n').at(-1) ?? '');
      } catch {
        return undefined;
      }
    })(),
  );
  if (!parsed.success) return 'guard: no run summary';
  const s = parsed.data;
  const gib = (bytes: number | null) =>
    bytes === null ? 'no datapoints' : `${(bytes / 1024 ** 3).toFixed(2)} GiB`;
  return `guard: ${s.creditChecks} check(s), credit used ${gib(s.burstCreditUsedBytes)}, metered ${gib(s.meteredIoBytes)}`;
}
