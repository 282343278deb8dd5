/** The dataset the fleet mounts: seeded into the emulator's S3, and where the Mountpoint stand-in serves it. */
import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CreateBucketCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { s3Client } from '../../core/aws/clients';

/**
 * Puts `train/<file>` (random bytes) into `bucket` and the same bytes under `<work>/buckets/<bucket>/`,
 * the directory the Mountpoint stand-in serves as the bucket. Returns that buckets directory.
 */
export async function seedDataset(
  work: string,
  bucket: string,
  file: string,
  bytes: number,
): Promise<string> {
  const data = randomBytes(bytes);
  const s3 = s3Client();
  await s3.send(new CreateBucketCommand({ Bucket: bucket }));
  await s3.send(new PutObjectCommand({ Bucket: bucket, Key: `train/${file}`, Body: data }));
  const bucketsDir = join(work, 'buckets');
  mkdirSync(join(bucketsDir, bucket, 'train'), { recursive: true });
  writeFileSync(join(bucketsDir, bucket, 'train', file), data);
  return bucketsDir;
}
