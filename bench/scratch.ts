/**
 * Scratch lifecycle figures (`npx tsx bench/scratch.ts`), against a local moto server, the IMDS stand-in
 * and the stand-in EFS mount helper (a tmpfs mount; needs root):
 *
 * 1. Agent overhead of a full lifecycle (create → wait → mount target → mount → run `true` → teardown)
 *    beyond the emulator's own call time: wall time minus the time spent inside AWS calls (measured by
 *    SDK middleware around every call, retries included) minus the external programs (mount helper,
 *    the job, umount), in-process. Plus the same lifecycle through the CLI bundle, process start included.
 * 2. Spot notice → teardown complete: `scratch run -- sleep 600` through the CLI with the default 5 s
 *    poll; IMDS starts announcing an interruption at a random point; measured until the process exits
 *    (teardown done). Target: ≤ 10 s.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import type { EFSClient } from '@aws-sdk/client-efs';
import { ec2Client, efsClient } from '../core/aws/clients';
import { runScratchJob } from '../core/scratch/lifecycle';
import { metadataService } from '../core/instance/imds';
import { terminationNoticeReader } from '../core/instance/termination-notice';
import { FaultProxy } from '../test/support/fault-proxy';
import { createNetwork } from '../test/support/fixtures';
import { ImdsStandIn } from '../test/support/imds';
import { MotoServer, REPO_ROOT } from '../test/support/moto';

const LIFECYCLES = 10;
const SPOT_RUNS = 3;
const HELPER = join(REPO_ROOT, 'test', 'support', 'efs-mount-helper-standin', 'mount.efs-standin');
const CLI = join(REPO_ROOT, 'dist', 'agent', 'mountfleet.js');

// Loopback emulator only: dummy credentials, fixed Region.
Object.assign(process.env, {
  AWS_REGION: 'us-east-1',
  AWS_ACCESS_KEY_ID: 'bench',
  AWS_SECRET_ACCESS_KEY: 'bench',
});
delete process.env.AWS_PROFILE;

/** Adds up the time spent inside each AWS call (serialization, HTTP, retries, parsing). */
function timeCalls(client: EFSClient): { total: () => number; calls: () => number } {
  let total = 0;
  let calls = 0;
  client.middlewareStack.add(
    (next) => async (args) => {
      const started = performance.now();
      try {
        return await next(args);
      } finally {
        total += performance.now() - started;
        calls++;
      }
    },
    { step: 'initialize', name: 'benchCallTimer', priority: 'high' },
  );
  return { total: () => total, calls: () => calls };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const ms = (x: number) => `${x.toFixed(0)} ms`;

async function main() {
  const moto = await MotoServer.start();
  const imds = await ImdsStandIn.start({});
  const dir = mkdtempSync(join(tmpdir(), 'mf-bench-scratch-'));
  try {
    process.env.AWS_ENDPOINT_URL = moto.endpoint;
    const net = await createNetwork(ec2Client(), 1);
    const subnet = net.subnets[0];
    imds.set({ availabilityZone: subnet.availabilityZone, availabilityZoneId: subnet.availabilityZoneId });
    process.env.AWS_EC2_METADATA_SERVICE_ENDPOINT = imds.endpoint;

    // 1. In-process lifecycles.
    const rows: Array<{ wall: number; aws: number; external: number; calls: number }> = [];
    for (let i = -1; i < LIFECYCLES; i++) {
      const efs = efsClient();
      const timer = timeCalls(efs);
      const marks = new Map<string, number>();
      const started = performance.now();
      const result = await runScratchJob({
        efs,
        placement: imds.values,
        fleetId: 'bench',
        jobId: `lifecycle-${i}`,
        path: join(dir, 'scratch'),
        subnetId: subnet.subnetId,
        securityGroupId: net.securityGroupId,
        teardownGraceSeconds: 5,
        command: 'true',
        args: [],
        mountHelper: HELPER,
        readTerminationNotice: terminationNoticeReader(metadataService()),
        log: (line) => {
          const key = /^\[([a-z-]+)\]/.exec(line)?.[1] ?? line.split(' ')[0];
          if (!marks.has(key)) marks.set(key, performance.now());
        },
      });
      const wall = performance.now() - started;
      if (result.exitStatus !== 0 || result.teardown.status !== 'deleted')
        throw new Error(`lifecycle ${i} failed`);
      // External programs: the mount helper ([mounting] → [running]), the job ([running] → job exited),
      // umount ([tearing-down] → unmounted).
      const span = (from: string, to: string) => (marks.get(to) ?? 0) - (marks.get(from) ?? 0);
      const external =
        span('mounting', 'running') + span('running', 'job') + span('tearing-down', 'unmounted');
      if (i >= 0) rows.push({ wall, aws: timer.total(), external, calls: timer.calls() }); // i = -1 warms up moto
      efs.destroy();
    }
    const overhead = rows.map((r) => r.wall - r.aws - r.external);

    // CLI lifecycles, through a counting proxy.
    const proxy = await FaultProxy.start({ target: moto.endpoint });
    const cliWalls: number[] = [];
    for (let i = 0; i < 3; i++) {
      const started = performance.now();
      const code = await runCli(['--job', `cli-${i}`, '--', 'true'], proxy.endpoint, net, dir);
      if (code !== 0) throw new Error(`CLI lifecycle exited ${code}`);
      cliWalls.push(performance.now() - started);
    }
    const callsPerCli = proxy.count('efs') / 3;
    await proxy.stop();

    // 2. Spot notice → teardown complete, with the default 5 s poll.
    const spot: number[] = [];
    for (let i = 0; i < SPOT_RUNS; i++) {
      imds.cancelSpotInterruption();
      let noticeAt = 0;
      const exited = runCli(['--job', `spot-${i}`, '--', 'sleep', '600'], moto.endpoint, net, dir, (line) => {
        if (line.includes('[running]')) {
          // Somewhere in the poll cycle, as a real notice would be.
          setTimeout(
            () => {
              noticeAt = performance.now();
              imds.scheduleSpotInterruption({ action: 'terminate', time: new Date(Date.now() + 120_000) });
            },
            1000 + Math.random() * 5000,
          );
        }
      });
      const code = await exited;
      spot.push(performance.now() - noticeAt);
      if (code !== 143) throw new Error(`spot run exited ${code}, expected 143`);
    }

    const r = (f: (x: (typeof rows)[number]) => number) => ms(median(rows.map(f)));
    process.stdout.write(
      [
        `scratch lifecycle, in-process, median of ${LIFECYCLES} (moto on loopback, stand-in mount helper):`,
        `  wall ${r((x) => x.wall)}, inside ${median(rows.map((x) => x.calls))} AWS calls ${r((x) => x.aws)}, ` +
          `mount helper + job + umount ${r((x) => x.external)}`,
        `  agent overhead beyond AWS calls and external programs: median ${ms(median(overhead))}, ` +
          `max ${ms(Math.max(...overhead))}`,
        `scratch lifecycle through the CLI bundle (process start, IMDS identity included): ` +
          `median ${ms(median(cliWalls))} of 3; ${callsPerCli} EFS API calls per lifecycle`,
        `Spot notice in IMDS -> teardown complete (default 5 s poll), ${SPOT_RUNS} runs: ` +
          `${spot.map((x) => (x / 1000).toFixed(1)).join(' s, ')} s (max ${(Math.max(...spot) / 1000).toFixed(1)} s, target <= 10 s)`,
        '',
      ].join('\n'),
    );
  } finally {
    await imds.stop();
    await moto.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

function runCli(
  args: string[],
  endpoint: string,
  net: Awaited<ReturnType<typeof createNetwork>>,
  dir: string,
  onStderr: (line: string) => void = () => undefined,
): Promise<number | null> {
  const child = spawn(
    process.execPath,
    [
      CLI,
      'scratch',
      'run',
      '--fleet',
      'bench',
      '--subnet',
      net.subnets[0].subnetId,
      '--security-group',
      net.securityGroupId,
      '--path',
      join(dir, 'scratch'),
      ...args,
    ],
    {
      env: { ...process.env, AWS_ENDPOINT_URL: endpoint, MOUNTFLEET_EFS_MOUNT_HELPER: HELPER },
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  );
  child.stderr!.on('data', (d: Buffer) => onStderr(d.toString()));
  return new Promise((resolve) => child.once('exit', (code) => resolve(code)));
}

main().catch((err: unknown) => {
  process.stderr.write(`bench/scratch: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exitCode = 1;
});
