/** The running agent's state file (`<run dir>/state.json`), read by `status` and `down`. */
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { ProcessRole } from './tuning';

export interface ProcessState {
  readonly role: ProcessRole;
  readonly mountPoint: string;
  readonly unit?: string;
  readonly pid?: number;
  readonly running: boolean;
  readonly restarts: number;
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
  readonly mounts: readonly MountState[];
}

export const statePath = (runDir: string) => join(runDir, 'state.json');

export function writeState(runDir: string, state: AgentState): void {
  const file = statePath(runDir);
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(`${file}.tmp`, `${JSON.stringify(state, null, 2)}\n`);
  renameSync(`${file}.tmp`, file); // readers never see half a file
}

export function readState(runDir: string): AgentState | undefined {
  const file = statePath(runDir);
  if (!existsSync(file)) return undefined;
  return JSON.parse(readFileSync(file, 'utf8')) as AgentState;
}

/** True when a process with this pid exists (signal 0 checks without signalling). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}
