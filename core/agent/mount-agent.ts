/**
 * The agent behind `mountfleet up`: gathers facts, installs and tunes Mountpoint, starts one process per
 * mount (two for mounts with the Express cache: the cached primary and a cache-less standby), points
 * each user path at the right one, and keeps watching the zone's Express bucket until told to stop.
 */
import type { S3Client } from '@aws-sdk/client-s3';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { systemClock, type Clock } from '../common';
import { abortFuseConnection, topMount, processAlive, processStartTime } from '../system';
import { cacheUsesExpress, type AgentConfig, OTLP_ENDPOINT } from '../contract';
import type { InstanceIdentity, HostFacts } from '../instance';
import type { MetricPoint } from './otlp-reader';
import { prepareCacheVolume } from './cache-volume-setup';
import { execCommand, type CommandRunner } from './command-runner';
import { probeExpressBucket, type ProbeResult } from './express-probe';
import {
  type InstanceTypeFacts,
  planMounts,
  type MountPlan,
  type ProcessPlan,
  type ProcessRole,
  type TuningPlan,
} from '../tuner';
import { MetricsRelay } from './metrics-relay';
import { MountpointCounters } from './mountpoint-counters';
import { statePath, writeState, type AgentState, type MountState } from './agent-state';
import { appendMetric } from './switch-metric';
import { jsonLines, type EventLog } from './event-log';
import { PathSwitcher } from './path-switcher';
import { renderCloudWatchAgentConfig, renderMountUnit, unitName } from './systemd-units';
import { Supervisor } from './mountpoint-supervisor';
import { ExpressWatchdog, type WatchdogEvidence } from './express-watchdog';
import { BatchHostWatch, type BatchHostSnapshot } from './batch-host-watch';

export interface AgentOptions {
  readonly config: AgentConfig;
  readonly identity: InstanceIdentity;
  readonly instance: InstanceTypeFacts;
  readonly host: HostFacts;
  readonly mountS3: string;
  readonly mode: 'systemd' | 'supervise';
  readonly runDir: string;
  readonly unitDir: string;
  readonly cloudWatchAgentConfigFile: string;
  /** EMF lines (switch counts) for the CloudWatch agent to ship. */
  readonly metricsLogFile: string;
  /** Where the metrics relay listens (METRICS_RELAY_ENDPOINT; port 0: any free port). */
  readonly metricsRelay: string;
  /** Called at most once per agent: the one client serves the pre-mount probe and every watchdog probe. */
  readonly expressClient: () => S3Client;
  readonly run?: CommandRunner;
  readonly clock?: Clock;
  /** One structured event per call (JSON lines on stderr by default). */
  readonly log?: EventLog;
}

interface MountRuntime {
  readonly plan: MountPlan;
  readonly switcher?: PathSwitcher;
  readonly running: Set<ProcessRole>;
  switches: { toDirect: number; toExpress: number };
  lastSwitch?: MountState['lastSwitch'];
}

export class MountAgent {
  readonly plan: TuningPlan;
  private readonly run: CommandRunner;
  private readonly clock: Clock;
  private readonly log: EventLog;
  private readonly supervisor?: Supervisor;
  private readonly mounts: MountRuntime[];
  private readonly startedAt: string;
  private watchdog?: ExpressWatchdog;
  private lastProbe?: { at: string; result: ProbeResult };
  private lastChangeAt?: string;
  private readonly expressBucket?: string;
  private readonly expressClient?: S3Client;
  /** Each process's metric totals (key `<mount name>/<role>`), while the relay listens. */
  private readonly counters = new Map<string, MountpointCounters>();
  /** Relay paths that are no process of this agent's (logged once each). */
  private readonly unknownProcesses = new Set<string>();
  /** On a Batch host (agent.json `containers`): the ready file, the job starter and the container guard. */
  private readonly batchHost?: BatchHostWatch;
  /** User-path switches under way (Express failover, rebinds after a restart): no job may start meanwhile. */
  private switching = 0;
  /** start() is done: sweeps before it would only find mounts still coming up. */
  private started = false;

  /**
   * Starts the metrics relay (or notes why not), creates the Express client when a mount uses the cache
   * and probes the zone once, then plans.
   */
  static async create(o: AgentOptions): Promise<MountAgent> {
    // Set before any process starts, so before the relay can receive an export.
    let agent: MountAgent | undefined;
    const relay = await startRelay(o, (key, points) => agent?.recordMetrics(key, points));
    const bucket = o.config.expressCache?.buckets[o.identity.availabilityZoneId];
    const wanted = o.config.mounts.some((m) => cacheUsesExpress(m.cache));
    try {
      let express: { readonly probe: ProbeResult; readonly client: S3Client } | undefined;
      if (bucket && wanted) {
        // One client for the agent's life: a new one per probe would redo TLS and, on S3 Express,
        // CreateSession inside every probe's time budget.
        const client = o.expressClient();
        const probe = await probeExpressBucket(
          client,
          bucket,
          o.config.expressCache!.probeTimeoutMs,
          o.clock,
        );
        express = { probe, client };
      }
      agent = new MountAgent(o, relay, express);
      return agent;
    } catch (e) {
      // No agent to stop it later: a listening relay would keep the process alive.
      await relay.running?.stop();
      throw e;
    }
  }

  private constructor(
    private readonly o: AgentOptions,
    private readonly relay: RelayOutcome,
    express?: { readonly probe: ProbeResult; readonly client: S3Client },
  ) {
    const initialProbe = express?.probe;
    this.expressClient = express?.client;
    this.run = o.run ?? execCommand;
    this.clock = o.clock ?? systemClock;
    this.log = o.log ?? jsonLines;
    this.startedAt = new Date(this.clock.now()).toISOString();
    this.plan = planMounts({
      config: o.config,
      instance: o.instance,
      memory: o.host.memory,
      cacheVolume: o.host.cacheVolume,
      azId: o.identity.availabilityZoneId,
      interfaces: o.host.interfaces,
      runDir: o.runDir,
      metricsRelay: relay.running?.endpoint ?? null,
      ...(initialProbe ? { expressProbe: initialProbe } : {}),
    });
    if (relay.running) {
      for (const m of this.plan.mounts)
        for (const p of m.processes)
          this.counters.set(`${m.name}/${p.role}`, new MountpointCounters(this.startedAt));
    }
    this.expressBucket = this.plan.mounts.find((m) => m.failover)?.expressBucket;
    if (initialProbe) this.lastProbe = { at: this.startedAt, result: initialProbe };
    if (o.mode === 'supervise') {
      this.supervisor = new Supervisor(
        o.mountS3,
        (e) => {
          this.log({ event: `process-${e.type}`, ...e });
          if (e.type === 'ready' || e.type === 'exited') {
            this.saveState();
            // A process that died leaves every container bind of its mount dead: find them now, not in a second.
            if (this.started) void this.batchHost?.sweep();
          }
        },
        this.run,
        this.clock,
      );
    }
    this.mounts = this.plan.mounts.map((plan) => ({
      plan,
      ...(plan.failover ? { switcher: new PathSwitcher(plan.mount.path, this.run) } : {}),
      running: new Set<ProcessRole>(),
      switches: { toDirect: 0, toExpress: 0 },
    }));
    const containers = o.config.containers;
    if (containers) {
      this.batchHost = new BatchHostWatch({
        runDir: o.runDir,
        taskCgroup: containers.taskCgroup,
        ...(o.mode === 'systemd' ? { jobStarterUnit: containers.jobStarterUnit } : {}),
        instanceId: o.identity.instanceId,
        run: this.run,
        log: this.log,
        snapshot: () => this.batchHostSnapshot(),
        changed: () => this.saveState(),
      });
    }
  }

  /** Prepares the cache volume, starts every mount and points user paths; leaves them running. */
  async start(): Promise<void> {
    const { o } = this;
    await prepareCacheVolume(this.plan.cacheVolume, this.run);
    mkdirSync(dirname(o.cloudWatchAgentConfigFile), { recursive: true });
    writeFileSync(
      o.cloudWatchAgentConfigFile,
      renderCloudWatchAgentConfig({
        fleetId: o.config.fleetId,
        region: o.config.region,
        metricsLogFile: o.metricsLogFile,
      }),
    );
    let healthy = this.lastProbe?.result.healthy ?? false;
    if (this.expressBucket)
      this.log({ event: 'express-probe', bucket: this.expressBucket, ...this.lastProbe?.result });
    this.saveState();
    if (o.mode === 'systemd') await this.installUnits();
    for (const m of this.mounts) {
      for (const p of m.plan.processes) {
        if (p.role === 'xz' && !healthy) continue; // a mount with --cache-xz on a dark zone fails after 30 s
        try {
          await this.startProcess(m, p);
        } catch (e) {
          if (p.role !== 'xz') throw e;
          // Serve from the direct process and count the zone as down: the watchdog's next healthy
          // verdict starts the cached process again (onZoneChange), as after any outage.
          this.log({ event: 'xz-start-failed', mount: m.plan.mount.path, error: (e as Error).message });
          healthy = false;
        }
      }
      if (m.switcher) await this.point(m, m.running.has('xz') ? 'xz' : 'direct', undefined);
      this.log({ event: 'mounted', mount: m.plan.mount.path, active: this.active(m) });
    }
    this.started = true;
    await this.batchHost?.sweep();
    this.saveState();
    if (this.expressBucket && this.expressClient) {
      const bucket = this.expressBucket;
      const client = this.expressClient;
      this.watchdog = new ExpressWatchdog({
        probe: (cancel) =>
          probeExpressBucket(client, bucket, o.config.expressCache!.probeTimeoutMs, this.clock, cancel),
        intervalMs: o.config.expressCache!.probeIntervalMs,
        initiallyHealthy: healthy,
        clock: this.clock,
        onProbe: (result) => {
          this.lastProbe = { at: new Date(this.clock.now()).toISOString(), result };
        },
        onChange: (ok, evidence) => this.onZoneChange(ok, evidence),
      });
    }
  }

  /** Watches until the signal aborts, then unmounts everything. */
  async runUntil(signal: AbortSignal): Promise<void> {
    const watching = this.watchdog?.run(signal) ?? Promise.resolve();
    // Rebind a user path whose active process was restarted (its mount is new).
    const refreshing = (async () => {
      while (!signal.aborted) {
        await this.clock.sleep(1000, signal);
        for (const m of this.mounts) {
          if (signal.aborted) break;
          if (!m.switcher?.needsRefresh()) continue;
          const switcher = m.switcher;
          const rebound = await this.whileSwitching(() => switcher.refresh()).catch((e: Error) => {
            this.log({ event: 'rebind-failed', mount: m.plan.mount.path, error: e.message });
            return false;
          });
          if (rebound) {
            this.log({ event: 'rebound', mount: m.plan.mount.path, active: this.active(m) });
          }
        }
        if (!signal.aborted) await this.batchHost?.sweep();
      }
    })();
    await new Promise<void>((resolve) =>
      signal.aborted ? resolve() : signal.addEventListener('abort', () => resolve(), { once: true }),
    );
    // A zone change may be starting a process (up to Mountpoint's 30 s readiness wait): end that now.
    this.supervisor?.cancel();
    await Promise.all([watching, refreshing]);
    await this.stop();
  }

  async stop(): Promise<void> {
    const failed = (event: string, mount: string) => (e: Error) =>
      this.log({ event, mount, error: e.message });
    await this.batchHost?.stopping();
    for (const m of this.mounts)
      await m.switcher?.detachAll().catch(failed('detach-failed', m.plan.mount.path));
    if (this.supervisor) await this.supervisor.stopAll();
    else {
      for (const m of this.mounts) {
        for (const p of m.plan.processes)
          if (m.running.has(p.role))
            await this.run('systemctl', ['stop', unitName(m.plan.name, p.role)]).catch(
              failed('unit-stop-failed', m.plan.mount.path),
            );
      }
    }
    await this.batchHost?.stopped();
    this.expressClient?.destroy();
    await this.relay.running?.stop();
    rmSync(statePath(this.o.runDir), { force: true });
    this.log({ event: 'stopped' });
  }

  private async startProcess(m: MountRuntime, p: ProcessPlan): Promise<void> {
    const key = `${m.plan.name}/${p.role}`;
    if (this.supervisor) {
      await this.supervisor.start({
        key,
        mountPoint: p.mountPoint,
        args: p.args,
        environment: p.environment,
        ...(p.options.cacheDirectory ? { cacheDirectory: p.options.cacheDirectory } : {}),
      });
    } else {
      // Started, never enabled: at boot the agent's own unit starts them after its pre-mount probe.
      await this.run('systemctl', ['start', unitName(m.plan.name, p.role)]);
    }
    m.running.add(p.role);
  }

  /** Writes every process's unit, then reloads systemd once. */
  private async installUnits(): Promise<void> {
    mkdirSync(this.o.unitDir, { recursive: true });
    for (const m of this.mounts) {
      for (const p of m.plan.processes) {
        writeFileSync(
          join(this.o.unitDir, unitName(m.plan.name, p.role)),
          renderMountUnit({
            mountName: m.plan.name,
            process: p,
            mountS3: this.o.mountS3,
            description: `Mountpoint for s3://${m.plan.mount.bucket}/${m.plan.mount.prefix} (${p.role}) at ${p.mountPoint}`,
          }),
        );
      }
    }
    await this.run('systemctl', ['daemon-reload']);
  }

  private active(m: MountRuntime): ProcessRole {
    if (!m.switcher) return 'main';
    return m.switcher.active?.endsWith('/xz') ? 'xz' : 'direct';
  }

  private async point(
    m: MountRuntime,
    role: 'xz' | 'direct',
    evidence: WatchdogEvidence | undefined,
  ): Promise<void> {
    const target = m.plan.processes.find((p) => p.role === role)!;
    const from = m.switcher!.active ? this.active(m) : undefined;
    const started = this.clock.now();
    await this.whileSwitching(async () => {
      if (from !== role)
        await this.batchHost?.ready.leave(`switching ${m.plan.mount.path} to its ${role} process`);
      await m.switcher!.switchTo(target.mountPoint);
    });
    // Containers bound to the process new opens no longer reach are ended now, not in a second.
    if (this.started) void this.batchHost?.sweep();
    if (!from || from === role) return;
    const switchMs = this.clock.now() - started;
    const detectionMs = evidence ? evidence.decidedAt - evidence.firstSignAt : 0;
    if (role === 'direct') m.switches.toDirect++;
    else m.switches.toExpress++;
    m.lastSwitch = { at: new Date(this.clock.now()).toISOString(), to: role, detectionMs, switchMs };
    this.log({
      event: 'switch',
      mount: m.plan.mount.path,
      from,
      to: role,
      detectionMs,
      switchMs,
      evidence: evidence?.probes.map((p) => p.detail),
    });
    appendMetric(
      this.o.metricsLogFile,
      this.o.config.fleetId,
      m.plan.mount.path,
      role,
      detectionMs,
      switchMs,
      this.clock.now(),
    );
  }

  /** Runs a switch of a user path; sweeps meanwhile neither write the ready file nor start the job starter. */
  private async whileSwitching<T>(change: () => Promise<T>): Promise<T> {
    this.switching++;
    try {
      return await change();
    } finally {
      this.switching--;
    }
  }

  /** What the Batch host's sweep looks at: each mount's processes, the zone, switches under way. */
  private batchHostSnapshot(): BatchHostSnapshot {
    return {
      mounts: this.mounts.map((m) => ({
        path: m.plan.mount.path,
        active: this.active(m),
        processes: m.plan.processes.map((p) => ({
          key: `${m.plan.name}/${p.role}`,
          role: p.role,
          mountPoint: p.mountPoint,
          started: m.running.has(p.role),
        })),
      })),
      zoneDown: this.expressBucket !== undefined && !this.zoneHealthy(),
      switching: this.switching > 0,
    };
  }

  private zoneHealthy(): boolean {
    return this.watchdog?.healthy ?? this.lastProbe?.result.healthy ?? false;
  }

  private async onZoneChange(healthy: boolean, evidence: WatchdogEvidence): Promise<void> {
    this.lastChangeAt = new Date(this.clock.now()).toISOString();
    this.log({
      event: healthy ? 'express-zone-up' : 'express-zone-down',
      bucket: this.expressBucket,
      evidence: evidence.probes.map((p) => p.detail),
    });
    for (const m of this.mounts.filter((x) => x.switcher)) {
      try {
        if (!healthy) {
          await this.point(m, 'direct', evidence);
          if (this.batchHost) await this.retireExpressProcess(m);
          continue;
        }
        const xz = m.plan.processes.find((p) => p.role === 'xz')!;
        if (!m.running.has('xz')) await this.startProcess(m, xz);
        await this.point(m, 'xz', evidence);
      } catch (e) {
        // Stay where we are; the next change (or restart) tries again.
        this.log({ event: 'switch-failed', mount: m.plan.mount.path, error: (e as Error).message });
      }
    }
    this.saveState();
  }

  /**
   * On a Batch host, once new opens go to the standby: nothing but job containers reads through the Express-cached
   * process, and the guard ends those (a sweep, now, with the zone-down reason). Stopping the process then ends the
   * FUSE reads they were killed in (a killed process waits on a FUSE request until it is answered, and Mountpoint
   * would answer only when it gives up on the dark zone), so Batch sees the job end now and retries it. The zone's
   * return starts the process again (onZoneChange).
   */
  private async retireExpressProcess(m: MountRuntime): Promise<void> {
    if (!m.running.has('xz')) return;
    await this.batchHost!.sweep();
    const key = `${m.plan.name}/xz`;
    const xz = m.plan.processes.find((p) => p.role === 'xz')!;
    const device = topMount(xz.mountPoint)?.device;
    // The abort ends the reads at once; the stop alone would, but only once the process exits (up to its timeout).
    const aborted = device === undefined ? 'gone' : abortFuseConnection(device);
    this.log({ event: 'express-connection-aborted', mount: m.plan.mount.path, device, outcome: aborted });
    if (this.supervisor) await this.supervisor.stop(key);
    else await this.run('systemctl', ['stop', unitName(m.plan.name, 'xz')]);
    m.running.delete('xz');
    this.log({ event: 'express-process-stopped', mount: m.plan.mount.path, process: key });
  }

  /** One export of one process, from the relay: added to its totals, which the state file then shows. */
  private recordMetrics(processKey: string, points: readonly MetricPoint[]): void {
    const counters = this.counters.get(processKey);
    if (!counters) {
      // A process an earlier agent started with another config (its unit still running) exports every 10 s.
      // Any local process can post under any name, so at most MAX_UNKNOWN_PROCESSES names are remembered
      // (and logged); the exports of others are dropped without a word.
      if (this.unknownProcesses.has(processKey) || this.unknownProcesses.size >= MAX_UNKNOWN_PROCESSES)
        return;
      this.unknownProcesses.add(processKey);
      this.log({
        event: 'metrics-from-unknown-process',
        process: processKey,
        ...(this.unknownProcesses.size === MAX_UNKNOWN_PROCESSES
          ? { note: `the last of ${MAX_UNKNOWN_PROCESSES} unknown processes logged; further ones are not` }
          : {}),
      });
      return;
    }
    counters.record(points);
    this.saveState();
  }

  saveState(): void {
    const state: AgentState = {
      version: 1,
      pid: process.pid,
      pidStartTime: processStartTime(process.pid),
      mode: this.o.mode,
      startedAt: this.startedAt,
      instanceType: this.o.identity.instanceType,
      availabilityZoneId: this.o.identity.availabilityZoneId,
      ...(this.expressBucket
        ? {
            expressCache: {
              bucket: this.expressBucket,
              healthy: this.zoneHealthy(),
              ...(this.lastProbe
                ? { lastProbe: { at: this.lastProbe.at, ...pick(this.lastProbe.result) } }
                : {}),
              ...(this.lastChangeAt ? { lastChangeAt: this.lastChangeAt } : {}),
            },
          }
        : {}),
      metricsRelay: this.relay.running
        ? { endpoint: this.relay.running.endpoint }
        : { unavailable: this.relay.unavailable },
      mounts: this.mounts.map((m) => ({
        name: m.plan.name,
        path: m.plan.mount.path,
        bucket: m.plan.mount.bucket,
        prefix: m.plan.mount.prefix,
        failover: m.plan.failover,
        active: this.active(m),
        processes: m.plan.processes.map((p) => {
          const pid = this.supervisor?.pid(`${m.plan.name}/${p.role}`);
          const metrics = this.counters.get(`${m.plan.name}/${p.role}`);
          return {
            role: p.role,
            mountPoint: p.mountPoint,
            ...(this.supervisor ? {} : { unit: unitName(m.plan.name, p.role) }),
            ...(pid ? { pid } : {}),
            running:
              m.running.has(p.role) && Boolean(topMount(p.mountPoint)) && (pid ? processAlive(pid) : true),
            restarts: this.supervisor?.restarts(`${m.plan.name}/${p.role}`) ?? 0,
            ...(metrics ? { metrics: metrics.snapshot() } : {}),
          };
        }),
        switches: { ...m.switches },
        ...(m.lastSwitch ? { lastSwitch: m.lastSwitch } : {}),
      })),
      ...(this.batchHost
        ? { containers: { ready: this.batchHost.ready.isReady, ended: this.batchHost.ended } }
        : {}),
    };
    writeState(this.o.runDir, state);
  }
}

/** Unknown process keys (exports to the relay under a name this agent did not start) remembered and logged. */
const MAX_UNKNOWN_PROCESSES = 32;

/** The default event log: one JSON line per event on stderr. */
const pick = (r: ProbeResult) => ({ healthy: r.healthy, detail: r.detail, latencyMs: r.latencyMs });

/** The metrics relay, listening; or why it is not (the processes then export straight to the CloudWatch agent). */
type RelayOutcome =
  | { readonly running: MetricsRelay; readonly unavailable?: undefined }
  | { readonly running?: undefined; readonly unavailable: string };

async function startRelay(
  o: AgentOptions,
  onExport: (processKey: string, points: readonly MetricPoint[]) => void,
): Promise<RelayOutcome> {
  const log = o.log ?? jsonLines;
  try {
    const running = await MetricsRelay.start({
      listen: o.metricsRelay,
      upstream: OTLP_ENDPOINT,
      onExport,
      log,
    });
    log({ event: 'metrics-relay', endpoint: running.endpoint, upstream: OTLP_ENDPOINT });
    return { running };
  } catch (e) {
    const unavailable = `cannot listen on ${o.metricsRelay}: ${(e as Error).message}`;
    log({
      event: 'metrics-relay-unavailable',
      reason: unavailable,
      effect: `Mountpoint exports straight to the CloudWatch agent at ${OTLP_ENDPOINT}; no per-mount counts in status`,
    });
    return { unavailable };
  }
}
