/**
 * FUSE's control file system (fusectl, at /sys/fs/fuse/connections; systemd mounts it at boot): a directory per live
 * FUSE connection, named by the connection's device number (for FUSE's anonymous devices, major 0, its minor).
 * Writing to its `abort` ends every request in flight on that connection at once (they fail with ENOTCONN) and the
 * connection with them, whatever its server is doing (linux Documentation/filesystems/fuse.rst, "Aborting a
 * filesystem connection").
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { readMountinfo, type MountEntry } from './mountinfo';

const FUSE_CONNECTIONS = '/sys/fs/fuse/connections';

/** What an abort did: `aborted`, `gone` (no such connection any more), or `no-fusectl` (not mounted here). */
export type FuseAbortOutcome = 'aborted' | 'gone' | 'no-fusectl';

/** Aborts the FUSE connection of a mount by its device (`major:minor` as mountinfo gives it). */
export function abortFuseConnection(
  device: string,
  mountinfo: () => readonly MountEntry[] = () => readMountinfo(),
): FuseAbortOutcome {
  const [major, minor] = device.split(':');
  if (major !== '0' || !/^\d+$/.test(minor ?? '')) return 'gone';
  if (!mountinfo().some((e) => e.fsType === 'fusectl' && e.mountPoint === FUSE_CONNECTIONS))
    return 'no-fusectl';
  try {
    writeFileSync(join(FUSE_CONNECTIONS, minor, 'abort'), '1');
    return 'aborted';
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return 'gone';
    throw e;
  }
}
