/**
 * scripts/build.sh: `npm run build` runs again only when something it reads changed. The script runs for
 * real on a scratch git checkout; `npm` there is a stand-in that records each build and writes the outputs
 * (the real build takes minutes and is what every other test runs on).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REPO_ROOT } from '../support/moto';

let checkout: string;
let buildLog: string;

/** A stand-in for npm: `npm run --silent build` appends to the log, writes the outputs, fails on demand. */
const NPM_STANDIN = `#!/bin/sh
echo build >>"$BUILD_LOG"
[ -f fail-build ] && exit 1
mkdir -p dist/agent dist/lib && touch dist/agent/mountfleet.js dist/lib/index.js .jsii
`;

beforeEach(() => {
  checkout = mkdtempSync(join(tmpdir(), 'mf-build-'));
  mkdirSync(join(checkout, 'scripts'));
  mkdirSync(join(checkout, 'bin'));
  copyFileSync(join(REPO_ROOT, 'scripts', 'build.sh'), join(checkout, 'scripts', 'build.sh'));
  writeFileSync(join(checkout, 'bin', 'npm'), NPM_STANDIN, { mode: 0o755 });
  writeFileSync(join(checkout, '.gitignore'), 'dist/\n.jsii\nbin/\nbuild.log\nfail-build\n');
  writeFileSync(join(checkout, 'index.ts'), 'export const a = 1;\n');
  execFileSync('git', ['init', '-q'], { cwd: checkout });
  execFileSync('git', ['add', '-A'], { cwd: checkout });
  buildLog = join(checkout, 'build.log');
});
afterEach(() => rmSync(checkout, { recursive: true, force: true }));

/** Runs build.sh; resolves to whether it built (the stand-in npm ran) and its exit status. */
function build(...args: string[]): { built: boolean; status: number | null; stderr: string } {
  const before = readLog();
  const r = spawnSync('bash', ['scripts/build.sh', ...args], {
    cwd: checkout,
    encoding: 'utf8',
    env: { ...process.env, PATH: `${join(checkout, 'bin')}:${process.env.PATH}`, BUILD_LOG: buildLog },
  });
  return { built: readLog() > before, status: r.status, stderr: r.stderr };
}
const readLog = () => {
  try {
    return readFileSync(buildLog, 'utf8').split('\n').length;
  } catch {
    return 0;
  }
};

test('builds once, then skips until a tracked file, an untracked file or an output changes', () => {
  expect(build()).toMatchObject({ built: true, status: 0 });
  const again = build();
  expect(again).toMatchObject({ built: false, status: 0 });
  expect(again.stderr).toContain('nothing changed since the last build');

  writeFileSync(join(checkout, 'index.ts'), 'export const a = 2;\n');
  expect(build().built).toBe(true);
  expect(build().built).toBe(false);

  writeFileSync(join(checkout, 'new.ts'), 'export const b = 1;\n'); // not yet added to git
  expect(build().built).toBe(true);

  rmSync(join(checkout, '.jsii'));
  expect(build().built).toBe(true);

  expect(build('--force').built).toBe(true);
  expect(build().built).toBe(false);
});

test('a failed build leaves no stamp, so the next run builds again, even with the old inputs back', () => {
  expect(build().built).toBe(true);
  writeFileSync(join(checkout, 'index.ts'), 'export const a = 2;\n');
  writeFileSync(join(checkout, 'fail-build'), '');
  expect(build()).toMatchObject({ built: true, status: 1 });
  writeFileSync(join(checkout, 'index.ts'), 'export const a = 1;\n'); // the inputs of the last good build
  expect(build()).toMatchObject({ built: true, status: 1 });
  rmSync(join(checkout, 'fail-build'));
  expect(build()).toMatchObject({ built: true, status: 0 });
  expect(build().built).toBe(false);
});
