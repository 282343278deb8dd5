/**
 * scripts/build-harness.sh where it cannot build (no cargo on the PATH or in ~/.cargo/bin): it exits 0,
 * says why, and records the reason that the tests and the sandbox then quote instead of guessing one.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
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

test('--background starts a first build behind the demo, one at a time, and says so until it is built', async () => {
  const target = join(home, 'target');
  const bin = join(home, 'bin');
  const gate = join(home, 'gate');
  mkdirSync(bin);
  // A stand-in toolchain: rustc says 1.95, cargo's build waits for the test's gate, then leaves the binary.
  writeFileSync(join(bin, 'rustc'), '#!/bin/sh\necho "rustc 1.95.0 (stand-in)"\n', { mode: 0o755 });
  writeFileSync(
    join(bin, 'cargo'),
    '#!/bin/sh\nwhile [ ! -e "$GATE" ]; do sleep 0.05; done\n' +
      'mkdir -p "$CARGO_TARGET_DIR/release" && printf "#!/bin/sh\\n" > "$CARGO_TARGET_DIR/release/mount-s3-harness"\n' +
      'chmod +x "$CARGO_TARGET_DIR/release/mount-s3-harness"\n',
    { mode: 0o755 },
  );
  const env = {
    ...process.env,
    HOME: home,
    PATH: `${bin}:/usr/bin:/bin`,
    MOUNTFLEET_HARNESS_TARGET: target,
    GATE: gate,
  };
  const start = () =>
    spawnSync('bash', ['scripts/build-harness.sh', '--background'], {
      cwd: REPO_ROOT,
      encoding: 'utf8',
      env,
    });

  const first = start();
  expect(first.status).toBe(0);
  expect(first.stderr).toContain('started in the background');
  expect(readFileSync(join(target, 'skip-reason'), 'utf8')).toMatch(
    /^it is being built in the background \(started .*; log: .*build\.log\): a run after that uses it/,
  );
  const second = start();
  expect(second.stderr).toContain('is still going on in the background');

  writeFileSync(gate, '');
  await waitFor(
    () => existsSync(join(target, 'release', 'mount-s3-harness')) && !existsSync(join(target, 'skip-reason')),
  );
  expect(readFileSync(join(target, 'build.log'), 'utf8')).toContain('first build of the Mountpoint harness');
});

/** Polls for what a background process leaves behind (a file appearing or going). */
async function waitFor(done: () => boolean): Promise<void> {
  while (!done()) await new Promise((r) => setTimeout(r, 50));
}
