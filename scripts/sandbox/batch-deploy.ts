/**
 * STAND-INS for what moto's CloudFormation does not do for Batch (moto 5.2.5), so that the deployed Batch
 * resources look to the CLI as they would on AWS:
 *   - it needs the compute environments' service role to exist: the Batch service-linked role is created first,
 *     as AWS creates it on the account's first use of Batch (`iam:CreateServiceLinkedRole`);
 *   - it drops a job queue's Tags: they are put on the queue from the template (`batch:TagResource`);
 *   - it keeps a job definition's nested ContainerProperties in CloudFormation's casing (`Host.SourcePath`): the
 *     definition is registered again through the API with the template's properties, and moto's copy
 *     deregistered.
 */
import {
  DeregisterJobDefinitionCommand,
  DescribeJobDefinitionsCommand,
  RegisterJobDefinitionCommand,
  TagResourceCommand,
  type BatchClient,
  type RegisterJobDefinitionCommandInput,
} from '@aws-sdk/client-batch';
import { readFileSync } from 'node:fs';
import { physicalIds } from '../../test/support/cloudformation-gaps-standin';

type Template = { Resources: Record<string, { Type: string; Properties?: Record<string, unknown> }> };

/** What the stand-in did, for the report. */
export interface BatchDeployStandIns {
  readonly taggedQueues: string[];
  readonly reregisteredJobDefinitions: string[];
}

/** moto answers a query API without checking the signature; this is the Batch service-linked role's creation. */
export async function createBatchServiceLinkedRole(endpoint: string): Promise<void> {
  const res = await fetch(endpoint, {
    method: 'POST',
    signal: AbortSignal.timeout(10_000),
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      authorization:
        'AWS4-HMAC-SHA256 Credential=standin/20260101/us-east-1/iam/aws4_request, SignedHeaders=host, Signature=0',
    },
    body: new URLSearchParams({
      Action: 'CreateServiceLinkedRole',
      Version: '2010-05-08',
      AWSServiceName: 'batch.amazonaws.com',
    }),
  });
  if (!res.ok)
    throw new Error(`CreateServiceLinkedRole batch.amazonaws.com: HTTP ${res.status}: ${await res.text()}`);
}

/** Maps that keep their keys as they are (tag keys, parameter names). */
const MAPS = new Set(['Tags', 'Parameters', 'Options']);

/** CloudFormation's properties in the API's casing, `Ref`/`GetAtt` of the stack's resources resolved. */
function apiShape(value: unknown, ids: Map<string, string>, keepKeys = false): unknown {
  if (Array.isArray(value)) return value.map((v) => apiShape(v, ids));
  if (value === null || typeof value !== 'object') return value;
  const o = value as Record<string, unknown>;
  const ref = typeof o.Ref === 'string' ? o.Ref : (o['Fn::GetAtt'] as string[] | undefined)?.[0];
  if (ref !== undefined) {
    const id = ids.get(ref);
    if (id === undefined) throw new Error(`Batch stand-in: ${ref} has no physical id in the stack`);
    return id;
  }
  return Object.fromEntries(
    Object.entries(o).map(([k, v]) => [
      keepKeys ? k : k[0].toLowerCase() + k.slice(1),
      apiShape(v, ids, MAPS.has(k)),
    ]),
  );
}

/** After the deploy: the queues' tags and the job definitions as the template declares them. */
export async function standInForBatchGaps(
  batch: BatchClient,
  templateFile: string,
  stack: string,
): Promise<BatchDeployStandIns> {
  const template = JSON.parse(readFileSync(templateFile, 'utf8')) as Template;
  const ids = await physicalIds(stack);
  const done: BatchDeployStandIns = { taggedQueues: [], reregisteredJobDefinitions: [] };
  for (const [logicalId, r] of Object.entries(template.Resources)) {
    const arn = ids.get(logicalId);
    if (arn === undefined) continue;
    if (r.Type === 'AWS::Batch::JobQueue' && r.Properties?.Tags) {
      const tags = apiShape(r.Properties.Tags, ids, true) as Record<string, string>;
      await batch.send(new TagResourceCommand({ resourceArn: arn, tags }));
      done.taggedQueues.push(arn);
    }
    if (r.Type === 'AWS::Batch::JobDefinition') {
      const moto = (await batch.send(new DescribeJobDefinitionsCommand({ jobDefinitions: [arn] })))
        .jobDefinitions?.[0];
      if (!moto?.jobDefinitionName) continue;
      const props = apiShape(r.Properties ?? {}, ids) as RegisterJobDefinitionCommandInput;
      const out = await batch.send(
        new RegisterJobDefinitionCommand({ ...props, jobDefinitionName: moto.jobDefinitionName }),
      );
      await batch.send(new DeregisterJobDefinitionCommand({ jobDefinition: arn }));
      done.reregisteredJobDefinitions.push(out.jobDefinitionArn!);
    }
  }
  return done;
}

/** Deregisters what the stand-in registered (the stack's destroy knows only moto's own revision). */
export async function removeBatchStandIns(batch: BatchClient, done: BatchDeployStandIns): Promise<void> {
  for (const arn of done.reregisteredJobDefinitions)
    await batch.send(new DeregisterJobDefinitionCommand({ jobDefinition: arn }));
}
