import { chownSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli, runCliInProcess } from '../../../support/cli';
import { useEmulator } from '../../../support/emulator';

const emu = useEmulator();
let runDir: string;
beforeAll(() => {
  runDir = mkdtempSync(join(tmpdir(), 'mountfleet-cmd-'));
});
afterAll(() => rmSync(runDir, { recursive: true, force: true }));

test('tune --json answers from DescribeInstanceTypes on the emulator', async () => {
  const r = await runCli(['tune', '--instance-type', 'p5.48xlarge', '--interfaces', 'ens5,ens6', '--json'], {
    env: { AWS_ENDPOINT_URL: emu.endpoint },
  });
  expect(r.code).toBe(0);
  const report = JSON.parse(r.stdout);
  expect(report.factsSource).toBe('ec2:DescribeInstanceTypes');
  const xz = report.plan.mounts[0].processes[0];
  expect(xz.args.filter((a: string) => a === '--bind')).toHaveLength(2);
  expect(xz.args[xz.args.indexOf('--maximum-throughput-gbps') + 1]).toBe('200');
});

test('tune prints each decision with its reason and fact on stdout (the result)', async () => {
  const r = await runCli(['tune', '--instance-type', 't3.large', '--offline']);
  expect(r.code).toBe(0);
  expect(r.stderr).toBe('');
  expect(r.stdout).toMatch(/network target = 1 Gbps for the host/);
  expect(r.stdout).toMatch(/why: {2}burstable type/);
  expect(r.stdout).toMatch(/\[xz\] AWS_MAX_ATTEMPTS=5 mount-s3 .*--cache-xz example-cache--use1-az4--x-s3/);
});

test('tune --offline for a type not in the table exits 2 naming the closest known types', async () => {
  const r = await runCliInProcess('tune', '--instance-type', 'c7gn.9xlarge', '--offline');
  expect(r.code).toBe(2);
  expect(r.stdout).toBe('');
  expect(r.stderr).toBe(
    'mountfleet tune: unknown instance type "c7gn.9xlarge"; closest known: c7gn.8xlarge, c7gn.12xlarge\n',
  );
});

test('tune --offline answers for the library default m6i.large and a new family (trn2.48xlarge)', async () => {
  for (const type of ['m6i.large', 'trn2.48xlarge']) {
    const r = await runCliInProcess('tune', '--instance-type', type, '--offline', '--json');
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout).plan.instanceType).toBe(type);
  }
});

test('status and down when no agent runs', async () => {
  const env = { MOUNTFLEET_RUN_DIR: runDir };
  const status = await runCli(['status', '--json'], { env });
  expect(status.code).toBe(3);
  expect(JSON.parse(status.stdout)).toEqual({ running: false });
  const down = await runCli(['down'], { env });
  expect(down.code).toBe(0);
  expect(down.stderr).toMatch(/not running/);
});

test('up with a missing config names the file and how to pass another', async () => {
  const r = await runCli(['up', '--no-install', '--config', '/nonexistent.json']);
  expect(r.code).toBe(2);
  expect(r.stderr).toMatch(
    /cannot read agent config \/nonexistent\.json.*--config FILE or set MOUNTFLEET_CONFIG/,
  );
});

test('up refuses a mount path another user could re-point (a parent of theirs), before it installs or mounts anything', async () => {
  const home = mkdtempSync(join(tmpdir(), 'mf-up-home-'));
  try {
    const user = join(home, 'user');
    mkdirSync(user);
    chownSync(user, 1000, 1000);
    const config = join(home, 'agent.json');
    writeFileSync(
      config,
      JSON.stringify({
        version: 1,
        fleetId: 'f',
        region: 'us-east-1',
        mounts: [
          { bucket: 'data-bucket', path: join(home, 'data') },
          { bucket: 'data-bucket', prefix: 'p/', path: join(user, 'data') },
        ],
      }),
    );
    const r = await runCli(['up', '--supervise', '--config', config], {
      env: { MOUNTFLEET_RUN_DIR: runDir },
    });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(
      `agent.json mounts[1].path ${join(user, 'data')}: ${user} belongs to uid 1000: that user can replace what is below it`,
    );
    expect(r.stderr).not.toContain('"event":"install"');
    expect(existsSync(join(home, 'data'))).toBe(false);
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
});

test.each([
  {
    args: ['down', '--timeout', 'abc'],
    message: /--timeout "abc": must be a whole number.*e\.g\. --timeout 10/,
  },
  {
    args: ['tune', '--instance-type', 't3.large', '--offline', '--root-free-gib', 'x'],
    message: /--root-free-gib "x": must be a whole number.*e\.g\. --root-free-gib 10/,
  },
])('$args.0 refuses a flag that is not a number and shows an example', async ({ args, message }) => {
  const r = await runCliInProcess(...args);
  expect(r.code).toBe(2);
  expect(r.stderr).toMatch(message);
  expect(r.stdout).toBe('');
});
