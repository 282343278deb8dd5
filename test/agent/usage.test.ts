/**
 * Hostile and sloppy command lines: each is a usage error — one line naming the flag, exit status 2,
 * nothing done (the commands below fail before any IMDS or AWS call). Runtime failures exit 1.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCliInProcess as mountfleet } from '../support/cli';
import { REPO_ROOT } from '../support/moto';

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

const PLAN = ['plan', '--preset', 'encode-ladder', '--input-size', '30GiB', '--duration', '30m'];
const SCRATCH_RUN = [
  'scratch',
  'run',
  '--fleet',
  'train',
  '--subnet',
  'subnet-1',
  '--security-group',
  'sg-1',
];

function agentJson(mountPath: string): string {
  const file = join(mkdtempSync(join(tmpdir(), 'mf-usage-')), 'agent.json');
  const mounts = [{ bucket: 'my-data', path: mountPath }];
  writeFileSync(file, JSON.stringify({ version: 1, fleetId: 'train', region: 'us-east-1', mounts }));
  return file;
}

describe('usage errors exit 2 with one line naming the problem', () => {
  it.each([
    [['tune', '--instance-type', 'm6i.large', '--bogus'], "mountfleet tune: unknown option '--bogus'"],
    [['tune'], "mountfleet tune: required option '--instance-type <type>' not specified"],
    [['plan', '--preset', 'nope'], "mountfleet plan: option '--preset <name>' argument 'nope' is invalid"],
    [['scratch', 'delete'], "mountfleet scratch delete: missing required argument 'file-system-id'"],
    [['scratch', 'frobnicate'], "mountfleet scratch: unknown command 'frobnicate'"],
    [['frobnicate'], "mountfleet: unknown command 'frobnicate'"],
  ])("commander's own, in the same form as every usage error: %j", async (args, message) => {
    const r = await mountfleet(...args);
    expect(r.code).toBe(2);
    const command = message.slice(0, message.indexOf(':'));
    expect(r.stderr).toMatch(
      new RegExp(`^${escapeRegExp(message)}.*\\n\\(run \`${command} --help\` for usage\\)\\n$`),
    );
    expect(r.stdout).toBe('');
  });

  it.each([
    ['ens5,,ens6', 'has an empty name'],
    ['ens5,', 'has an empty name'],
    ['ens5, ens6', '" ens6" is not an interface name'],
    ['a-name-longer-than-15', '"a-name-longer-than-15" is not an interface name'],
  ])('tune --interfaces %j', async (list, message) => {
    const r = await mountfleet('tune', '--instance-type', 'p5.48xlarge', '--offline', '--interfaces', list);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`mountfleet tune: --interfaces "${list}": ${message}`);
  });

  it('bench read --path of a missing directory or a file, before reading anything', async () => {
    const missing = await mountfleet('bench', 'read', '--path', '/nonexistent');
    expect(missing.code).toBe(2);
    expect(missing.stderr).toBe(
      'mountfleet bench read: --path "/nonexistent": no such directory; give the directory to read, e.g. --path /mnt/imagenet\n',
    );
    const file = await mountfleet('bench', 'read', '--path', join(REPO_ROOT, 'package.json'));
    expect(file.code).toBe(2);
    expect(file.stderr).toContain('not a directory');
  });

  it('examples/agent.json, the file that error points to, is an agent config tune takes', async () => {
    const example = join(REPO_ROOT, 'examples', 'agent.json');
    const r = await mountfleet('tune', '--instance-type', 'm6i.large', '--offline', '--config', example);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('m6i.large: Mountpoint');
  });

  it('tune --config given the app config says which file is which, in one line', async () => {
    const r = await mountfleet(
      'tune',
      '--instance-type',
      'm6i.large',
      '--offline',
      '--config',
      join(REPO_ROOT, 'examples', 'mountfleet.config.json'),
    );
    expect(r.code).toBe(2);
    expect(r.stderr.trimEnd().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(
      /mountfleet\.config\.json is the CDK app's config .* not an agent config: .*examples\/agent\.json/,
    );
  });

  it.each([
    [['tune', '--instance-type', 'm6i.large', '--offline', '--root-free-gib', ''], '--root-free-gib ""'],
    [
      ['tune', '--instance-type', 'm6i.large', '--offline', '--root-free-gib', '0x10'],
      '--root-free-gib "0x10"',
    ],
    [
      ['tune', '--instance-type', 'm6i.large', '--offline', '--root-free-gib', '1e1'],
      '--root-free-gib "1e1"',
    ],
    [['down', '--timeout', '-1'], '--timeout "-1"'],
    [['down', '--timeout', '2.5'], '--timeout "2.5"'],
    [
      ['reap', '--fleet', 'train', '--grace-minutes', ''],
      '--grace-minutes="": must be a whole number from 0 to 10080',
    ],
    [['reap', '--fleet', 'train', '--max-deletions', '0x10'], '--max-deletions="0x10"'],
    [['reap', '--fleet', 'train', '--max-run-seconds', '0'], '--max-run-seconds "0"'],
    [
      [...SCRATCH_RUN, '--spot-poll-ms', '0', '--', 'true'],
      '--spot-poll-ms "0": must be a whole number from 100',
    ],
    [[...SCRATCH_RUN, '--teardown-grace', '601', '--', 'true'], '--teardown-grace "601"'],
    [[...SCRATCH_RUN, '--expected-io', 'lots', '--', 'true'], '--expected-io: "lots" is not a size'],
    [[...SCRATCH_RUN, '--expected-io', '0GiB', '--', 'true'], '--expected-io "0GiB": must be more than 0'],
    [['bench', 'read', '--path', '.', '--concurrency', '0'], '--concurrency "0"'],
    [
      ['shard', '--bucket', 'b', '--dest-prefix', 'd/', '--prefix', 'p/', '--target-size', '0'],
      '--target-size "0"',
    ],
    [[...PLAN, '--run-time', '0'], '--run-time "0": must be more than 0'],
    [
      ['plan', '--preset', 'encode-ladder', '--input-size', '30GiB', '--duration', '0', '--run-time', '1h'],
      '--duration "0"',
    ],
    [[...PLAN, '--run-time', '1h', '--at-bitrate', '50,0'], '--at-bitrate "0"'],
  ])('bad number: %j', async (args, message) => {
    const r = await mountfleet(...args);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(message);
    expect(r.stdout).toBe('');
  });

  it.each([
    ['/', '"/" is a system directory'],
    ['/etc', '"/etc" is in the system directory /etc'],
    ['/mnt/../etc', '"." or ".." segments'],
    ['/mnt/a\nb', 'control characters'],
  ])('scratch run --path %j, before IMDS is asked', async (path, message) => {
    const r = await mountfleet(...SCRATCH_RUN, '--path', path, '--', 'true');
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`mountfleet scratch: --path: `);
    expect(r.stderr).toContain(message);
  });

  it('tune refuses a path that made the old pattern backtrack, in milliseconds', async () => {
    const config = agentJson(`/${'a'.repeat(28)}//`);
    const started = Date.now();
    const r = await mountfleet('tune', '--instance-type', 'm6i.large', '--offline', '--config', config);
    expect(Date.now() - started).toBeLessThan(500);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('mounts.0.path: must not contain empty segments');
  });

  it.each([
    [
      { input: { size: '30GiB', duration: '0s' }, steps: [{ name: 'a', read: '1' }], runTime: '1h' },
      'input.duration: must be more than 0',
    ],
    [
      { input: { size: '30GiB' }, steps: [{ name: 'a', read: '1' }], runTime: '0' },
      'runTime: must be more than 0',
    ],
  ])('plan --workload with a zero: %j', async (workload, message) => {
    const file = join(mkdtempSync(join(tmpdir(), 'mf-usage-')), 'workload.json');
    writeFileSync(file, JSON.stringify(workload));
    const r = await mountfleet('plan', '--workload', file);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`${file}: ${message}`);
  });

  it('plan --workload names a missing file', async () => {
    const r = await mountfleet('plan', '--workload', '/nonexistent/workload.json');
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('cannot read workload file /nonexistent/workload.json');
  });

  it('help and version still exit 0', async () => {
    expect((await mountfleet('--version')).code).toBe(0);
    expect((await mountfleet('tune', '--help')).code).toBe(0);
  });
});
