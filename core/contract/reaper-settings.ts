/**
 * The reaper's settings: one schema shared by the Lambda (environment variables set by the OrphanReaper
 * construct) and `mountfleet reap` (flags mirroring each variable). Errors name the variable or the flag
 * the value came from, so a bad deployment or command line says exactly what to fix.
 */
// zod/mini: the same validation as `zod` at a twentieth of the bundle size (the Lambda bundle carries it).
import * as z from 'zod/mini';
import { FLEET_ID_PATTERN } from './tags';
import { UsageError, wholeNumberFromText } from '../common';

/**
 * The reaper function's memory, MB: a scan of 100,000 file systems peaks at 250-270 MB of RSS
 * (bench/reaper-scale.ts, which runs its scan with this function's heap limits), over 256.
 */
export const REAPER_FUNCTION_MEMORY_MB = 512;

export const REAPER_DEFAULTS = {
  dryRun: false,
  graceMinutes: 30,
  idleWindowMinutes: 30,
  metricLagMinutes: 5,
  maxDeletionsPerRun: 100,
  deadlineMarginSeconds: 60,
  batchUnknownJobMinutes: 60,
} as const;

/**
 * A whole number in [min, max], given as a number or as decimal digits (environment, flags): blank,
 * `0x10`, `1e1` or `-5` are refused, not coerced (the strict reading is core/common/whole-number.ts).
 */
const wholeNumber = (min: number, max: number, fallback: number) =>
  z._default(
    z.pipe(
      z.transform((value: unknown) =>
        typeof value === 'string' ? (wholeNumberFromText(value) ?? value) : value,
      ),
      z
        .number({ error: `must be a whole number from ${min} to ${max} written in digits, e.g. ${fallback}` })
        .check(
          z.refine((n) => Number.isInteger(n), 'must be a whole number'),
          z.minimum(min, `must be at least ${min}`),
          z.maximum(max, `must be at most ${max}`),
        ),
    ),
    fallback,
  );

/** The bounds of each numeric setting: the schema below enforces them, the constructs check props against them. */
export const REAPER_SETTING_RANGES = {
  graceMinutes: { min: 0, max: 7 * 24 * 60 },
  idleWindowMinutes: { min: 5, max: 24 * 60 },
  metricLagMinutes: { min: 0, max: 60 },
  maxDeletionsPerRun: { min: 1, max: 1000 },
  deadlineMarginSeconds: { min: 0, max: 900 },
  // At least 15: a job is visible to DescribeJobs within seconds of SubmitJob, and the tag is written after it.
  // At most 7 days: Batch keeps an ended job describable for at least that long (job_states.html).
  batchUnknownJobMinutes: { min: 15, max: 7 * 24 * 60 },
} as const;
export type ReaperNumericSetting = keyof typeof REAPER_SETTING_RANGES;

const bounded = (name: ReaperNumericSetting) =>
  wholeNumber(REAPER_SETTING_RANGES[name].min, REAPER_SETTING_RANGES[name].max, REAPER_DEFAULTS[name]);

export const reaperSettingsSchema = z.object({
  fleetId: z
    .string({ error: 'is required' })
    .check(z.regex(FLEET_ID_PATTERN, 'must be 1-32 lower-case letters, digits and hyphens')),
  /** Decide and report only: no tag, untag or delete. */
  dryRun: z._default(z.boolean({ error: 'must be true or false' }), REAPER_DEFAULTS.dryRun),
  /** File systems younger than this are never touched (creation, first mount and tagging happen in it). */
  graceMinutes: bounded('graceMinutes'),
  /**
   * ClientConnections window; also how long a mark must age before metric-only evidence deletes. At least
   * 5: CloudWatch reports ClientConnections once a minute, and a shorter window proves little.
   */
  idleWindowMinutes: bounded('idleWindowMinutes'),
  /** The window ends this long before now, because CloudWatch ingestion lags. */
  metricLagMinutes: bounded('metricLagMinutes'),
  maxDeletionsPerRun: bounded('maxDeletionsPerRun'),
  /** Stop starting deletions when less than this remains of the run's time (Lambda). */
  deadlineMarginSeconds: bounded('deadlineMarginSeconds'),
  /**
   * A Batch run's file system whose `mountfleet:batch-job` DescribeJobs does not return counts as ended only
   * once it is this old (Batch forgets ended jobs; a failed look-up never counts). docs/reaper.md#batch-runs.
   */
  batchUnknownJobMinutes: bounded('batchUnknownJobMinutes'),
});

export type ReaperSettings = z.infer<typeof reaperSettingsSchema>;
export type ReaperSettingsInput = z.input<typeof reaperSettingsSchema>;

type SettingName = keyof ReaperSettings;

/** Where each setting comes from: the Lambda's environment variable and the CLI flag that mirrors it. */
export const REAPER_SETTING_SOURCES: Record<SettingName, { readonly env: string; readonly flag: string }> = {
  fleetId: { env: 'MOUNTFLEET_FLEET_ID', flag: '--fleet' },
  dryRun: { env: 'MOUNTFLEET_DRY_RUN', flag: '--dry-run' },
  graceMinutes: { env: 'MOUNTFLEET_GRACE_MINUTES', flag: '--grace-minutes' },
  idleWindowMinutes: { env: 'MOUNTFLEET_IDLE_WINDOW_MINUTES', flag: '--idle-window-minutes' },
  metricLagMinutes: { env: 'MOUNTFLEET_METRIC_LAG_MINUTES', flag: '--metric-lag-minutes' },
  maxDeletionsPerRun: { env: 'MOUNTFLEET_MAX_DELETIONS_PER_RUN', flag: '--max-deletions' },
  deadlineMarginSeconds: { env: 'MOUNTFLEET_DEADLINE_MARGIN_SECONDS', flag: '--deadline-margin-seconds' },
  batchUnknownJobMinutes: {
    env: 'MOUNTFLEET_BATCH_UNKNOWN_JOB_MINUTES',
    flag: '--batch-unknown-job-minutes',
  },
};

/** A bad setting, naming the variable or flag it came from: a usage error of `mountfleet reap` (exit 2). */
export class ReaperSettingsError extends UsageError {
  override readonly name = 'ReaperSettingsError';
}

function parse(input: Record<string, unknown>, source: 'env' | 'flag'): ReaperSettings {
  const result = z.safeParse(reaperSettingsSchema, input);
  if (result.success) return result.data;
  const lines = result.error.issues.map((issue) => {
    const name = issue.path[0] as SettingName | undefined;
    const where = name ? REAPER_SETTING_SOURCES[name][source] : '(settings)';
    const value = name === undefined ? undefined : input[name];
    return `  ${where}${value === undefined ? '' : `=${JSON.stringify(value)}`}: ${issue.message}`;
  });
  throw new ReaperSettingsError(`invalid reaper settings:\n${lines.join('\n')}`);
}

/** The strict spelling of a boolean variable: anything but "true"/"false" is a mistake worth reporting. */
function booleanVariable(value: string | undefined): unknown {
  if (value === undefined || value === '') return undefined;
  if (value === 'true') return true;
  if (value === 'false') return false;
  return value;
}

/** Settings from the Lambda environment (unset or empty variables take the defaults). */
export function reaperSettingsFromEnv(env: NodeJS.ProcessEnv = process.env): ReaperSettings {
  const read = (name: SettingName) => {
    const value = env[REAPER_SETTING_SOURCES[name].env];
    return value === '' ? undefined : value;
  };
  return parse(
    {
      fleetId: read('fleetId'),
      dryRun: booleanVariable(read('dryRun') as string | undefined),
      graceMinutes: read('graceMinutes'),
      idleWindowMinutes: read('idleWindowMinutes'),
      metricLagMinutes: read('metricLagMinutes'),
      maxDeletionsPerRun: read('maxDeletionsPerRun'),
      deadlineMarginSeconds: read('deadlineMarginSeconds'),
      batchUnknownJobMinutes: read('batchUnknownJobMinutes'),
    },
    'env',
  );
}

/** Settings from CLI flags (commander hands numbers over as strings; the schema reads their digits). */
export function reaperSettingsFromFlags(flags: Partial<Record<SettingName, unknown>>): ReaperSettings {
  return parse(flags, 'flag');
}
