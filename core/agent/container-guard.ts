/**
 * Ends a Batch job whose container holds a stale bind of a fleet mount (stale-binds.ts), so Batch retries it.
 *
 * Job containers are the leaf cgroups under the task cgroup (ECS: `ecstasks.slice/ecstasks-<task>.slice/
 * docker-<id>.scope`); a container's view is the mountinfo of one of its processes in a mount namespace other than
 * the agent's. A job on a stale bind fails or hangs on every open, and the Batch API cannot end it usefully: a job
 * ended by TerminateJob or CancelJob is not retried, one whose container exits non-zero is while attempts remain.
 * So the guard writes the reason to the job's log (its main process's stderr) and kills the container's cgroup:
 * the container exits 137. Nothing outside the task cgroup is touched.
 */
import { closeSync, constants, openSync, readlinkSync, statSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { cgroup2Root, cgroupMembers, killCgroup, leafCgroups, parentPid, readMountinfo } from '../system';
import type { EventLog } from './event-log';
import { STALE_REASON_TEXT, staleBinds, type FleetView, type StaleBind } from './stale-binds';

export interface EndedContainer {
  readonly cgroup: string;
  readonly pid: number;
  readonly binds: readonly StaleBind[];
  readonly killedBy: 'cgroup.kill' | 'SIGKILL';
  /** Whether the reason reached the job's stderr. */
  readonly told: boolean;
}

export class ContainerGuard {
  /** Containers ended since the agent started. */
  ended = 0;
  private readonly ownMountNamespace = mountNamespace(process.pid);
  private missingRootLogged = false;
  /** Cgroups ended and still there. */
  private readonly endedCgroups = new Set<string>();

  constructor(
    private readonly o: {
      /** agent.json containers.taskCgroup: relative to the cgroup v2 root. */
      readonly taskCgroup: string;
      readonly instanceId: string;
      readonly log: EventLog;
    },
  ) {}

  /** Ends every job container that holds a stale bind of a fleet mount; returns what it ended. */
  sweep(fleet: FleetView): EndedContainer[] {
    const root = cgroup2Root();
    if (!root) {
      if (!this.missingRootLogged)
        this.o.log({ event: 'containers-unguarded', reason: 'no cgroup v2 file system is mounted' });
      this.missingRootLogged = true;
      return [];
    }
    const ended: EndedContainer[] = [];
    const cgroups = leafCgroups(join(root, this.o.taskCgroup));
    for (const cgroup of this.endedCgroups) if (!cgroups.includes(cgroup)) this.endedCgroups.delete(cgroup);
    for (const cgroup of cgroups) {
      if (this.endedCgroups.has(cgroup)) {
        // Ended already: a process killed in a FUSE request its server has taken lingers until it is answered.
        killCgroup(cgroup);
        continue;
      }
      const view = this.containerView(cgroup);
      if (!view) continue;
      const binds = staleBinds(view.mounts, fleet);
      if (binds.length === 0) continue;
      const told = tellJob(view.mainPid, this.message(binds[0]));
      const killedBy = killCgroup(cgroup);
      this.endedCgroups.add(cgroup);
      this.ended++;
      const e: EndedContainer = { cgroup, pid: view.mainPid, binds, killedBy, told };
      ended.push(e);
      this.o.log({
        event: 'container-ended',
        cgroup,
        pid: view.mainPid,
        mount: binds[0].mount,
        containerPath: binds[0].containerPath,
        reason: STALE_REASON_TEXT[binds[0].reason],
        device: binds[0].device,
        killedBy,
        told,
      });
    }
    return ended;
  }

  /** The line the job's log gets before its container is killed. */
  private message(bind: StaleBind): string {
    const where =
      bind.containerPath === bind.mount ? bind.mount : `${bind.containerPath} (${bind.mount} on the host)`;
    return (
      `mountfleet: ending this job: ${where} is a bind from before the mount changed ` +
      `(${STALE_REASON_TEXT[bind.reason]}) on ${this.o.instanceId}; its bind in the container cannot see the live ` +
      'mount; Batch retries it while attempts remain\n'
    );
  }

  /**
   * The container's main process (the one whose parent is outside the cgroup: Docker's init, under the shim) and
   * the mounts seen by a process of it in a mount namespace and root of its own; undefined when it has none (empty,
   * not a container, or still being set up: runc copies the host's mount table, every fleet mount in it, into the
   * container's namespace before it pivots into the container's root and detaches the copy).
   */
  private containerView(
    cgroup: string,
  ): { mainPid: number; mounts: ReturnType<typeof readMountinfo> } | undefined {
    const members = cgroupMembers(cgroup);
    const inside = new Set(members);
    const mainPid = members.find((pid) => !inside.has(parentPid(pid) ?? 0)) ?? members[0];
    for (const pid of [mainPid, ...members]) {
      if (pid === undefined) continue;
      const ns = mountNamespace(pid);
      if (!ns || ns === this.ownMountNamespace || sameDirectory(`/proc/${pid}/root`, '/')) continue;
      try {
        return { mainPid, mounts: readMountinfo(`/proc/${pid}/mountinfo`) };
      } catch {
        // gone meanwhile: try the next
      }
    }
    return undefined;
  }
}

/** Whether two paths are one directory (a process's root is the agent's own: not yet in its container's root). */
function sameDirectory(a: string, b: string): boolean {
  try {
    const [x, y] = [statSync(a), statSync(b)];
    return x.dev === y.dev && x.ino === y.ino;
  } catch {
    return true; // gone meanwhile: nothing to look at
  }
}

function mountNamespace(pid: number): string | undefined {
  try {
    return readlinkSync(`/proc/${pid}/ns/mnt`);
  } catch {
    return undefined;
  }
}

/**
 * Appends a line to a process's stderr when it is a pipe or a terminal (Docker's log pipe, `docker run -t`),
 * without blocking (a full pipe drops it): a path there could be a file on the very mount that hangs.
 */
function tellJob(pid: number, line: string): boolean {
  const fd2 = `/proc/${pid}/fd/2`;
  try {
    const target = readlinkSync(fd2);
    if (!/^pipe:\[\d+\]$/.test(target) && !target.startsWith('/dev/pts/')) return false;
    const fd = openSync(
      fd2,
      constants.O_WRONLY | constants.O_APPEND | constants.O_NONBLOCK | constants.O_NOCTTY,
    );
    try {
      return writeSync(fd, line) === Buffer.byteLength(line);
    } finally {
      closeSync(fd);
    }
  } catch {
    return false;
  }
}
