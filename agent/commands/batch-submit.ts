/**
 * `mountfleet batch submit --queue Q --job-definition D [--scratch] [--expected-io SIZE] [--attempts N]
 * [--job-name NAME] [--json] -- CMD…`: parses, calls core/batch's submitBatchJob, prints the job id (or the
 * result as JSON). SIGINT/SIGTERM during a scratch submit rolls back what was made (exit 130).
 */
import { batchClient, ec2Client, efsClient } from '../../core/aws';
import { submitBatchJob, type BatchSubmitResult } from '../../core/batch';
import { parseBytes } from '../../core/common';
import { parsePositive, parseWholeNumber } from '../args';
import { profileOption, regionOption, resolveAws, type AwsFlags } from '../aws-options';
import type { RegisterCommand } from '../command';
import { printJson } from '../output';
import { stopOnSignals } from '../stop-signals';

interface SubmitFlags extends AwsFlags {
  queue: string;
  jobDefinition: string;
  scratch?: boolean;
  expectedIo?: string;
  attempts?: string;
  jobName?: string;
  json?: boolean;
}

const say = (line: string) => process.stderr.write(`mountfleet batch: ${line}\n`);

/** SDK attempts per call: many submits at once must ride out throttling, as scratch run's setup does. */
const SUBMIT_MAX_ATTEMPTS = 10;

export const registerBatchSubmit: RegisterCommand = (batch) => {
  batch
    .command('submit')
    .description(
      "submit CMD to one of the fleet's job queues; with --scratch the job gets an EFS One Zone file system of its " +
        "own in the queue's zone, deleted when the job ends",
    )
    .usage('--queue Q --job-definition D [options] -- CMD [ARGS...]')
    .argument('<command...>', 'the command the container runs (put it after --)')
    .requiredOption(
      '--queue <name>',
      "the fleet's job queue (name or ARN); with --scratch its zone is the job's",
    )
    .requiredOption(
      '--job-definition <name>',
      "job definition (name, name:revision or ARN) that binds the fleet's Mountpoint paths read-only",
    )
    .option(
      '--scratch',
      "give the job a scratch file system of its own, mounted at the job definition's scratch path",
    )
    .option(
      '--expected-io <size>',
      'with --scratch: bytes the job will read + write, checked against the burst credit',
    )
    .option(
      '--attempts <n>',
      'attempts in all, 1-10 (with --scratch each retry is a new run with a new file system)',
      '1',
    )
    .option('--job-name <name>', 'Batch job name (a tag on the scratch too); generated when unset')
    .option('--json', 'print the result as one JSON document')
    .addOption(regionOption())
    .addOption(profileOption())
    .addHelpText(
      'after',
      '\nExample:\n  mountfleet batch submit --queue train-use1-az1 --job-definition train-encode --scratch -- ./encode.sh in.mov\n',
    )
    .action(async (command: string[], flags: SubmitFlags) => {
      const request = {
        queue: flags.queue,
        jobDefinition: flags.jobDefinition,
        command,
        scratch: flags.scratch ?? false,
        expectedIoBytes:
          flags.expectedIo === undefined
            ? undefined
            : parsePositive('--expected-io', flags.expectedIo, parseBytes),
        attempts: parseWholeNumber('--attempts', flags.attempts ?? '1', { min: 1, max: 10 }),
        jobName: flags.jobName,
      };
      await resolveAws(flags);
      const options = { maxAttempts: SUBMIT_MAX_ATTEMPTS };
      const clients = { batch: batchClient(options), efs: efsClient(options), ec2: ec2Client(options) };
      const stops = stopOnSignals((name, first) =>
        say(first ? `${name}: stopping; what was made is rolled back` : `${name}: already stopping`),
      );
      try {
        const result = await submitBatchJob(clients, request, { signal: stops.signal, log: say });
        if (flags.json) printJson(result);
        else print(result);
      } finally {
        stops.dispose();
      }
    });
};

function print(result: BatchSubmitResult): void {
  if (result.scratch) {
    say(
      `job ${result.jobName} in ${result.queue}: scratch ${result.scratch.fileSystemId} (${result.scratch.availabilityZone}) ` +
        `at ${result.scratch.path}, run ${result.scratch.runId}`,
    );
  }
  process.stdout.write(`${result.jobId}\n`);
}
