/**
 * The scratch locks for real: `flock` on a file under a temp run dir, held by another Node process that
 * runs core/system/lock.ts (through tsx), and freed when that process is SIGKILLed.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { acquireLock } from '../../../core/system/lock';
import { holdJobAndPath } from '../../../core/scratch/run-locks';
import { REPO_ROOT } from '../../support/moto';

jest.setTimeout(30_000);

/** Another process that takes the lock on `file` with acquireLock and keeps it (and prints `held`). */
function holderProcess(file: string): Promise<ChildProcess> {
  const code =
    `const { acquireLock } = require(${JSON.stringify(join(REPO_ROOT, 'core/system/lock.ts'))});` +
    `acquireLock(${JSON.stringify(file)}, { holder: 'pid ' + process.pid }).then((r) => {` +
    `  console.log(r.status); setInterval(() => undefined, 1000); });`;
  // node itself with tsx's hook (not the tsx wrapper, whose SIGKILL would leave node running).
  const child = spawn(process.execPath, ['--require', 'tsx/cjs', '-e', code], {
    cwd: REPO_ROOT,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    child.stdout!.once('data', (d: Buffer) =>
      d.toString().trim() === 'held' ? resolve(child) : reject(new Error(`holder: ${d.toString()}`)),
    );
    child.once('exit', (code) => reject(new Error(`holder exited (${code})`)));
  });
}

describe('scratch locks (flock under the run dir)', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'mf-lock-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('is held by the process after flock itself has exited, and freed when that process is SIGKILLed', async () => {
    const file = join(dir, 'job.lock');
    const holder = await holderProcess(file);
    try {
      expect(await acquireLock(file, { holder: 'second', waitSeconds: 0 })).toEqual({
        status: 'busy',
        holder: `pid ${holder.pid}`,
      });
    } finally {
      holder.kill('SIGKILL');
      await new Promise((resolve) => holder.once('exit', resolve));
    }
    const taken = await acquireLock(file, { holder: 'second', waitSeconds: 0 });
    expect(taken.status).toBe('held');
    if (taken.status === 'held') taken.release();
  });

  it('waits for the holder when asked to, at most as long as asked, and gives up the wait on abort', async () => {
    const file = join(dir, 'path.lock');
    const first = await acquireLock(file, { holder: 'first' });
    if (first.status !== 'held') throw new Error('not held');

    let started = Date.now();
    expect((await acquireLock(file, { holder: 'second', waitSeconds: 1 })).status).toBe('busy');
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);

    const stop = new AbortController();
    setTimeout(() => stop.abort(), 300);
    started = Date.now();
    expect((await acquireLock(file, { holder: 'second', signal: stop.signal })).status).toBe('busy');
    expect(Date.now() - started).toBeLessThan(5000);

    setTimeout(() => first.release(), 300);
    const waited = await acquireLock(file, { holder: 'second', waitSeconds: 10 });
    expect(waited.status).toBe('held');
    if (waited.status === 'held') waited.release();
  });

  it('holds the job id and the path: a second run of either is refused, naming the holder', async () => {
    const base = { runDir: dir, fleetId: 'f1', waitSeconds: 0 };
    const held = await holdJobAndPath({ ...base, jobId: 'j1', path: join(dir, 'scratch') });
    try {
      await expect(holdJobAndPath({ ...base, jobId: 'j1', path: join(dir, 'other') })).rejects.toThrow(
        new RegExp(
          `^job j1 of fleet f1 is already running on this instance: held by job j1 at ${dir}/scratch \\(pid ${process.pid}, since .*\\); ` +
            'wait for it to end, or use another --job$',
        ),
      );
      await expect(holdJobAndPath({ ...base, jobId: 'j2', path: join(dir, 'scratch') })).rejects.toThrow(
        `--path ${dir}/scratch is in use on this instance by job j1 at ${dir}/scratch`,
      );
      // A path inside the held one, or containing it, is refused too, naming the holder.
      for (const nested of [join(dir, 'scratch', 'inner'), dir]) {
        await expect(holdJobAndPath({ ...base, jobId: 'j2', path: nested })).rejects.toThrow(
          `--path ${nested} nests with the path of job j1 at ${dir}/scratch`,
        );
      }
      // A sibling whose name starts the same is no nesting; the refusals did not keep j2's job lock.
      (await holdJobAndPath({ ...base, jobId: 'j2', path: join(dir, 'scratch2') })).release();
    } finally {
      held.release();
    }
    (await holdJobAndPath({ ...base, jobId: 'j1', path: join(dir, 'scratch', 'inner') })).release();
  });
});
