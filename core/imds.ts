/**
 * What the agent reads from the instance metadata service (IMDSv2 only, short timeouts): who and where the
 * instance is, and whether EC2 has scheduled a Spot interruption. The endpoint follows the SDK's
 * `AWS_EC2_METADATA_SERVICE_ENDPOINT`, so tests point it at test/support/imds.ts.
 *
 * `MetadataService` does not look at `AWS_EC2_METADATA_DISABLED` (only the SDK's credential provider does),
 * and neither do we: these reads are explicit, not a fallback.
 */
import { MetadataService } from '@aws-sdk/ec2-metadata-service';

export interface InstanceIdentity {
  readonly instanceId: string;
  readonly instanceType: string;
  readonly region: string;
  readonly availabilityZone: string;
  /** e.g. `use1-az4`: the same physical zone in every account, which the Express cache buckets are named by. */
  readonly availabilityZoneId: string;
}

export interface SpotInstanceAction {
  readonly action: 'terminate' | 'stop' | 'hibernate';
  /** When EC2 will act (about two minutes after the notice appears). */
  readonly time: Date;
}

export interface MetadataServiceOptions {
  /** Overrides AWS_EC2_METADATA_SERVICE_ENDPOINT. */
  readonly endpoint?: string;
  /** Per HTTP request, token fetch included. @default 1000 */
  readonly timeoutMs?: number;
  /** Retries after the first try (404s are never retried). @default 2 */
  readonly retries?: number;
}

/** An IMDSv2-only client (no fallback to unauthenticated IMDSv1) that gives up within seconds. */
export function metadataService(options: MetadataServiceOptions = {}): MetadataService {
  return new MetadataService({
    ...(options.endpoint ? { endpoint: options.endpoint } : {}),
    httpOptions: { timeout: options.timeoutMs ?? 1000 },
    ec2MetadataV1Disabled: true,
    retries: options.retries ?? 2,
    backoff: 0.1, // seconds; the SDK's default waits 1 s, 1.2 s, ...
  });
}

// Paths without a leading slash: MetadataService joins them to the endpoint's path, which is already '/'.
const IDENTITY_DOCUMENT = 'latest/dynamic/instance-identity/document';
const AVAILABILITY_ZONE_ID = 'latest/meta-data/placement/availability-zone-id';
const SPOT_INSTANCE_ACTION = 'latest/meta-data/spot/instance-action';

/** Two reads: the identity document, plus the AZ ID, which the document does not carry. */
export async function readInstanceIdentity(
  imds: MetadataService = metadataService(),
): Promise<InstanceIdentity> {
  const [documentText, availabilityZoneId] = await Promise.all([
    imds.request(IDENTITY_DOCUMENT, {}),
    imds.request(AVAILABILITY_ZONE_ID, {}),
  ]);
  const document = JSON.parse(documentText) as Record<string, unknown>;
  const field = (name: string): string => {
    const value = document[name];
    if (typeof value !== 'string' || value === '') {
      throw new Error(`instance identity document has no ${name}`);
    }
    return value;
  };
  return {
    instanceId: field('instanceId'),
    instanceType: field('instanceType'),
    region: field('region'),
    availabilityZone: field('availabilityZone'),
    availabilityZoneId: availabilityZoneId.trim(),
  };
}

/** The pending Spot interruption notice, or undefined when there is none (IMDS answers 404). */
export async function readSpotInstanceAction(
  imds: MetadataService = metadataService(),
): Promise<SpotInstanceAction | undefined> {
  let text: string;
  try {
    text = await imds.request(SPOT_INSTANCE_ACTION, {});
  } catch (err) {
    if ((err as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode === 404)
      return undefined;
    throw err;
  }
  const notice = JSON.parse(text) as { action?: unknown; time?: unknown };
  const time = new Date(String(notice.time));
  if (!['terminate', 'stop', 'hibernate'].includes(String(notice.action)) || Number.isNaN(time.getTime())) {
    throw new Error(`unexpected spot/instance-action: ${text}`);
  }
  return { action: notice.action as SpotInstanceAction['action'], time };
}
