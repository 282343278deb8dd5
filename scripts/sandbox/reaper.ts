/**
 * The deployed reaper, run here: the emulator's Lambda cannot run code without Docker, so its handler is
 * loaded from the bundle that was deployed and called with the deployed function's settings.
 */
import { appendFileSync } from 'node:fs';
import { join } from 'node:path';
import { GetFunctionConfigurationCommand, LambdaClient } from '@aws-sdk/client-lambda';
import { clientConfig } from '../../core/aws/clients';
import type { ReapReport } from '../../core/reaper/report';
import { EMULATOR_ACCOUNT as ACCOUNT, EMULATOR_REGION as REGION } from '../../test/support/cdk-cli';
import { REPO_ROOT } from '../../test/support/moto';

/** The events EventBridge delivers to the reaper: its schedule, and an instance state change. */
export function scheduledEvent(): Record<string, unknown> {
  return {
    'detail-type': 'Scheduled Event',
    source: 'aws.events',
    region: REGION,
    account: ACCOUNT,
    detail: {},
  };
}

export function terminatedEvent(instanceId: string): Record<string, unknown> {
  return {
    'detail-type': 'EC2 Instance State-change Notification',
    source: 'aws.ec2',
    region: REGION,
    account: ACCOUNT,
    detail: { 'instance-id': instanceId, state: 'terminated' },
  };
}

/** Loads the reaper bundle that was deployed and calls its handler with the deployed function's settings. */
export function invokeReaper(
  functionName: string,
  event: Record<string, unknown>,
  logFile: string,
): Promise<ReapReport> {
  return invokeDeployedHandler<ReapReport>(functionName, 'reaper', event, logFile);
}

/** The invocation running now: they take turns (each sets process.env and takes process.stdout while it runs). */
let turn: Promise<unknown> = Promise.resolve();

/**
 * Loads a deployed function's bundle (dist/lambda/<bundle>, the code the deploy uploaded) and calls its handler
 * with the function's settings, as Lambda would; its stdout (JSON log lines) goes to `logFile`. Invocations
 * made at once run one after the other (one process stands in for every Lambda environment).
 */
export function invokeDeployedHandler<T>(
  functionName: string,
  bundle: string,
  event: Record<string, unknown>,
  logFile: string,
): Promise<T> {
  const mine = turn.then(() => invokeNow<T>(functionName, bundle, event, logFile));
  turn = mine.catch(() => undefined);
  return mine;
}

async function invokeNow<T>(
  functionName: string,
  bundle: string,
  event: Record<string, unknown>,
  logFile: string,
): Promise<T> {
  const lambda = new LambdaClient(clientConfig());
  const fn = await lambda.send(new GetFunctionConfigurationCommand({ FunctionName: functionName }));
  Object.assign(process.env, fn.Environment?.Variables ?? {});
  const [file, exportName] = (fn.Handler ?? 'index.handler').split('.');
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const mod = require(join(REPO_ROOT, 'dist', 'lambda', bundle, `${file}.js`)) as Record<
    string,
    (event: unknown, context: unknown) => Promise<T>
  >;
  const deadline = Date.now() + (fn.Timeout ?? 300) * 1000;
  const context = {
    functionName,
    awsRequestId: 'sandbox-invocation',
    getRemainingTimeInMillis: () => deadline - Date.now(),
  };
  // The handler logs JSON lines (decisions, embedded metrics) to stdout, as in Lambda, where they reach its
  // log group; here stdout is the report's, so they go to a file the report names.
  const write = process.stdout.write.bind(process.stdout);
  process.stdout.write = ((chunk: string | Uint8Array) => {
    appendFileSync(logFile, chunk);
    return true;
  }) as typeof process.stdout.write;
  try {
    return await mod[exportName](event, context);
  } finally {
    process.stdout.write = write;
  }
}
