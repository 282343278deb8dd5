/**
 * S3 request counts of the agent's mount that serves a path, for `bench train` (per epoch) and `warm`: the
 * totals the agent's metrics relay adds up from Mountpoint's own OTLP exports (state.json, as
 * `status --json` shows them). Mountpoint exports every OTLP_EXPORT_INTERVAL_SECONDS and only when
 * something happened, so a reading first makes something happen that needs no S3 request (a statfs of
 * the path, which Mountpoint answers itself and counts as a FUSE request) and waits for the export that
 * carries it: every request that finished before the reading is then in the totals.
 */
import { statfs } from 'node:fs/promises';
import { resolve, sep } from 'node:path';
import { MountfleetError, PollTimeout, pollUntil, systemClock, type Clock, type PollResult } from '../common';
import { OTLP_EXPORT_INTERVAL_SECONDS } from '../contract';
import type { ProcessMetrics } from './mountpoint-counters';
import { agentProcessStatus, readState, type AgentState, type MountState } from './agent-state';

/** S3 requests over some span of time, from whoever counted them (the agent's Mountpoint metrics, a proxy). */
export interface S3Count {
  readonly requests: number;
  /** Per operation (`GetObject`, `HeadObject`, `ListObjectsV2`, …), when the counter knows. */
  readonly byOperation?: Readonly<Record<string, number>>;
  /** Requests that failed, when the counter knows. */
  readonly errors?: number;
  /** Reads Mountpoint served from its cache (`fuse.cache_hit`), when the counter knows. */
  readonly cacheHits?: number;
}

/** What happened between two readings of a counter. */
export function s3CountBetween(before: S3Count, after: S3Count): S3Count {
  const diff = (a?: number, b?: number) => (a === undefined || b === undefined ? undefined : b - a);
  const byOperation =
    before.byOperation && after.byOperation
      ? Object.fromEntries(
          Object.entries(after.byOperation)
            .map(([op, n]) => [op, n - (before.byOperation![op] ?? 0)] as const)
            .filter(([, n]) => n !== 0),
        )
      : undefined;
  const errors = diff(before.errors, after.errors);
  const cacheHits = diff(before.cacheHits, after.cacheHits);
  return {
    requests: after.requests - before.requests,
    ...(byOperation ? { byOperation } : {}),
    ...(errors !== undefined ? { errors } : {}),
    ...(cacheHits !== undefined ? { cacheHits } : {}),
  };
}

/** The S3 counts of a mount: its processes' totals added up. */
export function mountS3Count(processes: readonly ProcessMetrics[]): S3Count {
  const byOperation: Record<string, number> = {};
  for (const m of processes)
    for (const [op, n] of Object.entries(m.s3Requests)) byOperation[op] = (byOperation[op] ?? 0) + n;
  return {
    requests: Object.values(byOperation).reduce((a, b) => a + b, 0),
    byOperation,
    errors: processes.reduce((a, m) => a + m.s3RequestErrors, 0),
    cacheHits: processes.reduce((a, m) => a + m.cacheHits, 0),
  };
}

/** How long a reading waits for Mountpoint's next export: two intervals and some slack. */
const EXPORT_WAIT_MS = (2 * OTLP_EXPORT_INTERVAL_SECONDS + 5) * 1000;

/** A reading cannot be taken: the MountfleetError's message says why, for the user. */
const readingUnavailable = (why: string) => new MountfleetError(why);

const metricsOf = (m: MountState) => m.processes.map((p) => p.metrics);

/** The agent's mount that holds `path` (the mount's own path, or a directory under it). */
function mountHolding(state: AgentState, path: string): MountState | undefined {
  return state.mounts
    .filter((m) => path === m.path || path.startsWith(m.path.endsWith(sep) ? m.path : m.path + sep))
    .sort((a, b) => b.path.length - a.path.length)[0];
}

/** Reads the counts of the agent's mount that serves one path. */
export class AgentMountMetrics {
  /** The agent's counting start at the first reading: a later one with another means the agent restarted. */
  private since?: string;

  private constructor(
    private readonly path: string,
    /** The agent's mount (its user path) the counts are of. */
    readonly mountPoint: string,
    private readonly runDir: string,
    private readonly clock: Clock,
  ) {}

  /** The mount's counter, or a MountfleetError saying why there is none. */
  static find(path: string, runDir: string, clock: Clock = systemClock): AgentMountMetrics {
    const full = resolve(path);
    const state = readState(runDir);
    if (!state || !['running', 'unverified'].includes(agentProcessStatus(state)))
      throw readingUnavailable(`no mountfleet agent is running (run dir ${runDir})`);
    const mount = mountHolding(state, full);
    if (!mount)
      throw readingUnavailable(
        `${full} is not under any of the agent's mounts (${state.mounts.map((m) => m.path).join(', ') || 'none'})`,
      );
    if (state.metricsRelay && 'unavailable' in state.metricsRelay)
      throw readingUnavailable(
        `the agent's metrics relay is not listening: ${state.metricsRelay.unavailable}`,
      );
    if (metricsOf(mount).every((m) => m === undefined))
      throw readingUnavailable(
        `the agent does not count ${mount.path}'s metrics (an agent older than its relay?)`,
      );
    return new AgentMountMetrics(full, mount.path, runDir, clock);
  }

  /** The mount's totals once every request finished so far is in them (see the file comment). */
  async read(signal?: AbortSignal): Promise<S3Count> {
    const statfsBefore = this.activeStatfs();
    const probedAt = Date.now();
    await statfs(this.path);
    const exported = async (): Promise<PollResult<true>> => {
      const active = this.active();
      const statfsNow = active.metrics?.fuseRequests?.statfs ?? 0;
      const lastPoint = active.metrics?.lastPointAt ? Date.parse(active.metrics.lastPointAt) : 0;
      return statfsNow > statfsBefore && lastPoint >= probedAt
        ? { value: true }
        : { state: 'waiting for the export' };
    };
    try {
      await pollUntil(exported, {
        clock: this.clock,
        signal,
        timeoutMs: EXPORT_WAIT_MS,
        initialPollMs: 100,
        maxPollMs: 100,
        random: () => 1, // a fixed 100 ms between looks, no jitter
      });
    } catch (err) {
      if (err instanceof PollTimeout)
        throw readingUnavailable(
          `Mountpoint at ${this.mountPoint} sent the agent no metrics within ${EXPORT_WAIT_MS / 1000} s of a statfs (it exports every ${OTLP_EXPORT_INTERVAL_SECONDS} s to the relay in its --otlp-endpoint)`,
        );
      if (signal?.aborted) throw readingUnavailable('stopped');
      throw err;
    }
    return this.totals();
  }

  private mount(): MountState {
    const mount = readState(this.runDir)?.mounts.find((m) => m.path === this.mountPoint);
    if (!mount) throw readingUnavailable(`the agent no longer serves ${this.mountPoint}`);
    return mount;
  }

  /** The process new opens (and the statfs) reach. */
  private active() {
    const mount = this.mount();
    return mount.processes.find((p) => p.role === mount.active) ?? mount.processes[0];
  }

  private activeStatfs(): number {
    return this.active().metrics?.fuseRequests?.statfs ?? 0;
  }

  /** Every process of the mount together. */
  private totals(): S3Count {
    const all = metricsOf(this.mount()).filter((m): m is ProcessMetrics => m !== undefined);
    const since = all.map((m) => m.since).join(' ');
    this.since ??= since;
    if (since !== this.since)
      throw readingUnavailable(`the agent restarted (its counts start again at ${all[0]?.since})`);
    return mountS3Count(all);
  }
}

/** What a command says about its S3 counts: where they come from, or why there are none. */
export type S3CountSource = { readonly agentMount: string } | { readonly unavailable: string };

/**
 * A reader of the agent's counts for `path` for a command that keeps going without them: when there is
 * none, or a reading fails (no agent, an unreadable state file, no export in time), `unavailable` is told
 * why (once) and readings return undefined. A stop (`signal`) ends a reading quietly.
 */
export function agentS3Counter(
  path: string,
  runDir: string,
  unavailable: (reason: string) => void,
  signal?: AbortSignal,
): { readonly source: S3CountSource; readonly read: () => Promise<S3Count | undefined> } {
  let metrics: AgentMountMetrics | undefined;
  let source: S3CountSource;
  const give = (e: unknown) => {
    metrics = undefined;
    if (signal?.aborted) return undefined;
    source = { unavailable: (e as Error).message };
    unavailable((e as Error).message);
    return undefined;
  };
  try {
    metrics = AgentMountMetrics.find(path, runDir);
    source = { agentMount: metrics.mountPoint };
  } catch (e) {
    give(e);
  }
  return {
    get source() {
      return source;
    },
    read: async () => (metrics ? metrics.read(signal).catch(give) : undefined),
  };
}
