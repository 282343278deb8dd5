import { Token } from 'aws-cdk-lib';
import type { IConstruct } from 'constructs';
import { AZ_ID_PATTERN, checkMountPath, checkMountPrefix, fleetIdProblem } from '../../core/contract';

/**
 * Throws the error every construct uses for bad props: `<construct path>: <field>: <problem> — <fix>`, so the
 * message points at the construct, the prop and what to do about it.
 */
export function invalidProp(scope: IConstruct, field: string, problem: string, fix?: string): never {
  throw new Error(`${scope.node.path}: ${field}: ${problem}${fix ? ` — ${fix}` : ''}`);
}

/** Checks a construct's `fleetId` prop (it names tags, IAM conditions and resources). */
export function validateFleetId(scope: IConstruct, fleetId: string): void {
  const problem = fleetIdProblem(fleetId);
  if (problem) invalidProp(scope, 'fleetId', problem, 'for example "training"');
}

/**
 * Checks a literal prop with one of the core/contract/mount-path-rules.ts rules (mount paths, mount prefixes): they go into
 * systemd units and IAM grants, so a token that resolves only at deploy time cannot be checked and is refused.
 */
function validateLiteral(
  scope: IConstruct,
  field: string,
  value: string,
  check: (value: string) => string | undefined,
  fix: string,
): void {
  if (Token.isUnresolved(value)) invalidProp(scope, field, 'must be a literal string, not a token', fix);
  const problem = check(value);
  if (problem) invalidProp(scope, field, problem);
}

/** Checks a mount path prop (absolute, no `.`/`..`/control characters, not a system directory). */
export function validateMountPath(scope: IConstruct, field: string, path: string): void {
  validateLiteral(scope, field, path, checkMountPath, 'for example "/mnt/data"');
}

/** Checks a mount prefix prop (empty or ending in "/", no IAM wildcards `*` or `?`). */
export function validateMountPrefix(scope: IConstruct, field: string, prefix: string): void {
  validateLiteral(scope, field, prefix, checkMountPrefix, 'for example "datasets/imagenet/"');
}

/**
 * The AZ ID prefix of a Region (`us-east-1` → `use1`, `ap-southeast-2` → `apse2`, `us-gov-west-1` →
 * `usgw1`): the country code, the first letter of each part of the direction, then the number.
 */
function azIdPrefixForRegion(region: string): string | undefined {
  const m = /^([a-z]{2})-((?:[a-z]+-)*?)([a-z]+)-(\d+)$/.exec(region);
  if (!m) return undefined;
  const [, country, middle, direction, num] = m;
  const parts = [...middle.split('-').filter(Boolean), direction];
  const letters = parts
    .map((p) => {
      const compass = /^(north|south)(east|west)$/.exec(p);
      return compass ? compass[1][0] + compass[2][0] : p[0];
    })
    .join('');
  return `${country}${letters}${num}`;
}

/**
 * Checks a list of AZ IDs: the form (`use1-az4`, never an AZ name such as `us-east-1a`), duplicates, and
 * — when the Region is known at synth time — that each ID belongs to that Region.
 */
export function validateAzIds(
  scope: IConstruct,
  field: string,
  azIds: readonly string[],
  region: string,
): void {
  if (azIds.length === 0)
    invalidProp(scope, field, 'must name at least one AZ ID', 'for example ["use1-az4"]');
  const seen = new Set<string>();
  azIds.forEach((azId, i) => {
    if (Token.isUnresolved(azId)) {
      invalidProp(
        scope,
        `${field}[${i}]`,
        'must be a literal AZ ID, not a token',
        'AZ IDs key the agent config',
      );
    }
    if (!AZ_ID_PATTERN.test(azId)) {
      const hint = /^[a-z]{2}-[a-z-]+-\d+[a-z]$/.test(azId)
        ? `"${azId}" is an AZ name, which maps to different zones in different accounts — use the AZ ID (aws ec2 describe-availability-zones shows ZoneId)`
        : 'use an AZ ID such as use1-az4';
      invalidProp(scope, `${field}[${i}]`, `"${azId}" is not an AZ ID`, hint);
    }
    if (seen.has(azId))
      invalidProp(scope, `${field}[${i}]`, `"${azId}" is listed twice`, 'list each AZ ID once');
    seen.add(azId);
    if (!Token.isUnresolved(region)) {
      const prefix = azIdPrefixForRegion(region);
      if (prefix !== undefined && !azId.startsWith(`${prefix}-`)) {
        invalidProp(
          scope,
          `${field}[${i}]`,
          `"${azId}" is not in the stack's Region ${region}`,
          `AZ IDs of ${region} start with "${prefix}-"`,
        );
      }
    }
  });
}
