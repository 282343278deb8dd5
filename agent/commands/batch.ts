/**
 * `mountfleet batch`: jobs onto the fleet through AWS Batch — `submit` (with `--scratch`: a file system of the
 * run's own, deleted by the fleet's teardown when the job ends; agent/commands/batch-submit.ts) and `status`
 * (batch-status.ts). The work lives in core/batch.
 */
import { speaksAs, type RegisterCommand } from '../command';
import { registerBatchStatus } from './batch-status';
import { registerBatchSubmit } from './batch-submit';

export const register: RegisterCommand = (program, ctx) => {
  const batch = speaksAs(
    program.command('batch').description("submit jobs to the fleet's AWS Batch queues, with per-job scratch"),
    'mountfleet batch',
  );
  for (const registerSubcommand of [registerBatchSubmit, registerBatchStatus]) registerSubcommand(batch, ctx);
};
