/** `mountfleet down`: asks the running agent to unmount everything and waits until it has. */
import { parseWholeNumber } from '../args';
import type { RegisterCommand } from '../cli';
import { systemClock } from '../../core/clock';
import { agentPaths } from '../../core/mountpoint/paths';
import { processAlive, readState } from '../../core/mountpoint/state';

export const register: RegisterCommand = (program, ctx) => {
  program
    .command('down')
    .description('stop the mounts cleanly (signals the running agent and waits for it)')
    .option('--timeout <seconds>', 'how long to wait', '60')
    .action(async (opts: { timeout: string }) => {
      const timeoutSeconds = parseWholeNumber('--timeout', opts.timeout, { min: 1, max: 3600 });
      const state = readState(agentPaths().runDir);
      if (!state || !processAlive(state.pid)) {
        process.stderr.write('agent not running: nothing to stop\n');
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
