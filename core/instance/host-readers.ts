/**
 * Facts the agent reads from the machine it runs on: memory (bounded by its cgroup), instance-store
 * NVMe disks and network interfaces. Every reader takes the file-system root so that tests can point it
 * at a fake /proc and /sys tree.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { networkInterfaces } from 'node:os';
import { join } from 'node:path';
import type { NvmeDisk, MemoryFacts } from '../tuner';

/** The model string EC2 gives instance-store NVMe devices (EBS volumes say "Amazon Elastic Block Store"). */
export const INSTANCE_STORE_MODEL = 'Amazon EC2 NVMe Instance Storage';

function readText(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
}

/** Total memory, or the cgroup v2 (memory.max) / v1 (memory.limit_in_bytes) limit when lower. */
export function readMemory(root = '/'): MemoryFacts {
  const meminfo = readText(join(root, 'proc/meminfo')) ?? '';
  const match = /^MemTotal:\s+(\d+)\s+kB/m.exec(meminfo);
  if (!match) throw new Error(`cannot read MemTotal from ${join(root, 'proc/meminfo')}`);
  let best: MemoryFacts = { totalMiB: Math.floor(Number(match[1]) / 1024), source: '/proc/meminfo MemTotal' };
  for (const file of ['sys/fs/cgroup/memory.max', 'sys/fs/cgroup/memory/memory.limit_in_bytes']) {
    const text = readText(join(root, file))?.trim();
    if (!text || !/^\d+$/.test(text)) continue; // "max" or absent: no limit
    const mib = Math.floor(Number(text) / 1024 / 1024);
    if (mib < best.totalMiB) best = { totalMiB: mib, source: `cgroup limit /${file}` };
  }
  return best;
}

/** Instance-store NVMe disks, found by their model string under /sys/block (EBS volumes are NVMe too). */
export function discoverInstanceStore(root = '/'): NvmeDisk[] {
  const blockDir = join(root, 'sys/block');
  if (!existsSync(blockDir)) return [];
  return readdirSync(blockDir)
    .filter((name) => /^nvme\d+n1$/.test(name))
    .filter((name) => readText(join(blockDir, name, 'device/model'))?.trim() === INSTANCE_STORE_MODEL)
    .sort((a, b) => Number(/\d+/.exec(a)![0]) - Number(/\d+/.exec(b)![0]))
    .map((name) => ({
      device: `/dev/${name}`,
      // /sys/block/X/size counts 512-byte sectors whatever the device's logical block size.
      sizeBytes: Number(readText(join(blockDir, name, 'size'))?.trim() ?? 0) * 512,
    }));
}

/** Non-loopback interfaces with an IPv4 address, in name order: candidates for `--bind`. */
export function listNetworkInterfaces(): string[] {
  return Object.entries(networkInterfaces())
    .filter(([, addrs]) => (addrs ?? []).some((a) => a.family === 'IPv4' && !a.internal))
    .map(([name]) => name)
    .sort();
}
