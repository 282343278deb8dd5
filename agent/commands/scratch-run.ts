/**
 * `mountfleet scratch run`: its flags, read and checked one by one into a ScratchRunRequest, then core/scratch's
 * runScratch, which plans the run, carries it out and reports it.
 */
import { Option } from 'commander';
import { UsageError, parseBytes, parseDuration } from '../../core/common';
import {
  DEFAULT_SCRATCH_PATH,
  DEFAULT_TEARDOWN_GRACE_SECONDS,
  MAX_TEARDOWN_GRACE_SECONDS,
  checkMountPath,
  generateJobId,
  jobIdProblem,
} from '../../core/contract';
import { DEFAULT_CREDIT_CHECK_SECONDS, ON_CREDIT_LOW, type OnCreditLow } from '../../core/credit';
import { MAX_SPOT_POLL_MS, type ScratchRunIo, type ScratchRunRequest, runScratch } from '../../core/scratch';
import { parsePositive, parseWholeNumber } from '../args';
import type { RegisterCommand } from '../command';
import { OutputFile } from '../output';
import { stopOnSignals } from '../stop-signals';
import { say } from './scratch-output';

interface RunFlags {
  job?: string;
  path?: string;
  fleet?: string;
  subnet?: string;
  securityGroup?: string;
  expectedIo?: string;
  strict?: boolean;
  teardownGrace?: string;
  config?: string;
  spotPollMs?: string;
  waitLock?: string | true;
  creditCheckInterval?: string;
  onCreditLow: OnCreditLow;
  expectedDuration?: string;
  summary?: string;
}

/** Polling IMDS for a Spot notice faster than this only floods it: notices come two minutes ahead. */
const MIN_SPOT_POLL_MS = 100;

/** `scratch run`'s flags, each read and checked in turn (a bad one is a UsageError, exit 2). */
function parseRunRequest(command: string[], flags: RunFlags): ScratchRunRequest {
  const jobId = flags.job ?? generateJobId();
  const problem = jobIdProblem(jobId);
  if (problem) throw new UsageError(problem);
  // Before IMDS and AWS: a bad path is a usage error whatever the instance.
  const pathProblem = flags.path === undefined ? undefined : checkMountPath(flags.path);
  if (pathProblem) throw new UsageError(`--path: ${pathProblem}`);
  const whole = (flag: string, value: string | undefined, min: number, max: number) =>
    value === undefined ? undefined : parseWholeNumber(flag, value, { min, max });
  return {
    command,
    jobId,
    jobIdGenerated: flags.job === undefined,
    fleet: flags.fleet,
    path: flags.path,
    subnet: flags.subnet,
    securityGroup: flags.securityGroup,
    configPath: flags.config,
    spotPollMs:
      whole('--spot-poll-ms', flags.spotPollMs, MIN_SPOT_POLL_MS, MAX_SPOT_POLL_MS) ?? MAX_SPOT_POLL_MS,
    teardownGraceSeconds: whole('--teardown-grace', flags.teardownGrace, 0, MAX_TEARDOWN_GRACE_SECONDS),
    creditCheckSeconds:
      whole('--credit-check-interval', flags.creditCheckInterval, 10, 3600) ?? DEFAULT_CREDIT_CHECK_SECONDS,
    expectedDurationSeconds:
      flags.expectedDuration === undefined
        ? undefined
        : parsePositive('--expected-duration', flags.expectedDuration, parseDuration),
    expectedIoBytes:
      flags.expectedIo === undefined
        ? undefined
        : parsePositive('--expected-io', flags.expectedIo, parseBytes),
    // --wait-lock alone waits without limit; --wait-lock=SECONDS at most that long; without it, refuse at once.
    waitLockSeconds:
      flags.waitLock === undefined
        ? 0
        : flags.waitLock === true
          ? undefined
          : whole('--wait-lock', flags.waitLock, 0, 86_400),
    strict: flags.strict ?? false,
    onCreditLow: flags.onCreditLow,
    summaryPath: flags.summary,
    mountHelper: process.env.MOUNTFLEET_EFS_MOUNT_HELPER || undefined,
  };
}

/** What a run prints, and the signals that stop it (a second one only says what is going on). */
const runIo: ScratchRunIo = {
  log: say,
  openSummary: (path) => OutputFile.open('--summary', path),
  stopOnSignals: () =>
    stopOnSignals((name, first) =>
      say(
        first
          ? `${name}: stopping; the scratch file system is deleted before exit`
          : `${name}: already stopping; the file system is torn down before exit (SIGKILL would leave it to the reaper)`,
      ),
    ),
  printSummary: (summary) => process.stderr.write(`${JSON.stringify(summary)}\n`),
};

export const registerRun: RegisterCommand = (scratch, ctx) => {
  scratch
    .command('run')
    .description(
      "create a scratch file system in this instance's zone, mount it, run CMD with MOUNTFLEET_SCRATCH set, " +
        "and always tear it down; exits with CMD's status",
    )
    .usage('[options] -- CMD [ARGS...]')
    .argument('<command...>', 'the job to run (put it after --)')
    .option(
      '--job <id>',
      'job id (a tag; every run, re-runs too, gets a file system of its own); generated when unset',
    )
    .option('--path <dir>', `where to mount (default: agent.json scratch.path, else ${DEFAULT_SCRATCH_PATH})`)
    .option('--fleet <id>', 'fleet id (default: agent.json)')
    .option(
      '--subnet <id>',
      "subnet for the mount target (default: agent.json scratch.subnets[this zone's AZ ID])",
    )
    .option(
      '--security-group <id>',
      'security group for the mount target (default: agent.json scratch.securityGroupId)',
    )
    .option(
      '--expected-io <size>',
      'bytes the job will read + write, e.g. 3TiB: checked against the 2.1 TiB burst credit',
    )
    .option('--strict', 'refuse (instead of warning) when --expected-io exceeds the burst credit')
    .option(
      '--teardown-grace <seconds>',
      `seconds CMD gets after SIGTERM before it is killed (default: agent.json, else ${DEFAULT_TEARDOWN_GRACE_SECONDS})`,
    )
    .option(
      '--config <file>',
      'agent config (default: MOUNTFLEET_CONFIG, else /etc/mountfleet/agent.json if present)',
    )
    .option(
      '--wait-lock [seconds]',
      'when another run on this instance holds the job id or --path: wait for it (at most SECONDS) instead of exiting 75',
    )
    .option(
      '--expected-duration <duration>',
      'how long the job should run, e.g. 2h30m: the credit guard warns when the credit would run out before',
    )
    .option(
      '--credit-check-interval <seconds>',
      `seconds between burst-credit checks while the job runs, 10-3600 (default ${DEFAULT_CREDIT_CHECK_SECONDS}; EFS metrics are per minute)`,
    )
    .addOption(
      new Option(
        '--on-credit-low <action>',
        'when 90 % of the burst credit is spent: warn, switch to elastic throughput, or stop the job',
      )
        .choices(ON_CREDIT_LOW)
        .default('warn'),
    )
    .option('--summary <file>', "write the run's outcome as JSON (also the last line of stderr)")
    .addOption(new Option('--spot-poll-ms <ms>', 'Spot notice poll interval (at most 5000)').hideHelp())
    .addHelpText(
      'after',
      '\nExample:\n  mountfleet scratch run --job encode-42 --expected-io 300GiB -- ./encode.sh input.mov\n' +
        '\nThe mount goes through the EFS mount helper (`mount -t efs`, or MOUNTFLEET_EFS_MOUNT_HELPER called as\n' +
        '`HELPER FS_ID:/ DIR -o tls,mounttargetip=IP,noresvport`).',
    )
    .action(async (command: string[], flags: RunFlags) => {
      ctx.exitCode = await runScratch(parseRunRequest(command, flags), runIo);
    });
};
