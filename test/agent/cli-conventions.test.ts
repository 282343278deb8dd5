/**
 * The conventions every `mountfleet` command keeps, like the AWS CLI's: exit 0/1/2, one line per failure
 * and a stack trace only with --debug, --region and --profile wherever AWS is called, a missing Region or
 * missing credentials reported within seconds, results on stdout and progress on stderr.
 */
import { CreateFileSystemCommand } from '@aws-sdk/client-efs';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CREDENTIALS_TIMEOUT_MS } from '../../agent/aws-options';
import { efsClient } from '../../core/aws/clients';
import { TAG_FLEET } from '../../core/contract/tags';
import { runCliInProcess as mountfleet } from '../support/cli';
import { useEmulator } from '../support/emulator';

useEmulator();

// The commands change process.env (--region, --profile) as the real process would: restore it per test.
let savedEnv: NodeJS.ProcessEnv;
beforeEach(() => {
  savedEnv = { ...process.env };
});
afterEach(() => {
  for (const key of Object.keys(process.env)) if (!(key in savedEnv)) delete process.env[key];
  Object.assign(process.env, savedEnv);
});

const configDir = mkdtempSync(join(tmpdir(), 'mf-conventions-'));

/** No Region and no credentials anywhere: no variables, no AWS config files, IMDS off. */
function noAwsSetup(): void {
  for (const key of ['AWS_REGION', 'AWS_DEFAULT_REGION', 'AWS_PROFILE', 'AWS_ACCESS_KEY_ID']) {
    delete process.env[key];
  }
  delete process.env.AWS_SECRET_ACCESS_KEY;
  delete process.env.AWS_SESSION_TOKEN;
  process.env.AWS_CONFIG_FILE = join(configDir, 'no-config');
  process.env.AWS_SHARED_CREDENTIALS_FILE = join(configDir, 'no-credentials');
}

/** The commands that call AWS, each with what it needs besides a Region and credentials. */
const AWS_COMMANDS: [string, string[]][] = [
  ['reap', ['reap', '--fleet', 'f1', '--dry-run']],
  ['scratch list', ['scratch', 'list', '--fleet', 'f1']],
  ['scratch delete', ['scratch', 'delete', 'fs-0123456789abcdef0', '--fleet', 'f1']],
  ['bench latency', ['bench', 'latency', '--standard-bucket', 'b1', '--max-size', '1KB', '--runs', '1']],
  ['shard', ['shard', '--bucket', 'b1', '--prefix', 'p/', '--dest-prefix', 'tars/']],
  ['shard verify', ['shard', 'verify', '--bucket', 'b1', '--dest-prefix', 'tars/']],
];

describe('exit status and error output', () => {
  it('--version prints the version on stdout', async () => {
    const r = await mountfleet('--version');
    expect(r).toMatchObject({ code: 0, stderr: '' });
    expect(r.stdout).toMatch(/^\d+\.\d+\.\d+\n$/);
  });

  it('a usage error exits 2 with one line naming the command and the fix', async () => {
    const r = await mountfleet('reap', '--fleet', 'f1', '--max-run-seconds', 'soon');
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe(
      'mountfleet reap: --max-run-seconds "soon": must be a whole number from 1 to 86400, e.g. --max-run-seconds 10\n',
    );
  });

  it("status's --help lists its own exit status, 3 when no agent runs, and status exits so", async () => {
    const help = await mountfleet('status', '--help');
    expect(help.stdout).toContain('Exit status: 3 when no agent runs');
    process.env.MOUNTFLEET_RUN_DIR = mkdtempSync(join(tmpdir(), 'mf-no-agent-'));
    const r = await mountfleet('status');
    expect(r).toMatchObject({ code: 3, stdout: '', stderr: 'agent not running\n' });
  });

  it('a runtime failure exits 1 with one line and no stack trace', async () => {
    const r = await mountfleet('shard', 'verify', '--bucket', 'no-such-bucket', '--dest-prefix', 'tars/');
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/^mountfleet shard: .*bucket/i);
    expect(r.stderr.trimEnd().split('\n')).toHaveLength(1);
  });

  it.each([
    ['before', ['--debug', 'shard', 'verify']],
    ['after', ['shard', 'verify', '--debug']],
  ])('--debug (%s the command) adds the stack trace', async (_where, args) => {
    const r = await mountfleet(...args, '--bucket', 'no-such-bucket', '--dest-prefix', 'tars/');
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^mountfleet shard: .*bucket/i);
    expect(r.stderr).toMatch(/\n\s+at /);
  });
});

describe('--region and --profile', () => {
  it.each(AWS_COMMANDS)('%s has both in its help', async (name) => {
    const r = await mountfleet(...name.split(' '), '--help');
    expect(r.stdout).toContain('--region <region>');
    expect(r.stdout).toContain('--profile <name>');
  });

  it.each(AWS_COMMANDS)('%s without a Region exits 2 at once, saying how to set one', async (_name, args) => {
    noAwsSetup();
    const started = Date.now();
    const r = await mountfleet(...args);
    expect(Date.now() - started).toBeLessThan(2000);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/no AWS Region: pass --region .*set AWS_REGION/);
    expect(r.stderr.trimEnd().split('\n')).toHaveLength(1);
  });

  it('refuses a --region that is no Region', async () => {
    const r = await mountfleet('reap', '--fleet', 'f1', '--region', 'us-east-1a');
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--region "us-east-1a": must be a Region such as us-east-1');
  });

  it('--region chooses the Region the command works in', async () => {
    await createInEuWest1();
    const here = await mountfleet('scratch', 'list', '--fleet', 'f1', '--json');
    const there = await mountfleet('scratch', 'list', '--fleet', 'f1', '--json', '--region', 'eu-west-1');
    expect(here.code).toBe(0);
    expect((JSON.parse(here.stdout) as { fileSystems: unknown[] }).fileSystems).toHaveLength(0);
    expect(there.code).toBe(0);
    expect((JSON.parse(there.stdout) as { fileSystems: unknown[] }).fileSystems).toHaveLength(1);
  });

  it('--profile takes credentials and Region from the AWS config files', async () => {
    const id = await createInEuWest1();
    noAwsSetup();
    // Files of their own: the SDK caches each config file it has read (or found missing) by path.
    process.env.AWS_CONFIG_FILE = join(configDir, 'lab-config');
    process.env.AWS_SHARED_CREDENTIALS_FILE = join(configDir, 'lab-credentials');
    writeFileSync(process.env.AWS_CONFIG_FILE, '[profile lab]\nregion = eu-west-1\n');
    writeFileSync(
      process.env.AWS_SHARED_CREDENTIALS_FILE,
      '[lab]\naws_access_key_id = testing\naws_secret_access_key = testing\n',
    );
    const r = await mountfleet('scratch', 'list', '--fleet', 'f1', '--json', '--profile', 'lab');
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ fileSystems: [{ fileSystemId: id }] });

    const unknown = await mountfleet('scratch', 'list', '--fleet', 'f1', '--profile', 'nosuch');
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/no AWS (Region|credentials)/);
  });
});

describe('missing credentials', () => {
  let imds: Server;
  const held: Socket[] = [];
  beforeAll(async () => {
    // An IMDS that accepts connections and never answers: the slowest way for the default chain to end.
    imds = createServer((socket) => held.push(socket));
    await new Promise<void>((resolve) => imds.listen(0, '127.0.0.1', resolve));
  });
  afterAll(async () => {
    for (const s of held) s.destroy();
    await new Promise((resolve) => imds.close(resolve));
  });

  it('exit 2 within seconds, saying how to provide them, even when IMDS does not answer', async () => {
    noAwsSetup();
    process.env.AWS_REGION = 'us-east-1';
    delete process.env.AWS_EC2_METADATA_DISABLED;
    const { port } = imds.address() as { port: number };
    process.env.AWS_EC2_METADATA_SERVICE_ENDPOINT = `http://127.0.0.1:${port}`;
    const started = Date.now();
    const r = await mountfleet('reap', '--fleet', 'f1', '--dry-run');
    const seconds = (Date.now() - started) / 1000;
    expect(seconds).toBeLessThan(CREDENTIALS_TIMEOUT_MS / 1000 + 1.5);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(
      /^mountfleet reap: no AWS credentials .*AWS_PROFILE.*aws configure.*instance with a role/,
    );
    expect(r.stderr.trimEnd().split('\n')).toHaveLength(1);
  });

  it('tune falls back to its built-in table, unless --region or --profile asked for the API', async () => {
    noAwsSetup();
    process.env.AWS_EC2_METADATA_DISABLED = 'true';
    const r = await mountfleet('tune', '--instance-type', 'm6i.large', '--json');
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ factsSource: expect.stringMatching(/^built-in table/) });
    expect(r.stderr).toMatch(/no AWS Region.*; using the built-in instance-type table/);

    const asked = await mountfleet('tune', '--instance-type', 'm6i.large', '--region', 'us-east-1');
    expect(asked.code).toBe(2);
    expect(asked.stderr).toMatch(/^mountfleet tune: no AWS credentials/);
  });
});

describe('results on stdout, progress on stderr', () => {
  it('reap prints its decisions and summary on stdout; --json makes them progress on stderr', async () => {
    const human = await mountfleet('reap', '--fleet', 'f1', '--dry-run');
    expect(human.code).toBe(0);
    expect(human.stdout).toMatch(/fleet f1 \(dry run\): scanned 0/);
    const json = await mountfleet('reap', '--fleet', 'f1', '--dry-run', '--json');
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout)).toMatchObject({ fleet: 'f1', scanned: 0 });
    expect(json.stderr).toMatch(/fleet f1 \(dry run\): scanned 0/);
  });

  it('bench read prints its results on stdout', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mf-conventions-read-'));
    writeFileSync(join(dir, 'a'), 'x');
    const r = await mountfleet('bench', 'read', '--path', dir, '--epochs', '1');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^epoch 1 small-parallel +1 files/m);
  });
});

/** A scratch file system of fleet f1 in eu-west-1 (the tests otherwise run in us-east-1). */
async function createInEuWest1(): Promise<string> {
  const fs = await efsClient({ region: 'eu-west-1' }).send(
    new CreateFileSystemCommand({
      CreationToken: 'conventions-1',
      AvailabilityZoneName: 'eu-west-1a',
      Tags: [{ Key: TAG_FLEET, Value: 'f1' }],
    }),
  );
  return fs.FileSystemId!;
}
