/**
 * `mountfleet batch submit --queue Q --job-definition D [--scratch] [--expected-io SIZE] [--attempts N]
 * [--job-name NAME] [--json] -- CMD…`: parses, asks the fleet's submit function (core/batch's
 * submitThroughFunction), prints the job id (or the result as JSON). The function checks the job definition and
 * makes the run; the submitter needs only to invoke it. SIGINT/SIGTERM stops waiting (exit 130, said by
 * core/batch): the function goes on, and submits the job or rolls back what it made.
 */
import { batchClient, lambdaClient } from '../../core/aws';
import { parseSubmitRequest, submitThroughFunction } from '../../core/batch';
import { UsageError, parseBytes } from '../../core/common';
import {
  JOB_NAME_PATTERN,
  SUBMIT_FUNCTION_TIMEOUT_MINUTES,
  type BatchSubmitRequest,
  type BatchSubmitResult,
} from '../../core/contract';
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
      const request = submitRequest(command, flags);
      await resolveAws(flags);
      const clients = {
        batch: batchClient(),
        lambda: lambdaClient(SUBMIT_FUNCTION_TIMEOUT_MINUTES * 60_000),
      };
      const stops = stopOnSignals((name, first) => {
        if (first) say(`${name}: no longer waiting; the fleet's submit function goes on`);
      });
      try {
        const result = await submitThroughFunction(clients, request, { signal: stops.signal, log: say });
        if (flags.json) printJson(result);
        else print(result);
      } finally {
        stops.dispose();
      }
    });
};

/** The flags and CMD as the request the submit function takes; bad ones are UsageErrors naming the flag. */
function submitRequest(command: string[], flags: SubmitFlags): BatchSubmitRequest {
  if (flags.jobName !== undefined && !JOB_NAME_PATTERN.test(flags.jobName)) {
    throw new UsageError(
      `--job-name ${flags.jobName}: 1-128 letters, digits, hyphens and underscores, starting with a letter or digit (Batch's rule)`,
    );
  }
  return parseSubmitRequest({
    queue: flags.queue,
    jobDefinition: flags.jobDefinition,
    command,
    scratch: flags.scratch ?? false,
    ...(flags.expectedIo === undefined
      ? {}
      : { expectedIoBytes: parsePositive('--expected-io', flags.expectedIo, parseBytes) }),
    attempts: parseWholeNumber('--attempts', flags.attempts ?? '1', { min: 1, max: 10 }),
    ...(flags.jobName === undefined ? {} : { jobName: flags.jobName }),
  });
}

function print(result: BatchSubmitResult): void {
  if (result.scratch) {
    say(
      `job ${result.jobName} in ${result.queue}: scratch ${result.scratch.fileSystemId} (${result.scratch.availabilityZone}) ` +
        `at ${result.scratch.path}, run ${result.scratch.runId}`,
    );
  }
  process.stdout.write(`${result.jobId}\n`);
}
