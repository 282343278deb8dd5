/**
 * `mountfleet reap` as a user runs it: the built bundle (node scripts/bundle.mjs) against the emulator.
 * moto stamps CreationTime with the real time, so these runs use --grace-minutes 0.
 */
import { efsClient } from '../../../core/aws/clients';
import type { ReapReport } from '../../../core/reaper/report';
import { createFileSystem, describeAll, reaperClients, seedFleet } from '../../core/reaper/scenario';
import { runCli } from '../../support/cli';
import { useEmulator } from '../../support/emulator';

describe('mountfleet reap (bundle, emulator)', () => {
  useEmulator();

  /**
   * seedFleet's fleet, a file system of another fleet that the reaper must not see, and one carrying this
   * fleet's tag that the fleet did not make (its CreationToken is not `mf/f1/…`): foreign, never touched.
   */
  async function fleet() {
    const f = await seedFleet(reaperClients());
    const otherFleet = await createFileSystem(efsClient(), f.net, { fleet: 'f2', owner: f.terminated });
    const foreign = await createFileSystem(efsClient(), f.net, {
      fleet: 'f1',
      owner: f.terminated,
      token: 'team-dataset',
    });
    return { ...f, otherFleet, foreign };
  }

  it('shows the user no AWS SDK notice on the Node it supports (22: the SDK warns below its own minimum)', async () => {
    const r = await runCli(['reap', '--fleet', 'f1', '--dry-run']);
    expect(r.code).toBe(0);
    expect(r.stderr).not.toMatch(/NodeVersionSupportWarning|Warning:/);
    expect(r.stdout).toMatch(/fleet f1 \(dry run\): scanned 0/);
  });

  it('--dry-run --json prints the report and changes nothing', async () => {
    const f = await fleet();

    const r = await runCli(['reap', '--fleet', 'f1', '--dry-run', '--json', '--grace-minutes', '0']);

    expect(r.code).toBe(0);
    const report = JSON.parse(r.stdout) as ReapReport;
    expect(report).toEqual({
      fleet: 'f1',
      dryRun: true,
      scanned: 3,
      deleted: [f.orphan],
      marked: [],
      unmarked: [],
      kept: [{ id: f.inUse, reason: expect.stringMatching(/in use/) }],
      foreign: [{ id: f.foreign, reason: expect.stringMatching(/^foreign: CreationToken "team-dataset"/) }],
      failed: [],
      batchLookups: { describeJobs: 0, listJobs: 0 },
    });
    expect(r.stderr).toMatch(new RegExp(`${f.orphan} would be deleted: owner i-[0-9a-f]+ is terminated`));
    expect(r.stderr).toMatch(/fleet f1 \(dry run\): scanned 3, would delete 1, .*foreign 1/);
    expect((await describeAll(efsClient())).size).toBe(4);
  });

  it('deletes the orphan for real, leaving the rest', async () => {
    const f = await fleet();

    const r = await runCli([
      'reap',
      '--fleet',
      'f1',
      '--json',
      '--grace-minutes',
      '0',
      '--max-deletions',
      '5',
    ]);

    expect(r.code).toBe(0);
    expect((JSON.parse(r.stdout) as ReapReport).deleted).toEqual([f.orphan]);
    expect([...(await describeAll(efsClient())).keys()].sort()).toEqual(
      [f.inUse, f.otherFleet, f.foreign].sort(),
    );
  });

  it('rejects a bad setting naming the flag, with exit status 2', async () => {
    const r = await runCli(['reap', '--fleet', 'f1', '--idle-window-minutes', '2']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--idle-window-minutes="2": must be at least 5/);
    expect(r.stdout).toBe('');
  });

  it('rejects a run budget that is not a positive whole number, with exit status 2', async () => {
    const r = await runCli(['reap', '--fleet', 'f1', '--max-run-seconds', '0']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(
      /--max-run-seconds "0": must be a whole number from 1 to 86400, e.g. --max-run-seconds 10/,
    );
    expect(r.stdout).toBe('');
  });
});
