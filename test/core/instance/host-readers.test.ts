import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { planCacheVolume, RAID_DEVICE } from '../../../core/tuner/cache-volume';
import { prepareCacheVolume } from '../../../core/agent/cache-volume-setup';
import { discoverInstanceStore, INSTANCE_STORE_MODEL, readMemory } from '../../../core/instance/host-readers';

let root: string;
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'mountfleet-host-'));
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

function fakeFile(path: string, text: string) {
  mkdirSync(join(root, path, '..'), { recursive: true });
  writeFileSync(join(root, path), text);
}
/** A /sys/block entry as the kernel shows it: model padded with spaces, size in 512-byte sectors. */
function fakeNvme(name: string, model: string, bytes: number) {
  fakeFile(`sys/block/${name}/device/model`, `${model.padEnd(40)}\n`);
  fakeFile(`sys/block/${name}/size`, `${bytes / 512}\n`);
}

test('instance-store disks are told from EBS volumes by their model, in device order', () => {
  fakeNvme('nvme0n1', 'Amazon Elastic Block Store', 100e9);
  fakeNvme('nvme10n1', INSTANCE_STORE_MODEL, 1900e9);
  fakeNvme('nvme2n1', INSTANCE_STORE_MODEL, 1900e9);
  fakeFile('sys/block/loop0/size', '0\n');
  expect(discoverInstanceStore(root)).toEqual([
    { device: '/dev/nvme2n1', sizeBytes: 1900e9 },
    { device: '/dev/nvme10n1', sizeBytes: 1900e9 },
  ]);
});

test('no /sys/block at all means no instance store', () => {
  expect(discoverInstanceStore(root)).toEqual([]);
});

test('memory is MemTotal, or the cgroup limit when that is lower', () => {
  fakeFile('proc/meminfo', 'MemTotal:       32505856 kB\nMemFree:        1000 kB\n');
  expect(readMemory(root)).toEqual({ totalMiB: 31744, source: '/proc/meminfo MemTotal' });
  fakeFile('sys/fs/cgroup/memory.max', 'max\n');
  expect(readMemory(root).totalMiB).toBe(31744);
  fakeFile('sys/fs/cgroup/memory.max', `${8 * 1024 ** 3}\n`);
  expect(readMemory(root)).toEqual({ totalMiB: 8192, source: 'cgroup limit /sys/fs/cgroup/memory.max' });
});

test('several disks become one RAID 0 array, formatted and mounted (commands recorded, nothing formatted)', async () => {
  const volume = planCacheVolume(
    [
      { device: '/dev/nvme1n1', sizeBytes: 1900e9 },
      { device: '/dev/nvme2n1', sizeBytes: 1900e9 },
    ],
    10_000,
    root,
  );
  expect(volume).toMatchObject({ kind: 'instance-store', device: RAID_DEVICE });
  const calls: string[] = [];
  await prepareCacheVolume(
    volume,
    async (file, args) => {
      calls.push([file, ...args].join(' '));
      return '';
    },
    () => false,
  );
  expect(calls).toEqual([
    `mdadm --create ${RAID_DEVICE} --level=0 --run --force --raid-devices=2 /dev/nvme1n1 /dev/nvme2n1`,
    `mkfs.ext4 -F -q -m 0 -E nodiscard -L mountfleet-cache ${RAID_DEVICE}`,
    `mount -o noatime ${RAID_DEVICE} ${join(root, '/mnt/mountfleet-cache')}`,
  ]);
});

test('one disk is formatted directly; an already mounted volume is left alone', async () => {
  const volume = planCacheVolume([{ device: '/dev/nvme1n1', sizeBytes: 250e9 }], 10_000, root);
  const calls: string[] = [];
  const run = async (file: string, args: readonly string[]) => {
    calls.push([file, ...args].join(' '));
    return '';
  };
  await prepareCacheVolume(volume, run, () => false);
  expect(calls.map((c) => c.split(' ')[0])).toEqual(['mkfs.ext4', 'mount']);
  calls.length = 0;
  await prepareCacheVolume(volume, run, () => true);
  expect(calls).toEqual([]);
});

test('without instance store: a bounded share of the root volume, or no data cache at all', () => {
  expect(planCacheVolume([], 200 * 1024, root)).toMatchObject({ kind: 'root', capacityMiB: 20 * 1024 });
  expect(planCacheVolume([], 40 * 1024, root)).toMatchObject({ kind: 'root', capacityMiB: 10 * 1024 });
  expect(planCacheVolume([], 2048, root)).toMatchObject({ kind: 'none' });
});
