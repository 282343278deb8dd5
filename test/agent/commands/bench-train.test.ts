/**
 * `mountfleet bench train` on the real Mountpoint (the harness, or MOUNTFLEET_MOUNT_S3) against moto behind
 * the fault proxy, which counts the GETs the loader causes. The built bundle runs inside a private mount
 * namespace where the bucket is mounted. Bad input that needs no mount is checked on local directories.
 */
import { CreateBucketCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { s3Client } from '../../../core/aws/clients';
import { CLI_BUNDLE, runCliInProcess } from '../../support/cli';
import { useEmulator } from '../../support/emulator';
import { until, useMountpointRig } from '../../support/mountpoint-rig';
import { realMountpointForTests } from '../../support/real-mountpoint';

const emu = useEmulator();
const real = realMountpointForTests();

const FILES = 40;
const FILE_BYTES = 4096;

interface TrainJson {
  path: string;
  mount?: { mountPoint: string; fsType: string };
  sampleFormat: string;
  samples: number;
  batchSize: number;
  workers: number;
  prefetch: number;
  stepMs: number;
  complete: boolean;
  epochs: {
    epoch: number;
    complete: boolean;
    batches: number;
    samples: number;
    bytes: number;
    seconds: number;
    itPerSecond: number;
    samplesPerSecond: number;
    megabytesPerSecond: number;
    dataWaitShare: number;
    waitMs: { p50: number; p99: number; max: number };
    busyPercentBySecond: number[];
  }[];
}

describe('bench train on the real Mountpoint', () => {
  const rig = useMountpointRig(emu, real);
  beforeEach(async () => {
    if (real.skip) return;
    const s3 = s3Client({ maxAttempts: 1 });
    await s3.send(new CreateBucketCommand({ Bucket: 'train-data' }));
    for (let i = 0; i < FILES; i++)
      await s3.send(
        new PutObjectCommand({
          Bucket: 'train-data',
          Key: `images/img-${String(i).padStart(3, '0')}.jpg`,
          Body: Buffer.alloc(FILE_BYTES, i),
        }),
      );
    rig.proxy.resetStats();
  });

  /** A prefix of the bucket, read-only, with Mountpoint's defaults (no cache). */
  const mountPrefix = (prefix: string) => rig.mount(['--read-only', '--prefix', prefix, 'train-data']);
  /** `bench train ARGS --json`, which must succeed; its document. */
  const trainJson = async (args: string[]) => {
    const r = await rig.cli(['bench', 'train', ...args, '--json']);
    expect({ code: r.code, stderr: r.code === 0 ? '' : r.stderr }).toEqual({ code: 0, stderr: '' });
    return { doc: JSON.parse(r.stdout) as TrainJson, stderr: r.stderr };
  };
  /** Starts the CLI in the namespace with its output piped, for a run the test interrupts. */
  const startTrain = (args: string[]) => {
    const child = spawn(
      'nsenter',
      [
        '-t',
        String(rig.ns.holderPid),
        '--mount',
        '--pid',
        '--',
        process.execPath,
        CLI_BUNDLE,
        'bench',
        'train',
        ...args,
      ],
      { env: rig.env(), stdio: ['ignore', 'pipe', 'pipe'] },
    );
    const out = { stdout: '', stderr: '' };
    child.stdout.on('data', (d: Buffer) => (out.stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out.stderr += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
    return { out, exited };
  };

  real.it('files: every epoch reads every sample once, in batches, and reports it as JSON', async () => {
    const mnt = await mountPrefix('images/');
    rig.proxy.resetStats();
    const { doc, stderr } = await trainJson([
      '--path',
      mnt,
      '--batch-size',
      '8',
      '--workers',
      '4',
      '--step-ms',
      '5',
      '--epochs',
      '2',
    ]);
    expect(doc).toMatchObject({
      path: mnt,
      mount: { mountPoint: mnt, fsType: expect.stringMatching(/^fuse/) },
      sampleFormat: 'files',
      samples: FILES,
      batchSize: 8,
      workers: 4,
      prefetch: 2,
      stepMs: 5,
      complete: true,
    });
    expect(doc.epochs.map((e) => [e.epoch, e.complete, e.batches, e.samples, e.bytes])).toEqual([
      [1, true, 5, FILES, FILES * FILE_BYTES],
      [2, true, 5, FILES, FILES * FILE_BYTES],
    ]);
    for (const e of doc.epochs) {
      expect(e.itPerSecond).toBeCloseTo(e.batches / e.seconds, 6);
      expect(e.megabytesPerSecond).toBeCloseTo(e.bytes / 1e6 / e.seconds, 6);
      expect(e.dataWaitShare).toBeGreaterThan(0);
      expect(e.dataWaitShare).toBeLessThan(1);
      expect(e.waitMs.p50).toBeLessThanOrEqual(e.waitMs.p99);
      expect(e.busyPercentBySecond.length).toBe(Math.ceil(e.seconds));
    }
    // No cache: each epoch reads every file from S3 again, one GET per small file.
    expect(rig.proxy.count('s3', 'GetObject')).toBe(2 * FILES);
    expect(stderr).toMatch(/^40 samples \(files\) under .* on fuse/m);
    expect(stderr).toMatch(/^epoch 2 busy\/s [▁▂▃▄▅▆▇█]+$/m);
  });

  real.it(
    'queueing: while the consumer computes, workers read at most prefetch x workers batches ahead; Ctrl-C prints the summary',
    async () => {
      const mnt = await mountPrefix('images/');
      rig.proxy.resetStats();
      // 2 workers, 1 batch each in flight, batches of 4, and a step far longer than the test: the consumer
      // takes batch 1 and computes; the workers may then fill the 2 slots and no more, so 3 batches are read.
      const run = startTrain([
        '--path',
        mnt,
        '--batch-size',
        '4',
        '--workers',
        '2',
        '--prefetch',
        '1',
        '--step-ms',
        '600000',
        '--json',
      ]);
      const readAhead = 3 * 4;
      // Files whose read has begun: one GET each (counted by key, as a retried GET arrives twice). A file's
      // read begins only after the loader's stop check, so once 12 have begun, all 12 are counted.
      const filesRead = () =>
        new Set(
          rig.proxy
            .requests()
            .filter((q) => q.operation === 'GetObject')
            .map((q) => q.path),
        ).size;
      await until('the loader to read 3 batches', () => filesRead() >= readAhead);
      const [pid] = rig.ns.pidsOf(process.execPath, CLI_BUNDLE);
      expect(pid).toBeGreaterThan(0);
      process.kill(pid, 'SIGINT');
      expect(await run.exited).toBe(130);
      const doc = JSON.parse(run.out.stdout) as TrainJson;
      expect(doc.complete).toBe(false);
      expect(doc.epochs).toHaveLength(1);
      expect(doc.epochs[0]).toMatchObject({
        epoch: 1,
        complete: false,
        batches: 1,
        samples: 4,
        bytes: readAhead * FILE_BYTES,
      });
      expect(filesRead()).toBe(readAhead);
      expect(run.out.stderr).toMatch(/stopping; printing what was measured/);
      expect(run.out.stderr).toMatch(/^epoch 1 \(stopped\): .* 1 batches in /m);
    },
  );

  real.it(
    'tar: reads the shards `mountfleet shard` wrote, each from start to end, in a few GETs',
    async () => {
      const shard = await runCliInProcess(
        'shard',
        '--bucket',
        'train-data',
        '--prefix',
        'images/',
        '--dest-prefix',
        'shards/',
        '--target-size',
        '50KiB',
        '--json',
      );
      expect(shard.code).toBe(0);
      const { shards } = JSON.parse(shard.stdout) as {
        shards: { key: string; bytes: number; objects: number }[];
      };
      expect(shards.length).toBeGreaterThanOrEqual(3);
      const shardBytes = shards.reduce((a, s) => a + s.bytes, 0);
      const mnt = await mountPrefix('shards/');
      rig.proxy.resetStats();
      const tar = ['--path', mnt, '--sample-format', 'tar', '--batch-size', '5'];
      const { doc } = await trainJson([...tar, '--workers', '2', '--step-ms', '5', '--epochs', '2']);
      expect(doc).toMatchObject({ sampleFormat: 'tar', samples: FILES, complete: true });
      for (const e of doc.epochs) {
        expect(e.samples).toBe(FILES);
        expect(e.bytes).toBe(shardBytes);
        // Each worker batches its own stream: at most one short batch per worker.
        expect(e.batches).toBeGreaterThanOrEqual(FILES / 5);
        expect(e.batches).toBeLessThanOrEqual(FILES / 5 + 2);
      }
      // shards.json once, then each shard once per epoch: a sequential read of a small object is one GET.
      expect(rig.proxy.count('s3', 'GetObject')).toBe(1 + 2 * shards.length);

      // --limit takes whole shards in order until that many samples are in, so reads stay sequential.
      const limited = await trainJson([...tar, '--limit', String(shards[0].objects + 1), '--epochs', '1']);
      expect(limited.doc.samples).toBe(shards[0].objects + shards[1].objects);
      expect(limited.doc.epochs[0].bytes).toBe(shards[0].bytes + shards[1].bytes);
    },
  );

  real.it('a mount whose Mountpoint process is gone is refused with exit 2 and how to fix it', async () => {
    const mnt = await mountPrefix('images/');
    const [pid] = rig.ns.pidsOf(real.binary, mnt);
    process.kill(pid, 'SIGKILL');
    await until('the killed Mountpoint to go', () => rig.ns.pidsOf(real.binary, mnt).length === 0);
    const r = await rig.cli(['bench', 'train', '--path', mnt]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--path: .* is not mounted any more .*remount it/);
    expect((await rig.ns.run(['umount', '-l', mnt])).code).toBe(0);
  });
});

describe('bench train refuses bad input with exit 2, naming the flag', () => {
  const local = mkdtempSync(join(tmpdir(), 'bench-train-input-'));
  const data = join(local, 'data');
  const empty = join(local, 'empty');
  beforeAll(() => {
    mkdirSync(data);
    mkdirSync(empty);
    for (let i = 0; i < 10; i++) writeFileSync(join(data, `s${i}`), 'x');
  });
  afterAll(() => rmSync(local, { recursive: true, force: true }));

  test.each([
    [['--path', join(local, 'missing')], /--path: .*missing does not exist/],
    [['--path', join(data, 's0')], /--path: .*s0 is not a directory/],
    [
      ['--path', empty],
      /--path: no samples under .*empty \(no regular files\); it is not on a Mountpoint mount \(\S+ at \S+\): is its mount up\? see `mountfleet status`/,
    ],
    [
      ['--path', data, '--batch-size', '11'],
      /--batch-size 11 is larger than the data set \(10 samples\): lower it or add data/,
    ],
    [
      ['--path', data, '--limit', '4', '--batch-size', '5'],
      /--batch-size 5 is larger than the data set \(4 samples\)/,
    ],
    [
      ['--path', data, '--sample-format', 'tar'],
      /shards\.json not found: .*point --path at the directory of its --dest-prefix/,
    ],
    [['--path', data, '--sample-format', 'zip'], /--sample-format.*zip/],
    [
      ['--path', data, '--batch-size', '2', '--chart', join(local, 'no-such-dir', 'c.svg')],
      /--chart .*c\.svg: .*no-such-dir is not a directory: create it or give another path/,
    ],
    [
      ['--path', data, '--batch-size', '2', '--chart', empty],
      /--chart .*empty: is a directory: give the path of a file to write/,
    ],
    [['--path', data, '--workers', '0'], /--workers "0": must be a whole number from 1 to 1024/],
    [['--path', data, '--step-ms', '1.5'], /--step-ms "1.5": must be a whole number from 0/],
  ])('%j', async (args, message) => {
    const r = await runCliInProcess('bench', 'train', ...args);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(message);
    expect(r.stdout).toBe('');
  });
  test('a local directory is measured, with a note that it is not a Mountpoint mount and S3 requests are not counted', async () => {
    const r = await runCliInProcess(
      'bench',
      'train',
      '--path',
      data,
      '--batch-size',
      '5',
      '--step-ms',
      '0',
      '--epochs',
      '1',
      '--json',
    );
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(
      /^note: .*\/data is on \S+ at \S+, not on a Mountpoint mount: this measures that file system$/m,
    );
    expect(r.stderr).toMatch(/^S3 requests: not counted: /m);
    const doc = JSON.parse(r.stdout) as {
      s3Counts: { unavailable: string };
      epochs: { batches: number; s3?: unknown }[];
    };
    expect(doc.s3Counts.unavailable).toBeTruthy();
    expect(doc.epochs).toEqual([expect.objectContaining({ batches: 2 })]);
    expect(doc.epochs[0].s3).toBeUndefined();
  });
});
