/** `mountfleet down`: asks the running agent to unmount everything and waits until it has. */
import { stopAgent, type AgentStopOutcome } from '../../core/agent';
import { EXIT_STATUS } from '../../core/common';
import { agentPaths } from '../../core/contract';
import { parseWholeNumber } from '../args';
import type { RegisterCommand } from '../command';

export const register: RegisterCommand = (program, ctx) => {
  program
    .command('down')
    .description('stop the mounts cleanly (signals the running agent and waits for it)')
    .option('--timeout <seconds>', 'how long to wait', '60')
    .action(async (flags: { timeout: string }) => {
      const timeoutSeconds = parseWholeNumber('--timeout', flags.timeout, { min: 1, max: 3600 });
      const stopped = await stopAgent(agentPaths().runDir, timeoutSeconds);
      process.stderr.write(`${outcomeLine(stopped, timeoutSeconds)}\n`);
      if (stopped.outcome === 'unverified' || stopped.outcome === 'still-running')
        ctx.exitCode = EXIT_STATUS.failure;
    });
};

function outcomeLine(stopped: AgentStopOutcome, timeoutSeconds: number): string {
  switch (stopped.outcome) {
    case 'not-running':
      return 'agent not running: nothing to stop';
    case 'pid-reused':
      return (
        `agent not running: pid ${stopped.pid} in ${stopped.stateFile} now belongs to another process ` +
        '(the pid was reused): nothing signalled; the stale state file can be deleted'
      );
    case 'unverified':
      return (
        `mountfleet down: pid ${stopped.pid} in ${stopped.stateFile} cannot be verified as the agent ` +
        '(the state file has no start time): nothing signalled; stop the agent with `systemctl stop` ' +
        'or by its pid after checking it'
      );
    case 'still-running':
      return `agent pid ${stopped.pid} still running after ${timeoutSeconds} s`;
    case 'stopped':
      return `stopped agent pid ${stopped.pid}: ${stopped.mounts.join(', ')} unmounted`;
  }
}
