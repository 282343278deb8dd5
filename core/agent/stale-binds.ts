/**
 * Which of a job container's mounts are binds of a fleet mount that the host no longer serves new opens from.
 *
 * Docker binds a host volume recursively and rprivate at container start, and ECS gives a volume no propagation
 * setting, so a container keeps the mount it found: after Mountpoint dies (a FUSE connection dies with its server)
 * or after the Express switch stacks a new bind on the host path, the container still holds the old one. Such a
 * bind is told by its device (major:minor; a FUSE connection's device is its own) or, for a directory bound before
 * Mountpoint mounted on it, by its device and root (the directory's path in its file system).
 */
import { topMount, type MountEntry } from '../system';

/** Why a bind is stale. */
export type StaleReason = 'restarted' | 'zone-down' | 'before-mount' | 'stopped';

export const STALE_REASON_TEXT: Readonly<Record<StaleReason, string>> = {
  restarted: 'Mountpoint restarted',
  'zone-down': 'Express cache zone down',
  'before-mount': 'mounted before Mountpoint',
  stopped: 'Mountpoint stopped',
};

/** What the agent knows of its mounts, for telling a container's binds apart. */
export interface FleetView {
  /**
   * Every device one of the agent's Mountpoint processes has mounted, with the fleet path it serves: without a
   * reason while the host serves new opens from it, else why not (its process died or was replaced, its process
   * is the Express-cached one of a zone declared down, the agent stopped it).
   */
  readonly devices: ReadonlyMap<string, { readonly mount: string; readonly stale?: StaleReason }>;
  /** Each fleet path's own directory, below the mounts on it: what a bind taken before the mount came shows. */
  readonly underlying: readonly { readonly mount: string; readonly device: string; readonly root: string }[];
}

export interface StaleBind {
  /** Where the container sees it (its own mount namespace's path). */
  readonly containerPath: string;
  /** The fleet path it is a bind of. */
  readonly mount: string;
  readonly device: string;
  readonly reason: StaleReason;
}

const isFuse = (e: MountEntry) => e.fsType === 'fuse' || e.fsType.startsWith('fuse.');
const within = (path: string, dir: string) => path === dir || path.startsWith(dir === '/' ? '/' : `${dir}/`);

/** The container's mounts (its mountinfo) that are binds of a fleet mount no longer served, with the reason. */
export function staleBinds(container: readonly MountEntry[], fleet: FleetView): StaleBind[] {
  const stale: StaleBind[] = [];
  for (const e of container) {
    const known = fleet.devices.get(e.device);
    if (known) {
      if (known.stale)
        stale.push({
          containerPath: e.mountPoint,
          mount: known.mount,
          device: e.device,
          reason: known.stale,
        });
      continue;
    }
    if (isFuse(e)) continue; // not one of ours (no job gets a FUSE mount of its own: it is not privileged)
    const dir = fleet.underlying.find((u) => u.device === e.device && within(e.root, u.root));
    if (dir)
      stale.push({ containerPath: e.mountPoint, mount: dir.mount, device: e.device, reason: 'before-mount' });
  }
  return stale;
}

/**
 * A fleet path's own directory as a bind of it would show in mountinfo: the device and root of the mount that
 * holds the path when the mounts on the path itself are left out. Undefined when nothing holds it (not absolute).
 */
export function underlyingDirectory(
  path: string,
  host: readonly MountEntry[],
): { readonly device: string; readonly root: string } | undefined {
  let holding: string | undefined;
  for (const e of host) {
    if (e.mountPoint !== path && within(path, e.mountPoint) && e.mountPoint.length > (holding?.length ?? -1))
      holding = e.mountPoint;
  }
  const holder = holding === undefined ? undefined : topMount(holding, host);
  if (!holder) return undefined;
  const below = holder.mountPoint === '/' ? path : path.slice(holder.mountPoint.length);
  return { device: holder.device, root: holder.root === '/' ? below : `${holder.root}${below}` };
}
