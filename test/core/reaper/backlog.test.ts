/**
 * More orphans than one run may delete, worked off across scheduled runs (the reaper at scale, docs/reaper.md):
 * against the AWS stand-in over HTTP (aws-standin.ts; moto holds no 100,000 file systems) on a virtual clock
 * that its rate limits move, so a run takes the time EFS's 10 requests a second would give it.
 */
import { reap } from '../../../core/reaper/reaper';
import type { ReapReport } from '../../../core/reaper/report';
import { passPages } from '../../../core/reaper/recheck';
import { reaperSettingsFromFlags, type ReaperSettingsInput } from '../../../core/contract/reaper-settings';
import { TAG_MARKED_IDLE_AT } from '../../../core/contract/tags';
import { useStandIn, VirtualClock, type AwsStandIn, type StandInOptions } from './aws-standin';
import { BACKLOG_MIX, seedFleet, type FleetGroup } from './standin-fleet';
import { reaperClients } from './scenario';

const FLEET = 'f1';
const MINUTE = 60_000;

/** `count` file systems of one kind, created an hour before `clock`'s now, in listing order. */
function add(
  standIn: AwsStandIn,
  clock: VirtualClock,
  group: Omit<FleetGroup, 'perThousand' | 'label'>,
  count: number,
): string[] {
  const mix = [{ ...group, label: 'added', perThousand: 1 }];
  return [...seedFleet(standIn, FLEET, count, clock.now(), mix).expected.keys()];
}

const orphan = { owner: 'none', mountTarget: false, expect: 'deleted' } as const;
const orphanWithMountTarget = {
  owner: 'terminated',
  mountTarget: true,
  connections: 0,
  expect: 'deleted',
} as const;
const inUse = { owner: 'none', mountTarget: true, connections: 3, expect: 'kept' } as const;

describe('a backlog of orphans, worked off across scheduled runs (stand-in)', () => {
  const startStandIn = useStandIn();
  async function start(options: StandInOptions = {}) {
    const clock = new VirtualClock(Date.now());
    return { clock, standIn: await startStandIn({ clock, ...options }) };
  }
  /** One scheduled invocation with a Lambda's deadline, on the virtual clock. */
  function run(clock: VirtualClock, settings: Partial<ReaperSettingsInput> = {}, timeoutMs = 5 * MINUTE) {
    const start = clock.now();
    return reap(reaperClients(), reaperSettingsFromFlags({ fleetId: FLEET, ...settings }), {
      clock,
      remainingTimeMs: () => start + timeoutMs - clock.now(),
    });
  }
  const reasonOf = (report: ReapReport, id: string) => report.kept.find((k) => k.id === id)?.reason;

  it('deletes the next orphans in each run, skipping those an earlier run deleted, and never deletes one twice', async () => {
    const { clock, standIn: s } = await start({ deletingMs: 20 * MINUTE, mountTargetDeletingMs: 30_000 });
    const seeded = seedFleet(s, FLEET, 300, clock.now(), BACKLOG_MIX);
    const orphans = [...seeded.expected].filter(([, e]) => e === 'deleted').map(([id]) => id);
    const healthy = [...seeded.expected].filter(([, e]) => e !== 'deleted').map(([id]) => id);
    expect(orphans).toHaveLength(270);

    const reports: ReapReport[] = [];
    for (let i = 0; i < 3; i++) {
      const started = clock.now();
      reports.push(await run(clock));
      expect(clock.now() - started).toBeLessThan(4 * MINUTE); // inside the deadline margin of a 5 min run
      clock.advance(started + 15 * MINUTE - clock.now());
    }

    expect(reports.map((r) => r.deleted.length)).toEqual([100, 100, 70]);
    expect(reports.flatMap((r) => r.failed)).toEqual([]);
    // Each deleted once: run 2 finds run 1's still deleting and keeps them, without counting them.
    expect(new Set(reports.flatMap((r) => r.deleted)).size).toBe(270);
    for (const id of reports[0].deleted)
      expect(reasonOf(reports[1], id)).toMatch(/deletion already in progress/);
    expect(s.repeatDeletions).toBe(0);
    expect(orphans.filter((id) => s.fileSystem(id)?.lifeCycleState === 'available')).toEqual([]);
    expect(healthy.filter((id) => s.fileSystem(id)?.lifeCycleState !== 'available')).toEqual([]);
  });

  it('retries every deletion whose mount target was still deleting, however long the pass through the batch took', async () => {
    const { clock, standIn: s } = await start({ mountTargetDeletingMs: 10_000 });
    const orphans = add(s, clock, orphanWithMountTarget, 100);

    // 3 EFS calls each at 10 a second: the pass takes 30 s, longer than the 20 s bound on the wait.
    const started = clock.now();
    const report = await reap(reaperClients(), reaperSettingsFromFlags({ fleetId: FLEET }), {
      clock,
      teardownMaxWaitMs: 20_000,
    });

    expect(clock.now() - started).toBeGreaterThan(30_000);
    expect(report.kept).toEqual([]);
    expect([...report.deleted].sort()).toEqual([...orphans].sort());
  });

  it('tries orphans from the reserve in place of deletions that fail, re-reading each right before deleting', async () => {
    const { clock, standIn: s } = await start();
    const refused = add(s, clock, orphan, 100);
    for (const id of refused) s.denyDeletion(id);
    const reserve = add(s, clock, orphan, 100);
    const beyond = add(s, clock, orphan, 10);

    const report = await run(clock);

    expect(report.failed.map((f) => f.id).sort()).toEqual([...refused].sort());
    expect(report.failed[0].error).toMatch(/AccessDenied/);
    // The reserve is as large as the limit: the next 100, each deleted in place of one refused; the rest wait.
    expect([...report.deleted].sort()).toEqual([...reserve].sort());
    expect(beyond.map((id) => reasonOf(report, id))).toEqual(
      Array(10).fill(expect.stringMatching(/deferred: at most 100 deletions per run$/)),
    );
    // Listing (3 pages) and one re-check page for the first 100; the reserve's 100, each re-read by id.
    expect(s.calls()['efs:DescribeFileSystems'].answered).toBe(3 + 1 + 100);
  });

  it('stops marking when the run is out of time, and leaves the rest to the next run', async () => {
    const { clock, standIn: s } = await start();
    const idle = add(
      s,
      clock,
      { owner: 'running', mountTarget: true, connections: 0, expect: 'marked' },
      100,
    );
    // Out of time once two tagging calls (40 file systems) are made: a deadline that falls mid-way.
    const report = await reap(reaperClients(), reaperSettingsFromFlags({ fleetId: FLEET }), {
      clock,
      remainingTimeMs: () => ((s.calls()['tagging:TagResources']?.answered ?? 0) >= 2 ? 0 : 3_600_000),
    });

    expect(report.marked).toEqual(idle.slice(0, 40));
    expect(idle.slice(40).map((id) => reasonOf(report, id))).toEqual(
      Array(60).fill(expect.stringMatching(/deferred: the run is out of time$/)),
    );
    expect(idle.filter((id) => s.fileSystem(id)?.tags.has(TAG_MARKED_IDLE_AT))).toEqual(idle.slice(0, 40));
  });

  describe('the re-check pass reads only the pages that save reads', () => {
    it('plans on where the listing showed each deletion', () => {
      const at = (...pages: number[]) => pages.map((listingPage) => ({ listingPage }));
      expect(passPages(at())).toBe(0);
      expect(passPages(at(0))).toBe(0); // one page or one read: by id
      expect(passPages(at(0, 0, 0, 0, 0, 0))).toBe(1);
      expect(passPages(at(...Array(50).fill(0), 9))).toBe(1); // the first page, and the last one by id
      expect(passPages(at(1))).toBe(0);
      expect(passPages(at(0, 0, 3, 3, 3, 3))).toBe(4);
    });

    it('reads one page for orphans listed on the first page of many, and the one listed far down by id', async () => {
      const { clock, standIn: s } = await start();
      const first = add(s, clock, orphan, 50);
      add(s, clock, inUse, 850);
      const last = add(s, clock, orphan, 1);
      add(s, clock, inUse, 99);

      const report = await run(clock);

      expect([...report.deleted].sort()).toEqual([...first, ...last].sort());
      // 10 to list, 1 page to re-check, 1 by id: a whole pass would have read 10 pages, by id 51.
      expect(s.calls()['efs:DescribeFileSystems'].answered).toBe(10 + 1 + 1);
    });
  });
});
