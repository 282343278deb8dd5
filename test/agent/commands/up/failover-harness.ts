/**
 * Drives failover-scenario.ts in a private mount namespace: the real agent bundle (`up --supervise`),
 * the Mountpoint stand-in, the IMDS stand-in, and the fault proxy in front of moto whose black hole
 * plays the dark Express zone. Used by failover.test.ts and bench/failover.ts.
 */
import { CreateBucketCommand } from '@aws-sdk/client-s3';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { s3ExpressClient } from '../../../../core/aws/clients';
import { CLI_BUNDLE } from '../../../support/cli';
import { FaultProxy } from '../../../support/fault-proxy';
import { ImdsStandIn } from '../../../support/imds';
import { REPO_ROOT } from '../../../support/moto';
import { unshareTsxArgs } from '../../../support/mount-namespace';

export const STANDIN = join(REPO_ROOT, 'test/support/mount-s3-standin/mount-s3-standin');
export const EXPRESS_BUCKET = 'cache--use1-az4--x-s3';

export interface FailoverOptions {
  readonly motoEndpoint: string;
  readonly probeIntervalMs: number;
  readonly probeTimeoutMs: number;
  readonly fileBytes?: number;
  /** Black-hole S3 before the agent starts; the driver clears it once the agent is up. */
  readonly darkAtStart?: boolean;
  /**
   * The zone answers probes, but the Express-cached process's first start fails (its cache-metadata
   * PutObject is refused once): the agent must serve from the standby and start it again later.
   */
  readonly expressStartFailsOnce?: boolean;
}

export interface FailoverResult {
  readonly ready: { heldOnExpress: boolean; xzDev: number; directDev: number; newOpenDev: number };
  /** From the black hole going up to the first new open served by the standby. */
  readonly switchedMs: number;
  readonly heldOk: { bytes: number; same: boolean; stillOnExpress: boolean };
  /** From the fault being cleared to the first new open served by the Express-cached process. */
  readonly backMs: number;
  readonly done: {
    agentExit: number | null;
    leftMounted: number;
    state: Record<string, unknown>;
    agentLog: string;
  };
  readonly proxyRequestsBlackholed: number;
  /** From SIGKILL of the Express-cached process to new opens served by its restarted successor. */
  readonly restartedMs: number;
}

export async function runFailover(options: FailoverOptions): Promise<FailoverResult> {
  const dir = mkdtempSync(join(tmpdir(), 'mountfleet-failover-'));
  const bucketsDir = join(dir, 'buckets');
  mkdirSync(join(bucketsDir, 'datasets', 'train'), { recursive: true });
  writeFileSync(
    join(bucketsDir, 'datasets', 'train', 'shard-0000.tar'),
    randomBytes(options.fileBytes ?? 1024 * 1024),
  );
  const userPath = join(dir, 'mnt', 'data');
  const configPath = join(dir, 'agent.json');
  writeFileSync(
    configPath,
    JSON.stringify({
      version: 1,
      fleetId: 'failover',
      region: 'us-east-1',
      mounts: [
        {
          bucket: 'datasets',
          prefix: 'train/',
          path: userPath,
          dataset: 'immutable',
          cache: 'local+express',
        },
      ],
      expressCache: {
        buckets: { 'use1-az4': EXPRESS_BUCKET },
        probeIntervalMs: options.probeIntervalMs,
        probeTimeoutMs: options.probeTimeoutMs,
      },
    }),
  );
  const previous = process.env.AWS_ENDPOINT_URL;
  process.env.AWS_ENDPOINT_URL = options.motoEndpoint;
  await s3ExpressClient({ maxAttempts: 1 }).send(new CreateBucketCommand({ Bucket: EXPRESS_BUCKET }));
  if (previous === undefined) delete process.env.AWS_ENDPOINT_URL;
  else process.env.AWS_ENDPOINT_URL = previous;

  const imds = await ImdsStandIn.start({ instanceType: 'm6i.2xlarge', availabilityZoneId: 'use1-az4' });
  const proxy = await FaultProxy.start({ target: options.motoEndpoint });
  if (options.darkAtStart) proxy.addRule({ service: 's3', fault: { kind: 'blackhole' } });
  if (options.expressStartFailsOnce)
    proxy.addRule({
      service: 's3',
      operation: 'PutObject',
      fault: { kind: 'error', status: 403, code: 'AccessDenied' },
      times: 1,
    });
  const standbyFirst = options.darkAtStart || options.expressStartFailsOnce;
  const child = spawn(
    'unshare',
    unshareTsxArgs(join(__dirname, 'failover-scenario.ts'), [
      CLI_BUNDLE,
      configPath,
      userPath,
      'shard-0000.tar',
    ]),
    {
      stdio: ['pipe', 'pipe', 'pipe'],
      env: {
        ...process.env,
        AWS_ENDPOINT_URL: proxy.endpoint,
        AWS_EC2_METADATA_SERVICE_ENDPOINT: imds.endpoint,
        MOUNTFLEET_MOUNT_S3: STANDIN,
        MOUNTFLEET_RUN_DIR: join(dir, 'run'),
        MOUNTFLEET_SYSTEM_ROOT: join(dir, 'root'),
        MOUNT_S3_STANDIN_BUCKETS: bucketsDir,
        ...(standbyFirst ? { SCENARIO_STANDBY_FIRST: '1' } : {}),
      },
    },
  );
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-4000)));
  const events = createInterface({ input: child.stdout! });
  const result: Record<string, unknown> = {};
  let darkAt = 0;
  try {
    await new Promise<void>((resolve, reject) => {
      child.once('exit', (code) =>
        result.done ? resolve() : reject(new Error(`scenario exited with ${code}: ${stderr}`)),
      );
      events.on('line', (line) => {
        const e = JSON.parse(line) as Record<string, unknown> & { event: string };
        if (e.event === 'error')
          return reject(new Error(`${String(e.message)}\nagent log:\n${String(e.agentLog)}`));
        if (e.event === 'ready' && standbyFirst) {
          result.ready = e;
          proxy.clear();
          darkAt = Date.now();
          child.stdin!.write('light\n');
        } else if (e.event === 'ready') {
          result.ready = e;
          proxy.addRule({ service: 's3', fault: { kind: 'blackhole' } });
          darkAt = Date.now();
          child.stdin!.write('dark\n');
        } else if (e.event === 'switched') {
          result.switchedMs = Date.now() - darkAt;
        } else if (e.event === 'held-ok') {
          result.heldOk = e;
          result.proxyRequestsBlackholed = proxy.requests().filter((r) => r.outcome === 'blackhole').length;
          proxy.clear();
          darkAt = Date.now();
          child.stdin!.write('light\n');
        } else if (e.event === 'back') {
          result.backMs = Date.now() - darkAt;
        } else if (e.event === 'restarted') {
          result.restartedMs = e.ms;
        } else if (e.event === 'done') {
          result.done = e;
          child.stdin!.end();
        }
      });
    });
    return result as unknown as FailoverResult;
  } finally {
    if (child.exitCode === null) child.kill('SIGKILL');
    await proxy.stop();
    await imds.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
