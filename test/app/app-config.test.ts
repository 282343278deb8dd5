import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_AZ_IDS, loadAppConfig, resolveAppConfig } from '../../lib/app-config';

const context = (values: Record<string, unknown>) => ({ tryGetContext: (k: string) => values[k] });

describe('bundled app config', () => {
  test('zero config: one stack in us-east-1 with an Express cache in two AZ IDs, scratch, alarms and dashboard', () => {
    const [stack, ...rest] = loadAppConfig(context({}));
    expect(rest).toEqual([]);
    expect(stack).toMatchObject({
      stackName: 'Mountfleet',
      fleetId: 'mountfleet',
      profile: 'aws',
      region: 'us-east-1',
      network: { azIds: DEFAULT_AZ_IDS, isolated: false },
      expressCache: { azIds: DEFAULT_AZ_IDS, expirationDays: 7 },
      scratch: {},
      monitoring: { alarms: true, dashboard: true },
    });
  });

  test('the sandbox profile keeps everything, on an isolated network with named cache buckets', () => {
    const [stack] = resolveAppConfig({ profile: 'sandbox', fleetId: 'demo' }, 'test');
    expect(stack.expressCache).toEqual({
      azIds: DEFAULT_AZ_IDS,
      bucketBaseName: 'demo-cache',
      expirationDays: 7,
    });
    expect(stack.monitoring).toEqual({ alarms: true, dashboard: true });
    expect(stack.network).toEqual({ azIds: DEFAULT_AZ_IDS, isolated: true });
  });

  test('environments become one stack each, sections merged over the shared settings', () => {
    const stacks = resolveAppConfig(
      {
        fleet: { maxCapacity: 8, minCapacity: 1 },
        environments: {
          dev: { fleetId: 'dev', fleet: { maxCapacity: 2 } },
          prod: { fleetId: 'prod', account: '123456789012' },
        },
      },
      'test',
    );
    expect(stacks.map((s) => [s.stackName, s.fleetId, s.account, s.fleet])).toEqual([
      ['Mountfleet-dev', 'dev', undefined, { maxCapacity: 2, minCapacity: 1, scheduler: 'asg' }],
      ['Mountfleet-prod', 'prod', '123456789012', { maxCapacity: 8, minCapacity: 1, scheduler: 'asg' }],
    ]);
  });

  test.each([
    [{ fleetId: 'Bad_Id' }, /fleetId: must be 1-32 lower-case letters/],
    [{ network: { azIds: ['us-east-1a'] } }, /network\.azIds\.0: must be an AZ ID such as use1-az4/],
    [
      { fleet: { mounts: [{ bucket: 'B', path: '/x' }] } },
      /fleet\.mounts\.0\.bucket: must be an S3 bucket name/,
    ],
    [{ fleet: { maxCapacity: -1 } }, /fleet\.maxCapacity: /],
    [{ reaper: { dryRun: 'yes' } }, /reaper\.dryRun: /],
    // The reaper Lambda's own bounds: above them, every scheduled run would fail.
    [
      { reaper: { maxDeletionsPerRun: 1001 } },
      /reaper\.maxDeletionsPerRun: Too big: expected number to be <=1000/,
    ],
    [
      { reaper: { idleWindowMinutes: 1441 } },
      /reaper\.idleWindowMinutes: Too big: expected number to be <=1440/,
    ],
    [{ reaper: { graceMinutes: 10081 } }, /reaper\.graceMinutes: Too big: expected number to be <=10080/],
    [{ colour: 'blue' }, /\(root\): Unrecognized key: "colour"/],
    [
      { environments: { a: {}, b: {} } },
      /environments\.b\.fleetId: "mountfleet" is also the fleet id of Mountfleet-a/,
    ],
    // A wildcard in the prefix would widen the write grant bucket/<prefix>* to other prefixes.
    [
      { fleet: { mounts: [{ bucket: 'data', prefix: '*', path: '/mnt/out', access: 'read-write' }] } },
      /fleet\.mounts\.0\.prefix: must not contain "\*" or "\?"/,
    ],
    [
      { fleet: { mounts: [{ bucket: 'data', prefix: 'team-?/', path: '/mnt/out' }] } },
      /fleet\.mounts\.0\.prefix: must not contain "\*" or "\?"/,
    ],
    [{ fleet: { mounts: [{ bucket: 'data', path: '/usr/data' }] } }, /fleet\.mounts\.0\.path: .*\/usr/],
    [{ scratch: { mountPath: '/' } }, /scratch\.mountPath: "\/" is a system directory/],
    [{ scratch: { mountPath: '/mnt/scratch\n' } }, /scratch\.mountPath: must not contain control characters/],
  ])('names the bad field: %j', (config, message) => {
    expect(() => resolveAppConfig(config, '(test)')).toThrow(message);
  });

  test('reads a config file named by context mountfleetConfig, and JSON given inline as a string', () => {
    const dir = mkdtempSync(join(tmpdir(), 'mf-config-'));
    const file = join(dir, 'c.json');
    writeFileSync(file, JSON.stringify({ fleetId: 'from-file' }));
    expect(loadAppConfig(context({ mountfleetConfig: file }))[0].fleetId).toBe('from-file');
    expect(loadAppConfig(context({ mountfleet: '{"fleetId":"inline"}' }))[0].fleetId).toBe('inline');
    writeFileSync(file, '{ nope');
    expect(() => loadAppConfig(context({ mountfleetConfig: file }))).toThrow(/is not valid JSON/);
    expect(() => loadAppConfig(context({ mountfleetConfig: join(dir, 'missing.json') }))).toThrow(
      /cannot read mountfleet config/,
    );
  });

  test.each([
    ['null', null],
    ['a number', 7],
    ['a list', []],
  ])('a config that is %s is refused, not replaced by the defaults', (_kind, value) => {
    expect(() => resolveAppConfig(value, '(test)')).toThrow(/\(root\): must be a JSON object/);
    const dir = mkdtempSync(join(tmpdir(), 'mf-config-'));
    const file = join(dir, 'c.json');
    writeFileSync(file, JSON.stringify(value));
    expect(() => loadAppConfig(context({ mountfleetConfig: file }))).toThrow(/must be a JSON object/);
    expect(() => loadAppConfig(context({ mountfleet: JSON.stringify(value) }))).toThrow(
      /must be a JSON object/,
    );
  });

  test('the app prints a config error as one message, without a stack trace, and synthesizes nothing', () => {
    const out = mkdtempSync(join(tmpdir(), 'mf-app-'));
    const r = spawnSync(process.execPath, ['--import', 'tsx', 'bin/app.ts'], {
      cwd: join(__dirname, '..', '..'),
      encoding: 'utf8',
      env: {
        ...process.env,
        CDK_OUTDIR: out,
        CDK_CONTEXT_JSON: JSON.stringify({ mountfleet: { fleetId: 'Bad_Id' } }),
      },
    });
    expect(r.status).toBe(1);
    expect(r.stderr).toBe(
      'invalid mountfleet config (context "mountfleet"):\n' +
        '  fleetId: must be 1-32 lower-case letters, digits and hyphens\n',
    );
    expect(readdirSync(out)).toEqual([]);
  });

  test('the documented example config is valid', () => {
    const stacks = loadAppConfig(
      context({ mountfleetConfig: join(__dirname, '..', '..', 'examples', 'mountfleet.config.json') }),
    );
    expect(stacks.map((s) => s.stackName)).toEqual(['Mountfleet-dev', 'Mountfleet-prod']);
  });
});
