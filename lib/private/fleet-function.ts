/**
 * A mountfleet Lambda of a fleet (the Batch submit and teardown functions): the pre-built bundle (dist/lambda/<name>,
 * checked to exist at synth), NODEJS_22_X on arm64, a role of its own, a log group with retention, and the function
 * created only after its role's policy (the grants are added later by the caller, and a first invocation must find
 * them in place).
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Duration } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as logs from 'aws-cdk-lib/aws-logs';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
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
  readonly timeout: Duration;
  readonly environment: Record<string, string>;
  readonly logRetention?: logs.RetentionDays;
  /** A physical name, where callers must find the function without a reference to it. */
  readonly functionName?: string;
  /** Where asynchronous invocations that failed after their retries go. */
  readonly deadLetterQueue?: sqs.IQueue;
}

/** The function `Function`, its role `Role` and its log group `LogGroup`, as children of `scope`. */
export function fleetFunction(
  scope: Construct,
  options: FleetFunctionOptions,
): { readonly function: lambda.Function; readonly role: iam.Role; readonly logGroup: logs.LogGroup } {
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
  const role = new iam.Role(scope, 'Role', {
    assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'),
    description: options.description,
  });
  const fn = new lambda.Function(scope, 'Function', {
    ...(options.functionName ? { functionName: options.functionName } : {}),
    description: options.description,
    runtime: lambda.Runtime.NODEJS_22_X,
    architecture: lambda.Architecture.ARM_64,
    handler: 'index.handler',
    code: lambda.Code.fromAsset(codeDir),
    memorySize: 256,
    timeout: options.timeout,
    role,
    logGroup,
    ...(options.deadLetterQueue ? { deadLetterQueue: options.deadLetterQueue, retryAttempts: 2 } : {}),
    environment: options.environment,
  });
  logGroup.grantWrite(role);
  // No run before its grants (see OrphanReaper: the function's GetAtt already implies the role).
  const policy = role.node.findChild('DefaultPolicy').node.defaultChild as iam.CfnPolicy;
  (fn.node.defaultChild as lambda.CfnFunction).addOverride('DependsOn', [policy.logicalId]);
  acknowledge(
    fn,
    'AwsSolutions-L1',
    `The ${options.bundle} bundle targets NODEJS_22_X, the runtime its AWS SDK v3 is supported on and tested with; moving runtimes is a deliberate, tested change, not an automatic one.`,
  );
  return { function: fn, role, logGroup };
}
