import { Stack, Validations } from 'aws-cdk-lib';
import { Construct, type IConstruct } from 'constructs';

/**
 * Acknowledgements of cdk-nag `AwsSolutions` findings, recorded with aws-cdk-lib's own
 * `Validations.of(c).acknowledge` (metadata only: the library does not depend on cdk-nag). Each
 * construct acknowledges exactly the findings it introduces, with the reason the design is deliberate.
 */

/** Flattens a resolved CloudFormation value the way cdk-nag names findings (`<AWS::Partition>`, …). */
function flatten(node: unknown): string {
  if (node === undefined) return '';
  if (typeof node === 'string') return node.replace(/\$\{/g, '<').replace(/\}/g, '>');
  const obj = node as Record<string, unknown>;
  if (obj['Fn::Join']) {
    const [delimiter, items] = obj['Fn::Join'] as [string, unknown[]];
    return items.map(flatten).join(delimiter);
  }
  if (obj['Fn::Sub']) return flatten(obj['Fn::Sub']);
  if (obj['Fn::GetAtt']) {
    const [resource, attribute] = obj['Fn::GetAtt'] as [unknown, unknown];
    return `<${flatten(resource)}.${flatten(attribute)}>`;
  }
  if (obj['Fn::ImportValue']) return flatten(obj['Fn::ImportValue']);
  if (obj.Ref) return `<${flatten(obj.Ref)}>`;
  return JSON.stringify(node);
}

/** Acknowledges a rule (or one finding of it, `Rule[Finding]`) on a construct. */
export function acknowledge(scope: IConstruct, id: string, reason: string): void {
  Validations.of(scope).acknowledge({ id, reason });
}

/** Acknowledges `AwsSolutions-IAM5` for one wildcard resource ARN of a principal's policy. */
export function acknowledgeWildcardResource(principal: unknown, arn: string, reason: string): void {
  if (!Construct.isConstruct(principal)) return;
  const resource = flatten(Stack.of(principal).resolve(arn));
  acknowledge(principal, `AwsSolutions-IAM5[Resource::${resource}]`, reason);
}
