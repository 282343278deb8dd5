/**
 * The re-check before deleting, in batches (core/reaper/recheck.ts), against the emulator: one
 * DescribeFileSystems page per batch of up to 100 deletions, the calls a deletion costs, and the file systems
 * a page does not show (re-read alone by id).
 */
import { TagResourceCommand, UntagResourceCommand } from '@aws-sdk/client-efs';
import { reap } from '../../../core/reaper/reaper';
import { reaperSettingsFromFlags } from '../../../core/contract/reaper-settings';
import { TAG_FLEET, TAG_JOB } from '../../../core/contract/tags';
import { createNetwork } from '../../support/fixtures';
import {
  clockAt,
  createFileSystem,
  describeAll,
  launchOwners,
  reaperClients,
  useReaperEmulator,
} from './scenario';

const efsCalls = (stats: Record<string, { requests: number }>) =>
  Object.fromEntries(
    Object.entries(stats)
      .filter(([op]) => op.startsWith('efs:'))
      .map(([op, st]) => [op, st.requests]),
  );

/** The file system ids of a DescribeFileSystems answer, recorded by a rewrite that changes nothing. */
function pagesSeen(): { readonly pages: string[][]; rewrite(body: string): string } {
  const pages: string[][] = [];
  return {
    pages,
    rewrite: (body) => {
      const parsed = JSON.parse(body) as { FileSystems?: { FileSystemId: string }[] };
      pages.push((parsed.FileSystems ?? []).map((fs) => fs.FileSystemId));
      return body;
    },
  };
}

describe('the re-check before deleting, in batches (emulator)', () => {
  const emu = useReaperEmulator();
  beforeEach(() => emu.proxy.clear());

  it('costs 3 EFS calls per deletion with a mount target, 1 without, plus one page per 100 to list and one to re-check', async () => {
    const c = reaperClients();
    const net = await createNetwork(c.ec2, 1);
    const [terminated] = await launchOwners(c.ec2, 'f1', 'terminated');
    const ids: string[] = [];
    for (let i = 0; i < 6; i++) {
      ids.push(await createFileSystem(c.efs, net, { fleet: 'f1', owner: terminated, mountTarget: i < 4 }));
    }
    emu.proxy.resetStats();

    const report = await reap(c, reaperSettingsFromFlags({ fleetId: 'f1' }), { clock: clockAt(60) });

    expect(report).toMatchObject({ kept: [], failed: [] });
    expect([...report.deleted].sort()).toEqual([...ids].sort());
    // Per file system before batching: one DescribeFileSystems more each (8 in all here, not 2).
    expect(efsCalls(emu.proxy.stats().byOperation)).toEqual({
      'efs:DescribeFileSystems': 2,
      'efs:DescribeMountTargets': 4,
      'efs:DeleteMountTarget': 4,
      'efs:DeleteFileSystem': 6,
    });
  });

  it('re-checks more than 100 deletions in more than one page, each read right before its own batch', async () => {
    const c = reaperClients();
    const net = await createNetwork(c.ec2, 1);
    const [terminated] = await launchOwners(c.ec2, 'f1', 'terminated');
    const ids: string[] = [];
    for (let i = 0; i < 130; i++) {
      ids.push(await createFileSystem(c.efs, net, { fleet: 'f1', owner: terminated }));
    }
    const seen = pagesSeen();
    emu.proxy.addRule({
      service: 'efs',
      operation: 'DescribeFileSystems',
      fault: { kind: 'rewrite', rewrite: seen.rewrite },
    });
    const clients = reaperClients();
    // Right before the second re-check page (the run's fourth DescribeFileSystems: two listed, then one page
    // per batch), a file system of that page changes; every deletion of the first batch was started by then.
    let listings = 0;
    const deletedBeforeSecondPage: string[] = [];
    const changedOnPageTwo = ids[ids.length - 1];
    clients.efs.middlewareStack.add(
      (next, context) => async (args) => {
        const { FileSystemId } = args.input as { FileSystemId?: string };
        if (context.commandName === 'DeleteFileSystemCommand' && listings < 4) {
          deletedBeforeSecondPage.push(FileSystemId!);
        }
        if (context.commandName === 'DescribeFileSystemsCommand' && ++listings === 4) {
          await c.efs.send(
            new TagResourceCommand({
              ResourceId: changedOnPageTwo,
              Tags: [{ Key: TAG_JOB, Value: 'again' }],
            }),
          );
        }
        return next(args);
      },
      { step: 'initialize', name: 'someoneActsMeanwhile' },
    );
    emu.proxy.resetStats();

    const report = await reap(clients, reaperSettingsFromFlags({ fleetId: 'f1', maxDeletionsPerRun: 200 }), {
      clock: clockAt(60),
    });

    expect(emu.proxy.count('efs', 'DescribeFileSystems')).toBe(4);
    expect(seen.pages.map((page) => page.length)).toEqual([100, 30, 100, 30]);
    expect(seen.pages[3]).toContain(changedOnPageTwo);
    // The second page is read once the first batch is handed out: its last deletions (one per worker, 4) may
    // still be on their way; none of the second batch has started.
    expect(deletedBeforeSecondPage.length).toBeGreaterThanOrEqual(96);
    expect(seen.pages[2]).toEqual(expect.arrayContaining(deletedBeforeSecondPage));
    expect(report.failed).toEqual([]);
    expect(report.kept).toEqual([
      {
        id: changedOnPageTwo,
        reason: expect.stringContaining('re-checked before deleting: mountfleet:job changed from '),
      },
    ]);
    expect(report.deleted).toHaveLength(129);
    expect([...(await describeAll(c.efs)).keys()]).toEqual([changedOnPageTwo]);
  });

  it('re-reads alone, by id, a deletion no page showed, and spares it too when it changed', async () => {
    const c = reaperClients();
    const net = await createNetwork(c.ec2, 1);
    const [terminated] = await launchOwners(c.ec2, 'f1', 'terminated');
    const shown = await createFileSystem(c.efs, net, { fleet: 'f1', owner: terminated, mountTarget: true });
    const hidden = await createFileSystem(c.efs, net, { fleet: 'f1', owner: terminated, mountTarget: true });
    const untagged = await createFileSystem(c.efs, net, { fleet: 'f1', owner: terminated });
    // The listing shows all three; the re-check's page (the second listing) leaves one out, as a listing whose
    // order moved may; meanwhile another has lost its fleet tag.
    let listings = 0;
    emu.proxy.addRule({
      service: 'efs',
      operation: 'DescribeFileSystems',
      match: (r) => r.query.get('FileSystemId') === null && ++listings === 2,
      fault: {
        kind: 'rewrite',
        rewrite: (body) => {
          const parsed = JSON.parse(body) as { FileSystems: { FileSystemId: string }[] };
          parsed.FileSystems = parsed.FileSystems.filter((fs) => fs.FileSystemId !== hidden);
          return JSON.stringify(parsed);
        },
      },
    });
    const clients = reaperClients();
    clients.efs.middlewareStack.add(
      (next, context) => async (args) => {
        if (context.commandName === 'DescribeFileSystemsCommand' && listings === 1) {
          await c.efs.send(new UntagResourceCommand({ ResourceId: untagged, TagKeys: [TAG_FLEET] }));
        }
        return next(args);
      },
      { step: 'initialize', name: 'fleetTagRemoved' },
    );
    emu.proxy.resetStats();

    const report = await reap(clients, reaperSettingsFromFlags({ fleetId: 'f1' }), { clock: clockAt(60) });

    expect(report.failed).toEqual([]);
    expect([...report.deleted].sort()).toEqual([shown, hidden].sort());
    expect(report.kept).toEqual([
      {
        id: untagged,
        reason: expect.stringContaining(
          're-checked before deleting: mountfleet:fleet changed from f1 to (none)',
        ),
      },
    ]);
    // The listing, the re-check page, and the one by id for the file system that page did not show.
    expect(emu.proxy.count('efs', 'DescribeFileSystems')).toBe(3);
    expect([...(await describeAll(c.efs)).keys()]).toEqual([untagged]);
  });

  it('re-checks one by one when a re-check page cannot be read, and deletes nothing unread', async () => {
    const c = reaperClients();
    const net = await createNetwork(c.ec2, 1);
    const [terminated] = await launchOwners(c.ec2, 'f1', 'terminated');
    const ids = [
      await createFileSystem(c.efs, net, { fleet: 'f1', owner: terminated, mountTarget: true }),
      await createFileSystem(c.efs, net, { fleet: 'f1', owner: terminated }),
    ];
    let listings = 0;
    emu.proxy.addRule({
      service: 'efs',
      operation: 'DescribeFileSystems',
      // The second listing (the re-check's page) is refused outright (a 400 the SDK does not retry).
      match: (r) => r.query.get('FileSystemId') === null && ++listings === 2,
      fault: { kind: 'error', status: 400, code: 'BadRequest', message: 'Invalid Marker' },
    });
    const progress: string[] = [];
    emu.proxy.resetStats();

    const report = await reap(reaperClients(), reaperSettingsFromFlags({ fleetId: 'f1' }), {
      clock: clockAt(60),
      onProgress: (line) => progress.push(line),
    });

    expect(report).toMatchObject({ kept: [], failed: [] });
    expect([...report.deleted].sort()).toEqual([...ids].sort());
    expect(progress).toContainEqual(expect.stringMatching(/^re-check page failed \(BadRequest/));
    expect(emu.proxy.count('efs', 'DescribeFileSystems')).toBe(4);
  });

  it('re-reads by id when the deletions are no more than the listing pages (a few orphans among many file systems)', async () => {
    const c = reaperClients();
    const net = await createNetwork(c.ec2, 1);
    const [terminated] = await launchOwners(c.ec2, 'f1', 'terminated');
    for (let i = 0; i < 101; i++) await createFileSystem(c.efs, net, { fleet: 'f2', owner: terminated });
    const orphan = await createFileSystem(c.efs, net, { fleet: 'f1', owner: terminated });
    const byId: (string | null)[] = [];
    emu.proxy.addRule({
      service: 'efs',
      operation: 'DescribeFileSystems',
      match: (r) => {
        byId.push(r.query.get('FileSystemId')); // observes only: the rule never fires
        return false;
      },
      fault: { kind: 'delay', ms: 0 },
    });
    emu.proxy.resetStats();

    const report = await reap(reaperClients(), reaperSettingsFromFlags({ fleetId: 'f1' }), {
      clock: clockAt(60),
    });

    expect(report).toMatchObject({ deleted: [orphan], kept: [], failed: [] });
    // Two listing pages, then the one deletion re-read alone: a pass would read both pages again.
    expect(byId).toEqual([null, null, orphan]);
  });
});
