/**
 * Where and on what a ComputeFleet runs, checked at synth: its AZ IDs (the network's, narrowed to the
 * Express cache's and covered by the scratch subnets), one instance architecture, a sane capacity.
 */
import { Stack, Token } from 'aws-cdk-lib';
import type { Construct } from 'constructs';
import type { IExpressCache, IFleetNetwork, IScratchFileSystems } from '../interfaces';
import { invalidProp, validateAzIds } from './validation';

/** What the zones of a fleet depend on. */
interface ZoneChoice {
  readonly network: IFleetNetwork;
  /** The zones asked for, if any. */
  readonly azIds?: string[];
  /** The cache whose zones bound the fleet's, when mounts use it. */
  readonly expressCache?: IExpressCache;
  readonly scratch?: IScratchFileSystems;
}

/** The AZ IDs the fleet runs in; throws naming the prop when a zone lacks a subnet or a cache bucket. */
export function chooseZones(scope: Construct, choice: ZoneChoice): string[] {
  const networkZones = Object.keys(choice.network.subnets);
  const usesExpress = choice.expressCache !== undefined;
  const cacheZones = choice.expressCache?.azIds ?? [];
  let zones: string[];
  if (choice.azIds) {
    validateAzIds(scope, 'azIds', choice.azIds, Stack.of(scope).region);
    zones = [...choice.azIds];
    zones.forEach((azId, i) => {
      if (!choice.network.subnets[azId]) {
        invalidProp(
          scope,
          `azIds[${i}]`,
          `the network has no subnet in ${azId}`,
          `it has ${networkZones.join(', ')}`,
        );
      }
      if (usesExpress && !cacheZones.includes(azId)) {
        invalidProp(
          scope,
          `azIds[${i}]`,
          `${azId} has no Express cache bucket`,
          `add it to the cache (which has ${cacheZones.join(', ')}) or leave it out`,
        );
      }
    });
  } else {
    zones = usesExpress ? networkZones.filter((z) => cacheZones.includes(z)) : networkZones;
  }
  if (zones.length === 0) {
    invalidProp(
      scope,
      'azIds',
      usesExpress
        ? `no zone has both a subnet (${networkZones.join(', ')}) and an Express cache bucket (${cacheZones.join(', ')})`
        : 'the network has no subnet',
      'give the network and the cache the same AZ IDs',
    );
  }
  const scratch = choice.scratch;
  if (scratch) {
    zones.forEach((azId) => {
      if (!scratch.subnets[azId]) {
        invalidProp(
          scope,
          'scratch',
          `has no mount-target subnet in ${azId}, where the fleet runs`,
          "give the scratch file systems the fleet's network",
        );
      }
    });
  }
  return zones;
}

/** `arm64` for Graviton types (`c7g`, `m6gd`, `a1`), else `x86_64`; mixed architectures are an error. */
export function architectureOf(scope: Construct, instanceTypes: string[]): 'arm64' | 'x86_64' {
  if (instanceTypes.length === 0)
    invalidProp(scope, 'instanceTypes', 'is empty', 'list at least one instance type');
  const arches = instanceTypes.map((t, i) => {
    const m = /^([a-z]+)(\d+)([a-z-]*)\.[a-z0-9]+$/.exec(t);
    if (!m)
      invalidProp(scope, `instanceTypes[${i}]`, `"${t}" is not an instance type`, 'for example m6i.large');
    return m[1] === 'a' || m[3].includes('g') ? 'arm64' : 'x86_64';
  });
  if (new Set(arches).size > 1) {
    invalidProp(
      scope,
      'instanceTypes',
      `mixes arm64 and x86_64 types (${instanceTypes.join(', ')})`,
      'one launch template has one AMI: use one architecture',
    );
  }
  return arches[0];
}

/** The group's size and On-Demand share. */
interface FleetCapacity {
  readonly minCapacity: number;
  readonly maxCapacity: number;
  readonly onDemandPercentageAboveBaseCapacity: number;
}

/** Throws naming the prop when the minimum is above the maximum or the On-Demand share is no percentage. */
export function validateCapacity(scope: Construct, capacity: FleetCapacity): void {
  const { minCapacity: min, maxCapacity: max, onDemandPercentageAboveBaseCapacity: pct } = capacity;
  if (!Token.isUnresolved(min) && !Token.isUnresolved(max) && min > max) {
    invalidProp(scope, 'minCapacity', `${min} is above maxCapacity ${max}`, 'raise maxCapacity');
  }
  if (pct < 0 || pct > 100) {
    invalidProp(scope, 'onDemandPercentageAboveBaseCapacity', `${pct} is not a percentage`, 'use 0-100');
  }
}
