/**
 * Which Mountpoint mounts serve now, from the host's mountinfo and a statfs of each process's mount point, in either
 * mode: under systemd (Restart=on-failure) a process that died and came back shows only as a mount point whose
 * mount disappeared, is dead (ENOTCONN) or was replaced (a new mount ID and device). Keeps every device a process
 * has served, so a container's bind of an old one can be told from a bind of the live one (stale-binds.ts).
 */
import { statfs } from 'node:fs/promises';
import { readMountinfo, sameMount, topMount, type MountEntry } from '../system';
import type { ProcessRole } from '../tuner';
import type { EventLog } from './event-log';
import { underlyingDirectory, type FleetView, type StaleReason } from './stale-binds';

/** A statfs of a mount point unanswered this long counts as not serving (a stopped or wedged process). */
const STAT_STALL_MS = 5000;
/** Devices of replaced mounts remembered, newest kept: each is a restart, so this is far more than a host sees. */
const MAX_OLD_DEVICES = 256;

export interface WatchedMount {
  /** The user's path. */
  readonly path: string;
  readonly processes: readonly {
    readonly key: string;
    readonly role: ProcessRole;
    readonly mountPoint: string;
    /** Started by the agent (and not stopped): its mount point should hold its mount. */
    readonly started: boolean;
  }[];
  /** The role new opens on the user path should reach. */
  readonly active: ProcessRole;
}

export interface MountHealthReport {
  /** Every mount's active process serves and the user path leads to it; else why not (the first problem). */
  readonly notReady?: string;
  readonly fleet: FleetView;
}

export class MountHealth {
  /** Each process's mount while it serves (or stalls): key → its mountinfo entry. */
  private readonly current = new Map<string, MountEntry>();
  /** Every device a process has served: device → fleet path and the process key. */
  private readonly known = new Map<string, { readonly mount: string; readonly key: string }>();
  /** Mount points with a stat in flight. */
  private readonly pending = new Set<string>();
  private stoppedAll = false;

  constructor(
    private readonly log: EventLog,
    private readonly mountinfo: () => MountEntry[] = () => readMountinfo(),
  ) {}

  /**
   * Looks at every process's mount point. `zoneDown`: the Express zone is declared down, so its cached processes'
   * devices serve no new opens (a container holding one waits on the dark zone).
   */
  async check(mounts: readonly WatchedMount[], zoneDown: boolean): Promise<MountHealthReport> {
    const host = this.mountinfo();
    const problems: string[] = [];
    for (const m of mounts) {
      for (const p of m.processes) {
        const top = p.started && !this.stoppedAll ? topMount(p.mountPoint, host) : undefined;
        const answer = top ? await this.statOutcome(p.mountPoint) : 'gone';
        this.track(m.path, p.key, top, answer);
        if (p.role === m.active && answer !== '')
          problems.push(`${m.path}: its ${p.role} process ${describe(answer)}`);
      }
      const active = m.processes.find((p) => p.role === m.active);
      const serving = active && this.current.get(active.key);
      if (serving && topMount(m.path, host)?.device !== serving.device)
        problems.push(`${m.path} does not lead to its ${m.active} process`);
      if (serving && m.active === 'xz' && zoneDown)
        problems.push(`${m.path} is on the Express cache of a zone that is down`);
    }
    return {
      ...(problems.length ? { notReady: problems[0] } : {}),
      fleet: this.view(mounts, host, zoneDown),
    };
  }

  /** After the agent stopped its processes: every device they had is stale (`stopped`). */
  stopped(): void {
    this.stoppedAll = true;
    this.current.clear();
  }

  /** Records the process's mount now; a mount gone, dead or replaced makes its device stale from here on. */
  private track(path: string, key: string, top: MountEntry | undefined, answer: string): void {
    const before = this.current.get(key);
    const servesNow = top && (answer === '' || answer === 'stalled');
    if (before && servesNow && sameMount(before, top)) return;
    if (before) {
      this.current.delete(key);
      this.log({
        event: servesNow ? 'mount-replaced' : 'mount-lost',
        mount: path,
        process: key,
        device: before.device,
        ...(servesNow ? { newDevice: top.device, mountId: top.id } : { reason: describe(answer) }),
      });
    }
    if (!servesNow) return;
    this.current.set(key, top);
    this.known.delete(top.device); // re-inserted as the newest
    this.known.set(top.device, { mount: path, key });
    while (this.known.size > MAX_OLD_DEVICES) this.known.delete(this.known.keys().next().value!);
  }

  private view(mounts: readonly WatchedMount[], host: readonly MountEntry[], zoneDown: boolean): FleetView {
    const roleOf = new Map(mounts.flatMap((m) => m.processes.map((p) => [p.key, p.role] as const)));
    const devices = new Map<string, { mount: string; stale?: StaleReason }>();
    for (const [device, { mount, key }] of this.known) {
      const serving = this.current.get(key)?.device === device;
      const stale: StaleReason | undefined = this.stoppedAll
        ? 'stopped'
        : !serving
          ? 'restarted'
          : roleOf.get(key) === 'xz' && zoneDown
            ? 'zone-down'
            : undefined;
      devices.set(device, { mount, ...(stale ? { stale } : {}) });
    }
    const underlying = mounts.flatMap((m) => {
      const dir = underlyingDirectory(m.path, host);
      return dir ? [{ mount: m.path, ...dir }] : [];
    });
    return { devices, underlying };
  }

  /**
   * '' when a statfs of the mount point answered, its error code when it failed (ENOTCONN: the process is gone),
   * 'stalled' when it has not answered within STAT_STALL_MS. At most one per mount point is in flight, so a
   * wedged mount holds one thread of the pool (and this wait once), not one per sweep.
   */
  private async statOutcome(mountPoint: string): Promise<string> {
    if (this.pending.has(mountPoint)) return 'stalled';
    this.pending.add(mountPoint);
    let outcome: string | undefined;
    // statfs, not stat: FUSE answers a stat from attributes it has cached, also after its server died, while
    // every statfs is a request (ENOTCONN on a dead connection; Mountpoint answers it without S3).
    const answered = statfs(mountPoint).then(
      () => (outcome = ''),
      (e: NodeJS.ErrnoException) => (outcome = e.code ?? 'error'),
    );
    void answered.finally(() => this.pending.delete(mountPoint));
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([answered, new Promise((r) => (timer = setTimeout(r, STAT_STALL_MS)))]);
    clearTimeout(timer);
    return outcome ?? 'stalled';
  }
}

function describe(answer: string): string {
  if (answer === 'gone') return 'has no mount';
  if (answer === 'stalled') return `does not answer a statfs within ${STAT_STALL_MS} ms`;
  return `has a dead mount (${answer})`;
}
