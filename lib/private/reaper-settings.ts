/**
 * OrphanReaper's settings checked at synth with the schema the Lambda applies to its environment, each
 * error naming the prop the caller wrote and its allowed range.
 */
import type { Duration } from 'aws-cdk-lib';
import type { Construct } from 'constructs';
import * as z from 'zod/mini';
import {
  REAPER_SETTING_RANGES,
  reaperSettingsSchema,
  type ReaperNumericSetting,
  type ReaperSettings,
  type ReaperSettingsInput,
} from '../../core/contract';
import { invalidProp } from './validation';

/** The prop each reaper setting comes from, so an error names what the caller wrote. */
const SETTING_PROPS: Record<keyof ReaperSettings, string> = {
  fleetId: 'fleetId',
  dryRun: 'dryRun',
  graceMinutes: 'gracePeriod',
  idleWindowMinutes: 'idleWindow',
  metricLagMinutes: 'metricLag',
  maxDeletionsPerRun: 'maxDeletionsPerRun',
  deadlineMarginSeconds: 'deadlineMargin',
  batchUnknownJobMinutes: 'batchUnknownJobAge',
};

const SETTING_UNITS: Record<ReaperNumericSetting, string> = {
  graceMinutes: ' minutes',
  idleWindowMinutes: ' minutes',
  metricLagMinutes: ' minutes',
  maxDeletionsPerRun: '',
  deadlineMarginSeconds: ' seconds',
  batchUnknownJobMinutes: ' minutes',
};

/**
 * Validates the settings with the schema the Lambda applies to its environment, so values it would reject
 * on every run fail the synth instead, naming the prop and the allowed range.
 */
export function validateReaperSettings(scope: Construct, input: ReaperSettingsInput): ReaperSettings {
  const result = z.safeParse(reaperSettingsSchema, input);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const name = issue.path[0] as keyof ReaperSettings;
  const value = input[name];
  if (!(name in REAPER_SETTING_RANGES)) return invalidProp(scope, SETTING_PROPS[name], issue.message);
  const range = REAPER_SETTING_RANGES[name as ReaperNumericSetting];
  const unit = SETTING_UNITS[name as ReaperNumericSetting];
  return invalidProp(
    scope,
    SETTING_PROPS[name],
    `${String(value)}${unit} ${issue.message}`,
    `allowed: ${range.min} to ${range.max}${unit}`,
  );
}

/** A Duration prop in whole minutes (the Lambda's settings are minutes; 90 seconds cannot be passed on). */
export function wholeMinutes(
  scope: Construct,
  prop: string,
  d: Duration | undefined,
  fallback: number,
): number {
  if (d === undefined) return fallback;
  const seconds = d.toSeconds();
  if (seconds % 60 !== 0) {
    invalidProp(
      scope,
      prop,
      `${d.toHumanString()} is not a whole number of minutes`,
      'for example Duration.minutes(30)',
    );
  }
  return seconds / 60;
}
