import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { runCli } from '../support/cli';
import { REPO_ROOT } from '../support/moto';

const { version } = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string };

describe('mountfleet command', () => {
  it('prints its version', async () => {
    const r = await runCli(['--version']);
    expect(r).toMatchObject({ code: 0, stdout: `${version}\n` });
  });

  it('prints help naming the program', async () => {
    const r = await runCli(['--help']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('Usage: mountfleet');
  });

  it('rejects an unknown command with usage help and a non-zero status', async () => {
    const r = await runCli(['frobnicate']);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain('run with --help');
  });

  it('is the package bin, so `npx mountfleet` works in a checkout', () => {
    const out = execFileSync('npx', ['--no-install', 'mountfleet', '--version'], {
      cwd: REPO_ROOT,
      encoding: 'utf8',
    });
    expect(out.trim()).toBe(version);
  });
});
