/** Mount helper invocation and unmounting, with real tmpfs mounts in a temp dir (we run as root). */
import { MountfleetError } from '../../../core/common/errors';
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isMounted, mountCommand, mountFileSystem, topMountAt, unmount } from '../../../core/scratch/mount';
import { MOUNT_HELPER_STANDIN } from '../../agent/commands/scratch/harness';

describe('scratch mounts', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'mf-mount-'));
  });
  afterEach(() => {
    spawnSync('umount', ['-l', join(dir, 'm')]);
    rmSync(dir, { recursive: true, force: true });
  });

  it('calls the helper like mount.efs, and the system mount as `mount -t efs` by default', () => {
    const request = { fileSystemId: 'fs-12345678', path: '/mnt/scratch', mountTargetIp: '10.0.1.7' };
    expect(mountCommand({ ...request, helper: '/opt/mount.efs' })).toEqual([
      '/opt/mount.efs',
      ['fs-12345678:/', '/mnt/scratch', '-o', 'tls,mounttargetip=10.0.1.7,noresvport'],
    ]);
    expect(mountCommand(request)).toEqual([
      'mount',
      ['-t', 'efs', '-o', 'tls,mounttargetip=10.0.1.7,noresvport', 'fs-12345678:/', '/mnt/scratch'],
    ]);
  });

  it('reads mount points from mountinfo, escapes included', () => {
    const info = join(dir, 'mountinfo');
    writeFileSync(info, '42 27 0:39 / /tmp/with\\040space rw,relatime - tmpfs x rw\n');
    expect(isMounted('/tmp/with space', info)).toBe(true);
    expect(isMounted('/tmp/with', info)).toBe(false);
  });

  it('mounts through the stand-in helper, unmounts, and detaches lazily when busy', async () => {
    const path = join(dir, 'm');
    mkdirSync(path);
    await mountFileSystem({
      fileSystemId: 'fs-12345678',
      path,
      mountTargetIp: '10.0.0.4',
      helper: MOUNT_HELPER_STANDIN,
    });
    expect(isMounted(path)).toBe(true);
    const first = topMountAt(path)!;
    expect(await unmount(path, first)).toBe('unmounted');
    expect(await unmount(path, first)).toBe('not-mounted');

    await mountFileSystem({
      fileSystemId: 'fs-12345678',
      path,
      mountTargetIp: '10.0.0.4',
      helper: MOUNT_HELPER_STANDIN,
    });
    const holder = spawn('sleep', ['30'], { cwd: path }); // keeps the mount busy
    try {
      expect(await unmount(path, topMountAt(path)!)).toBe('lazy');
      expect(isMounted(path)).toBe(false);
    } finally {
      holder.kill('SIGKILL');
    }
  });

  it('unmounts only the mount it made: not one stacked on top of it, not one that replaced it', async () => {
    const path = join(dir, 'm');
    mkdirSync(path);
    const mount = (source: string) => spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=1m', source, path]);
    await mountFileSystem({
      fileSystemId: 'fs-12345678',
      path,
      mountTargetIp: '10.0.0.4',
      helper: MOUNT_HELPER_STANDIN,
    });
    const ours = topMountAt(path)!;
    expect(ours.source).toBe('efs-standin:fs-12345678');

    mount('someone-else'); // another mount on top of ours at the same path
    expect(await unmount(path, ours)).toBe('not-ours');
    expect(topMountAt(path)!.source).toBe('someone-else');

    spawnSync('umount', [path]); // theirs goes; ours is on top again
    expect(await unmount(path, ours)).toBe('unmounted');
    mount('someone-else'); // a different mount now where ours was
    expect(await unmount(path, ours)).toBe('not-ours');
    expect(isMounted(path)).toBe(true);
    spawnSync('umount', [path]);
  });

  it('kills a hanging helper (and what it started) at once when the run is stopped', async () => {
    const path = join(dir, 'm');
    mkdirSync(path);
    // A helper that never returns, whose child (sleep) holds its output open.
    const hangingHelper = join(dir, 'hanging-mount-helper');
    writeFileSync(hangingHelper, '#!/bin/sh\nsleep 300\n', { mode: 0o755 });
    const stop = new AbortController();
    setTimeout(() => stop.abort(), 300);
    const started = Date.now();
    await expect(
      mountFileSystem({
        fileSystemId: 'fs-12345678',
        path,
        mountTargetIp: '10.0.0.4',
        helper: hangingHelper,
        signal: stop.signal,
      }),
    ).rejects.toThrow(/stopped \(the run was asked to stop\): killed/);
    expect(Date.now() - started).toBeLessThan(3000);
    expect(isMounted(path)).toBe(false);
  });

  it("quotes only the end of a helper's stderr, however much it wrote", async () => {
    const chattyHelper = join(dir, 'chatty-mount-helper');
    // 8 MiB of noise, then the reason, then a failure.
    writeFileSync(
      chattyHelper,
      '#!/bin/sh\nhead -c 8388608 /dev/zero | tr "\\0" x >&2\necho >&2\necho "the real reason" >&2\nexit 32\n',
      { mode: 0o755 },
    );
    const failure = await mountFileSystem({
      fileSystemId: 'fs-12345678',
      path: join(dir, 'm'),
      mountTargetIp: '10.0.0.4',
      helper: chattyHelper,
    }).catch((err: unknown) => err);
    expect(failure).toBeInstanceOf(MountfleetError);
    expect((failure as Error).message).toMatch(/x\nthe real reason$/);
    expect((failure as Error).message.length).toBeLessThan(4096 + 200);
  });

  it('reports what the helper said when it refuses', async () => {
    await expect(
      mountFileSystem({
        fileSystemId: 'fs-12345678',
        path: join(dir, 'absent'),
        mountTargetIp: '10.0.0.4',
        helper: MOUNT_HELPER_STANDIN,
      }),
    ).rejects.toThrow(
      new MountfleetError(
        `${MOUNT_HELPER_STANDIN} fs-12345678:/ ${join(dir, 'absent')} -o tls,mounttargetip=10.0.0.4,noresvport failed: mount.efs-standin: mount point ${join(dir, 'absent')} does not exist or is not a directory`,
      ),
    );
  });
});
