/** Which events start which reaper run (pure logic). */
import { parseReaperEvent } from '../../../core/reaper/events';

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
