/**
 * `mountfleet scratch run|list|delete`: per-job EFS One Zone scratch file systems. The logic lives in
 * core/scratch; this file reads flags, IMDS and agent.json, wires signals, and prints.
 */
import { Command, Option } from 'commander';
import { parsePositive, parseWholeNumber } from '../args';
import { EXIT_STATUS, UsageError } from '../../core/common';
import { profileOption, regionOption, resolveAws, type AwsFlags } from '../aws-options';
import type { RegisterCommand } from '../command';
import { OutputFile, printJson } from '../output';
import { cloudWatchClient, ec2Client, efsClient } from '../../core/aws';
import { parseDuration } from '../../core/common';
import {
  DEFAULT_SCRATCH_PATH,
  DEFAULT_TEARDOWN_GRACE_SECONDS,
  MAX_TEARDOWN_GRACE_SECONDS,
  agentPaths,
  checkMountPath,
} from '../../core/contract';
import { BUILT_IN_PRICES } from '../../core/plan';
import {
  DEFAULT_CREDIT_CHECK_SECONDS,
  ON_CREDIT_LOW,
  type OnCreditLow,
  appendCreditMetrics,
  runSummary,
  deleteScratchFileSystem,
  listScratchFileSystems,
  NotThisFleetsError,
  RunAliveError,
  EXIT_SCRATCH_FAILED,
  MAX_SPOT_POLL_MS,
  runScratchJob,
  type CreditGuardRequest,
  type StopReason,
  generateJobId,
  jobIdProblem,
  burstCreditPreflight,
  parseBytes,
  prepareLocalRun,
  type LocalSetup,
  ScratchInUseError,
  registerScratchRun,
  loadOptionalAgentConfig,
  resolveFleetId,
  resolveScratchPath,
  resolveScratchSettings,
  ScratchSettingsError,
} from '../../core/scratch';
import {
  metadataService,
  readInstanceIdentity,
  type InstanceIdentity,
  terminationNoticeReader,
} from '../../core/instance';

interface RunOptions {
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

interface OperatorOptions extends AwsFlags {
  fleet?: string;
  config?: string;
  json?: boolean;
  force?: boolean;
}

const say = (line: string) => process.stderr.write(`mountfleet scratch: ${line}\n`);

/** Polling IMDS for a Spot notice faster than this only floods it: notices come two minutes ahead. */
const MIN_SPOT_POLL_MS = 100;

/** IMDS reads at start: 1 s per attempt, retried with jittered backoff for up to this long in all. */
const IMDS_BUDGET_MS = 15_000;
/** SDK attempts per call (adaptive retry): setup must ride out the throttling of many jobs starting at once. */
const SCRATCH_MAX_ATTEMPTS = 10;

/** What `scratch run`'s flags say, checked before anything else happens (usage errors exit 2). */
interface RunFlags {
  readonly jobId: string;
  readonly spotPollMs: number;
  readonly teardownGraceSeconds?: number;
  readonly creditCheckSeconds: number;
  readonly expectedDurationSeconds?: number;
  readonly expectedIoBytes?: number;
  /** 0 refuses a held job id or path at once; undefined waits without limit. */
  readonly waitLockSeconds?: number;
}

function parseRunFlags(opts: RunOptions): RunFlags {
  const jobId = opts.job ?? generateJobId();
  const problem = jobIdProblem(jobId);
  if (problem) throw new ScratchSettingsError(problem);
  // Before IMDS and AWS: a bad path is a usage error whatever the instance.
  const pathProblem = opts.path === undefined ? undefined : checkMountPath(opts.path);
  if (pathProblem) throw new UsageError(`--path: ${pathProblem}`);
  const whole = (flag: string, value: string | undefined, min: number, max: number) =>
    value === undefined ? undefined : parseWholeNumber(flag, value, { min, max });
  return {
    jobId,
    spotPollMs:
      whole('--spot-poll-ms', opts.spotPollMs, MIN_SPOT_POLL_MS, MAX_SPOT_POLL_MS) ?? MAX_SPOT_POLL_MS,
    teardownGraceSeconds: whole('--teardown-grace', opts.teardownGrace, 0, MAX_TEARDOWN_GRACE_SECONDS),
    creditCheckSeconds:
      whole('--credit-check-interval', opts.creditCheckInterval, 10, 3600) ?? DEFAULT_CREDIT_CHECK_SECONDS,
    expectedDurationSeconds:
      opts.expectedDuration === undefined
        ? undefined
        : parsePositive('--expected-duration', opts.expectedDuration, parseDuration),
    expectedIoBytes:
      opts.expectedIo === undefined ? undefined : parsePositive('--expected-io', opts.expectedIo, parseBytes),
    // --wait-lock alone waits without limit; --wait-lock=SECONDS at most that long; without it, refuse at once.
    waitLockSeconds:
      opts.waitLock === undefined
        ? 0
        : opts.waitLock === true
          ? undefined
          : whole('--wait-lock', opts.waitLock, 0, 86_400),
  };
}

/** SIGINT/SIGTERM stop the run (a second one only says what is going on); dispose() unhooks them. */
function stopOnSignals() {
  const stop = new AbortController();
  const onSignal = (signal: 'SIGINT' | 'SIGTERM') => {
    if (stop.signal.aborted) {
      say(
        `${signal}: already stopping; the file system is torn down before exit (SIGKILL would leave it to the reaper)`,
      );
      return;
    }
    say(`${signal}: stopping; the scratch file system is deleted before exit`);
    stop.abort(signal satisfies StopReason);
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  return {
    signal: stop.signal,
    dispose() {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
    },
  };
}

/** This instance's identity from IMDS, or undefined after saying why not (nothing was created). */
async function readIdentity(signal: AbortSignal): Promise<InstanceIdentity | undefined> {
  const imds = metadataService({ timeoutMs: 1000, budgetMs: IMDS_BUDGET_MS, signal });
  try {
    return await readInstanceIdentity(imds);
  } catch (err) {
    say(
      `cannot read this instance's identity from IMDS (${(err as Error).message}): scratch run works on EC2 instances only; ` +
        `nothing was created`,
    );
    return undefined;
  } finally {
    imds.close();
  }
}

/** The burst-credit guard's settings for this run; its metrics go to the agent metrics log. */
function creditGuardFor(
  flags: RunFlags,
  onCreditLow: OnCreditLow,
  region: string,
  fleetId: string,
): CreditGuardRequest {
  const prices = BUILT_IN_PRICES[region];
  return {
    // Few attempts: a throttled check is simply retried at the next one.
    cloudwatch: cloudWatchClient({ region, maxAttempts: 2 }),
    intervalSeconds: flags.creditCheckSeconds,
    onCreditLow,
    expectedIoBytes: flags.expectedIoBytes,
    expectedDurationSeconds: flags.expectedDurationSeconds,
    elasticPrices: prices && {
      region: prices.region,
      readPerGb: prices.efsElasticReadPerGb,
      writePerGb: prices.efsElasticWritePerGb,
    },
    // A failed write throws: the guard says so once and carries a mode switch to the next line written.
    publish: (metrics) => appendCreditMetrics(agentPaths().metricsLogFile, fleetId, metrics, Date.now()),
  };
}

/**
 * The run's outcome as JSON: into --summary FILE when given, and always as the last line of stderr. False
 * when the file was asked for and could not be written.
 */
function reportSummary(summary: ReturnType<typeof runSummary>, file: OutputFile | undefined): boolean {
  let written = true;
  try {
    file?.write(`${JSON.stringify(summary, null, 2)}\n`);
  } catch (err) {
    say((err as Error).message);
    written = false;
  }
  // For logs that keep only stderr.
  process.stderr.write(`${JSON.stringify(summary)}\n`);
  return written;
}

/**
 * `scratch run`: flags, then the local checks and locks (core/scratch/local-setup.ts), then IMDS, then the run
 * itself (core/scratch/lifecycle.ts); what holds the job or path exits 75, usage errors 2.
 */
async function run(command: string[], opts: RunOptions): Promise<number> {
  const flags = parseRunFlags(opts);
  const { jobId } = flags;
  if (flags.expectedIoBytes !== undefined) {
    const verdict = burstCreditPreflight(flags.expectedIoBytes, opts.strict ?? false);
    if (verdict.status === 'refuse') {
      say(`refusing (--strict): ${verdict.message}`);
      return EXIT_STATUS.usage;
    }
    say(verdict.status === 'warn' ? `WARNING: ${verdict.message}` : verdict.message);
  }
  const config = loadOptionalAgentConfig(opts.config);
  const fleetId = resolveFleetId(opts.fleet, config);
  const mountHelper = process.env.MOUNTFLEET_EFS_MOUNT_HELPER || undefined;
  // Before any AWS call: a summary that cannot be written is a usage error now, not a surprise after the job.
  const summaryFile = opts.summary === undefined ? undefined : OutputFile.open('--summary', opts.summary);
  const stop = stopOnSignals();
  let local: LocalSetup | undefined;
  let unregister = () => undefined as void;
  try {
    try {
      local = await prepareLocalRun({
        runDir: agentPaths().runDir,
        fleetId,
        jobId,
        path: resolveScratchPath(opts.path, config),
        waitLockSeconds: flags.waitLockSeconds,
        mountHelper,
        signal: stop.signal,
        log: say,
      });
    } catch (err) {
      if (!(err instanceof ScratchInUseError)) throw err;
      const hint = flags.waitLockSeconds === 0 ? '; --wait-lock[=SECONDS] waits for it instead' : '';
      say(stop.signal.aborted ? `stopped while waiting: ${err.message}` : `refusing: ${err.message}${hint}`);
      return EXIT_STATUS.inUse;
    }
    const identity = await readIdentity(stop.signal);
    if (identity === undefined) return 1;
    const settings = resolveScratchSettings(
      {
        fleet: fleetId,
        subnet: opts.subnet,
        securityGroup: opts.securityGroup,
        path: local.path,
        teardownGraceSeconds: flags.teardownGraceSeconds,
      },
      config,
      identity.availabilityZoneId,
    );
    if (opts.job === undefined) say(`job id ${jobId}`);
    // So that `mountfleet up` waits for this teardown before it lets Auto Scaling terminate the instance.
    try {
      unregister = registerScratchRun(agentPaths().runDir, jobId);
    } catch (err) {
      say(
        `cannot record this run for the agent (${(err as Error).message}): an Auto Scaling termination will not wait for it`,
      );
    }
    const result = await runScratchJob({
      efs: efsClient({ region: identity.region, maxAttempts: SCRATCH_MAX_ATTEMPTS }),
      placement: identity,
      ...settings,
      path: local.path,
      createdDirectory: local.createdDirectory,
      checkedPath: local.checkedPath,
      lockFds: local.locks.fds,
      jobId,
      command: command[0],
      args: command.slice(1),
      mountHelper,
      readTerminationNotice: terminationNoticeReader(),
      terminationPollMs: flags.spotPollMs,
      stopSignal: stop.signal,
      log: say,
      creditGuard: creditGuardFor(flags, opts.onCreditLow, identity.region, fleetId),
    });
    const summary = runSummary({ jobId, ...result, expectedIoBytes: flags.expectedIoBytes });
    if (!reportSummary(summary, summaryFile) && result.exitStatus === 0) {
      say('the run succeeded but its --summary was not written: exiting 1');
      return EXIT_SCRATCH_FAILED;
    }
    return result.exitStatus;
  } finally {
    summaryFile?.discard();
    unregister();
    local?.locks.release();
    local?.checkedPath.release();
    stop.dispose();
  }
}

function formatAge(seconds: number | undefined): string {
  if (seconds === undefined) return '-';
  if (seconds < 120) return `${seconds}s`;
  if (seconds < 7200) return `${Math.round(seconds / 60)}m`;
  return `${(seconds / 3600).toFixed(1)}h`;
}

async function list(opts: OperatorOptions): Promise<number> {
  const config = loadOptionalAgentConfig(opts.config);
  const fleetId = resolveFleetId(opts.fleet, config);
  const region = await resolveAws(opts, config?.region);
  const found = await listScratchFileSystems(efsClient({ region }), fleetId);
  if (opts.json) {
    printJson({ fleetId, fileSystems: found });
    return 0;
  }
  if (found.length === 0) {
    process.stderr.write(`no scratch file systems in fleet ${fleetId}\n`);
    return 0;
  }
  // The table is the result: stdout, like `--json`.
  const rows = [
    ['FILE SYSTEM', 'JOB', 'OWNER', 'AGE', 'STATE', 'ZONE', 'MOUNT TARGETS'],
    ...found.map((f) => [
      f.fileSystemId,
      f.job ?? '-',
      f.ownerInstance ?? '-',
      formatAge(f.ageSeconds),
      f.foreign
        ? `${f.state} (foreign: never reaped)`
        : f.markedIdleAt
          ? `${f.state} (marked idle)`
          : f.state,
      f.availabilityZone ?? '-',
      String(f.mountTargets),
    ]),
  ];
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
  for (const r of rows)
    process.stdout.write(
      `${r
        .map((c, i) => c.padEnd(widths[i]))
        .join('  ')
        .trimEnd()}\n`,
    );
  return 0;
}

async function remove(fileSystemId: string, opts: OperatorOptions): Promise<number> {
  const config = loadOptionalAgentConfig(opts.config);
  const fleetId = resolveFleetId(opts.fleet, config);
  const region = await resolveAws(opts, config?.region);
  const clients = {
    efs: efsClient({ region }),
    ec2: ec2Client({ region }),
    cloudwatch: cloudWatchClient({ region }),
  };
  let outcome: Awaited<ReturnType<typeof deleteScratchFileSystem>>;
  try {
    outcome = await deleteScratchFileSystem(clients, fleetId, fileSystemId, {
      onProgress: say,
      force: opts.force,
    });
  } catch (err) {
    if (!(err instanceof RunAliveError)) throw err;
    // Its run may still be using it: the same status as any other "held by a live run" (scratch run's 75).
    say(err.message);
    if (opts.json) {
      const { jobId, runId, ownerInstanceId } = err.facts;
      printJson({
        fileSystemId,
        status: 'refused',
        run: 'alive',
        evidence: err.evidence,
        jobId,
        runId,
        ownerInstanceId,
      });
    }
    return EXIT_STATUS.inUse;
  }
  if (opts.json) printJson({ fileSystemId, ...outcome });
  switch (outcome.status) {
    case 'deleted':
      say(`deleted ${fileSystemId} (${outcome.mountTargetsDeleted} mount target(s) deleted first)`);
      return 0;
    case 'already-gone':
      // Nothing was deleted: a typo in the id must not look like success to a script.
      say(`${fileSystemId} does not exist (never created, or already deleted): nothing deleted`);
      return 1;
    case 'pending':
      say(`${fileSystemId} not deleted yet: ${outcome.reason}; run the command again in a minute`);
      return 1;
  }
}

/** Runs an action, turning the errors a user can fix into a message and an exit status. */
function action<A extends unknown[]>(ctx: { exitCode: number }, fn: (...args: A) => Promise<number>) {
  return async (...args: A) => {
    try {
      ctx.exitCode = await fn(...args);
    } catch (err) {
      if (
        err instanceof ScratchSettingsError ||
        err instanceof NotThisFleetsError ||
        err instanceof UsageError
      ) {
        say(err.message);
        ctx.exitCode = EXIT_STATUS.usage;
        return;
      }
      throw err;
    }
  };
}

export const register: RegisterCommand = (program, ctx) => {
  const scratch = program
    .command('scratch')
    .description('per-job EFS One Zone scratch file systems that are always deleted after the job');

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
    .action(action(ctx, (command: string[], opts: RunOptions) => run(command, opts)));

  const operatorOptions = (c: Command) =>
    c
      .option('--fleet <id>', 'fleet id (default: agent.json)')
      .option(
        '--config <file>',
        'agent config (default: MOUNTFLEET_CONFIG, else /etc/mountfleet/agent.json if present)',
      )
      .option('--json', 'print one JSON document on stdout')
      .addOption(regionOption())
      .addOption(profileOption());

  operatorOptions(
    scratch
      .command('list')
      .description("this fleet's scratch file systems: job, owner, age, state, mount targets"),
  ).action(action(ctx, (opts: OperatorOptions) => list(opts)));

  operatorOptions(
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
  ).action(action(ctx, (id: string, opts: OperatorOptions) => remove(id, opts)));
};
