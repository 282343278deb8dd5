/**
 * The IAM pieces the fleet's scratch grants and the reaper's share: the ARN patterns of file systems and of
 * mount-target network interfaces, the fleet's subnets as ARNs, and the conditions on the fleet tag.
 */
import { Stack } from 'aws-cdk-lib';
import type * as ec2 from 'aws-cdk-lib/aws-ec2';
import type { IConstruct } from 'constructs';
import { TAG_FLEET } from '../../core/contract';

/** Every EFS file system of the stack's account and Region: scratch ids are unknown until run time. */
export function anyFileSystemArn(scope: IConstruct): string {
  return Stack.of(scope).formatArn({
    service: 'elasticfilesystem',
    resource: 'file-system',
    resourceName: '*',
  });
}

/** Every network interface of the stack's account and Region: EFS creates mount-target interfaces at run time. */
export function anyNetworkInterfaceArn(scope: IConstruct): string {
  return Stack.of(scope).formatArn({ service: 'ec2', resource: 'network-interface', resourceName: '*' });
}

/** The subnets' ARNs, for `ec2:Subnet` conditions and CreateNetworkInterface's subnet resource. */
export function subnetArns(scope: IConstruct, subnets: readonly ec2.ISubnet[]): string[] {
  return subnets.map((s) =>
    Stack.of(scope).formatArn({ service: 'ec2', resource: 'subnet', resourceName: s.subnetId }),
  );
}

/** The condition that the resource carries this fleet's tag. */
export function taggedWithFleet(fleetId: string) {
  return { StringEquals: { [`aws:ResourceTag/${TAG_FLEET}`]: fleetId } };
}

/** The condition of the explicit Deny: the resource carries no fleet tag at all. */
export const UNTAGGED = { Null: { [`aws:ResourceTag/${TAG_FLEET}`]: 'true' } };

/** The conditions that a tag change touches these keys only, on a file system of this fleet. */
export function onlyTagKeysOfFleet(fleetId: string, keys: readonly string[]) {
  return {
    ...taggedWithFleet(fleetId),
    'ForAllValues:StringEquals': { 'aws:TagKeys': [...keys] },
    // ForAllValues is also true of a request with no tag keys at all: require some.
    Null: { 'aws:TagKeys': 'false' },
  };
}
