/**
 * S3 clients for benchmarks: one for a general purpose bucket, one for an S3 Express One Zone
 * directory bucket (`base--<azid>--x-s3`). This is the one place that knows how to reach a directory
 * bucket both on AWS and on an emulator:
 *
 * - On AWS the SDK does it by itself: it sees the `--x-s3` name, calls CreateSession and sends requests
 *   to the zonal endpoint with the session credentials. Nothing to configure.
 * - Through an endpoint override (moto, gofakes3, a proxy) there is no zonal endpoint and no
 *   CreateSession, so the client uses path-style addressing with session auth disabled; the SDK then
 *   builds `/<bucket>//<key>`, and a build-step middleware removes the extra slash before signing.
 */
import { S3Client } from '@aws-sdk/client-s3';
import { clientConfig, s3EndpointOverridden, type ClientOptions } from '../aws';

export const DIRECTORY_BUCKET_SUFFIX = '--x-s3';

export function isDirectoryBucket(bucket: string): boolean {
  return bucket.endsWith(DIRECTORY_BUCKET_SUFFIX);
}

/** Benchmarks time single requests: a failure must show, not be retried away. */
const BENCH_DEFAULTS: ClientOptions = { maxAttempts: 1, requestTimeoutMs: 120_000 };

export function benchS3Client(bucket: string, options: ClientOptions = {}): S3Client {
  const config = clientConfig({ ...BENCH_DEFAULTS, ...options });
  const emulated = s3EndpointOverridden();
  if (!isDirectoryBucket(bucket) || !emulated) {
    return new S3Client({ ...config, forcePathStyle: emulated });
  }
  const client = new S3Client({ ...config, forcePathStyle: true, disableS3ExpressSessionAuth: true });
  const doubled = `/${bucket}//`;
  client.middlewareStack.add(
    (next) => async (args) => {
      const request = args.request as { path?: string };
      if (typeof request.path === 'string' && request.path.startsWith(doubled)) {
        request.path = `/${bucket}/${request.path.slice(doubled.length)}`;
      }
      return next(args);
    },
    { step: 'build', name: 'mountfleetDirectoryBucketPathFix' },
  );
  return client;
}
