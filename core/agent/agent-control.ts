/**
 * What `mountfleet status` and `mountfleet down` ask of the agent that runs here, through the state file it
 * keeps (agent-state.ts): whether it runs, and stopping it. A pid is signalled only when the state file ties
 * it to the agent (its start time), never a process that reused the pid.
 */
import { pollUntil, PollTimeout, systemClock, type Clock } from '../common';
import { processAlive } from '../system';
import { agentProcessStatus, readState, statePath, type AgentState } from './agent-state';

/** `status --json`: whether the agent runs, and its state file when there is one. */
interface AgentStatus {
  readonly running: boolean;
  readonly state?: AgentState;
}

/** Reads the state file (a MountfleetError, exit 1, when it is unreadable). */
export function agentStatus(runDir: string): AgentStatus {
  const state = readState(runDir);
  // A state file without a start time (older agent) cannot be checked for pid reuse: trust the pid.
  const running = state !== undefined && ['running', 'unverified'].includes(agentProcessStatus(state));
  return { running, ...(state ? { state } : {}) };
}

/** How `down` went: nothing to stop, a pid it would not signal (and why), or the agent stopped or not. */
export type AgentStopOutcome =
  | { readonly outcome: 'not-running' }
  | { readonly outcome: 'pid-reused' | 'unverified'; readonly pid: number; readonly stateFile: string }
  | { readonly outcome: 'still-running'; readonly pid: number }
  | { readonly outcome: 'stopped'; readonly pid: number; readonly mounts: readonly string[] };

/** Sends the agent SIGTERM (it unmounts everything) and waits up to `timeoutSeconds` for it to exit. */
export async function stopAgent(
  runDir: string,
  timeoutSeconds: number,
  clock: Clock = systemClock,
): Promise<AgentStopOutcome> {
  const state = readState(runDir);
  const status = state ? agentProcessStatus(state) : 'gone';
  if (!state || status === 'gone') return { outcome: 'not-running' };
  // Signalling a pid we cannot tie to the agent could stop an unrelated process that reused it.
  if (status === 'reused' || status === 'unverified') {
    return {
      outcome: status === 'reused' ? 'pid-reused' : 'unverified',
      pid: state.pid,
      stateFile: statePath(runDir),
    };
  }
  process.kill(state.pid, 'SIGTERM');
  try {
    await pollUntil(async () => (processAlive(state.pid) ? { state: 'running' } : { value: true }), {
      clock,
      timeoutMs: timeoutSeconds * 1000,
      initialPollMs: 100,
      maxPollMs: 100,
      random: () => 1, // a fixed 100 ms between looks, no jitter
    });
  } catch (err) {
    if (err instanceof PollTimeout) return { outcome: 'still-running', pid: state.pid };
    throw err;
  }
  return { outcome: 'stopped', pid: state.pid, mounts: state.mounts.map((m) => m.path) };
}
