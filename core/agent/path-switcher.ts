/**
 * Points the user's path at one of a mount's two Mountpoint processes by stacking bind mounts on it.
 *
 * A path lookup resolves to the top-most mount on the path, so a new bind on top steers every *new*
 * open at once, while files already open keep the mount they were opened on. Switching back lazily
 * detaches the top bind (`umount -l`): the layer below shows again, and handles still open on the
 * detached layer keep working until closed. There is never a moment with nothing mounted on the path.
 */
import { mkdirSync } from 'node:fs';
import {
  untrustedConfiguredPathProblem,
  untrustedMountPointProblem,
  mountStack,
  sameMount,
  topMount,
  type MountEntry,
} from '../system';
import { execCommand, type CommandRunner } from './command-runner';

interface Layer {
  /** The directory bound onto the user's path (a Mountpoint process's mount point). */
  readonly target: string;
  /** Mount ID of the bind on the user's path. */
  readonly layerId: number;
  /** The target's own mount when bound: a different mount there means the process was restarted. */
  readonly targetMount: MountEntry;
}

export class PathSwitcher {
  private layers: Layer[] = [];

  constructor(
    readonly userPath: string,
    private readonly run: CommandRunner = execCommand,
    private readonly mountinfo: () => MountEntry[] | undefined = () => undefined,
  ) {}

  /** The target new opens resolve to, or undefined before the first switch. */
  get active(): string | undefined {
    return this.layers.at(-1)?.target;
  }

  get depth(): number {
    return this.layers.length;
  }

  /**
   * Makes `target` the top of the user's path. Pops the top layer when the one below is a live bind of
   * `target`; otherwise pushes a new bind. Does nothing when `target` is already on top and current.
   */
  async switchTo(target: string): Promise<void> {
    const targetMount = topMount(target, this.entries());
    if (!targetMount)
      throw new Error(`cannot switch ${this.userPath} to ${target}: nothing is mounted there`);
    const top = this.layers.at(-1);
    if (top?.target === target && sameMount(top.targetMount, targetMount)) return;
    const below = this.layers.at(-2);
    if (below?.target === target && sameMount(below.targetMount, targetMount) && top) {
      await this.run('umount', ['-l', this.userPath]);
      this.layers.pop();
      return;
    }
    // Once this switcher has stacked binds on the path, the path is a mount point of ours, which answers ENOTCONN
    // when the process under the top bind died (the rebind after its restart): only its parent can re-point it.
    const untrusted =
      this.layers.length > 0
        ? untrustedMountPointProblem(this.userPath)
        : untrustedConfiguredPathProblem(this.userPath);
    if (untrusted) throw new Error(`not binding ${target} on ${this.userPath}: ${untrusted}`);
    if (this.layers.length === 0) mkdirSync(this.userPath, { recursive: true });
    await this.run('mount', ['--bind', target, this.userPath]);
    const layer = topMount(this.userPath, this.entries());
    if (!layer) throw new Error(`bind of ${target} on ${this.userPath} did not appear in mountinfo`);
    this.layers.push({ target, layerId: layer.id, targetMount });
  }

  /** Whether the active target's process was restarted (its mount has a new ID): refresh() would rebind. */
  needsRefresh(): boolean {
    const top = this.layers.at(-1);
    if (!top) return false;
    const current = topMount(top.target, this.entries());
    return current !== undefined && !sameMount(current, top.targetMount);
  }

  /** Rebinds the active target when its process was restarted (its mount has a new ID). */
  async refresh(): Promise<boolean> {
    if (!this.needsRefresh()) return false;
    await this.switchTo(this.layers.at(-1)!.target);
    return true;
  }

  /** Lazily detaches every layer this switcher stacked; open handles stay valid until closed. */
  async detachAll(): Promise<void> {
    while (this.layers.length > 0) {
      const ours = new Set(this.layers.map((l) => l.layerId));
      const top = mountStack(this.userPath, this.entries()).at(-1);
      if (!top || !ours.has(top.id)) break; // someone else mounted on top: leave the path alone
      await this.run('umount', ['-l', this.userPath]);
      this.layers = this.layers.filter((l) => l.layerId !== top.id);
    }
    this.layers = [];
  }

  private entries(): MountEntry[] | undefined {
    return this.mountinfo();
  }
}
