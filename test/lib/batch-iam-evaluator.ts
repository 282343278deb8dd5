/**
 * IAM's evaluation of one identity policy, as AWS documents it (IAM User Guide, "Policy evaluation logic" and
 * "Condition operators"), for the synthesized statements of a role: an explicit Deny wins, then an Allow, else the
 * implicit deny. Resources and actions match with `*` and `?`; the condition operators the constructs use are
 * implemented (String/Arn Equals and Like, Bool, Null, ForAllValues:/ForAnyValue: set operators); an unknown one
 * throws, so a test can never pass by ignoring a condition. Intrinsics render as in support.ts, with the Partition
 * `aws` and the account 123456789012.
 */
import type { Template } from 'aws-cdk-lib/assertions';
import { renderJoin, type Statement } from './support';

/** One request: an action on one resource, with its context keys (a multi-valued key is an array). */
export interface IamRequest {
  readonly action: string;
  readonly resource: string;
  readonly context?: Record<string, string | string[]>;
}

const render = (v: unknown) =>
  renderJoin(v).replaceAll('<Ref:AWS::Partition>', 'aws').replaceAll('<Ref:AWS::AccountId>', '123456789012');

const list = <T>(v: T | T[] | undefined): T[] => (v === undefined ? [] : Array.isArray(v) ? v : [v]);

/** IAM's wildcard match: `*` any run of characters, `?` exactly one. */
export function wildcardMatch(pattern: string, value: string, caseInsensitive = false): boolean {
  const re = pattern
    .replace(/[.+^${}()|[\]\\]/g, '\\$&')
    .replace(/\*/g, '.*')
    .replace(/\?/g, '.');
  return new RegExp(`^${re}$`, caseInsensitive ? 'i' : '').test(value);
}

function operatorMatches(op: string, expected: string[], actual: string | undefined): boolean {
  if (actual === undefined) return false;
  switch (op) {
    case 'StringEquals':
    case 'ArnEquals':
      return expected.includes(actual);
    case 'StringLike':
    case 'ArnLike':
      return expected.some((p) => wildcardMatch(p, actual));
    case 'Bool':
      return expected.includes(actual.toLowerCase());
    default:
      throw new Error(`the evaluator does not know the condition operator ${op}`);
  }
}

function conditionHolds(op: string, key: string, values: unknown, ctx: Record<string, string | string[]>) {
  const expected = list(values as string | string[]).map(render);
  const actual = ctx[key];
  if (op === 'Null') return expected.includes(actual === undefined ? 'true' : 'false');
  const set = /^(ForAllValues|ForAnyValue):(.*)$/.exec(op);
  if (set) {
    const items = list(actual);
    // ForAllValues is true of an empty or absent set; ForAnyValue is false of it.
    return set[1] === 'ForAllValues'
      ? items.every((a) => operatorMatches(set[2], expected, a))
      : items.some((a) => operatorMatches(set[2], expected, a));
  }
  if (Array.isArray(actual)) throw new Error(`${key} is multi-valued: ${op} needs ForAllValues/ForAnyValue`);
  return operatorMatches(op, expected, actual);
}

function statementApplies(s: Statement, req: IamRequest): boolean {
  if (!list(s.Action).some((a) => wildcardMatch(a, req.action, true))) return false;
  if (!list(s.Resource as unknown).some((r) => wildcardMatch(render(r), req.resource))) return false;
  const conditions = (s.Condition ?? {}) as Record<string, Record<string, unknown>>;
  return Object.entries(conditions).every(([op, keys]) =>
    Object.entries(keys).every(([key, values]) => conditionHolds(op, key, values, req.context ?? {})),
  );
}

/** `allowed`, `explicit-deny` or `implicit-deny` for a request against the statements given. */
export function evaluate(policy: readonly Statement[], req: IamRequest) {
  const applying = policy.filter((s) => statementApplies(s, req));
  if (applying.some((s) => s.Effect === 'Deny')) return 'explicit-deny';
  return applying.some((s) => s.Effect === 'Allow') ? 'allowed' : 'implicit-deny';
}

/** The statements of the policies attached to a role (by the role's logical id prefix). */
export function policyOfRole(template: Template, roleLogicalIdPrefix: string): Statement[] {
  const policies = template.findResources('AWS::IAM::Policy');
  const attached = Object.values(policies).filter((p) =>
    ((p as { Properties: { Roles: Array<{ Ref: string }> } }).Properties.Roles ?? []).some((r) =>
      r.Ref.startsWith(roleLogicalIdPrefix),
    ),
  );
  if (attached.length === 0) throw new Error(`no policy attached to a role ${roleLogicalIdPrefix}*`);
  return attached.flatMap(
    (p) =>
      (p as { Properties: { PolicyDocument: { Statement: Statement[] } } }).Properties.PolicyDocument
        .Statement,
  );
}
