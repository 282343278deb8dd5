/** The Mountpoint stand-in must refuse what mount-s3 1.24.0 refuses, as mount-s3 does (clap, exit 2). */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { join } from 'node:path';
import { parseArgs } from './cli-spec';

const STANDIN = join(__dirname, 'mount-s3-standin');

test.each([
  [['--cache-size', '10', 'b', '/tmp'], /unexpected argument '--cache-size' found/],
  [['--maximum-throughput-gbps', '0', 'b', '/tmp'], /invalid value '0' for '--maximum-throughput-gbps <N>'/],
  [['--memory-target', '256', 'b', '/tmp'], /invalid value '256' for '--memory-target <MiB>'/],
  [['--metadata-ttl', 'forever', 'b', '/tmp'], /invalid value 'forever'/],
  [
    ['--max-cache-size', '100', 'b', '/tmp'],
    /required arguments were not provided:\n {2}--cache <DIRECTORY>/,
  ],
  [['--allow-other', '--allow-root', 'b', '/tmp'], /'--allow-other' cannot be used with '--allow-root'/],
  [['--region', 'a', '--region', 'b', 'b', '/tmp'], /cannot be used multiple times/],
  [['s3://bucket/', '/tmp'], /should not be an s3:\/\/ URI/],
  [['bucket'], /<DIRECTORY>/],
])('refuses %j', (args, message) => {
  expect(() => parseArgs(args)).toThrow(message);
});

test('accepts repeated --bind and --flag=value forms', () => {
  const parsed = parseArgs(['--bind', 'ens5', '--bind=ens6', '--prefix=a/', '-f', 'bucket', '/mnt']);
  expect(parsed.options.get('bind')).toEqual(['ens5', 'ens6']);
  expect(parsed.options.get('prefix')).toEqual(['a/']);
});

test('the program exits 2 with a clap-style message, and reports its version', async () => {
  const run = promisify(execFile);
  await expect(run(STANDIN, ['--no-such-flag', 'b', '/tmp'])).rejects.toMatchObject({
    code: 2,
    stderr: expect.stringMatching(/^error: unexpected argument '--no-such-flag' found\n\nUsage: mount-s3/),
  });
  await expect(run(STANDIN, ['--version'])).resolves.toMatchObject({ stdout: 'mount-s3 1.24.0\n' });
});
