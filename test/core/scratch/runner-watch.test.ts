/**
 * The runner's watcher script under each shell a host or container image may call `sh` (dash: Debian,
 * Ubuntu and most images, where AWS Batch jobs run; bash elsewhere): what it does to the job and to the run's
 * mount for each way the runner's pipe can end, and when the watcher itself is sent SIGTERM as the runner
 * dies (systemd stopping the unit). The job is a real process group; the mount a real tmpfs.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { topMount, type MountEntry } from '../../../core/system/mountinfo';
import { processGroupMembers } from '../../../core/system/processes';
import { escapeMountinfo, WATCHER_SCRIPT } from '../../../core/scratch/runner-watch';

jest.setTimeout(30_000);

const SHELLS = ['dash', 'bash'].filter((shell) => spawnSync(shell, ['-c', 'true']).status === 0);

/** Lines a process prints, with a wait for one of them. */
function lines(child: ChildProcess) {
  let text = '';
  const waiters: { pattern: RegExp; resolve: () => void }[] = [];
  child.stdout!.on('data', (d: Buffer) => {
    text += d.toString();
    for (const w of [...waiters]) if (w.pattern.test(text)) w.resolve();
  });
  return {
    text: () => text,
    waitFor: (pattern: RegExp) =>
      new Promise<void>((resolve) => (pattern.test(text) ? resolve() : waiters.push({ pattern, resolve }))),
  };
}

/**
 * A job in a process group of its own that checkpoints on SIGTERM: it says `term`, takes a moment, says
 * `checkpointed` and exits 0. Killed before that, it never says `checkpointed`.
 */
function startJob() {
  const child = spawn(
    'sh',
    [
      '-c',
      `trap 'echo term; sleep 0.3; echo checkpointed; exit 0' TERM
       echo ready
       while :; do sleep 0.05; done`,
    ],
    { detached: true, stdio: ['ignore', 'pipe', 'ignore'] },
  );
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  return { child, out: lines(child), exited, pg: child.pid! };
}

interface Scene {
  readonly dir: string;
  readonly mount: MountEntry;
}

function mountScratch(): Scene {
  const dir = mkdtempSync(join(tmpdir(), 'mf-watch-'));
  const path = join(dir, 'scratch dir'); // a space: mountinfo escapes it, the unmount must not
  mkdirSync(path);
  const r = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'mf-watch', path]);
  if (r.status !== 0) throw new Error(`mount: ${r.stderr}`);
  return { dir, mount: topMount(path)! };
}

function cleanUp(scene: Scene, ...pgs: number[]): void {
  for (const pg of pgs) {
    try {
      process.kill(-pg, 'SIGKILL');
    } catch {
      // gone
    }
  }
  spawnSync('umount', ['-l', scene.mount.mountPoint]);
  rmSync(scene.dir, { recursive: true, force: true });
}

function startWatcher(shell: string, scene: Scene, graceSeconds: number) {
  const { mount } = scene;
  const child = spawn(
    shell,
    [
      '-c',
      WATCHER_SCRIPT,
      'mountfleet-runner-watch',
      String(graceSeconds),
      '',
      '',
      String(mount.id),
      mount.device,
      escapeMountinfo(mount.mountPoint),
      mount.mountPoint,
      'J',
    ],
    { detached: true, stdio: ['pipe', 'pipe', 'pipe'] },
  );
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const out = lines(child);
  /** Resolves once the watcher has the group and its traps are set (it says `armed`). */
  const armed = () => out.waitFor(/^armed$/m);
  return { child, exited, armed, stderr: () => stderr };
}

const mounted = (scene: Scene) => topMount(scene.mount.mountPoint)?.id === scene.mount.id;

describe.each(SHELLS)('the watcher under %s', (shell) => {
  it('gives the job its grace period when the runner dies mid-job, then unmounts', async () => {
    const scene = mountScratch();
    const job = startJob();
    try {
      await job.out.waitFor(/^ready$/m);
      const watcher = startWatcher(shell, scene, 10);
      watcher.child.stdin!.end(`${job.pg}\n`); // the runner dies: EOF without `done`
      expect(await job.exited).toEqual({ code: 0, signal: null });
      expect(job.out.text()).toContain('checkpointed');
      await watcher.exited;
      expect(watcher.stderr()).toContain('the runner of job J died: stopping the job');
      expect(mounted(scene)).toBe(false);
    } finally {
      cleanUp(scene, job.pg);
    }
  });

  it('still stops the job and unmounts when it is sent SIGTERM as the runner dies (systemctl stop)', async () => {
    const scene = mountScratch();
    const job = startJob();
    try {
      await job.out.waitFor(/^ready$/m);
      const watcher = startWatcher(shell, scene, 10);
      watcher.child.stdin!.write(`${job.pg}\n`);
      await watcher.armed();
      watcher.child.kill('SIGTERM');
      watcher.child.stdin!.end();
      await watcher.exited;
      expect(watcher.child.signalCode).toBeNull();
      // The watcher is done only after the job: nothing of it may be alive now.
      expect(processGroupMembers(job.pg)).toEqual([]);
      expect(await job.exited).toEqual({ code: 0, signal: null });
      expect(mounted(scene)).toBe(false);
    } finally {
      cleanUp(scene, job.pg);
    }
  });

  it('after `exited` never signals the process group (its number may be reused), but still unmounts', async () => {
    const scene = mountScratch();
    // A live group standing for whoever got the old job's number.
    const other = startJob();
    try {
      await other.out.waitFor(/^ready$/m);
      const watcher = startWatcher(shell, scene, 10);
      watcher.child.stdin!.end(`${other.pg}\nexited\n`);
      await watcher.exited;
      expect(watcher.stderr()).toContain('died before its teardown was over: unmounting');
      expect(mounted(scene)).toBe(false);
      expect(other.out.text()).not.toContain('term');
      expect(processGroupMembers(other.pg)).not.toEqual([]);
    } finally {
      cleanUp(scene, other.pg);
    }
  });

  it('after `done` leaves the job and the mount alone', async () => {
    const scene = mountScratch();
    const job = startJob();
    try {
      await job.out.waitFor(/^ready$/m);
      const watcher = startWatcher(shell, scene, 10);
      watcher.child.stdin!.end(`${job.pg}\nexited\ndone\n`);
      await watcher.exited;
      expect(watcher.stderr()).toBe('');
      expect(mounted(scene)).toBe(true);
      expect(job.out.text()).not.toContain('term');
    } finally {
      cleanUp(scene, job.pg);
    }
  });
});

test('both shells are here to be tested', () => {
  expect(SHELLS).toEqual(['dash', 'bash']);
});
