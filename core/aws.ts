/**
 * The one place AWS SDK clients are configured. Every runtime path (agent, Lambda, benches) builds its
 * clients here so that region, endpoints, retries and timeouts behave the same everywhere.
 *
 * Region and endpoints come from the SDK's own standard variables (`AWS_REGION`, `AWS_ENDPOINT_URL`,
 * `AWS_ENDPOINT_URL_<SERVICE>`), which the SDK reads itself; we only add adaptive retries (client-side
 * rate limiting that backs off under throttling) and timeouts so a black-holed endpoint cannot hang a run.
 */
import { CloudWatchClient } from '@aws-sdk/client-cloudwatch';
import { EC2Client } from '@aws-sdk/client-ec2';
import { EFSClient } from '@aws-sdk/client-efs';
import { S3Client } from '@aws-sdk/client-s3';
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
export const DEFAULT_CLIENT_OPTIONS = {
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
      requestTimeout: o.requestTimeoutMs,
      httpAgent: new HttpAgent(agentOptions),
      httpsAgent: new HttpsAgent(agentOptions),
    }),
  };
}

/** True when S3 is reached through an endpoint override (emulator, proxy): virtual-host addressing cannot work there. */
export function s3EndpointOverridden(env: NodeJS.ProcessEnv = process.env): boolean {
  return Boolean(env.AWS_ENDPOINT_URL_S3 ?? env.AWS_ENDPOINT_URL);
}

export function efsClient(options?: ClientOptions): EFSClient {
  return new EFSClient(clientConfig(options));
}

export function ec2Client(options?: ClientOptions): EC2Client {
  return new EC2Client(clientConfig(options));
}

export function cloudWatchClient(options?: ClientOptions): CloudWatchClient {
  return new CloudWatchClient(clientConfig(options));
}

export function s3Client(options?: ClientOptions): S3Client {
  return new S3Client({ ...clientConfig(options), forcePathStyle: s3EndpointOverridden() });
}
