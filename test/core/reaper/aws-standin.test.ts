/**
 * The AWS stand-in of the reaper's scale figures and backlog tests (aws-standin.ts) answers the real SDK clients
 * as AWS documents: the page sizes and batch limits, the errors the reaper relies on, throttling on the wall
 * clock and waiting on a virtual one.
 */
import { GetMetricDataCommand } from '@aws-sdk/client-cloudwatch';
import { DescribeInstancesCommand } from '@aws-sdk/client-ec2';
import {
  DeleteFileSystemCommand,
  DeleteMountTargetCommand,
  DescribeFileSystemsCommand,
  DescribeMountTargetsCommand,
} from '@aws-sdk/client-efs';
import { cloudWatchClient, ec2Client, efsClient } from '../../../core/aws/clients';
import { errorName } from '../../../core/common';
import { useStandIn, VirtualClock } from './aws-standin';

const scratch = (mountTargets = 0) => ({
  tags: { 'mountfleet:fleet': 'f1' },
  creationToken: 'mf/f1/run',
  createdAt: Date.now(),
  mountTargets,
});

describe('the AWS stand-in', () => {
  const start = useStandIn();

  it('lists at most 100 file systems a page, whatever MaxItems asks, and pages on with the marker', async () => {
    const s = await start({ rateLimits: false });
    for (let i = 0; i < 250; i++) s.addFileSystem(scratch());
    const efs = efsClient();
    const sizes: number[] = [];
    let marker: string | undefined;
    do {
      const page = await efs.send(new DescribeFileSystemsCommand({ MaxItems: 1000, Marker: marker }));
      sizes.push(page.FileSystems!.length);
      marker = page.NextMarker;
    } while (marker);
    expect(sizes).toEqual([100, 100, 50]);
  });

  it('lists every file system while deleted ones finish deleting', async () => {
    const clock = new VirtualClock(Date.now());
    const s = await start({ clock, rateLimits: false, deletingMs: 60_000 });
    const ids = Array.from({ length: 300 }, () => s.addFileSystem(scratch()));
    const efs = efsClient();
    for (const id of ids.slice(0, 200)) await efs.send(new DeleteFileSystemCommand({ FileSystemId: id }));
    clock.advance(60_000); // the 200 are gone: the first page's walk finds them so
    const listed: string[] = [];
    let marker: string | undefined;
    do {
      const page = await efs.send(new DescribeFileSystemsCommand({ Marker: marker }));
      listed.push(...page.FileSystems!.map((fs) => fs.FileSystemId!));
      marker = page.NextMarker;
    } while (marker);
    expect(listed).toEqual(ids.slice(200));
  });

  it('refuses more than 500 metric queries and more than 200 filter values, as AWS does', async () => {
    await start({ rateLimits: false });
    const query = (i: number) => ({
      Id: `q${i}`,
      MetricStat: {
        Metric: { Namespace: 'AWS/EFS', MetricName: 'ClientConnections' },
        Period: 60,
        Stat: 'Sum',
      },
    });
    const metrics = (n: number) =>
      cloudWatchClient().send(
        new GetMetricDataCommand({
          StartTime: new Date(0),
          EndTime: new Date(60_000),
          MetricDataQueries: Array.from({ length: n }, (_, i) => query(i)),
        }),
      );
    await expect(metrics(500)).resolves.toMatchObject({ MetricDataResults: expect.any(Array) });
    await expect(metrics(501)).rejects.toThrow(/must not have a size greater than 500/);
    const instances = (n: number) =>
      ec2Client().send(
        new DescribeInstancesCommand({
          Filters: [{ Name: 'instance-id', Values: Array.from({ length: n }, (_, i) => `i-${i}`) }],
        }),
      );
    await expect(instances(200)).resolves.toMatchObject({ Reservations: [] });
    await expect(instances(201)).rejects.toMatchObject({ name: 'FilterLimitExceeded' });
  });

  it('refuses DeleteFileSystem while a mount target exists, shows the deletion, and counts a second one', async () => {
    const clock = new VirtualClock(Date.now());
    const s = await start({ clock, rateLimits: false, deletingMs: 60_000 });
    const id = s.addFileSystem(scratch(1));
    const efs = efsClient();
    const { MountTargets } = await efs.send(new DescribeMountTargetsCommand({ FileSystemId: id }));
    await expect(efs.send(new DeleteFileSystemCommand({ FileSystemId: id }))).rejects.toMatchObject({
      name: 'FileSystemInUse',
    });
    await efs.send(new DeleteMountTargetCommand({ MountTargetId: MountTargets![0].MountTargetId }));
    await efs.send(new DeleteFileSystemCommand({ FileSystemId: id }));
    expect(s.fileSystem(id)?.lifeCycleState).toBe('deleting');
    expect(s.repeatDeletions).toBe(0);
    await efs.send(new DeleteFileSystemCommand({ FileSystemId: id }));
    expect(s.repeatDeletions).toBe(1);
    clock.advance(60_000);
    const gone = await efs.send(new DescribeFileSystemsCommand({ FileSystemId: id })).catch(errorName);
    expect(gone).toBe('FileSystemNotFound');
  });

  it('throttles past the rate limit on the wall clock, and waits for the token on a virtual one', async () => {
    const limits = {
      efs: { ratePerSecond: 1, burst: 2 },
      ec2: { ratePerSecond: 1, burst: 1 },
      cloudwatch: { ratePerSecond: 1, burst: 1 },
      batch: { ratePerSecond: 1, burst: 1 },
      tagging: { ratePerSecond: 1, burst: 1 },
    };
    // On the wall clock, a refill of one token an hour: the third request finds the bucket empty however slowly
    // the machine gets the three out.
    const wall = await start({ rateLimits: { ...limits, efs: { ratePerSecond: 1 / 3600, burst: 2 } } });
    const once = efsClient({ maxAttempts: 1 });
    const answers = await Promise.all(
      [1, 2, 3].map(() => once.send(new DescribeFileSystemsCommand({})).then(() => 'ok', errorName)),
    );
    expect(answers.sort()).toEqual(['ThrottlingException', 'ok', 'ok']);
    expect(wall.calls()['efs:DescribeFileSystems']).toEqual({ answered: 2, throttled: 1 });
    await wall.stop();

    const clock = new VirtualClock(0);
    const virtual = await start({ clock, rateLimits: limits });
    const efs = efsClient({ maxAttempts: 1 });
    for (let i = 0; i < 5; i++) await efs.send(new DescribeFileSystemsCommand({}));
    // Two at once from the full bucket, then one a second.
    expect(clock.now()).toBe(3000);
    expect(virtual.calls()['efs:DescribeFileSystems']).toEqual({ answered: 5, throttled: 0 });
  });
});
