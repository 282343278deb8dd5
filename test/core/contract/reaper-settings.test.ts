/**
 * The reaper Lambda's numeric environment variables are read as digits only: a value that `Number()`
 * would coerce (blank-ish, hex, exponent, sign, fraction) is refused naming the variable, never deployed
 * as a different number.
 */
import { EXIT_STATUS, UsageError } from '../../../core/common/errors';
import {
  REAPER_DEFAULTS,
  ReaperSettingsError,
  reaperSettingsFromEnv,
  reaperSettingsFromFlags,
} from '../../../core/contract/reaper-settings';

const env = (extra: Record<string, string>) => ({ MOUNTFLEET_FLEET_ID: 'train', ...extra });

test.each([' ', '0x10', '1e1', '-5', '+5', '2.5', '45 ', 'forty'])(
  'refuses MOUNTFLEET_GRACE_MINUTES=%j, naming the variable',
  (value) => {
    expect(() => reaperSettingsFromEnv(env({ MOUNTFLEET_GRACE_MINUTES: value }))).toThrow(
      `MOUNTFLEET_GRACE_MINUTES=${JSON.stringify(value)}: must be a whole number from 0 to 10080 written in digits`,
    );
  },
);

test('reads digits, and an unset or empty variable takes the default', () => {
  expect(reaperSettingsFromEnv(env({ MOUNTFLEET_MAX_DELETIONS_PER_RUN: '16' })).maxDeletionsPerRun).toBe(16);
  expect(reaperSettingsFromEnv(env({ MOUNTFLEET_GRACE_MINUTES: '' })).graceMinutes).toBe(30);
});

test('a blank flag is refused rather than read as 0', () => {
  expect(() => reaperSettingsFromFlags({ fleetId: 'train', graceMinutes: '' })).toThrow(
    '--grace-minutes="": must be a whole number from 0 to 10080 written in digits',
  );
});

test('a bad setting is a usage error: `mountfleet reap` exits 2 with its message', () => {
  let error: unknown;
  try {
    reaperSettingsFromFlags({ fleetId: 'Not A Fleet' });
  } catch (err) {
    error = err;
  }
  expect(error).toBeInstanceOf(ReaperSettingsError);
  expect(error).toBeInstanceOf(UsageError);
  expect(error).toMatchObject({
    name: 'ReaperSettingsError',
    exitStatus: EXIT_STATUS.usage,
    message: expect.stringMatching(/^invalid reaper settings:\n {2}--fleet="Not A Fleet": /),
  });
});

describe('reaper settings', () => {
  it('takes the defaults for unset or empty variables', () => {
    expect(reaperSettingsFromEnv({ MOUNTFLEET_FLEET_ID: 'f1', MOUNTFLEET_GRACE_MINUTES: '' })).toEqual({
      fleetId: 'f1',
      ...REAPER_DEFAULTS,
    });
  });

  it('reads every variable the construct sets', () => {
    expect(
      reaperSettingsFromEnv({
        MOUNTFLEET_FLEET_ID: 'f1',
        MOUNTFLEET_DRY_RUN: 'true',
        MOUNTFLEET_GRACE_MINUTES: '45',
        MOUNTFLEET_IDLE_WINDOW_MINUTES: '20',
        MOUNTFLEET_METRIC_LAG_MINUTES: '3',
        MOUNTFLEET_MAX_DELETIONS_PER_RUN: '10',
        MOUNTFLEET_DEADLINE_MARGIN_SECONDS: '90',
        MOUNTFLEET_BATCH_UNKNOWN_JOB_MINUTES: '120',
      }),
    ).toEqual({
      fleetId: 'f1',
      dryRun: true,
      graceMinutes: 45,
      idleWindowMinutes: 20,
      metricLagMinutes: 3,
      maxDeletionsPerRun: 10,
      deadlineMarginSeconds: 90,
      batchUnknownJobMinutes: 120,
    });
  });

  it('names each bad variable, and each bad flag', () => {
    expect(() =>
      reaperSettingsFromEnv({ MOUNTFLEET_DRY_RUN: 'yes', MOUNTFLEET_MAX_DELETIONS_PER_RUN: '2.5' }),
    ).toThrow(
      /MOUNTFLEET_FLEET_ID: is required[\s\S]*MOUNTFLEET_DRY_RUN="yes": must be true or false[\s\S]*MOUNTFLEET_MAX_DELETIONS_PER_RUN="2.5": must be a whole number/,
    );
    expect(() => reaperSettingsFromFlags({ fleetId: 'F1', graceMinutes: '-1' })).toThrow(
      /--fleet="F1": must be 1-32 lower-case[\s\S]*--grace-minutes="-1": must be a whole number from 0 to 10080/,
    );
  });
});
