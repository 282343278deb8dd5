/**
 * S3 clients for benchmarks: core/aws/clients.ts clients (the Express one reaches directory buckets on AWS and,
 * through its path fix, on emulators), with no retries, so a failed request shows instead of being timed.
 */
import type { S3Client } from '@aws-sdk/client-s3';
import { isDirectoryBucket, s3Client, s3ExpressClient, type ClientOptions } from '../aws';

const BENCH_DEFAULTS: ClientOptions = { maxAttempts: 1, requestTimeoutMs: 120_000 };

export function benchS3Client(bucket: string, options: ClientOptions = {}): S3Client {
  const o = { ...BENCH_DEFAULTS, ...options };
  return isDirectoryBucket(bucket) ? s3ExpressClient(o) : s3Client(o);
}
