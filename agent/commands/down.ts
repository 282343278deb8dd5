/** `mountfleet down`: asks the running agent to unmount everything and waits until it has. */
import { parseWholeNumber } from '../args';
import type { RegisterCommand } from '../command';
import { systemClock } from '../../core/common';
import { processAlive } from '../../core/system';
import { agentPaths } from '../../core/contract';
import { agentProcessStatus, readState, statePath, StateFileError } from '../../core/agent';

export const register: RegisterCommand = (program, ctx) => {
  program
    .command('down')
    .description('stop the mounts cleanly (signals the running agent and waits for it)')
    .option('--timeout <seconds>', 'how long to wait', '60')
    .action(async (opts: { timeout: string }) => {
      const timeoutSeconds = parseWholeNumber('--timeout', opts.timeout, { min: 1, max: 3600 });
      const runDir = agentPaths().runDir;
      let state;
      try {
        state = readState(runDir);
      } catch (err) {
        if (!(err instanceof StateFileError)) throw err;
        process.stderr.write(`mountfleet down: ${err.message}\n`);
        ctx.exitCode = 1;
        return;
      }
      const status = state ? agentProcessStatus(state) : 'gone';
      if (!state || status === 'gone') {
        process.stderr.write('agent not running: nothing to stop\n');
        return;
      }
      // Signalling a pid we cannot tie to the agent could stop an unrelated process that reused it.
      if (status === 'reused') {
        process.stderr.write(
          `agent not running: pid ${state.pid} in ${statePath(runDir)} now belongs to another process ` +
            '(the pid was reused): nothing signalled; the stale state file can be deleted\n',
        );
        return;
      }
      if (status === 'unverified') {
        process.stderr.write(
          `mountfleet down: pid ${state.pid} in ${statePath(runDir)} cannot be verified as the agent ` +
            '(the state file has no start time): nothing signalled; stop the agent with `systemctl stop` ' +
            'or by its pid after checking it\n',
        );
        ctx.exitCode = 1;
        return;
      }
      process.kill(state.pid, 'SIGTERM');
      const deadline = systemClock.now() + timeoutSeconds * 1000;
      while (processAlive(state.pid) && systemClock.now() < deadline) await systemClock.sleep(100);
      if (processAlive(state.pid)) {
        process.stderr.write(`agent pid ${state.pid} still running after ${timeoutSeconds} s\n`);
        ctx.exitCode = 1;
        return;
      }
      process.stderr.write(
        `stopped agent pid ${state.pid}: ${state.mounts.map((m) => m.path).join(', ')} unmounted\n`,
      );
    });
};
