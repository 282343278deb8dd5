/**
 * `mountfleet warm` on the real Mountpoint (the harness, or MOUNTFLEET_MOUNT_S3) against moto behind the
 * fault proxy: after a warm-up the job's reads cause no GET to the source bucket. The shared cache uses the
 * proxy's STAND-INs for S3 Express CreateSession and for its block checksums (where moto differs), and an
 * ordinary moto bucket with an Express name; the "second instance of the zone" is a second Mountpoint
 * process in the same namespace.
 */
import { CreateBucketCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { s3Client, s3ExpressClient } from '../../../core/aws/clients';
import { runCliInProcess } from '../../support/cli';
import { useEmulator } from '../../support/emulator';
import { answerExpressCreateSession, keepExpressChecksums } from '../../support/express-session-standin';
import { until, useMountpointRig } from '../../support/mountpoint-rig';
import { realMountpointForTests } from '../../support/real-mountpoint';

const emu = useEmulator();
const real = realMountpointForTests();

const SOURCE = 'warm-data';
const EXPRESS = 'warm--use1-az4--x-s3';
const FILES = 20;
const FILE_BYTES = 100 * 1024;

interface WarmJson {
  path: string;
  files: number;
  bytes: number;
  totalFiles: number;
  complete: boolean;
  failed: unknown[];
  mount?: {
    mountPoint: string;
    pid?: number;
    local?: { directory: string; maxBytes?: number; limitFrom: string };
    shared?: { bucket: string };
  };
  notes: string[];
}

describe('warm on the real Mountpoint', () => {
  const rig = useMountpointRig(emu, real);
  beforeEach(async () => {
    if (real.skip) return;
    rig.proxy.clear();
    answerExpressCreateSession(rig.proxy);
    keepExpressChecksums(rig.proxy);
    const s3 = s3Client({ maxAttempts: 1 });
    await s3.send(new CreateBucketCommand({ Bucket: SOURCE }));
    for (let i = 0; i < FILES; i++)
      await s3.send(
        new PutObjectCommand({ Bucket: SOURCE, Key: `img-${i}.jpg`, Body: Buffer.alloc(FILE_BYTES, i) }),
      );
  });

  const mount = (flags: string[]) => rig.mount(['--read-only', ...flags, SOURCE]);
  const warm = async (args: string[]) => {
    const r = await rig.cli(['warm', ...args]);
    return {
      ...r,
      doc: r.code === 0 && args.includes('--json') ? (JSON.parse(r.stdout) as WarmJson) : undefined,
    };
  };
  /** Reads every file of the mount as a job would; resolves to the GETs it caused to the source bucket. */
  const sourceGetsOfAJob = async (mnt: string) => {
    rig.proxy.resetStats();
    for (let i = 0; i < FILES; i++) await readFile(rig.ns.path(`${mnt}/img-${i}.jpg`));
    return rig.proxy.requests().filter((r) => r.operation === 'GetObject' && r.path.startsWith(`/${SOURCE}/`))
      .length;
  };

  real.it('fills the local cache: the job then reads nothing from S3; it names the cache', async () => {
    const cache = rig.freshDir('cache');
    const mnt = await mount(['--cache', cache, '--metadata-ttl', 'indefinite']);
    rig.proxy.resetStats();
    const r = await warm(['--path', mnt, '--parallel', '4', '--json']);
    expect(r.code).toBe(0);
    expect(r.doc).toMatchObject({
      path: mnt,
      files: FILES,
      bytes: FILES * FILE_BYTES,
      complete: true,
      failed: [],
      mount: { mountPoint: mnt, local: { directory: cache, limitFrom: 'free space' } },
    });
    expect(r.doc!.mount!.pid).toBeGreaterThan(0);
    expect(r.doc!.notes).toEqual([`${mnt} has no shared Express cache: only this instance is warmed`]);
    expect(rig.proxy.count('s3', 'GetObject')).toBe(FILES);
    expect(await sourceGetsOfAJob(mnt)).toBe(0);
    await rig.unmount(mnt);
  });

  real.it(
    'the control: on a mount with no data cache it says so, and the job reads from S3 again',
    async () => {
      const mnt = await mount(['--metadata-ttl', 'indefinite']);
      // The path last on the command line, as people type it: warm must not take itself for the Mountpoint process.
      const r = await warm(['--path', mnt]);
      expect(r.code).toBe(0);
      expect(r.stderr).toContain(
        `warm: ${mnt} has no data cache (no --cache, no --cache-xz): a warm-up fills only the metadata cache`,
      );
      expect(r.stdout).toMatch(
        new RegExp(`^warmed ${FILES} files, ${((FILES * FILE_BYTES) / 1e6).toFixed(1)} MB in `),
      );
      expect(await sourceGetsOfAJob(mnt)).toBe(FILES);
      await rig.unmount(mnt);
    },
  );

  real.it('warns when the data set is larger than --max-cache-size', async () => {
    const mnt = await mount(['--cache', rig.freshDir('cache'), '--max-cache-size', '1']);
    const r = await warm(['--path', mnt, '--json']);
    expect(r.code).toBe(0);
    expect(r.doc!.mount!.local).toMatchObject({ maxBytes: 1024 * 1024, limitFrom: 'max-cache-size' });
    expect(r.doc!.notes).toContainEqual(
      expect.stringMatching(
        /the data set \(0\.00 GB\) is larger than the local cache .* \(0\.00 GB, from --max-cache-size\)/,
      ),
    );
    await rig.unmount(mnt);
  });

  real.it(
    'fills the shared Express cache: a second, fresh instance of the zone reads nothing from the source',
    async () => {
      await s3ExpressClient({ maxAttempts: 1 }).send(new CreateBucketCommand({ Bucket: EXPRESS }));
      const first = await mount(['--cache-xz', EXPRESS, '--metadata-ttl', 'indefinite']);
      rig.proxy.resetStats();
      const r = await warm(['--path', first, '--json']);
      expect(r.code).toBe(0);
      expect(r.doc!.mount!.shared).toEqual({ bucket: EXPRESS });
      expect(r.doc!.notes).toContain(
        `${first} has the shared Express cache ${EXPRESS}: this warm-up serves every instance of the zone`,
      );
      // Mountpoint writes cache blocks after answering the read: wait until every file's block is in the bucket.
      const blocksWritten = () =>
        rig.proxy
          .requests()
          .filter(
            (q) =>
              q.operation === 'PutObject' &&
              q.path.startsWith(`/${EXPRESS}/`) &&
              !q.path.endsWith('_mountpoint_cache_metadata'),
          ).length;
      await until('a cache block per file', () => blocksWritten() >= FILES);
      await rig.unmount(first);

      const second = await mount(['--cache-xz', EXPRESS, '--metadata-ttl', 'indefinite']);
      expect(await sourceGetsOfAJob(second)).toBe(0);
      expect(
        rig.proxy.requests().filter((q) => q.operation === 'GetObject' && q.path.startsWith(`/${EXPRESS}/`))
          .length,
      ).toBeGreaterThanOrEqual(FILES);
      await rig.unmount(second);
    },
  );
});

describe('warm refuses bad input with exit 2', () => {
  const local = mkdtempSync(join(tmpdir(), 'warm-input-'));
  const data = join(local, 'data');
  beforeAll(() => {
    mkdirSync(data);
    writeFileSync(join(data, 'a'), 'a');
    writeFileSync(join(local, 'outside.txt'), '../outside.txt\n');
    writeFileSync(join(local, 'missing.txt'), 'a\nnot-there\n');
    writeFileSync(join(local, 'empty.txt'), '# nothing\n\n');
  });
  afterAll(() => rmSync(local, { recursive: true, force: true }));

  test.each([
    [['--path', join(local, 'nope')], /--path: .*nope does not exist/],
    [['--path', join(data, 'a')], /--path: .* is not a directory/],
    [
      ['--path', data, '--manifest', join(local, 'outside.txt')],
      /--manifest: .*outside\.txt line 1: "\.\.\/outside\.txt" is not a file under/,
    ],
    [['--path', data, '--manifest', join(local, 'missing.txt')], /--manifest: .*not-there does not exist/],
    [['--path', data, '--manifest', join(local, 'empty.txt')], /--manifest: .*empty\.txt lists no files/],
    [['--path', data, '--manifest', join(local, 'none.txt')], /--manifest: cannot read .*none\.txt/],
    [['--path', data, '--parallel', '0'], /--parallel "0": must be a whole number from 1 to 1024/],
  ])('%j', async (args, message) => {
    const r = await runCliInProcess('warm', ...args);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(message);
    expect(r.stdout).toBe('');
  });

  test('warms a local directory and says no Mountpoint cache is filled there', async () => {
    const r = await runCliInProcess('warm', '--path', data, '--json');
    expect(r.code).toBe(0);
    const doc = JSON.parse(r.stdout) as WarmJson;
    expect(doc).toMatchObject({ files: 1, bytes: 1, complete: true });
    expect(doc.notes).toEqual([`${data} is not on a FUSE mount: reading it fills no Mountpoint cache`]);
  });
});
