/**
 * scripts/build-harness.sh where it cannot build (no cargo on the PATH or in ~/.cargo/bin): it exits 0,
 * says why, and records the reason that the tests and the sandbox then quote instead of guessing one.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REPO_ROOT } from '../support/moto';
import { realMountpoint } from '../support/real-mountpoint';

let home: string;
beforeEach(() => {
  home = mkdtempSync(join(tmpdir(), 'mf-harness-'));
});
afterEach(() => rmSync(home, { recursive: true, force: true }));

test('without Rust it skips, saying why, and the real-Mountpoint suites quote that reason', () => {
  const target = join(home, 'target');
  const run = spawnSync('bash', ['scripts/build-harness.sh'], {
    cwd: REPO_ROOT,
    encoding: 'utf8',
    // A home without ~/.cargo and a PATH without cargo: a machine with no Rust.
    env: { ...process.env, HOME: home, PATH: '/usr/bin:/bin', MOUNTFLEET_HARNESS_TARGET: target },
  });
  expect(run.status).toBe(0);
  expect(run.stderr).toContain('real-Mountpoint suites will skip: no cargo on PATH or in ~/.cargo/bin');
  expect(readFileSync(join(target, 'skip-reason'), 'utf8')).toMatch(/^no cargo on PATH/);

  const saved = { target: process.env.MOUNTFLEET_HARNESS_TARGET, official: process.env.MOUNTFLEET_MOUNT_S3 };
  process.env.MOUNTFLEET_HARNESS_TARGET = target;
  delete process.env.MOUNTFLEET_MOUNT_S3;
  try {
    expect(realMountpoint()).toEqual({
      skip: expect.stringMatching(
        /: the harness is not built: no cargo on PATH or in ~\/\.cargo\/bin \(install Rust/,
      ),
    });
    rmSync(join(target, 'skip-reason'));
    // Never run: it says so, rather than blaming a toolchain the machine may have.
    expect(realMountpoint()).toEqual({
      skip: expect.stringMatching(/is not built yet: run bash scripts\/build-harness\.sh/),
    });
  } finally {
    for (const [key, value] of [
      ['MOUNTFLEET_HARNESS_TARGET', saved.target],
      ['MOUNTFLEET_MOUNT_S3', saved.official],
    ] as const) {
      if (value === undefined) delete process.env[key];
      else process.env[key] = value;
    }
  }
});
