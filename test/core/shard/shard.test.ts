import {
  CreateBucketCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  PutObjectCommand,
  type S3Client,
} from '@aws-sdk/client-s3';
import { createHash } from 'node:crypto';
import { s3Client } from '../../../core/aws/clients';
import { EXIT_STATUS } from '../../../core/common/errors';
import {
  manifestKey,
  planShards,
  shardKey,
  type ManifestEntry,
  type SourceObject,
} from '../../../core/shard/layout';
import { shardPrefix } from '../../../core/shard/shard';
import { memberLength } from '../../../core/shard/tar';
import { verifyShards } from '../../../core/shard/verify';
import { useEmulator } from '../../support/emulator';

useEmulator();

const BUCKET = 'shard-src';
const KIB = 1024;

/** Deterministic pseudo-random content so a round trip cannot pass by accident. */
function content(i: number): Buffer {
  const size = 1 + ((i * 7919) % (6 * KIB));
  const buf = Buffer.alloc(size);
  for (let b = 0; b < size; b++) buf[b] = (i * 31 + b * 17) & 0xff;
  return buf;
}

async function seed(s3: S3Client, count: number): Promise<Map<string, Buffer>> {
  await s3.send(new CreateBucketCommand({ Bucket: BUCKET }));
  const objects = new Map<string, Buffer>();
  for (let i = 0; i < count; i++)
    objects.set(`data/class-${i % 3}/item-${String(i).padStart(4, '0')}.bin`, content(i));
  const entries = [...objects];
  for (let i = 0; i < entries.length; i += 25) {
    await Promise.all(
      entries
        .slice(i, i + 25)
        .map(([Key, Body]) => s3.send(new PutObjectCommand({ Bucket: BUCKET, Key, Body }))),
    );
  }
  return objects;
}

async function text(s3: S3Client, key: string): Promise<string> {
  const res = await s3.send(new GetObjectCommand({ Bucket: BUCKET, Key: key }));
  return res.Body!.transformToString();
}

async function range(s3: S3Client, key: string, offset: number, size: number): Promise<Buffer> {
  const res = await s3.send(
    new GetObjectCommand({ Bucket: BUCKET, Key: key, Range: `bytes=${offset}-${offset + size - 1}` }),
  );
  return Buffer.from(await res.Body!.transformToByteArray());
}

const TARGET = 256 * KIB;

describe('shard against the emulator', () => {
  it('packs 300 objects into a few shards whose manifest offsets return each object', async () => {
    const s3 = s3Client({ maxAttempts: 1 });
    const objects = await seed(s3, 300);
    const result = await shardPrefix({
      s3,
      bucket: BUCKET,
      prefix: 'data/',
      destPrefix: 'shards/',
      targetBytes: TARGET,
    });

    expect(result.objects).toBe(300);
    expect(result.shards.length).toBeGreaterThanOrEqual(3);
    expect(result.shards.length).toBeLessThanOrEqual(8);
    expect(result.written).toBe(result.shards.length);
    for (const shard of result.shards) expect(shard.bytes).toBeLessThanOrEqual(TARGET);

    const manifest = (await text(s3, manifestKey('shards/')))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as ManifestEntry);
    expect(manifest.map((e) => e.key).sort()).toEqual([...objects.keys()].sort());
    for (const e of manifest.filter((_, i) => i % 37 === 0)) {
      const original = objects.get(e.key)!;
      expect(e.sha256).toBe(createHash('sha256').update(original).digest('hex'));
      expect((await range(s3, e.shard, e.offset, e.size)).equals(original)).toBe(true);
    }

    const verified = await verifyShards({ s3, bucket: BUCKET, destPrefix: 'shards/', rangeChecks: 50 });
    expect(verified.problems).toEqual([]);
    expect(verified).toMatchObject({
      ok: true,
      objects: 300,
      shards: result.shards.length,
      rangeChecked: 50,
    });
  });

  it('resumes after an interruption and ends with the same shards as an uninterrupted run', async () => {
    const s3 = s3Client({ maxAttempts: 1 });
    await seed(s3, 120);
    const target = 96 * KIB;
    const whole = await shardPrefix({
      s3,
      bucket: BUCKET,
      prefix: 'data/',
      destPrefix: 'whole/',
      targetBytes: target,
    });
    expect(whole.shards.length).toBeGreaterThanOrEqual(4);

    const stop = new AbortController();
    await expect(
      shardPrefix({
        s3,
        bucket: BUCKET,
        prefix: 'data/',
        destPrefix: 'resumed/',
        targetBytes: target,
        signal: stop.signal,
        onShard: (_shard, done) => {
          if (done.written === 2) stop.abort('SIGINT');
        },
      }),
    ).rejects.toMatchObject({
      // The command ends with 130, saying how far it got.
      exitStatus: EXIT_STATUS.interrupted,
      message: expect.stringMatching(
        /^stopped \(SIGINT\) with 2 of \d+ shards done; they are kept: run again to resume$/,
      ),
    });

    const resumed = await shardPrefix({
      s3,
      bucket: BUCKET,
      prefix: 'data/',
      destPrefix: 'resumed/',
      targetBytes: target,
    });
    expect(resumed.skipped).toBe(2);
    expect(resumed.written).toBe(whole.shards.length - 2);
    expect(resumed.shards.map((s) => [s.bytes, s.sha256, s.objects])).toEqual(
      whole.shards.map((s) => [s.bytes, s.sha256, s.objects]),
    );
    const strip = (m: string) => m.replaceAll('resumed/', '').replaceAll('whole/', '');
    expect(strip(await text(s3, manifestKey('resumed/')))).toBe(strip(await text(s3, manifestKey('whole/'))));

    // A shard that vanished after its progress record was written is rebuilt, not trusted.
    await s3.send(new DeleteObjectCommand({ Bucket: BUCKET, Key: shardKey('resumed/', 1) }));
    const repaired = await shardPrefix({
      s3,
      bucket: BUCKET,
      prefix: 'data/',
      destPrefix: 'resumed/',
      targetBytes: target,
    });
    expect(repaired).toMatchObject({ written: 1, skipped: whole.shards.length - 1 });
    expect((await verifyShards({ s3, bucket: BUCKET, destPrefix: 'resumed/' })).ok).toBe(true);
  });

  it('reports a corrupted shard and a changed source', async () => {
    const s3 = s3Client({ maxAttempts: 1 });
    await seed(s3, 40);
    const result = await shardPrefix({
      s3,
      bucket: BUCKET,
      prefix: 'data/',
      destPrefix: 'out/',
      targetBytes: TARGET,
    });
    const key = result.shards[0].key;
    const tar = Buffer.from(
      await (await s3.send(new GetObjectCommand({ Bucket: BUCKET, Key: key }))).Body!.transformToByteArray(),
    );
    tar[512] ^= 0xff; // the first byte of the first member's data, right after its header
    await s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: key, Body: tar }));
    await s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'data/late-arrival.bin', Body: 'new' }));

    const verified = await verifyShards({ s3, bucket: BUCKET, destPrefix: 'out/', source: 'content' });
    expect(verified.ok).toBe(false);
    expect(verified.problems).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/sha256 differs from the manifest/),
        expect.stringMatching(/sha256 differs from shards.json/),
        'source data/late-arrival.bin is not in any shard',
      ]),
    );

    // A damaged header makes the shard unreadable as tar: reported, not thrown.
    tar[512] ^= 0xff;
    tar[0] ^= 0xff;
    await s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: key, Body: tar }));
    const broken = await verifyShards({ s3, bucket: BUCKET, destPrefix: 'out/', source: 'none' });
    expect(broken.problems).toEqual(expect.arrayContaining([expect.stringMatching(/unreadable/)]));
  });
});

describe('shard planning', () => {
  const obj = (key: string, size: number): SourceObject => ({ key, size, etag: '"e"', mtime: 0 });

  it('fills shards up to the target in key order and gives an oversized object its own shard', () => {
    const objects = [obj('p/a', 1000), obj('p/b', 1000), obj('p/c', 5000), obj('p/d', 10)];
    const plan = planShards(objects, 'p/', 'out/', 5 * 1024);
    expect(plan.map((s) => s.members.map((m) => m.key))).toEqual([['p/a', 'p/b'], ['p/c'], ['p/d']]);
    expect(plan[0].bytes).toBe(1024 + memberLength({ name: 'a', size: 1000, mtime: 0 }) * 2);
    expect(plan[1].key).toBe('out/shard-000001.tar');
  });
});
