/**
 * Played instances that mount S3: one per zone, each in a private mount namespace with its own IMDS
 * stand-in, running `mountfleet up --supervise` from the agent.json the deploy wrote into user data. Each is
 * driven by the Express failover scenario (test/agent/commands/up/failover-scenario.ts): it holds a file open
 * through the mount; the sandbox black-holes that zone's Express cache bucket only (the other zone keeps
 * its cache), and the scenario measures when new opens reach the cache-less standby, checks the held
 * handle, then the way back once the zone returns, and a Mountpoint process killed and restarted.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { STANDIN } from '../../test/agent/commands/up/failover-harness';
import { agentPaths } from '../../core/contract/agent-paths';
import { CLI_BUNDLE } from '../../test/support/cli';
import type { FaultProxy } from '../../test/support/fault-proxy';
import { REPO_ROOT } from '../../test/support/moto';
import { emulatorMountS3, realMountpoint } from '../../test/support/real-mountpoint';
import type { AgentJson } from './fleet';
import { unshareTsxArgs } from '../../test/support/mount-namespace';
import { mountS3Count, type S3Count } from '../../core/agent/mount-metrics-reading';
import { readState } from '../../core/agent/agent-state';

const SCENARIO = join(REPO_ROOT, 'test/agent/commands/up/failover-scenario.ts');
/** How long one scenario event may take (the agent's probe interval is seconds). */
const EVENT_TIMEOUT_MS = 60_000;

/** A played instance that mounts the fleet's buckets. */
export interface MountInstance {
  readonly instanceId: string;
  readonly zoneId: string;
  readonly imdsEndpoint: string;
}

type Event = Record<string, unknown> & { event: string };

/** One played instance running the scenario; events arrive in order, commands go to its stdin. */
class PlayedInstance {
  private readonly events: Event[] = [];
  private wake: () => void = () => {};
  private stderr = '';
  readonly exited: Promise<number | null>;

  constructor(
    readonly instance: MountInstance,
    readonly runDir: string,
    private readonly child: ChildProcess,
  ) {
    createInterface({ input: child.stdout! }).on('line', (line) => {
      this.events.push(JSON.parse(line) as Event);
      this.wake();
    });
    child.stderr!.on('data', (d: Buffer) => (this.stderr = (this.stderr + d.toString()).slice(-4000)));
    this.exited = new Promise((r) => child.once('exit', (code) => r(code)));
    void this.exited.then(() => this.wake());
  }

  async next(name: string): Promise<Event> {
    const deadline = Date.now() + EVENT_TIMEOUT_MS;
    for (;;) {
      const e = this.events.shift();
      if (e?.event === 'error')
        throw new Error(`${this.instance.zoneId}: ${String(e.message)}\n${String(e.agentLog).slice(-3000)}`);
      if (e?.event === name) return e;
      if (e) throw new Error(`${this.instance.zoneId}: expected ${name}, got ${e.event}`);
      if (this.child.exitCode !== null)
        throw new Error(`${this.instance.zoneId}: scenario exited ${this.child.exitCode}: ${this.stderr}`);
      if (Date.now() > deadline) throw new Error(`${this.instance.zoneId}: no ${name} in time`);
      await new Promise<void>((r) => {
        this.wake = r;
        setTimeout(r, 1000);
      });
    }
  }

  send(command: string): void {
    this.child.stdin!.write(`${command}\n`);
  }

  /**
   * The S3 requests the agent has counted for the mount so far (its relay's totals from Mountpoint's own
   * exports, as `status --json` shows them); undefined when it counts none.
   */
  s3Counted(): S3Count | undefined {
    const state = readState(this.runDir);
    const metrics = state?.mounts[0].processes.flatMap((p) => (p.metrics ? [p.metrics] : []));
    return metrics?.length ? mountS3Count(metrics) : undefined;
  }

  /** Which Mountpoint process serves new opens now, from the agent's state file. */
  active(): string {
    const state = JSON.parse(readFileSync(join(this.runDir, 'state.json'), 'utf8')) as {
      mounts: { active: string }[];
    };
    return state.mounts[0].active;
  }

  /**
   * Stops the scenario and the agent it started (its own process group): SIGTERM first, so the agent
   * stops its Mountpoint processes and unmounts, then SIGKILL for whatever is left after 15 s.
   */
  async stop(): Promise<void> {
    const group = -this.child.pid!;
    const alive = () => {
      try {
        process.kill(group, 0);
        return true;
      } catch {
        return false;
      }
    };
    if (!alive()) return;
    process.kill(group, 'SIGTERM');
    const deadline = Date.now() + 15_000;
    while (alive() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    if (alive()) process.kill(group, 'SIGKILL');
  }
}

export interface ZoneResult {
  readonly zoneId: string;
  readonly instanceId: string;
  readonly bucket: string;
  readonly expressBucket: string;
  /** The file held open was first opened on the Express-cached Mountpoint process. */
  readonly heldOnExpress: boolean;
  /** Bytes read back through the held handle during the outage, and whether they were the seeded ones. */
  readonly heldBytesRead: number;
  readonly heldBytesSame: boolean;
  /** Outage → first new open served by the standby (no Express cache). */
  readonly failoverSeconds: number;
  /** Zone back → first new open served by the Express-cached process again. */
  readonly recoverySeconds: number;
  /** Express-cached process SIGKILLed → its restarted successor serves new opens. */
  readonly restartSeconds: number;
  /** Whether the other zone's instance kept its Express cache during this zone's outage (null: no other). */
  readonly otherZoneKeptCache: boolean | null;
  /** Requests the proxy black-holed (the agent's probes and cache traffic of this zone). */
  readonly blackholedRequests: number;
  /** S3 requests the agent counted for the mount (Mountpoint's own metrics through its relay), before it stopped. */
  readonly s3Counted?: S3Count;
  readonly agentExit: number | null;
  readonly leftMounted: number;
}

export interface MountsOptions {
  readonly workDir: string;
  readonly agentConfig: AgentJson;
  readonly instances: readonly MountInstance[];
  /** The proxy the played instances reach AWS through; its black hole plays the dark zone. */
  readonly proxy: FaultProxy;
  /** The stand-in's buckets: `<dir>/<bucket>/<key>`, the same objects the demo put into S3. */
  readonly bucketsDir: string;
  readonly mountS3: MountS3Choice;
  readonly fileName: string;
  readonly env: NodeJS.ProcessEnv;
  /** Registers how to stop what this starts (the sandbox's cleanups). */
  readonly onCleanup: (what: string, run: () => Promise<void>) => void;
  readonly log: (message: string) => void;
}

/** The mount path moved under the work directory: each played instance has a file system of its own. */
function instanceConfig(config: AgentJson, dir: string): { file: string; userPath: string } {
  const userPath = join(dir, 'mnt', config.mounts[0].path);
  const file = join(dir, 'agent.json');
  writeFileSync(
    file,
    JSON.stringify({
      ...config,
      mounts: config.mounts.map((m, i) => (i === 0 ? { ...m, path: userPath } : m)),
    }),
  );
  return { file, userPath };
}

/** Which Mountpoint the played instances run, and why. */
export interface MountS3Choice {
  readonly kind: 'official' | 'harness' | 'stand-in';
  readonly binary: string;
  readonly why: string;
}

/**
 * The real `mount-s3` when one is found (MOUNTFLEET_MOUNT_S3, or on the PATH), else the project's harness on
 * Mountpoint's crates (scripts/build-harness.sh), else the Node stand-in, which serves a local directory.
 */
export function chooseMountS3(): MountS3Choice {
  const onPath = spawnSync('sh', ['-c', 'command -v mount-s3'], { encoding: 'utf8' }).stdout.trim();
  const real = process.env.MOUNTFLEET_MOUNT_S3
    ? realMountpoint()
    : onPath
      ? { binary: onPath, kind: 'official' as const }
      : realMountpoint();
  if ('binary' in real)
    return {
      kind: real.kind,
      binary: real.binary,
      why:
        real.kind === 'official'
          ? `Amazon's mount-s3 at ${real.binary}`
          : `the project's harness on Mountpoint's crates (${real.binary})`,
    };
  return { kind: 'stand-in', binary: STANDIN, why: `the Node stand-in: ${real.skip}` };
}

const instanceDir = (workDir: string, zoneId: string) => join(workDir, `instance-${zoneId}`);
const systemRootOf = (workDir: string, zoneId: string) => join(instanceDir(workDir, zoneId), 'root');

/** The embedded-metric-format lines each played instance's agent wrote (Express cache switches). */
export function agentMetricsLogs(workDir: string, zoneIds: readonly string[]): string[] {
  return zoneIds.map((z) => agentPaths({ MOUNTFLEET_SYSTEM_ROOT: systemRootOf(workDir, z) }).metricsLogFile);
}

function start(o: MountsOptions, instance: MountInstance): PlayedInstance {
  const dir = instanceDir(o.workDir, instance.zoneId);
  mkdirSync(dir, { recursive: true });
  const { file, userPath } = instanceConfig(o.agentConfig, dir);
  const runDir = join(dir, 'run');
  const child = spawn('unshare', unshareTsxArgs(SCENARIO, [CLI_BUNDLE, file, userPath, o.fileName]), {
    stdio: ['pipe', 'pipe', 'pipe'],
    // A process group of its own: the sandbox stops it with everything it started (see stop()).
    detached: true,
    env: {
      ...o.env,
      AWS_ENDPOINT_URL: o.proxy.endpoint,
      AWS_EC2_METADATA_SERVICE_ENDPOINT: instance.imdsEndpoint,
      // Real Mountpoint against the emulator: its endpoint and path-style on top, no IMDS of its own.
      ...(o.mountS3.kind === 'stand-in'
        ? { MOUNTFLEET_MOUNT_S3: STANDIN }
        : {
            MOUNTFLEET_MOUNT_S3: emulatorMountS3(dir, o.mountS3.binary, o.proxy.endpoint),
            AWS_EC2_METADATA_DISABLED: 'true',
          }),
      MOUNTFLEET_RUN_DIR: runDir,
      // Each played instance is a machine of its own: its metrics relay must not take another's port.
      MOUNTFLEET_METRICS_RELAY: 'http://127.0.0.1:0',
      MOUNTFLEET_SYSTEM_ROOT: systemRootOf(o.workDir, instance.zoneId),
      MOUNT_S3_STANDIN_BUCKETS: o.bucketsDir,
    },
  });
  const played = new PlayedInstance(instance, runDir, child);
  // The mount namespace, and every mount in it, goes away with the last process in it.
  o.onCleanup(`stop the played instance in ${instance.zoneId}`, () => played.stop());
  return played;
}

/** One zone's outage while its instance holds a file open, then the zone's return. */
async function outage(
  o: MountsOptions,
  played: PlayedInstance,
  ready: Event,
  others: readonly PlayedInstance[],
): Promise<ZoneResult> {
  const zoneId = played.instance.zoneId;
  const expressBucket = o.agentConfig.expressCache!.buckets[zoneId];
  o.proxy.resetStats();
  const rule = o.proxy.addRule({
    service: 's3',
    match: (r) => r.path === `/${expressBucket}` || r.path.startsWith(`/${expressBucket}/`),
    fault: { kind: 'blackhole' },
  });
  const darkAt = Date.now();
  played.send('dark');
  await played.next('switched');
  const failoverSeconds = (Date.now() - darkAt) / 1000;
  const otherZoneKeptCache = others.length ? others.every((p) => p.active() === 'xz') : null;
  const held = await played.next('held-ok');
  const blackholedRequests = o.proxy.requests().filter((r) => r.outcome === 'blackhole').length;
  o.proxy.removeRule(rule);
  const lightAt = Date.now();
  played.send('light');
  await played.next('back');
  const recoverySeconds = (Date.now() - lightAt) / 1000;
  const restarted = await played.next('restarted');
  const s3Counted = played.s3Counted();
  const done = await played.next('done');
  return {
    zoneId,
    instanceId: played.instance.instanceId,
    bucket: o.agentConfig.mounts[0].bucket,
    expressBucket,
    heldOnExpress: ready.heldOnExpress === true,
    heldBytesRead: held.bytes as number,
    heldBytesSame: held.same === true,
    failoverSeconds,
    recoverySeconds,
    restartSeconds: (restarted.ms as number) / 1000,
    otherZoneKeptCache,
    blackholedRequests,
    ...(s3Counted ? { s3Counted } : {}),
    agentExit: done.agentExit as number | null,
    leftMounted: done.leftMounted as number,
  };
}

/**
 * Starts one played instance per zone, then plays each zone's outage in turn while the other zones'
 * instances keep theirs: the report's "Mounts" and "Express cache outage" facts.
 */
export async function playZoneOutages(o: MountsOptions): Promise<ZoneResult[]> {
  const played = o.instances.map((i) => start(o, i));
  const ready = await Promise.all(played.map((p) => p.next('ready')));
  const results: ZoneResult[] = [];
  for (const [n, p] of played.entries()) {
    o.log(`${p.instance.zoneId}: ${p.instance.instanceId} holds a file open; black-holing its Express cache`);
    results.push(await outage(o, p, ready[n], played.slice(n + 1)));
    await p.exited;
  }
  return results;
}
