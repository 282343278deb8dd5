/**
 * The container guard's decision, from mountinfo text as the kernel writes it: which of a job container's mounts
 * are binds of a fleet mount the host no longer serves new opens from, and why.
 */
import { parseMountinfo } from '../../../core/system/mountinfo';
import { staleBinds, underlyingDirectory, type FleetView } from '../../../core/agent/stale-binds';

/** The host: root file system, the run directory's Mountpoint mounts, and the user path's stacked binds. */
const HOST = parseMountinfo(
  [
    '27 1 259:1 / / rw,relatime - xfs /dev/nvme0n1p1 rw',
    '40 27 0:25 / /run rw,nosuid,nodev - tmpfs tmpfs rw',
    '60 40 0:51 / /run/mountfleet/mnt-data/xz rw,nosuid,nodev - fuse mountpoint-s3 rw,user_id=0',
    '61 40 0:52 / /run/mountfleet/mnt-data/direct rw,nosuid,nodev - fuse mountpoint-s3 rw,user_id=0',
    '62 27 0:51 / /mnt/data rw,nosuid,nodev - fuse mountpoint-s3 rw,user_id=0',
    '63 62 0:52 / /mnt/data rw,nosuid,nodev - fuse mountpoint-s3 rw,user_id=0',
    '70 27 0:53 / /mnt/masters rw,nosuid,nodev - fuse mountpoint-s3 rw,user_id=0',
  ].join('\n'),
);

/** A job container: its image, Docker's files, and whatever the test binds at /mnt/data and /mnt/masters. */
const container = (...binds: string[]) =>
  parseMountinfo(
    [
      '900 800 0:80 / / rw,relatime - overlay overlay rw,lowerdir=/var/lib/docker/overlay2/l/A',
      '901 900 0:81 / /proc rw,nosuid,nodev,noexec - proc proc rw',
      '902 900 259:1 /var/lib/docker/containers/abc/hosts /etc/hosts rw,relatime - xfs /dev/nvme0n1p1 rw',
      ...binds,
    ].join('\n'),
  );

const fleet = (devices: FleetView['devices']): FleetView => ({
  devices,
  underlying: ['/mnt/data', '/mnt/masters'].map((mount) => ({ mount, ...underlyingDirectory(mount, HOST)! })),
});

const live: FleetView = fleet(
  new Map([
    ['0:51', { mount: '/mnt/data' }],
    ['0:52', { mount: '/mnt/data' }],
    ['0:53', { mount: '/mnt/masters' }],
  ]),
);

test("a fleet path's own directory is the root file system's /mnt/data: what a bind taken before the mount shows", () => {
  expect(underlyingDirectory('/mnt/data', HOST)).toEqual({ device: '259:1', root: '/mnt/data' });
  // Below a mount that is not the root, the root field starts at that mount's own root.
  const nested = parseMountinfo(
    ['27 1 259:1 / / rw - xfs /dev/x rw', '30 27 259:2 /exports/a /srv rw - xfs /dev/y rw'].join('\n'),
  );
  expect(underlyingDirectory('/srv/mnt/data', nested)).toEqual({
    device: '259:2',
    root: '/exports/a/mnt/data',
  });
});

test('binds of live mounts, the image and Docker files are left alone', () => {
  const view = container(
    '903 900 0:52 / /mnt/data ro,nosuid,nodev - fuse mountpoint-s3 rw,user_id=0',
    '904 900 0:53 / /mnt/masters ro,nosuid,nodev - fuse mountpoint-s3 rw,user_id=0',
  );
  expect(staleBinds(view, live)).toEqual([]);
});

test('a bind of the device of a Mountpoint that died or was restarted is stale: "restarted"', () => {
  const restarted = fleet(
    new Map([...live.devices, ['0:53', { mount: '/mnt/masters', stale: 'restarted' }]]),
  );
  const view = container('904 900 0:53 / /mnt/masters ro,nosuid,nodev - fuse mountpoint-s3 rw,user_id=0');
  expect(staleBinds(view, restarted)).toEqual([
    { containerPath: '/mnt/masters', mount: '/mnt/masters', device: '0:53', reason: 'restarted' },
  ]);
});

test('a bind of the Express-cached process of a zone declared down is stale; one of its standby is not', () => {
  const down = fleet(new Map([...live.devices, ['0:51', { mount: '/mnt/data', stale: 'zone-down' }]]));
  expect(
    staleBinds(container('903 900 0:51 / /mnt/data ro,nosuid,nodev - fuse mountpoint-s3 rw,user_id=0'), down),
  ).toEqual([{ containerPath: '/mnt/data', mount: '/mnt/data', device: '0:51', reason: 'zone-down' }]);
  expect(
    staleBinds(container('903 900 0:52 / /mnt/data ro,nosuid,nodev - fuse mountpoint-s3 rw,user_id=0'), down),
  ).toEqual([]);
});

test('a bind of the directory under a fleet path (or below it), taken before Mountpoint mounted there, is stale', () => {
  const view = container(
    '903 900 259:1 /mnt/data /data ro,relatime - xfs /dev/nvme0n1p1 rw',
    '904 900 259:1 /mnt/masters/2024 /masters ro,relatime - xfs /dev/nvme0n1p1 rw',
    // A neighbour whose name only starts like a fleet path is not below it.
    '905 900 259:1 /mnt/database /db ro,relatime - xfs /dev/nvme0n1p1 rw',
  );
  expect(staleBinds(view, live)).toEqual([
    { containerPath: '/data', mount: '/mnt/data', device: '259:1', reason: 'before-mount' },
    { containerPath: '/masters', mount: '/mnt/masters', device: '259:1', reason: 'before-mount' },
  ]);
});

test("a FUSE mount that is none of the agent's is not judged, nor is a device the agent never had", () => {
  const view = container('903 900 0:99 / /mnt/data ro,nosuid,nodev - fuse.sshfs host:/x rw,user_id=0');
  expect(staleBinds(view, live)).toEqual([]);
});

test('after the agent stopped, every bind of its mounts is stale: "stopped"', () => {
  const stopped = fleet(new Map([...live.devices].map(([d, v]) => [d, { ...v, stale: 'stopped' as const }])));
  const view = container('903 900 0:52 / /mnt/data ro,nosuid,nodev - fuse mountpoint-s3 rw,user_id=0');
  expect(staleBinds(view, stopped).map((b) => b.reason)).toEqual(['stopped']);
});
