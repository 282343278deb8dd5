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

  it('rejects an unknown command like any usage error: one line, a --help hint, exit 2', async () => {
    const r = await runCli(['frobnicate']);
    expect(r).toMatchObject({
      code: 2,
      stdout: '',
      stderr: "mountfleet: unknown command 'frobnicate'\n(run `mountfleet --help` for usage)\n",
    });
  });

  it("marks required options in --help and lists tune's own flags before its --csi flags", async () => {
    const tune = (await runCli(['tune', '--help'])).stdout;
    expect(tune).toMatch(/--instance-type <type>\s+\(required\) EC2 instance type/);
    expect(tune.indexOf('--offline')).toBeLessThan(tune.indexOf('--csi'));
    expect(tune.indexOf('--region')).toBeLessThan(tune.indexOf('--csi'));
    expect((await runCli(['reap', '--help'])).stdout).toMatch(/--fleet <id>\s+\(required\)/);
    expect((await runCli(['bench', 'read', '--help'])).stdout).toMatch(/--path <dir>\s+\(required\)/);
  });

  it('is the package bin, so `npx mountfleet` works in a checkout', () => {
    const out = execFileSync('npx', ['--no-install', 'mountfleet', '--version'], {
      cwd: REPO_ROOT,
      encoding: 'utf8',
    });
    expect(out.trim()).toBe(version);
  });
});
