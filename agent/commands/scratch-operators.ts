/** `mountfleet scratch list` and `scratch delete`: the fleet's scratch file systems, for operators. */
import type { Command } from 'commander';
import { deleteScratch, listScratch, scratchListTable } from '../../core/scratch';
import { profileOption, regionOption, resolveAws, type AwsFlags } from '../aws-options';
import type { RegisterCommand } from '../command';
import { printJson } from '../output';
import { say } from './scratch-output';

interface OperatorFlags extends AwsFlags {
  fleet?: string;
  config?: string;
  json?: boolean;
  force?: boolean;
}

/** The flags `scratch list` and `scratch delete` share. */
function withOperatorOptions(command: Command): Command {
  return command
    .option('--fleet <id>', 'fleet id (default: agent.json)')
    .option(
      '--config <file>',
      'agent config (default: MOUNTFLEET_CONFIG, else /etc/mountfleet/agent.json if present)',
    )
    .option('--json', 'print one JSON document on stdout')
    .addOption(regionOption())
    .addOption(profileOption());
}

async function list(flags: OperatorFlags): Promise<number> {
  const request = { fleet: flags.fleet, configPath: flags.config };
  const { fleetId, fileSystems } = await listScratch(request, (region) => resolveAws(flags, region));
  if (flags.json) printJson({ fleetId, fileSystems });
  else if (fileSystems.length === 0) process.stderr.write(`no scratch file systems in fleet ${fleetId}\n`);
  // The table is the result: stdout, like `--json`.
  else process.stdout.write(scratchListTable(fileSystems));
  return 0;
}

async function remove(fileSystemId: string, flags: OperatorFlags): Promise<number> {
  const request = { fileSystemId, fleet: flags.fleet, configPath: flags.config, force: flags.force };
  const report = await deleteScratch(request, (region) => resolveAws(flags, region), say);
  if (flags.json) printJson({ fileSystemId, ...report.outcome });
  say(report.message);
  return report.exitStatus;
}

export const registerList: RegisterCommand = (scratch, ctx) => {
  withOperatorOptions(
    scratch
      .command('list')
      .description("this fleet's scratch file systems: job, owner, age, state, mount targets"),
  ).action(async (flags: OperatorFlags) => {
    ctx.exitCode = await list(flags);
  });
};

export const registerDelete: RegisterCommand = (scratch, ctx) => {
  withOperatorOptions(
    scratch
      .command('delete')
      .description(
        'delete a scratch file system of this fleet (mount targets first); refuses any other, and one whose run may ' +
          'still be using it (re-checked right before deleting)',
      )
      .argument('<file-system-id>')
      .option(
        '--force',
        'also delete one whose run may still be using it (refused otherwise, exit 75: its job then loses its scratch), ' +
          'or one that carries the fleet tag but that the fleet did not make (foreign: another CreationToken, Regional, ' +
          'backups on); never one of another fleet',
      ),
  ).action(async (id: string, flags: OperatorFlags) => {
    ctx.exitCode = await remove(id, flags);
  });
};
