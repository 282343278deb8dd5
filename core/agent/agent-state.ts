/** The running agent's state file (`<run dir>/state.json`), read by `status` and `down`. */
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { MountfleetError } from '../common';
import { processAlive, processStartTime } from '../system';
import type { ProcessMetrics } from './mountpoint-counters';
import { type ProcessRole } from '../tuner';

interface ProcessState {
  readonly role: ProcessRole;
  readonly mountPoint: string;
  readonly unit?: string;
  readonly pid?: number;
  readonly running: boolean;
  readonly restarts: number;
  /** The process's own metrics, added up by the agent's relay; absent when the relay is not in use. */
  readonly metrics?: ProcessMetrics;
}

export interface MountState {
  readonly name: string;
  readonly path: string;
  readonly bucket: string;
  readonly prefix: string;
  readonly failover: boolean;
  /** The process new opens reach. */
  readonly active: ProcessRole;
  readonly processes: readonly ProcessState[];
  readonly switches: { readonly toDirect: number; readonly toExpress: number };
  readonly lastSwitch?: {
    readonly at: string;
    readonly to: ProcessRole;
    readonly detectionMs: number;
    readonly switchMs: number;
  };
}

export interface AgentState {
  readonly version: 1;
  readonly pid: number;
  /**
   * When the agent process started (/proc/PID/stat field 22, clock ticks since boot): with the pid it
   * names one process, so `down` never signals a later process that reused the pid.
   */
  readonly pidStartTime?: number;
  readonly mode: 'systemd' | 'supervise';
  readonly startedAt: string;
  readonly instanceType: string;
  readonly availabilityZoneId: string;
  readonly expressCache?: {
    readonly bucket: string;
    readonly healthy: boolean;
    readonly lastProbe?: {
      readonly at: string;
      readonly healthy: boolean;
      readonly detail: string;
      readonly latencyMs: number;
    };
    readonly lastChangeAt?: string;
  };
  /** The agent's metrics relay: where it listens, or why it does not (then no process has `metrics`). */
  readonly metricsRelay?: { readonly endpoint: string } | { readonly unavailable: string };
  readonly mounts: readonly MountState[];
  /**
   * On a Batch host (agent.json `containers`): whether the ready file is there (every mount live, no switch under
   * way) and how many job containers the guard ended for holding a stale bind of a fleet mount.
   */
  readonly containers?: { readonly ready: boolean; readonly ended: number };
}

export const statePath = (runDir: string) => join(runDir, 'state.json');

export function writeState(runDir: string, state: AgentState): void {
  const file = statePath(runDir);
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(`${file}.tmp`, `${JSON.stringify(state, null, 2)}\n`);
  renameSync(`${file}.tmp`, file); // readers never see half a file
}

/**
 * The state file, or undefined when there is none. Throws a MountfleetError (exit 1) naming the file when it is
 * not what `writeState` writes (invalid JSON, a byte-order mark, a pid that cannot be the agent's).
 */
export function readState(runDir: string): AgentState | undefined {
  const file = statePath(runDir);
  if (!existsSync(file)) return undefined;
  const invalid = (problem: string) =>
    new MountfleetError(
      `agent state file ${file} ${problem}: it is written only by \`mountfleet up\`; if no agent is running, delete it (\`mountfleet up\` writes a new one)`,
    );
  const text = readFileSync(file, 'utf8');
  if (text.startsWith('\uFEFF')) throw invalid('starts with a byte-order mark (edited by hand?)');
  let state: unknown;
  try {
    state = JSON.parse(text);
  } catch (e) {
    throw invalid(`is not valid JSON (${(e as Error).message})`);
  }
  const { pid, pidStartTime, mounts } = (state ?? {}) as Partial<Record<keyof AgentState, unknown>>;
  // 0 and -1 signal process groups and every process; 1 is init.
  if (!Number.isSafeInteger(pid) || (pid as number) <= 1) {
    throw invalid(`has pid ${JSON.stringify(pid)}, which cannot be the agent's (a whole number above 1)`);
  }
  if (pidStartTime !== undefined && !Number.isSafeInteger(pidStartTime)) {
    throw invalid(`has pidStartTime ${JSON.stringify(pidStartTime)} (a whole number of clock ticks)`);
  }
  if (!Array.isArray(mounts)) throw invalid('has no mounts list');
  return state as AgentState;
}

/**
 * Whether the state file's agent is still running: `running` only when its pid is alive and started at
 * the recorded time; `reused` when the pid now belongs to another process (never signal it); `unverified`
 * when the state file predates start times.
 */
export function agentProcessStatus(state: AgentState): 'running' | 'gone' | 'reused' | 'unverified' {
  if (!processAlive(state.pid)) return 'gone';
  if (state.pidStartTime === undefined) return 'unverified';
  return processStartTime(state.pid) === state.pidStartTime ? 'running' : 'reused';
}
