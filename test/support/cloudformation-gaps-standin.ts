/**
 * STAND-IN for the CloudFormation resource types moto's CloudFormation skips (reference:
 * toolchain-and-emulators.md): after a deploy, it creates what the template declares for them, so the rest
 * of the sandbox finds them as on AWS —
 *  - `AWS::S3Express::DirectoryBucket`: an ordinary moto bucket of the same name (moto has no directory
 *    buckets; express-session-standin.ts answers the S3 Express CreateSession the clients send first);
 *  - `AWS::CloudWatch::Alarm`: the alarm, with PutMetricAlarm.
 * Values are the template's, with `Ref` (and an SQS queue's `QueueName`) resolved against the deployed
 * stack; a resource whose properties need anything else is reported as not stood in.
 */
import { readFileSync } from 'node:fs';
import { CloudWatchClient, DeleteAlarmsCommand, PutMetricAlarmCommand } from '@aws-sdk/client-cloudwatch';
import {
  CreateBucketCommand,
  DeleteBucketCommand,
  DeleteObjectsCommand,
  ListObjectsV2Command,
} from '@aws-sdk/client-s3';
import { clientConfig, s3ExpressClient } from '../../core/aws/clients';

export interface StoodIn {
  /** Directory bucket names created as ordinary buckets. */
  readonly directoryBuckets: string[];
  /** Alarm names created with PutMetricAlarm. */
  readonly alarms: string[];
  /** Logical ids of skipped resources that could not be stood in, with the reason. */
  readonly notStoodIn: string[];
}

interface TemplateResource {
  readonly Type: string;
  readonly Properties?: Record<string, unknown>;
}

export async function standInForSkippedResources(templateFile: string, stackName: string): Promise<StoodIn> {
  const resources = (
    JSON.parse(readFileSync(templateFile, 'utf8')) as { Resources: Record<string, TemplateResource> }
  ).Resources;
  const physical = await physicalIds(stackName);
  const resolve = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(resolve);
    if (value === null || typeof value !== 'object') return value;
    const o = value as Record<string, unknown>;
    if ('Ref' in o) return physical.get(o.Ref as string) ?? fail(`Ref ${String(o.Ref)}`);
    if ('Fn::GetAtt' in o) {
      const [id, attribute] = o['Fn::GetAtt'] as [string, string];
      const url = physical.get(id);
      if (attribute === 'QueueName' && url) return url.split('/').pop();
      return fail(`GetAtt ${id}.${attribute}`);
    }
    if (Object.keys(o).some((k) => k.startsWith('Fn::'))) return fail(Object.keys(o)[0]);
    return Object.fromEntries(Object.entries(o).map(([k, v]) => [k, resolve(v)]));
  };
  const result: StoodIn = { directoryBuckets: [], alarms: [], notStoodIn: [] };
  const s3 = s3ExpressClient();
  const cloudwatch = new CloudWatchClient(clientConfig());
  for (const [id, r] of Object.entries(resources)) {
    if (r.Type !== 'AWS::S3Express::DirectoryBucket' && r.Type !== 'AWS::CloudWatch::Alarm') continue;
    let props: Record<string, unknown>;
    try {
      props = resolve(r.Properties ?? {}) as Record<string, unknown>;
    } catch (e) {
      result.notStoodIn.push(`${id}: ${(e as Error).message}`);
      continue;
    }
    if (r.Type === 'AWS::S3Express::DirectoryBucket') {
      const name = props.BucketName as string | undefined;
      if (!name) {
        result.notStoodIn.push(`${id}: no BucketName (a generated name exists only on AWS)`);
        continue;
      }
      await s3.send(new CreateBucketCommand({ Bucket: name }));
      result.directoryBuckets.push(name);
    } else {
      const name = (props.AlarmName as string | undefined) ?? `${stackName}-${id}`;
      await cloudwatch.send(new PutMetricAlarmCommand({ ...props, AlarmName: name } as never));
      result.alarms.push(name);
    }
  }
  return result;
}

/** Deletes what {@link standInForSkippedResources} created (cdk destroy cannot: the stack never had it). */
export async function removeStandIns(stoodIn: StoodIn): Promise<void> {
  const s3 = s3ExpressClient();
  for (const bucket of stoodIn.directoryBuckets) {
    // Mountpoint leaves its cache blocks (and the `--cache-xz` metadata object) behind, as on AWS.
    const listed = await s3.send(new ListObjectsV2Command({ Bucket: bucket }));
    const keys = (listed.Contents ?? []).map((o) => ({ Key: o.Key! }));
    if (keys.length) await s3.send(new DeleteObjectsCommand({ Bucket: bucket, Delete: { Objects: keys } }));
    await s3.send(new DeleteBucketCommand({ Bucket: bucket }));
  }
  if (stoodIn.alarms.length)
    await new CloudWatchClient(clientConfig()).send(new DeleteAlarmsCommand({ AlarmNames: stoodIn.alarms }));
}

/**
 * Logical → physical ids of the deployed stack. The project has no CloudFormation SDK client (the CDK CLI
 * does the deploying), so this is one query-protocol call to the emulator, which does not check signatures.
 */
export async function physicalIds(stackName: string): Promise<Map<string, string>> {
  const endpoint = process.env.AWS_ENDPOINT_URL_CLOUDFORMATION ?? process.env.AWS_ENDPOINT_URL;
  if (!endpoint) throw new Error('AWS_ENDPOINT_URL is not set: this stand-in runs against the emulator only');
  const region = process.env.AWS_REGION ?? 'us-east-1';
  const response = await fetch(endpoint, {
    method: 'POST',
    signal: AbortSignal.timeout(10_000),
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      authorization: `AWS4-HMAC-SHA256 Credential=standin/20260101/${region}/cloudformation/aws4_request, SignedHeaders=host, Signature=0`,
    },
    body: new URLSearchParams({
      Action: 'DescribeStackResources',
      Version: '2010-05-15',
      StackName: stackName,
    }),
  });
  const xml = await response.text();
  if (!response.ok) throw new Error(`DescribeStackResources ${stackName}: HTTP ${response.status}`);
  const ids = new Map<string, string>();
  for (const m of xml.matchAll(/<member>([\s\S]*?)<\/member>/g)) {
    const logical = /<LogicalResourceId>([^<]*)</.exec(m[1])?.[1];
    const phys = /<PhysicalResourceId>([^<]*)</.exec(m[1])?.[1];
    if (logical && phys) ids.set(logical, phys.replace(/&amp;/g, '&'));
  }
  return ids;
}

function fail(what: string): never {
  throw new Error(`${what} cannot be resolved here`);
}
