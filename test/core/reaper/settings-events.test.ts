/** Pure logic: settings from the Lambda environment and flags, and which events start which run. */
import { parseReaperEvent } from '../../../core/reaper/events';
import {
  REAPER_DEFAULTS,
  reaperSettingsFromEnv,
  reaperSettingsFromFlags,
} from '../../../core/contract/reaper-settings';

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
      }),
    ).toEqual({
      fleetId: 'f1',
      dryRun: true,
      graceMinutes: 45,
      idleWindowMinutes: 20,
      metricLagMinutes: 3,
      maxDeletionsPerRun: 10,
      deadlineMarginSeconds: 90,
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

describe('parseReaperEvent', () => {
  const id = 'i-0abc1234def567890';

  it.each([
    ['a schedule', { 'detail-type': 'Scheduled Event', detail: {} }, { kind: 'schedule' }],
    ['a manual invocation', {}, { kind: 'schedule' }],
    [
      'a Spot interruption warning (terminate)',
      {
        'detail-type': 'EC2 Spot Instance Interruption Warning',
        detail: { 'instance-id': id, 'instance-action': 'terminate' },
      },
      {
        kind: 'instance-gone',
        instanceId: id,
        cause: 'Spot interruption warning (terminate)',
        confirmed: false,
      },
    ],
    [
      'a terminated state change',
      {
        'detail-type': 'EC2 Instance State-change Notification',
        detail: { 'instance-id': id, state: 'terminated' },
      },
      {
        kind: 'instance-gone',
        instanceId: id,
        cause: 'state-change notification (terminated)',
        confirmed: true,
      },
    ],
    [
      'a shutting-down state change',
      {
        'detail-type': 'EC2 Instance State-change Notification',
        detail: { 'instance-id': id, state: 'shutting-down' },
      },
      {
        kind: 'instance-gone',
        instanceId: id,
        cause: 'state-change notification (shutting-down)',
        confirmed: true,
      },
    ],
    [
      // The agent tears scratch down on a stop or hibernate notice too (core/contract/owner-state.ts).
      'a Spot interruption warning (hibernate)',
      {
        'detail-type': 'EC2 Spot Instance Interruption Warning',
        detail: { 'instance-id': id, 'instance-action': 'hibernate' },
      },
      {
        kind: 'instance-gone',
        instanceId: id,
        cause: 'Spot interruption warning (hibernate)',
        confirmed: false,
      },
    ],
    [
      // Stopped lets go of scratch, but does not lift the grace period: not a confirmed end.
      'a stopped state change',
      {
        'detail-type': 'EC2 Instance State-change Notification',
        detail: { 'instance-id': id, state: 'stopped' },
      },
      {
        kind: 'instance-gone',
        instanceId: id,
        cause: 'state-change notification (stopped)',
        confirmed: false,
      },
    ],
  ])('%s', (_name, event, expected) => {
    expect(parseReaperEvent(event)).toEqual(expected);
  });

  it.each([
    [
      'a running state change',
      {
        'detail-type': 'EC2 Instance State-change Notification',
        detail: { 'instance-id': id, state: 'running' },
      },
      /not going away/,
    ],
    [
      'a malformed instance id',
      {
        'detail-type': 'EC2 Instance State-change Notification',
        detail: { 'instance-id': 'x', state: 'terminated' },
      },
      /valid instance-id/,
    ],
    [
      'another event type',
      { 'detail-type': 'AWS API Call via CloudTrail', detail: {} },
      /unhandled event type/,
    ],
  ])('ignores %s', (_name, event, reason) => {
    expect(parseReaperEvent(event)).toEqual({ kind: 'ignored', reason: expect.stringMatching(reason) });
  });
});
