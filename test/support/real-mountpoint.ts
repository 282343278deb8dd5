/**
 * The real Mountpoint file system for tests. An official `mount-s3` named by MOUNTFLEET_MOUNT_S3 in the
 * environment the suite was started with (e.g. on an EC2 instance) wins; otherwise the project's own harness
 * built from the published Mountpoint crates by scripts/build-harness.sh (test/support/mountpoint-harness/).
 * Where neither exists the suites that need it skip and say why.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';

export interface RealMountpoint {
  /** The program to run as `mount-s3`. */
  readonly binary: string;
  /** `official` for Amazon's mount-s3, `harness` for the project's harness on the same crates. */
  readonly kind: 'official' | 'harness';
}

/** Where scripts/build-harness.sh leaves the harness: a cargo target directory outside the clone. */
export function harnessBinaryPath(): string {
  const target =
    process.env.MOUNTFLEET_HARNESS_TARGET ?? join(homedir(), '.cache', 'mountfleet', 'harness-target');
  return join(target, 'release', 'mount-s3-harness');
}

/** The real Mountpoint to test on, or the reason there is none. */
export function realMountpoint(): RealMountpoint | { readonly skip: string } {
  const official = process.env.MOUNTFLEET_MOUNT_S3;
  if (official) return { binary: official, kind: 'official' };
  const harness = harnessBinaryPath();
  if (existsSync(harness)) return { binary: harness, kind: 'harness' };
  return { skip: `no real Mountpoint (MOUNTFLEET_MOUNT_S3 is not set): ${whyNoHarness(harness)}` };
}

/** What scripts/build-harness.sh said when it last did not build (no Rust, an old one, a failed build), if it ran. */
function whyNoHarness(harness: string): string {
  const reasonFile = join(dirname(dirname(harness)), 'skip-reason');
  if (existsSync(reasonFile)) return `the harness is not built: ${readFileSync(reasonFile, 'utf8').trim()}`;
  return `${harness} is not built yet: run bash scripts/build-harness.sh (Rust >= 1.95; the first build takes minutes)`;
}

/**
 * Writes `<dir>/mount-s3`, which runs `binary` against an S3 emulator: the agent renders command lines for
 * AWS, and moto needs its endpoint and path-style addressing on top (nothing else is added).
 */
export function emulatorMountS3(
  dir: string,
  binary: string,
  endpoint: string,
  options: {
    /**
     * Replaces the value of the rendered `--otlp-export-interval` (the agent's 10 s), so that tests reading the
     * agent's S3 counts wait about this long for Mountpoint's next export. A test-side change of the rendered
     * line, named here; everything else is passed on as rendered.
     */
    readonly otlpExportIntervalSeconds?: number;
  } = {},
): string {
  const wrapper = join(dir, 'mount-s3');
  const rewrite =
    options.otlpExportIntervalSeconds === undefined
      ? ''
      : [
          'n=$#; prev=',
          'while [ "$n" -gt 0 ]; do',
          `  a=$1; shift; n=$((n - 1))`,
          `  [ "$prev" = --otlp-export-interval ] && a=${options.otlpExportIntervalSeconds}`,
          '  set -- "$@" "$a"; prev=$a',
          'done',
          '',
        ].join('\n');
  writeFileSync(
    wrapper,
    `#!/bin/sh\n${rewrite}exec '${binary}' --endpoint-url '${endpoint}' --force-path-style "$@"\n`,
    { mode: 0o755 },
  );
  return wrapper;
}

/**
 * For a jest file whose tests need the real Mountpoint: the binary (empty when there is none), `it` that
 * skips every test then, and one skipped test that says why (so the report shows the reason).
 */
export function realMountpointForTests(): {
  readonly binary: string;
  readonly it: jest.It;
  readonly skip?: string;
} {
  const mountpoint = realMountpoint();
  if ('skip' in mountpoint) {
    test.skip(`(skipped: ${mountpoint.skip})`, () => undefined);
    return { binary: '', it: test.skip, skip: mountpoint.skip };
  }
  return { binary: mountpoint.binary, it: test };
}
