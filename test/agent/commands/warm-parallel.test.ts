/**
 * `warm --parallel N` has N reads in flight, beyond libuv's default 4 pool threads: the bundled agent sizes the
 * pool before anything uses it (agent/threadpool.ts). Run as a user runs it, from the bundle, on samples that are
 * FIFOs the test holds open: a read stays in flight until the test writes the file and lets go of it, and the
 * test counts the agent's threads blocked reading them in /proc.
 */
import { spawn } from 'node:child_process';
import {
  closeSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { execFileSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CLI_BUNDLE } from '../../support/cli';
import { until } from '../../support/mountpoint-rig';

/** read(2)'s number in /proc/<pid>/task/<tid>/syscall. */
const READ_SYSCALL = ({ x64: 0, arm64: 63 } as Record<string, number>)[process.arch];

/** Threads of `pid` blocked reading one of `fifos` right now. */
function fifosBeingRead(pid: number, fifos: ReadonlySet<string>): number {
  let reading = 0;
  let tids: string[];
  try {
    tids = readdirSync(`/proc/${pid}/task`);
  } catch {
    return 0; // not started yet, or gone
  }
  for (const tid of tids) {
    try {
      const [call, fd] = readFileSync(`/proc/${pid}/task/${tid}/syscall`, 'utf8').split(' ');
      if (Number(call) === READ_SYSCALL && fifos.has(readlinkSync(`/proc/${pid}/fd/${Number(fd)}`)))
        reading++;
    } catch {
      // The thread or the descriptor went meanwhile.
    }
  }
  return reading;
}

/** Whether a process other than this one has `path` open. */
function openedByOther(pid: number, path: string): boolean {
  try {
    return readdirSync(`/proc/${pid}/fd`).some((fd) => {
      try {
        return readlinkSync(`/proc/${pid}/fd/${fd}`) === path;
      } catch {
        return false;
      }
    });
  } catch {
    return false;
  }
}

const dir = mkdtempSync(join(tmpdir(), 'warm-parallel-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

it('warm --parallel 8 has 8 reads in flight at once', async () => {
  const fifos = Array.from({ length: 8 }, (_, i) => join(dir, `sample-${i}`));
  execFileSync('mkfifo', fifos);
  // Held open read-write, so that the agent's open does not wait for a writer.
  const held = new Map(fifos.map((f) => [f, openSync(f, 'r+')]));
  const manifest = join(dir, 'manifest.txt');
  writeFileSync(manifest, fifos.map((f) => `${f}\n`).join(''));
  const child = spawn(
    process.execPath,
    [CLI_BUNDLE, 'warm', '--path', dir, '--manifest', manifest, '--parallel', '8', '--json'],
    {
      // Without a size of the caller's: the agent's own is what is tested.
      env: Object.fromEntries(Object.entries(process.env).filter(([name]) => name !== 'UV_THREADPOOL_SIZE')),
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  let code: number | null | undefined;
  void exited.then((c) => (code = c));
  /** Each sample the agent has opened gets its 100 bytes and its end. */
  const finishOpenedSamples = () => {
    for (const [fifo, fd] of held)
      if (openedByOther(child.pid!, fifo)) {
        writeSync(fd, Buffer.alloc(100));
        closeSync(fd);
        held.delete(fifo);
      }
  };
  try {
    await until(
      `8 reads in flight at once (${stderr})`,
      () => fifosBeingRead(child.pid!, new Set(fifos)) === 8,
      20_000,
    );
  } finally {
    await until(`warm to end (${stderr})`, () => (finishOpenedSamples(), code !== undefined), 20_000);
    for (const fd of held.values()) closeSync(fd);
  }
  expect({ code, files: (JSON.parse(stdout) as { files: number }).files }).toEqual({ code: 0, files: 8 });
});
