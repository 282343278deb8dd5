/**
 * Seeds moto with a plain bucket and a dataset read through the zone's Express cache, writes a Batch host's
 * agent.json (`containers` with a task cgroup of this run's own) and runs guard-scenario.ts in private mount and
 * PID namespaces on the real Mountpoint. Used by guard.test.ts and bench/container-guard.ts.
 */
import { CreateBucketCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, rmdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { s3Client, s3ExpressClient } from '../../../../core/aws/clients';
import { cgroup2Root } from '../../../../core/system/cgroups';
import { CLI_BUNDLE } from '../../../support/cli';
import { inPrivateNamespace } from './supervise-harness';

const EXPRESS_BUCKET = 'cache--use1-az4--x-s3';
/** Files per bucket: each read of the loop takes the next, so reads keep reaching Mountpoint (and S3). */
const FILES = 40;

/** The scenario's bound: two events, each up to a minute of waits, and the agent's start and stop. */
export const GUARD_SCENARIO_TIMEOUT_MS = 300_000;

/** What the driver hands the scenario (as JSON in GUARD_SCENARIO). */
export interface GuardScenario {
  readonly motoEndpoint: string;
  readonly mountS3: string;
  readonly cliBundle: string;
  readonly dir: string;
  readonly config: string;
  /** The plain mount's path, then the Express-cached one's. */
  readonly mounts: readonly [string, string];
  readonly expressBucket: string;
  readonly files: number;
  /** agent.json containers.taskCgroup: relative to the cgroup v2 root. */
  readonly taskCgroup: string;
  /** How long the zone stays dark after the switch, at most, for the job left on it to end. */
  readonly zoneDarkMs: number;
}

/** What a job container's reads saw from an event until it ended. */
export interface ContainerSeen {
  readonly tries: number;
  readonly ok: number;
  /** Distinct errors (what `cat` printed after the file name). */
  readonly errors: readonly string[];
  readonly slowestMs: number;
  /** How long its last read had been under way, unanswered, when it ended. */
  readonly unansweredMs: number;
}

/** One job left on a stale bind: from the event (kill -9, the zone going dark), in ms. */
export interface EndedJob {
  readonly readyGoneMs: number;
  /** Until the agent ended the container (its container-ended event). */
  readonly guardMs: number;
  /** Until the container's PID 1 exited (what Docker reports as the container's exit); absent: not meanwhile. */
  readonly endedMs?: number;
  readonly readyBackMs: number;
  readonly signal: string | null;
  readonly stderr: string;
  readonly seen: ContainerSeen;
}

export interface GuardResult {
  agentLog: string;
  error?: string;
  readyFileHoldsAgentPid?: boolean;
  restart?: EndedJob;
  afterRestartFirstOk?: boolean;
  heldOnXz?: boolean;
  zone?: EndedJob & { readonly switchedMs: number };
  afterSwitchOnDirect?: boolean;
  /** After the zone came back and the agent switched back: the jobs started after each event still run. */
  survivors?: { afterRestart: boolean; afterSwitch: boolean };
  containersInState?: { ready: boolean; ended: number };
  readyFileAfterStop?: boolean;
  afterStop?: { signal: string | null; stderr: string }[];
  /** How the job left on the dark zone ended in the end (after the agent stopped, if not before). */
  zoneJobFinally?: string | null;
}

async function seed(motoEndpoint: string): Promise<void> {
  const previous = process.env.AWS_ENDPOINT_URL;
  process.env.AWS_ENDPOINT_URL = motoEndpoint;
  try {
    const s3 = s3Client({ maxAttempts: 2 });
    for (const bucket of ['guard-plain', 'guard-data']) {
      await s3.send(new CreateBucketCommand({ Bucket: bucket }));
      for (let i = 0; i < FILES; i++) {
        const key = `train/part-${String(i).padStart(3, '0')}.bin`;
        await s3.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: randomBytes(64 * 1024) }));
      }
    }
    s3.destroy();
    const express = s3ExpressClient({ maxAttempts: 1 });
    await express.send(new CreateBucketCommand({ Bucket: EXPRESS_BUCKET }));
    express.destroy();
  } finally {
    if (previous === undefined) delete process.env.AWS_ENDPOINT_URL;
    else process.env.AWS_ENDPOINT_URL = previous;
  }
}

/** Runs the scenario with `mountS3` (the real Mountpoint) against the moto at `motoEndpoint`. */
export async function runGuard(
  motoEndpoint: string,
  mountS3: string,
  zoneDarkMs = 20_000,
): Promise<GuardResult> {
  const dir = mkdtempSync(join(tmpdir(), 'mountfleet-guard-'));
  const mounts = [join(dir, 'mnt', 'plain'), join(dir, 'mnt', 'data')] as const;
  const taskCgroup = `mountfleet-guard-${process.pid}-${Date.now()}/ecstasks.slice`;
  try {
    await seed(motoEndpoint);
    const config = join(dir, 'agent.json');
    writeFileSync(
      config,
      JSON.stringify({
        version: 1,
        fleetId: 'guard',
        region: 'us-east-1',
        mounts: [
          { bucket: 'guard-plain', prefix: 'train/', path: mounts[0], dataset: 'immutable', cache: 'none' },
          { bucket: 'guard-data', prefix: 'train/', path: mounts[1], dataset: 'immutable', cache: 'express' },
        ],
        expressCache: { buckets: { 'use1-az4': EXPRESS_BUCKET }, probeIntervalMs: 1000, probeTimeoutMs: 800 },
        containers: { taskCgroup },
      }),
    );
    const scenario: GuardScenario = {
      motoEndpoint,
      mountS3,
      cliBundle: CLI_BUNDLE,
      dir,
      config,
      mounts,
      expressBucket: EXPRESS_BUCKET,
      files: FILES,
      taskCgroup,
      zoneDarkMs,
    };
    const out = await inPrivateNamespace(
      join(__dirname, 'guard-scenario.ts'),
      { GUARD_SCENARIO: JSON.stringify(scenario) },
      [],
      GUARD_SCENARIO_TIMEOUT_MS,
    );
    return JSON.parse(out) as GuardResult;
  } finally {
    // The scenario removes its cgroups; if it was killed, its processes died with its PID namespace.
    const root = cgroup2Root();
    if (root) removeCgroupTree(join(root, taskCgroup.split('/')[0]));
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Removes a cgroup and every cgroup below it (empty ones: their processes are gone), if it is there. */
function removeCgroupTree(dir: string): void {
  let children: string[];
  try {
    children = readdirSync(dir, { withFileTypes: true })
      .filter((e) => e.isDirectory())
      .map((e) => join(dir, e.name));
  } catch {
    return; // removed already (or never made)
  }
  children.forEach(removeCgroupTree);
  rmdirSync(dir);
}
