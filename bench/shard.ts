/**
 * Shard throughput against a local S3-compatible server (moto by default, or AWS_ENDPOINT_URL):
 * uploads OBJECTS small objects, packs them into TAR shards, then verifies the round trip.
 *
 *   npx tsx bench/shard.ts                      # 1,000 x 100 KiB into 32 MiB shards
 *   OBJECTS=4000 TARGET=64MiB npx tsx bench/shard.ts
 */
import { CreateBucketCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { randomBytes } from 'node:crypto';
import { s3Client } from '../core/aws/clients';
import { parseBytes } from '../core/common/units';
import { shardPrefix } from '../core/shard/shard';
import { verifyShards } from '../core/shard/verify';
import { withS3Endpoint } from './support';

const objects = Number(process.env.OBJECTS ?? '1000');
const objectBytes = parseBytes(process.env.OBJECT_SIZE ?? '100KiB');
const target = parseBytes(process.env.TARGET ?? '32MiB');

void withS3Endpoint(async (endpoint) => {
  const s3 = s3Client();
  const bucket = `shard-bench-${Date.now()}`;
  await s3.send(new CreateBucketCommand({ Bucket: bucket }));
  const body = randomBytes(objectBytes);
  for (let i = 0; i < objects; i += 32) {
    await Promise.all(
      Array.from({ length: Math.min(32, objects - i) }, (_, j) =>
        s3.send(
          new PutObjectCommand({
            Bucket: bucket,
            Key: `src/${String(i + j).padStart(6, '0')}.bin`,
            Body: body,
          }),
        ),
      ),
    );
  }
  const mib = (objects * objectBytes) / 1024 ** 2;
  const result = await shardPrefix({
    s3,
    bucket,
    prefix: 'src/',
    destPrefix: 'shards/',
    targetBytes: target,
  });
  console.log(
    `endpoint ${endpoint}: ${objects} x ${objectBytes} B (${mib.toFixed(0)} MiB) -> ${result.shards.length} shards`,
  );
  console.log(
    `shard:  ${result.seconds.toFixed(2)} s, ${(objects / result.seconds).toFixed(0)} objects/s, ${(mib / result.seconds).toFixed(1)} MiB/s`,
  );
  const again = await shardPrefix({ s3, bucket, prefix: 'src/', destPrefix: 'shards/', targetBytes: target });
  console.log(`resume: ${again.seconds.toFixed(2)} s with all ${again.skipped} shards already done`);
  const started = performance.now();
  const verified = await verifyShards({
    s3,
    bucket,
    destPrefix: 'shards/',
    source: 'listing',
    rangeChecks: 50,
  });
  const seconds = (performance.now() - started) / 1000;
  console.log(
    `verify: ${seconds.toFixed(2)} s, ${(mib / seconds).toFixed(1)} MiB/s read back, ok=${verified.ok} ` +
      `(${verified.rangeChecked} ranged reads)`,
  );
});
