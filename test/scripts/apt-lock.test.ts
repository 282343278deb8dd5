/**
 * scripts/lib/apt.sh (sourced by scripts/setup.sh) against the real apt-get, on a private apt state
 * (APT_CONFIG: its own lists, dpkg status and no sources), while another process holds apt's lock as
 * cloud-init or unattended-upgrades would on a fresh host. The machine's own apt state is never touched.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REPO_ROOT } from '../support/moto';

const haveApt = spawnSync('sh', ['-c', 'command -v apt-get && command -v python3']).status === 0;
const it = haveApt ? test : test.skip;
if (!haveApt) test.skip('(skipped: apt-get or python3 is not installed)', () => undefined);

let root: string;
let aptConfig: string;
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'mf-apt-'));
  for (const dir of ['lists/partial', 'cache/archives/partial', 'dpkg', 'sources.list.d'])
    mkdirSync(join(root, dir), { recursive: true });
  for (const file of ['dpkg/status', 'sources.list']) writeFileSync(join(root, file), '');
  aptConfig = join(root, 'apt.conf');
  writeFileSync(
    aptConfig,
    [
      `Dir::State::Lists "${root}/lists";`,
      `Dir::State::status "${root}/dpkg/status";`,
      `Dir::Cache "${root}/cache";`,
      `Dir::Etc::sourcelist "${root}/sources.list";`,
      `Dir::Etc::sourceparts "${root}/sources.list.d";`,
    ].join('\n'),
  );
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

/** Holds apt's kind of lock (fcntl) on `file` until stdin closes; resolves once it holds it. */
function holdLock(file: string): Promise<ChildProcess> {
  const holder = spawn(
    'python3',
    [
      '-c',
      `import fcntl,os,sys\nfd=os.open(${JSON.stringify(file)},os.O_RDWR|os.O_CREAT)\nfcntl.lockf(fd,fcntl.LOCK_EX)\nprint('held',flush=True)\nsys.stdin.read()`,
    ],
    { stdio: ['pipe', 'pipe', 'inherit'] },
  );
  return new Promise((resolve, reject) => {
    holder.on('error', reject);
    holder.stdout!.once('data', () => resolve(holder));
  });
}

interface Run {
  readonly code: number | null;
  readonly stderr: string;
}

/** Sources the helper and runs `call`; `onLine` sees each stderr line as it comes. */
function runApt(
  call: string,
  lockWait: number,
  onLine: (line: string) => void = () => undefined,
): Promise<Run> {
  const child = spawn('bash', ['-c', `set -euo pipefail; source scripts/lib/apt.sh; ${call}`], {
    cwd: REPO_ROOT,
    env: { ...process.env, APT_CONFIG: aptConfig, MOUNTFLEET_APT_LOCK_WAIT: String(lockWait) },
  });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => {
    stderr += d.toString();
    for (const line of d.toString().split('\n')) if (line) onLine(line);
  });
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stderr })));
}

it('apt_update waits for a held lists lock, says who holds it, and goes on once it is released', async () => {
  const holder = await holdLock(join(root, 'lists', 'lock'));
  const result = await runApt('apt_update && echo updated >&2', 120, (line) => {
    if (line.includes("waiting for apt's lock")) holder.stdin!.end();
  });
  expect(result.stderr).toMatch(
    /waiting for apt's lock, another package manager is running \(It is held by process \d+ \(python3\)/,
  );
  expect(result.stderr).toContain('updated');
  expect(result.code).toBe(0);
});

it('apt_update gives up at the bound with the holder and what to do', async () => {
  const holder = await holdLock(join(root, 'lists', 'lock'));
  try {
    const result = await runApt('apt_update', 3);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(
      /gave up waiting for apt's lock after 3 s \(It is held by process \d+ \(python3\)\).*MOUNTFLEET_APT_LOCK_WAIT/,
    );
  } finally {
    holder.stdin!.end();
  }
});

it('apt_install waits for the dpkg lock only up to the bound, then says what failed', async () => {
  const holder = await holdLock(join(root, 'dpkg', 'lock-frontend'));
  try {
    const started = Date.now();
    const result = await runApt('apt_install mountfleet-no-such-package', 2);
    expect(Date.now() - started).toBeGreaterThanOrEqual(2000); // it waited for the lock, then gave up
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('Unable to acquire the dpkg frontend lock');
    expect(result.stderr).toContain('apt-get install mountfleet-no-such-package failed');
  } finally {
    holder.stdin!.end();
  }
});
