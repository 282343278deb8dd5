/**
 * `mountfleet scratch`: per-job EFS One Zone scratch file systems, one subcommand each — `run` (create, mount,
 * run the job, always tear down: agent/commands/scratch-run.ts), `list` and `delete` for operators
 * (scratch-operators.ts). The work lives in core/scratch.
 */
import { speaksAs, type RegisterCommand } from '../command';
import { registerDelete, registerList } from './scratch-operators';
import { registerRun } from './scratch-run';

export const register: RegisterCommand = (program, ctx) => {
  const scratch = speaksAs(
    program
      .command('scratch')
      .description('per-job EFS One Zone scratch file systems that are always deleted after the job'),
    'mountfleet scratch',
  );
  for (const registerSubcommand of [registerRun, registerList, registerDelete])
    registerSubcommand(scratch, ctx);
};
