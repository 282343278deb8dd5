/** `mountfleet batch submit|status` run in process against the emulator: what a user sees, and exit statuses. */
import { batchClient, ec2Client } from '../../../core/aws/clients';
import { runCliInProcess } from '../../support/cli';
import { useEmulator } from '../../support/emulator';
import { createBatchFleet } from '../../core/batch/batch-fleet';

describe('mountfleet batch (in process, emulator)', () => {
  const emu = useEmulator();

  beforeEach(async () => {
    await createBatchFleet(emu.endpoint, batchClient(), ec2Client());
  });

  it('submit prints the job id; --json the whole result; status follows it', async () => {
    const plain = await runCliInProcess(
      'batch',
      'submit',
      '--queue',
      'f1-az0',
      '--job-definition',
      'f1-job',
      '--',
      'echo',
      'hi',
    );
    expect(plain.code).toBe(0);
    expect(plain.stdout).toMatch(/^[0-9a-f-]{36}\n$/);

    const json = await runCliInProcess(
      'batch',
      'submit',
      '--queue',
      'f1-az0',
      '--job-definition',
      'f1-job',
      '--scratch',
      '--json',
      '--expected-io',
      '10GiB',
      '--attempts',
      '3',
      '--job-name',
      'encode-1',
      '--',
      './encode.sh',
    );
    expect(json.code).toBe(0);
    const result = JSON.parse(json.stdout) as {
      jobId: string;
      scratch: { fileSystemId: string; path: string };
    };
    expect(result).toMatchObject({ jobName: 'encode-1', attempts: 3, scratch: { path: '/scratch' } });
    expect(json.stderr).toMatch(
      /mountfleet batch: expected I\/O 0\.01 TiB fits in the 2\.1 TiB initial burst credit/,
    );

    const status = await runCliInProcess('batch', 'status', result.jobId);
    expect(status.code).toBe(0);
    expect(status.stdout).toMatch(
      new RegExp(
        `^job ${result.jobId} \\(encode-1\\): SUCCEEDED, attempt 1 of 3, fleet f1\\n  attempt 1: ${result.jobId} SUCCEEDED, zone use1-az\\d, ${result.scratch.fileSystemId} exists\\n$`,
      ),
    );
  });

  it('bad input exits 2 with the flag named: unknown queue, --attempts out of range, a bad --job-name, an unknown job', async () => {
    const cases = [
      [
        ['batch', 'submit', '--queue', 'nope', '--job-definition', 'f1-job', '--', 'x'],
        /mountfleet batch: --queue nope: no such job queue/,
      ],
      [
        ['batch', 'submit', '--queue', 'f1-az0', '--job-definition', 'f1-job', '--attempts', '11', '--', 'x'],
        /--attempts/,
      ],
      [
        [
          'batch',
          'submit',
          '--queue',
          'f1-az0',
          '--job-definition',
          'f1-job',
          '--job-name',
          'a b',
          '--',
          'x',
        ],
        /--job-name a b: 1-128 letters/,
      ],
      [['batch', 'status', 'no-such-job'], /mountfleet batch: job no-such-job: Batch knows no such job/],
    ] as const;
    for (const [args, message] of cases) {
      const r = await runCliInProcess(...args);
      expect({ args, code: r.code }).toEqual({ args, code: 2 });
      expect(r.stderr).toMatch(message);
      expect(r.stdout).toBe('');
    }
  });
});
