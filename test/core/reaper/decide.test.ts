/** The reaper's pure rules that its emulator tests cannot reach cheaply: EC2's visibility window and the re-check. */
import {
  changeSinceDecision,
  decide,
  OWNER_VISIBILITY_MINUTES,
  type Decision,
  type FileSystemFacts,
} from '../../../core/reaper/decide';

const MINUTE = 60_000;
const NOW = Date.UTC(2026, 10, 26, 12, 0, 0);
const OWNER = 'i-0123456789abcdef0';

const facts = (ageMinutes: number, more: Partial<FileSystemFacts> = {}): FileSystemFacts => ({
  id: 'fs-12345678',
  lifeCycleState: 'available',
  createdAt: NOW - ageMinutes * MINUTE,
  mountTargets: 1,
  ownerInstanceId: OWNER,
  jobId: 'J',
  runId: 'r20261126t115000-0123456789abcdef',
  fleet: 'f1',
  ...more,
});
const unknownOwner = {
  connections: { kind: 'no-data' as const },
  owner: { kind: 'gone' as const, ownerState: 'gone' as const, unknown: true, detail: 'is unknown to EC2' },
};

describe('an owner EC2 does not know', () => {
  const ctx = { now: NOW, graceMinutes: 0, idleWindowMinutes: 15 };

  it(`counts as gone only once the file system is ${OWNER_VISIBILITY_MINUTES} min old, whatever the grace period`, () => {
    expect(decide(facts(OWNER_VISIBILITY_MINUTES - 1), unknownOwner, ctx)).toEqual({
      action: 'keep',
      reason: expect.stringMatching(
        new RegExp(
          `^owner ${OWNER} is not known to EC2, but the file system is 9 min old: .* only after 10 min$`,
        ),
      ),
    });
    expect(decide(facts(OWNER_VISIBILITY_MINUTES), unknownOwner, ctx)).toEqual({
      action: 'delete',
      reason: `owner ${OWNER} is unknown to EC2`,
    });
  });

  it('keeps a young file system when an event says its owner ended and EC2 does not know that instance', () => {
    const goneInstance = { instanceId: OWNER, cause: 'terminated', confirmed: true, unknownToEc2: true };
    const young = decide(facts(2), { connections: { kind: 'no-data' } }, { ...ctx, goneInstance });
    expect(young).toMatchObject({ action: 'keep', reason: expect.stringContaining('is not known to EC2') });
    const seenByEc2 = decide(
      facts(2),
      { connections: { kind: 'no-data' } },
      {
        ...ctx,
        goneInstance: { ...goneInstance, unknownToEc2: false },
      },
    );
    expect(seenByEc2).toMatchObject({ action: 'delete' });
  });
});

describe('the re-check before a deletion', () => {
  const decision: Decision = { action: 'delete', reason: 'owner gone' };

  it('finds nothing when nothing that matters changed (a mount target going away is progress, not a change)', () => {
    expect(changeSinceDecision(facts(60), facts(60, { mountTargets: 0 }), decision)).toBeUndefined();
  });

  it.each([
    [
      'ownerInstanceId',
      'i-0fedcba9876543210',
      'mountfleet:owner-instance changed from i-0123456789abcdef0 to i-0fedcba9876543210',
    ],
    ['jobId', 'J2', 'mountfleet:job changed from J to J2'],
    ['fleet', undefined, 'mountfleet:fleet changed from f1 to (none)'],
    [
      'runId',
      'r20261126t115900-fedcba9876543210',
      'mountfleet:run changed from r20261126t115000-0123456789abcdef to r20261126t115900-fedcba9876543210',
    ],
    [
      'teardownStartedAt',
      '2026-11-26T11:59:00Z',
      'mountfleet:teardown-started-at changed from (none) to 2026-11-26T11:59:00Z',
    ],
    [
      'markedIdleAt',
      '2026-11-26T11:59:00Z',
      'mountfleet:marked-idle-at changed from (none) to 2026-11-26T11:59:00Z',
    ],
    ['lifeCycleState', 'updating', 'lifecycle state changed from available to updating'],
  ] as const)('cancels it when %s changed', (field, value, said) => {
    expect(changeSinceDecision(facts(60), facts(60, { [field]: value }), decision)).toBe(said);
  });

  it('cancels a deletion decided on "no mount target" once one appeared', () => {
    const noTarget: Decision = { ...decision, basis: 'no-mount-target' };
    expect(changeSinceDecision(facts(60, { mountTargets: 0 }), facts(60), noTarget)).toBe(
      'a mount target appeared (1 now)',
    );
  });
});
