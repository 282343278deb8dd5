/**
 * `mountfleet reap --fleet ID`: the orphan reaper's logic (core/reaper), runnable from anywhere with
 * credentials. Flags mirror the Lambda's environment variables one for one (see REAPER_SETTING_SOURCES).
 * Decisions and the summary are the result (stdout); with `--json` the report is, and decisions go to
 * stderr as progress. Exit 1 when any file system failed, 2 for bad settings or no Region/credentials.
 */
import type { Command } from 'commander';
import { parseWholeNumber } from '../args';
import { EXIT_STATUS } from '../../core/common';
import { profileOption, regionOption, resolveAws, type AwsFlags } from '../aws-options';
import type { RegisterCommand } from '../command';
import { printJson } from '../output';
import { lazyReaperClients, reap, summarizeReport } from '../../core/reaper';
import {
  REAPER_DEFAULTS,
  REAPER_SETTING_SOURCES as FLAG,
  reaperSettingsFromFlags,
} from '../../core/contract';

interface ReapFlags extends AwsFlags {
  fleet?: string;
  dryRun?: boolean;
  graceMinutes?: string;
  idleWindowMinutes?: string;
  metricLagMinutes?: string;
  maxDeletions?: string;
  deadlineMarginSeconds?: string;
  batchUnknownJobMinutes?: string;
  maxRunSeconds?: string;
  json?: boolean;
}

const say = (line: string) => process.stderr.write(`mountfleet reap: ${line}\n`);
const print = (line: string) => process.stdout.write(`${line}\n`);

export const register: RegisterCommand = (program: Command, ctx) => {
  program
    .command('reap')
    .description('find and delete orphaned scratch file systems of a fleet (what the reaper Lambda does)')
    .requiredOption(`${FLAG.fleetId.flag} <id>`, 'fleet id: only file systems tagged mountfleet:fleet=<id>')
    .option(FLAG.dryRun.flag, 'decide and report only: tag, untag and delete nothing')
    .option(
      `${FLAG.graceMinutes.flag} <n>`,
      `never touch younger file systems (default ${REAPER_DEFAULTS.graceMinutes})`,
    )
    .option(
      `${FLAG.idleWindowMinutes.flag} <n>`,
      `ClientConnections window, and how long an idle mark ages before deletion (default ${REAPER_DEFAULTS.idleWindowMinutes})`,
    )
    .option(
      `${FLAG.metricLagMinutes.flag} <n>`,
      `end the window this long before now (default ${REAPER_DEFAULTS.metricLagMinutes})`,
    )
    .option(
      `${FLAG.maxDeletionsPerRun.flag} <n>`,
      `deletions per run (default ${REAPER_DEFAULTS.maxDeletionsPerRun})`,
    )
    .option(
      '--max-run-seconds <n>',
      'time budget for the run (the Lambda uses its own timeout); unlimited by default',
    )
    .option(
      `${FLAG.deadlineMarginSeconds.flag} <n>`,
      `with --max-run-seconds: stop starting deletions this long before the end (default ${REAPER_DEFAULTS.deadlineMarginSeconds})`,
    )
    .option(
      `${FLAG.batchUnknownJobMinutes.flag} <n>`,
      `a Batch run's job that Batch does not know counts as ended once its file system is this old (default ${REAPER_DEFAULTS.batchUnknownJobMinutes})`,
    )
    .option('--json', 'print the report as one JSON document on stdout')
    .addOption(regionOption())
    .addOption(profileOption())
    .action(async (flags: ReapFlags) => {
      // Bad settings are a ReaperSettingsError (a UsageError, exit 2), before any AWS call.
      const settings = reaperSettingsFromFlags({
        fleetId: flags.fleet,
        dryRun: flags.dryRun ?? false,
        graceMinutes: flags.graceMinutes,
        idleWindowMinutes: flags.idleWindowMinutes,
        metricLagMinutes: flags.metricLagMinutes,
        maxDeletionsPerRun: flags.maxDeletions,
        deadlineMarginSeconds: flags.deadlineMarginSeconds,
        batchUnknownJobMinutes: flags.batchUnknownJobMinutes,
      });
      const maxRunMs =
        flags.maxRunSeconds === undefined
          ? undefined
          : parseWholeNumber('--max-run-seconds', flags.maxRunSeconds, { min: 1, max: 86400 }) * 1000;
      await resolveAws(flags);
      const endsAt = maxRunMs === undefined ? undefined : Date.now() + maxRunMs;
      const result = flags.json ? say : print;
      const report = await reap(lazyReaperClients(), settings, {
        remainingTimeMs: endsAt === undefined ? undefined : () => endsAt - Date.now(),
        onDecision: (d) =>
          result(`${d.fileSystemId} ${d.dryRun ? `would be ${d.outcome}` : d.outcome}: ${d.reason}`),
        onProgress: say,
      });
      result(summarizeReport(report));
      if (flags.json) printJson(report);
      if (report.failed.length > 0) ctx.exitCode = EXIT_STATUS.failure;
    });
};
