/**
 * `mountfleet up`: install the pinned Mountpoint, tune it for this instance, mount every configured
 * bucket (systemd units, or `--supervise` to run them itself) and watch the Express cache zone until
 * SIGTERM/SIGINT, which unmounts everything. With a termination lifecycle hook in agent.json it also
 * watches for Auto Scaling terminating the instance: it then waits for scratch runs, unmounts and
 * completes the hook. The work lives in core/agent (runAgent).
 */
import { EXIT_STATUS } from '../../core/common';
import { runAgent } from '../../core/agent';
import type { RegisterCommand } from '../command';
import { stopOnSignalsOnce } from '../stop-signals';

interface UpFlags {
  config?: string;
  supervise?: boolean;
  install: boolean;
}

export const register: RegisterCommand = (program, ctx) => {
  program
    .command('up')
    .description('install, tune and mount Mountpoint for this instance, then watch the Express cache zone')
    .option('--config <file>', 'agent config (default: MOUNTFLEET_CONFIG or /etc/mountfleet/agent.json)')
    .option('--supervise', 'run and supervise the mounts in this process instead of systemd units')
    .option('--no-install', 'use the Mountpoint at MOUNTFLEET_MOUNT_S3 instead of installing the pinned one')
    .action(async (flags: UpFlags) => {
      const outcome = await runAgent(
        { configFile: flags.config, supervise: flags.supervise === true, install: flags.install },
        { stopOn: stopOnSignalsOnce },
      );
      if (outcome === 'start-failed') ctx.exitCode = EXIT_STATUS.failure;
    });
};
