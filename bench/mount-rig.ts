/**
 * The Mountpoint bench rig shared by bench/mountpoint.ts and bench/training-scenarios.ts: mounts made the
 * way the agent makes them (its rendered command lines, started by its Supervisor) on the real Mountpoint
 * against an emulator, each on a fresh mount point and cache directory.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseAgentConfig } from '../core/contract/agent-config';
import { lookupInstanceType } from '../core/instance/instance-type-lookup';
import { Supervisor } from '../core/agent/mountpoint-supervisor';
import { planMounts } from '../core/tuner/plan-mounts';
import { FaultProxy } from '../test/support/fault-proxy';
import { unshareTsxArgs } from '../test/support/mount-namespace';
import { MotoServer } from '../test/support/moto';
import { emulatorMountS3, realMountpoint, type RealMountpoint } from '../test/support/real-mountpoint';

/** One Mountpoint process: its arguments (background form, after the program name) and environment. */
export interface RigProcess {
  readonly args: string[];
  readonly mountPoint: string;
  readonly environment: Readonly<Record<string, string>>;
}

/** What the agent would run for `bucket` (under `prefix`) at `mountPoint`, as a function of the mount's directories. */
export type MountProfile = (mountPoint: string, cacheDirectory: string, runDir: string) => RigProcess;

/** Mountpoint's defaults: no cache, metadata re-validated on every open. */
export const defaultsProfile =
  (bucket: string, prefix?: string): MountProfile =>
  (mountPoint) => ({
    args: [...(prefix ? ['--prefix', prefix] : []), bucket, mountPoint],
    mountPoint,
    environment: {},
  });

/** The availability zone the rig plays; the Express cache bucket is the one the config gives it. */
export const RIG_AZ_ID = 'use1-az4';

/**
 * The agent's tuned profile for an immutable data set on `instanceType`: `local` is its local-cache
 * profile; `express` its Express-cached process (the primary of a failover pair) on `expressBucket`, and
 * `local+express` the same with a local cache in front of the shared one.
 */
export async function agentProfile(options: {
  readonly instanceType: string;
  readonly bucket: string;
  readonly prefix?: string;
  readonly cache: 'local' | 'express' | 'local+express';
  readonly expressBucket?: string;
}): Promise<MountProfile> {
  const instance = await lookupInstanceType(options.instanceType, undefined, () => undefined);
  return (mountPoint, cacheDirectory, runDir) => {
    const config = parseAgentConfig({
      version: 1,
      fleetId: 'bench',
      region: 'us-east-1',
      mounts: [
        {
          bucket: options.bucket,
          ...(options.prefix ? { prefix: options.prefix } : {}),
          path: mountPoint,
          dataset: 'immutable',
          cache: options.cache,
        },
      ],
      ...(options.expressBucket ? { expressCache: { buckets: { [RIG_AZ_ID]: options.expressBucket } } } : {}),
    });
    const plan = planMounts({
      config,
      instance,
      memory: { totalMiB: instance.memoryMiB, source: 'instance type' },
      cacheVolume: { kind: 'root', directory: cacheDirectory, capacityMiB: 20 * 1024, reason: 'bench' },
      azId: RIG_AZ_ID,
      runDir,
      // No agent here, so no relay: the bench counts S3 requests at its proxy.
      metricsRelay: null,
    });
    const processes = plan.mounts[0].processes;
    const chosen = processes.find((p) => p.role === 'xz') ?? processes[0];
    return { args: chosen.args, mountPoint: chosen.mountPoint, environment: chosen.environment };
  };
}

/** Fresh mounts under `dir`, started and stopped by the agent's Supervisor. */
export class MountRig {
  private count = 0;

  constructor(
    private readonly supervisor: Supervisor,
    private readonly dir: string,
  ) {}

  /** Mounts with `profile`, runs `body` on the mounted path, unmounts (also when `body` fails). */
  async mounted<T>(profile: MountProfile, body: (path: string) => Promise<T>): Promise<T> {
    const key = `m${this.count++}`;
    const p = profile(join(this.dir, 'mnt', key), join(this.dir, 'cache', key), join(this.dir, 'run', key));
    const cache = p.args.indexOf('--cache');
    await this.supervisor.start({
      key,
      mountPoint: p.mountPoint,
      args: p.args,
      environment: p.environment,
      ...(cache >= 0 ? { cacheDirectory: p.args[cache + 1] } : {}),
    });
    try {
      return await body(p.mountPoint);
    } finally {
      await this.supervisor.stop(key);
    }
  }
}

/** The parts every Mountpoint bench runs on. */
export interface BenchRig {
  readonly real: RealMountpoint;
  readonly dir: string;
  readonly moto: MotoServer;
  /** In front of moto: Mountpoint's requests go through it (delays, counts). */
  readonly proxy: FaultProxy;
  readonly supervisor: Supervisor;
  readonly mounts: MountRig;
}

/**
 * Starts a moto of its own, the fault proxy in front of it and the agent's Supervisor running the real
 * Mountpoint through the proxy; runs `body`; stops them all and removes the scratch directory.
 */
export async function withBenchRig<T>(name: string, body: (rig: BenchRig) => Promise<T>): Promise<T> {
  const real = realMountpoint();
  if ('skip' in real) throw new Error(real.skip);
  process.env.AWS_REGION ??= 'us-east-1';
  process.env.AWS_ACCESS_KEY_ID ??= 'bench';
  process.env.AWS_SECRET_ACCESS_KEY ??= 'bench';
  process.env.AWS_EC2_METADATA_DISABLED = 'true';
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
  const dir = mkdtempSync(join(tmpdir(), `mountfleet-bench-${name}-`));
  const moto = await MotoServer.start();
  const proxy = await FaultProxy.start({ target: moto.endpoint });
  const supervisor = new Supervisor(emulatorMountS3(dir, real.binary, proxy.endpoint));
  try {
    return await body({ real, dir, moto, proxy, supervisor, mounts: new MountRig(supervisor, dir) });
  } finally {
    await supervisor.stopAll();
    await proxy.stop();
    await moto.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

const IN_NAMESPACE = 'MOUNTFLEET_BENCH_IN_NAMESPACE';

/**
 * Runs `bench` in a private mount namespace of its own: mounts need root and must not leak to the machine.
 * The script re-runs itself under `unshare`; parallel readers need more than libuv's 4 threads.
 */
export function benchInOwnNamespace(script: string, bench: () => Promise<void>): void {
  if (process.env[IN_NAMESPACE]) {
    bench().catch((e: unknown) => {
      process.stderr.write(`${(e as Error).stack ?? String(e)}\n`);
      process.exitCode = 1;
    });
    return;
  }
  const child = spawn('unshare', unshareTsxArgs(script, process.argv.slice(2)), {
    stdio: 'inherit',
    env: { ...process.env, [IN_NAMESPACE]: '1', UV_THREADPOOL_SIZE: '64' },
  });
  child.once('exit', (code) => (process.exitCode = code ?? 1));
}
