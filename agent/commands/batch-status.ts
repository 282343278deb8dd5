/** `mountfleet batch status JOB [--json]`: parses, calls core/batch's batchJobStatus, prints a table (or JSON). */
import { batchClient, cloudWatchClient, ec2Client, efsClient } from '../../core/aws';
import { batchJobStatus, type BatchJobStatus } from '../../core/batch';
import { GIB } from '../../core/common';
import { profileOption, regionOption, resolveAws, type AwsFlags } from '../aws-options';
import type { RegisterCommand } from '../command';
import { printJson } from '../output';

interface StatusFlags extends AwsFlags {
  json?: boolean;
}

export const registerBatchStatus: RegisterCommand = (batch) => {
  batch
    .command('status')
    .description("a Batch job's state and attempts, each with its zone, scratch file system and burst credit")
    .argument('<job-id>', 'the job id `batch submit` printed (attempt 1)')
    .option('--json', 'print the status as one JSON document')
    .addOption(regionOption())
    .addOption(profileOption())
    .action(async (jobId: string, flags: StatusFlags) => {
      await resolveAws(flags);
      const clients = {
        batch: batchClient(),
        efs: efsClient(),
        ec2: ec2Client(),
        cloudwatch: cloudWatchClient(),
      };
      const status = await batchJobStatus(clients, jobId);
      if (flags.json) printJson(status);
      else process.stdout.write(render(status));
    });
};

function render(s: BatchJobStatus): string {
  const lines = [
    `job ${s.jobId}${s.jobName ? ` (${s.jobName})` : ''}: ${s.state}, attempt ${s.attempts} of ${s.attemptsAllowed}` +
      (s.fleet ? `, fleet ${s.fleet}` : ''),
  ];
  for (const a of s.history) {
    const fs = a.fileSystemId
      ? `${a.fileSystemId} ${a.fileSystemExists ? 'exists' : 'deleted'}` +
        (a.burstCreditBytes === undefined
          ? ''
          : `, burst credit ${(a.burstCreditBytes / GIB).toFixed(1)} GiB`)
      : 'no scratch';
    lines.push(
      `  attempt ${a.attempt}: ${a.jobId} ${a.state}${a.statusReason ? ` (${a.statusReason})` : ''}` +
        `${a.zone ? `, zone ${a.zone}` : ''}, ${fs}`,
    );
  }
  return `${lines.join('\n')}\n`;
}
