import * as z from 'zod/mini';
import { reaperSettingsSchema } from '../../core/reaper/settings';

/** The reaper settings that are whole numbers within bounds (minutes, seconds or a count). */
export type ReaperNumericSetting =
  'graceMinutes' | 'idleWindowMinutes' | 'metricLagMinutes' | 'maxDeletionsPerRun' | 'deadlineMarginSeconds';

export interface ReaperSettingRange {
  readonly min: number;
  readonly max: number;
}

/**
 * The bounds the reaper Lambda enforces on each numeric setting, read from the schema it validates its
 * environment with, so the construct and the app config reject at synth exactly what the Lambda would
 * reject on every run.
 */
export const REAPER_SETTING_RANGES: Record<ReaperNumericSetting, ReaperSettingRange> = (() => {
  const properties = (
    z.toJSONSchema(reaperSettingsSchema, { io: 'input' }) as {
      properties: Record<string, { minimum?: number; maximum?: number }>;
    }
  ).properties;
  const range = (name: ReaperNumericSetting): ReaperSettingRange => {
    const { minimum, maximum } = properties[name];
    if (minimum === undefined || maximum === undefined) {
      throw new Error(`the reaper settings schema has no bounds for ${name}`);
    }
    return { min: minimum, max: maximum };
  };
  return {
    graceMinutes: range('graceMinutes'),
    idleWindowMinutes: range('idleWindowMinutes'),
    metricLagMinutes: range('metricLagMinutes'),
    maxDeletionsPerRun: range('maxDeletionsPerRun'),
    deadlineMarginSeconds: range('deadlineMarginSeconds'),
  };
})();
