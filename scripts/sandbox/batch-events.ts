/**
 * STAND-IN for EventBridge's "Batch Job State Change" events (the emulator emits none, and its Lambda cannot
 * run code without Docker). When a job ends, the event is built as Batch builds it: its `detail` is the job's
 * DescribeJobs JobDetail (https://docs.aws.amazon.com/batch/latest/userguide/batch_job_events.html). It goes
 * where the deployed stack routes it: each `aws.batch` rule of the template, its pattern resolved with the
 * stack's physical ids, is matched as EventBridge matches (exact values, nested fields), and each target
 * function of a matching rule gets the event through its deployed bundle's handler (reaper.ts).
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { DescribeJobsCommand, type BatchClient, type JobDetail } from '@aws-sdk/client-batch';
import { EMULATOR_ACCOUNT, EMULATOR_REGION } from '../../test/support/cdk-cli';
import { physicalIds } from '../../test/support/cloudformation-gaps-standin';
import { invokeDeployedHandler } from './reaper';

/** A deployed rule on Batch events: its pattern (ids resolved) and the functions it invokes. */
export interface BatchEventRoute {
  readonly rule: string;
  readonly pattern: Record<string, unknown>;
  readonly functionNames: readonly string[];
}

/** What one event did: the rules it matched and each handler's answer (or error). */
export interface Delivery {
  readonly jobId: string;
  readonly status: string;
  readonly statusReason?: string;
  readonly matchedRules: readonly string[];
  readonly results: readonly {
    readonly functionName: string;
    readonly result?: unknown;
    readonly error?: string;
  }[];
}

type Template = { Resources: Record<string, { Type: string; Properties?: Record<string, unknown> }> };

/** Replaces `Ref` and `Fn::GetAtt` of the stack's own resources by their physical ids (ARNs for queues). */
function resolveIds(value: unknown, ids: Map<string, string>): unknown {
  if (Array.isArray(value)) return value.map((v) => resolveIds(v, ids));
  if (value === null || typeof value !== 'object') return value;
  const o = value as Record<string, unknown>;
  const ref = typeof o.Ref === 'string' ? o.Ref : (o['Fn::GetAtt'] as string[] | undefined)?.[0];
  if (ref !== undefined) {
    const id = ids.get(ref);
    if (id === undefined) throw new Error(`event stand-in: ${ref} has no physical id in the stack`);
    return id;
  }
  return Object.fromEntries(Object.entries(o).map(([k, v]) => [k, resolveIds(v, ids)]));
}

/** The stack's rules on `aws.batch` events and their target functions, from the deployed template. */
export async function batchEventRoutes(templateFile: string, stack: string): Promise<BatchEventRoute[]> {
  const template = JSON.parse(readFileSync(templateFile, 'utf8')) as Template;
  const ids = await physicalIds(stack);
  return Object.entries(template.Resources)
    .filter(([, r]) => r.Type === 'AWS::Events::Rule')
    .flatMap(([logicalId, r]) => {
      const pattern = r.Properties?.EventPattern as Record<string, unknown> | undefined;
      if (!(pattern?.source as string[] | undefined)?.includes('aws.batch')) return [];
      const targets = (r.Properties?.Targets as { Arn: { 'Fn::GetAtt'?: [string, string] } }[]) ?? [];
      const functionNames = targets.flatMap((t) => {
        const target = t.Arn['Fn::GetAtt']?.[0];
        return target && template.Resources[target]?.Type === 'AWS::Lambda::Function'
          ? [ids.get(target)!]
          : [];
      });
      return [
        { rule: logicalId, pattern: resolveIds(pattern, ids) as Record<string, unknown>, functionNames },
      ];
    });
}

/**
 * EventBridge's matching for what the rules here use: every field of the pattern must be in the event; an
 * array lists the values allowed; an object matches the event's nested object. Content filters (prefix,
 * anything-but, numeric, …) are not stood in: a pattern with one is an error, not a silent mismatch.
 */
export function matchesPattern(pattern: Record<string, unknown>, event: Record<string, unknown>): boolean {
  return Object.entries(pattern).every(([key, allowed]) => {
    const value = event[key];
    if (Array.isArray(allowed)) {
      if (allowed.some((a) => a !== null && typeof a === 'object'))
        throw new Error(`event stand-in: content filter in pattern field ${key} is not stood in`);
      return (Array.isArray(value) ? value : [value]).some((v) => allowed.includes(v));
    }
    if (allowed !== null && typeof allowed === 'object')
      return (
        value !== null &&
        typeof value === 'object' &&
        matchesPattern(allowed as Record<string, unknown>, value as Record<string, unknown>)
      );
    throw new Error(`event stand-in: pattern field ${key} is neither a list nor an object`);
  });
}

/** The event Batch sends when a job changes state: the detail is its JobDetail. */
export function jobStateChangeEvent(job: JobDetail): Record<string, unknown> {
  return {
    version: '0',
    id: randomUUID(),
    'detail-type': 'Batch Job State Change',
    source: 'aws.batch',
    account: EMULATOR_ACCOUNT,
    time: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
    region: EMULATOR_REGION,
    resources: [job.jobArn],
    detail: job,
  };
}

/** Reads the job as it is now (DescribeJobs), builds its event and delivers it along the deployed routes. */
export async function deliverJobStateChange(
  batch: BatchClient,
  routes: readonly BatchEventRoute[],
  jobId: string,
  logFile: string,
): Promise<Delivery> {
  const job = (await batch.send(new DescribeJobsCommand({ jobs: [jobId] }))).jobs?.[0];
  if (!job) throw new Error(`event stand-in: DescribeJobs does not know job ${jobId}`);
  // The SDK parses timestamps into numbers already (epoch milliseconds), as the event carries them.
  const event = jobStateChangeEvent(JSON.parse(JSON.stringify(job)) as JobDetail);
  const matched = routes.filter((r) => matchesPattern(r.pattern, event));
  const results = [];
  for (const route of matched)
    for (const functionName of route.functionNames) {
      try {
        const result = await invokeDeployedHandler<unknown>(functionName, 'batch-teardown', event, logFile);
        results.push({ functionName, result });
      } catch (err) {
        results.push({ functionName, error: (err as Error).message });
      }
    }
  return {
    jobId,
    status: job.status ?? '?',
    ...(job.statusReason ? { statusReason: job.statusReason } : {}),
    matchedRules: matched.map((r) => r.rule),
    results,
  };
}
