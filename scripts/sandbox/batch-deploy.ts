/**
 * STAND-INS for what moto's CloudFormation does not do for Batch (moto 5.2.5), so that the deployed Batch
 * resources look to the CLI as they would on AWS:
 *   - it needs the compute environments' service role to exist: the Batch service-linked role is created first,
 *     as AWS creates it on the account's first use of Batch (AWSServiceRoleForBatch);
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

/** The Batch service-linked role, created as AWS does on first use; resolves to its ARN (moto checks no signature). */
export async function createBatchServiceLinkedRole(endpoint: string): Promise<string> {
  const res = await fetch(endpoint, {
    method: 'POST',
    signal: AbortSignal.timeout(10_000),
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      authorization:
        'AWS4-HMAC-SHA256 Credential=standin/20260101/us-east-1/iam/aws4_request, SignedHeaders=host, Signature=0',
    },
    // CreateRole, not CreateServiceLinkedRole: moto names a service-linked role after the service's lower-case
    // prefix (AWSServiceRoleForbatch), not as AWS does (AWSServiceRoleForBatch, the ARN templates name).
    body: new URLSearchParams({
      Action: 'CreateRole',
      Version: '2010-05-08',
      Path: '/aws-service-role/batch.amazonaws.com/',
      RoleName: 'AWSServiceRoleForBatch',
      AssumeRolePolicyDocument: JSON.stringify({
        Version: '2012-10-17',
        Statement: [
          { Effect: 'Allow', Principal: { Service: 'batch.amazonaws.com' }, Action: 'sts:AssumeRole' },
        ],
      }),
    }),
  });
  const xml = await res.text();
  if (!res.ok) throw new Error(`CreateRole AWSServiceRoleForBatch: HTTP ${res.status}: ${xml}`);
  const arn = /<Arn>([^<]+)<\/Arn>/.exec(xml)?.[1];
  if (!arn) throw new Error('CreateRole AWSServiceRoleForBatch: no role ARN in the answer');
  return arn;
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
