/**
 * The one place AWS SDK clients are configured. Every runtime path (agent, Lambda, benches) builds its
 * clients here so that region, endpoints, retries and timeouts behave the same everywhere.
 *
 * Region and endpoints come from the SDK's own standard variables (`AWS_REGION`, `AWS_ENDPOINT_URL`,
 * `AWS_ENDPOINT_URL_<SERVICE>`), which the SDK reads itself; we only add adaptive retries (client-side
 * rate limiting that backs off under throttling) and timeouts so a black-holed endpoint cannot hang a run.
 */
import type { AutoScalingClient } from '@aws-sdk/client-auto-scaling';
import type { BatchClient } from '@aws-sdk/client-batch';
import type { CloudWatchClient } from '@aws-sdk/client-cloudwatch';
import type { EC2Client } from '@aws-sdk/client-ec2';
import type { EFSClient } from '@aws-sdk/client-efs';
import type { LambdaClient } from '@aws-sdk/client-lambda';
import type { ResourceGroupsTaggingAPIClient } from '@aws-sdk/client-resource-groups-tagging-api';
import type { S3Client } from '@aws-sdk/client-s3';
import { NodeHttpHandler } from '@smithy/node-http-handler';
import { Agent as HttpAgent } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';

export interface ClientOptions {
  /** Region; the SDK's default chain (AWS_REGION, profile, IMDS) applies when unset. */
  readonly region?: string;
  /** Total attempts per call, first included. @default 5 */
  readonly maxAttempts?: number;
  /** Retry strategy. @default 'adaptive' */
  readonly retryMode?: 'adaptive' | 'standard';
  /** TCP connect timeout. @default 3000 */
  readonly connectionTimeoutMs?: number;
  /** Socket idle timeout while waiting for a response. @default 10000 */
  readonly requestTimeoutMs?: number;
  /** Concurrent sockets per client (bounds our own concurrency). @default 50 */
  readonly maxSockets?: number;
}

/** Defaults chosen for control-plane calls: a few retries, fail fast on dead endpoints. */
const DEFAULT_CLIENT_OPTIONS = {
  maxAttempts: 5,
  retryMode: 'adaptive',
  connectionTimeoutMs: 3000,
  requestTimeoutMs: 10000,
  maxSockets: 50,
} as const satisfies ClientOptions;

/** The configuration shared by every client: pass it to any `new XxxClient(...)`. */
export function clientConfig(options: ClientOptions = {}) {
  const o = { ...DEFAULT_CLIENT_OPTIONS, ...options };
  const agentOptions = { keepAlive: true, maxSockets: o.maxSockets };
  return {
    ...(o.region ? { region: o.region } : {}),
    maxAttempts: o.maxAttempts,
    retryMode: o.retryMode,
    requestHandler: new NodeHttpHandler({
      connectionTimeout: o.connectionTimeoutMs,
      // In @smithy/node-http-handler 4.x `requestTimeout` only logs a warning unless `throwOnRequestTimeout`
      // is set, and it then bounds the whole upload too; `socketTimeout` fails an attempt once the socket
      // is idle this long (a black-holed endpoint, a stalled body) without limiting long transfers.
      // test/core/aws/clients.test.ts checks that a black-holed call fails in time.
      socketTimeout: o.requestTimeoutMs,
      httpAgent: new HttpAgent(agentOptions),
      httpsAgent: new HttpsAgent(agentOptions),
    }),
  };
}

/** True when S3 is reached through an endpoint override (emulator, proxy): virtual-host addressing cannot work there. */
export function s3EndpointOverridden(env: NodeJS.ProcessEnv = process.env): boolean {
  return Boolean(env.AWS_ENDPOINT_URL_S3 ?? env.AWS_ENDPOINT_URL);
}

/*
 * Each SDK package loads on the first call of its factory, not with this module: Lambda bundles leave the
 * SDK external, and loading all four packages (client-ec2 alone is 2 MB of JavaScript) costs ~300 ms of
 * cold start whether or not a function uses them.
 */
/* eslint-disable @typescript-eslint/no-require-imports */
const sdk = {
  efs: () => require('@aws-sdk/client-efs') as typeof import('@aws-sdk/client-efs'),
  ec2: () => require('@aws-sdk/client-ec2') as typeof import('@aws-sdk/client-ec2'),
  cloudwatch: () => require('@aws-sdk/client-cloudwatch') as typeof import('@aws-sdk/client-cloudwatch'),
  s3: () => require('@aws-sdk/client-s3') as typeof import('@aws-sdk/client-s3'),
  autoScaling: () => require('@aws-sdk/client-auto-scaling') as typeof import('@aws-sdk/client-auto-scaling'),
  batch: () => require('@aws-sdk/client-batch') as typeof import('@aws-sdk/client-batch'),
  lambda: () => require('@aws-sdk/client-lambda') as typeof import('@aws-sdk/client-lambda'),
  tagging: () =>
    require('@aws-sdk/client-resource-groups-tagging-api') as typeof import('@aws-sdk/client-resource-groups-tagging-api'),
};
/* eslint-enable @typescript-eslint/no-require-imports */

export function efsClient(options?: ClientOptions): EFSClient {
  return new (sdk.efs().EFSClient)(clientConfig(options));
}

export function ec2Client(options?: ClientOptions): EC2Client {
  return new (sdk.ec2().EC2Client)(clientConfig(options));
}

export function cloudWatchClient(options?: ClientOptions): CloudWatchClient {
  return new (sdk.cloudwatch().CloudWatchClient)(clientConfig(options));
}

export function autoScalingClient(options?: ClientOptions): AutoScalingClient {
  return new (sdk.autoScaling().AutoScalingClient)(clientConfig(options));
}

export function batchClient(options?: ClientOptions): BatchClient {
  return new (sdk.batch().BatchClient)(clientConfig(options));
}

/**
 * Lambda, for synchronous invocations of a function that runs up to `longestRunMs`: the socket may stay idle that
 * long while the function works (the keep-alive agent sends TCP keepalives meanwhile, so a NAT does not drop it),
 * and one attempt only: Invoke has no idempotency token, and a retried invocation would run the function twice.
 */
export function lambdaClient(longestRunMs: number, options?: ClientOptions): LambdaClient {
  return new (sdk.lambda().LambdaClient)(
    clientConfig({ ...options, maxAttempts: 1, requestTimeoutMs: longestRunMs + 60_000 }),
  );
}

/** The Resource Groups Tagging API: tags up to 20 resources of any service in one call. */
export function taggingClient(options?: ClientOptions): ResourceGroupsTaggingAPIClient {
  return new (sdk.tagging().ResourceGroupsTaggingAPIClient)(clientConfig(options));
}

export function s3Client(options?: ClientOptions): S3Client {
  return new (sdk.s3().S3Client)({ ...clientConfig(options), forcePathStyle: s3EndpointOverridden() });
}

/** S3 Express One Zone directory bucket names end in this (`base--<azid>--x-s3`). */
const DIRECTORY_BUCKET_SUFFIX = '--x-s3';

export function isDirectoryBucket(bucket: string): boolean {
  return bucket.endsWith(DIRECTORY_BUCKET_SUFFIX);
}

/**
 * A client for S3 Express One Zone directory buckets (`base--azid--x-s3`). Against AWS the SDK's zonal
 * endpoints and CreateSession auth apply as usual. Behind an endpoint override (emulator, proxy: no
 * directory buckets, no CreateSession) it addresses them as ordinary path-style buckets and removes the
 * `//` the SDK then puts after the bucket name.
 */
export function s3ExpressClient(options?: ClientOptions): S3Client {
  if (!s3EndpointOverridden()) return new (sdk.s3().S3Client)(clientConfig(options));
  const client = new (sdk.s3().S3Client)({
    ...clientConfig(options),
    forcePathStyle: true,
    disableS3ExpressSessionAuth: true,
  });
  client.middlewareStack.add(
    (next) => (args) => {
      const request = args.request as { path?: string };
      if (typeof request.path === 'string')
        request.path = request.path.replace(/^(\/[^/]+--x-s3)\/\//, '$1/');
      return next(args);
    },
    { step: 'build', name: 'mountfleetExpressPathFix' },
  );
  return client;
}
