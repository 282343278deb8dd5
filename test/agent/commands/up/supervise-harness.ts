/**
 * Seeds two moto buckets, writes an agent.json that mounts them (one with the local data cache, one
 * without) and runs supervise-scenario.ts in a private mount namespace on the real Mountpoint.
 * Used by supervise.test.ts and bench/mountpoint.ts.
 */
import { CreateBucketCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { s3Client } from '../../../../core/aws/clients';
import { CLI_BUNDLE } from '../../../support/cli';
import { unshareTsxArgs } from '../../../support/mount-namespace';
import type { S3Count } from '../../../../core/agent/mount-metrics-reading';

export interface ScenarioMount {
  readonly bucket: string;
  readonly path: string;
}

/** What the driver hands the scenario (as JSON in SUPERVISE_SCENARIO). */
export interface SuperviseScenario {
  readonly motoEndpoint: string;
  readonly mountS3: string;
  readonly cliBundle: string;
  readonly dir: string;
  readonly config: string;
  readonly mounts: readonly ScenarioMount[];
}

export interface SuperviseResult {
  readonly mounts: number;
  agentLog: string;
  error?: string;
  upMs?: number;
  /** `bucket/key` → sha256 of the bytes read through the mount. */
  read?: Record<string, string>;
  /** kill -9 → the path serves the same bytes from a new process. */
  restartMs?: number;
  /** `status --json` restarts of the killed process afterwards. */
  restartsCounted?: number;
  restartLogged?: boolean;
  /**
   * A read of every file of the uncached mount: the agent's S3 counts for it (Mountpoint's exports through
   * the agent's relay) and the requests the proxy saw meanwhile, per operation.
   */
  s3Counts?: { agent: S3Count; proxy: Record<string, number> };
  /** `bench train --json` (2 epochs) and `warm --json` on the uncached mount, with the proxy's GetObjects meanwhile. */
  benchTrain?: BenchTrainRun;
  /** The same on the cached mount, whose files were all read before. */
  cachedBenchTrain?: BenchTrainRun;
  warm?: { json: { s3Counts: unknown; s3?: S3Count }; proxyGetObject: number };
  /** Agent log lines of restarts that failed (the bucket refused every request). */
  restartFailures?: string[];
  /** A second `up --supervise` with the same config and run dir while the first runs. */
  secondUp?: { code: number | null; stderr: string; stateUnchanged: boolean };
  /** `mountfleet down`, start to finish (the CLI's own start-up included). */
  downMs?: number;
  /** The agent's part of it: its SIGTERM log line to its exit. */
  agentStopMs?: number;
  downExit?: number | null;
  downStderr?: string;
  agentExit?: number | null;
  /** Mounts below the scenario's directory once the agent is gone. */
  leftMounted?: number;
  /** Mountpoint processes (or anything naming the scenario's directory) still alive afterwards. */
  leftProcesses?: number;
}

export interface BenchTrainRun {
  readonly json: { s3Counts: unknown; epochs: { s3?: S3Count }[] };
  readonly proxyGetObject: number;
}

export interface SuperviseRun {
  readonly result: SuperviseResult;
  /** `bucket/key` → sha256 of what was seeded. */
  readonly seeded: Record<string, string>;
}

/** Puts `count` objects of random bytes under `prefix`; returns `bucket/key-below-prefix` → sha256. */
async function seed(bucket: string, prefix: string, count: number, bytes: number) {
  const s3 = s3Client({ maxAttempts: 2 });
  await s3.send(new CreateBucketCommand({ Bucket: bucket }));
  const seeded: Record<string, string> = {};
  for (let i = 0; i < count; i++) {
    const key = `part-${String(i).padStart(3, '0')}.bin`;
    const body = randomBytes(bytes);
    await s3.send(new PutObjectCommand({ Bucket: bucket, Key: `${prefix}${key}`, Body: body }));
    seeded[`${bucket}/${key}`] = createHash('sha256').update(body).digest('hex');
  }
  s3.destroy();
  return seeded;
}

/** Runs the scenario with `mountS3` (the real Mountpoint) against the moto at `motoEndpoint`. */
export async function runSupervise(motoEndpoint: string, mountS3: string): Promise<SuperviseRun> {
  const dir = mkdtempSync(join(tmpdir(), 'mountfleet-supervise-'));
  const mounts = [
    { bucket: 'cached', path: join(dir, 'mnt', 'cached'), cache: 'local' },
    { bucket: 'uncached', path: join(dir, 'mnt', 'uncached'), cache: 'none' },
  ];
  const previous = process.env.AWS_ENDPOINT_URL;
  process.env.AWS_ENDPOINT_URL = motoEndpoint;
  try {
    const seeded = {
      ...(await seed('cached', 'train/', 12, 300 * 1024)),
      ...(await seed('uncached', '', 4, 2 * 1024 * 1024 + 17)),
    };
    const config = join(dir, 'agent.json');
    writeFileSync(
      config,
      JSON.stringify({
        version: 1,
        fleetId: 'supervise',
        region: 'us-east-1',
        mounts: mounts.map((m) => ({
          bucket: m.bucket,
          prefix: m.bucket === 'cached' ? 'train/' : '',
          path: m.path,
          dataset: 'immutable',
          cache: m.cache,
        })),
      }),
    );
    const scenario: SuperviseScenario = {
      motoEndpoint,
      mountS3,
      cliBundle: CLI_BUNDLE,
      dir,
      config,
      mounts: mounts.map(({ bucket, path }) => ({ bucket, path })),
    };
    const result = await inPrivateNamespace(join(__dirname, 'supervise-scenario.ts'), {
      SUPERVISE_SCENARIO: JSON.stringify(scenario),
    });
    return { result: JSON.parse(result) as SuperviseResult, seeded };
  } finally {
    if (previous === undefined) delete process.env.AWS_ENDPOINT_URL;
    else process.env.AWS_ENDPOINT_URL = previous;
    rmSync(dir, { recursive: true, force: true });
  }
}

/** How long a scenario may take before it is killed with everything it started. */
export const SCENARIO_TIMEOUT_MS = 110_000;

/**
 * Runs a TypeScript program in private mount and PID namespaces, with its own /proc: its mounts, and every
 * process it starts, die with it, also when it hangs and is killed after `timeoutMs`.
 * Resolves to its stdout.
 */
export function inPrivateNamespace(
  script: string,
  env: Record<string, string>,
  args: readonly string[] = [],
  timeoutMs = SCENARIO_TIMEOUT_MS,
): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      'unshare',
      unshareTsxArgs(script, args, ['--pid', '--fork', '--kill-child', '--mount-proc']),
      { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } },
    );
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr!.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-4000)));
    child.once('error', reject);
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      if (code === 0) resolve(stdout);
      else reject(new Error(`${script} exited with ${code ?? signal}: ${stderr}`));
    });
  });
}
