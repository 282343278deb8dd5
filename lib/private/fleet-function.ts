/**
 * A mountfleet Lambda of a fleet (the Batch submit and teardown functions, the orphan reaper): the pre-built bundle
 * (dist/lambda/<name>, checked to exist at synth), NODEJS_22_X on arm64, a role of its own, a log group with
 * retention, a dead-letter queue when it is invoked asynchronously, and the function created only after its role's
 * policy (a first invocation must find its grants in place).
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Duration } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';
import { packageRoot } from '../../core/contract';
import { acknowledge } from './nag';
import { invalidProp } from './validation';

/** Where a pre-built Lambda bundle lives (`node scripts/bundle.mjs` writes it; the npm package ships it). */
export function lambdaBundleDir(name: string): string {
  return join(packageRoot(), 'dist', 'lambda', name);
}

interface FleetFunctionOptions {
  /** The bundle's folder name under dist/lambda. */
  readonly bundle: string;
  readonly description: string;
  /** The role's description. @default - the function's */
  readonly roleDescription?: string;
  readonly timeout: Duration;
  /** The function's memory, MB. @default 256 */
  readonly memorySize?: number;
  readonly environment: Record<string, string>;
  readonly logRetention?: logs.RetentionDays;
  /** A physical name, where callers must find the function without a reference to it. */
  readonly functionName?: string;
  /**
   * Whether the function gets the queue `DeadLetterQueue` for the asynchronous invocations (and event deliveries,
   * when the caller's rules name it) that failed after their retries.
   */
  readonly deadLetterQueue?: boolean;
  /** Concurrent runs reserved for the function, and its limit. @default - none reserved */
  readonly reservedConcurrentExecutions?: number;
  /**
   * Grants given to the role before its log group's: a caller whose statements stood first in the role's policy keeps
   * them there (a new order would rewrite the deployed policy document). Grants added after the call follow it.
   */
  readonly grantsFirst?: (role: iam.Role) => void;
}

/** What {@link fleetFunction} makes. */
interface FleetFunction {
  readonly function: lambda.Function;
  readonly role: iam.Role;
  readonly logGroup: logs.LogGroup;
}

/**
 * The log group `LogGroup`, the dead-letter queue `DeadLetterQueue` (when asked), the role `Role` and the function
 * `Function`, as children of `scope` in this order.
 */
export function fleetFunction(
  scope: Construct,
  options: FleetFunctionOptions & { readonly deadLetterQueue: true },
): FleetFunction & { readonly deadLetterQueue: sqs.Queue };
export function fleetFunction(scope: Construct, options: FleetFunctionOptions): FleetFunction;
export function fleetFunction(
  scope: Construct,
  options: FleetFunctionOptions,
): FleetFunction & { readonly deadLetterQueue?: sqs.Queue } {
  const codeDir = lambdaBundleDir(options.bundle);
  if (!existsSync(join(codeDir, 'index.js'))) {
    invalidProp(
      scope,
      'code',
      `the ${options.bundle} bundle ${join(codeDir, 'index.js')} does not exist`,
      'run `node scripts/bundle.mjs` (npm run build does)',
    );
  }
  const logGroup = new logs.LogGroup(scope, 'LogGroup', {
    retention: options.logRetention ?? logs.RetentionDays.ONE_MONTH,
  });
  const deadLetterQueue = options.deadLetterQueue ? fleetDeadLetterQueue(scope, options.bundle) : undefined;
  const role = new iam.Role(scope, 'Role', {
    assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'),
    description: options.roleDescription ?? options.description,
  });
  const fn = new lambda.Function(scope, 'Function', {
    ...(options.functionName ? { functionName: options.functionName } : {}),
    description: options.description,
    runtime: lambda.Runtime.NODEJS_22_X,
    architecture: lambda.Architecture.ARM_64,
    handler: 'index.handler',
    code: lambda.Code.fromAsset(codeDir),
    memorySize: options.memorySize ?? 256,
    timeout: options.timeout,
    role,
    logGroup,
    ...(deadLetterQueue ? { deadLetterQueue, retryAttempts: 2 } : {}),
    reservedConcurrentExecutions: options.reservedConcurrentExecutions,
    environment: options.environment,
  });
  options.grantsFirst?.(role);
  logGroup.grantWrite(role);
  // No run before its grants. The function's GetAtt already implies the role (cfn-lint W3005); the policy is the
  // part that matters.
  const policy = role.node.findChild('DefaultPolicy').node.defaultChild as iam.CfnPolicy;
  (fn.node.defaultChild as lambda.CfnFunction).addOverride('DependsOn', [policy.logicalId]);
  acknowledge(
    fn,
    'AwsSolutions-L1',
    `The ${options.bundle} bundle targets NODEJS_22_X, the runtime its AWS SDK v3 is supported on and tested with; moving runtimes is a deliberate, tested change, not an automatic one.`,
  );
  return { function: fn, role, logGroup, ...(deadLetterQueue ? { deadLetterQueue } : {}) };
}

/** The queue `DeadLetterQueue`: encrypted, TLS only, failures kept 14 days (SQS's longest). */
function fleetDeadLetterQueue(scope: Construct, bundle: string): sqs.Queue {
  const queue = new sqs.Queue(scope, 'DeadLetterQueue', {
    encryption: sqs.QueueEncryption.SQS_MANAGED,
    enforceSSL: true,
    retentionPeriod: Duration.days(14),
  });
  acknowledge(
    queue,
    'AwsSolutions-SQS3',
    `This queue is itself the dead-letter queue of the ${bundle} function and of the rules that start it; it has no consumer whose failures need another queue.`,
  );
  return queue;
}
