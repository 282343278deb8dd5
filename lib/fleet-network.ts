import { Stack, Tags } from 'aws-cdk-lib';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import { Construct } from 'constructs';
import type { IFleetNetwork } from './interfaces';
import { acknowledge } from './private/nag';
import { invalidProp, validateAzIds } from './private/validation';

/** Props of {@link FleetNetwork.fromNetworkAttributes}. */
export interface FleetNetworkAttributes {
  /** An existing VPC id, e.g. `vpc-0123abcd`. */
  readonly vpcId: string;
  /** One existing subnet id per AZ ID, e.g. `{ 'use1-az4': 'subnet-0123abcd' }`. */
  readonly subnetIds: Record<string, string>;
}

/** Props of {@link FleetNetwork}. */
export interface FleetNetworkProps {
  /** AZ IDs to create a subnet in, e.g. `['use1-az4', 'use1-az6']`. */
  readonly azIds: string[];
  /** The VPC's IPv4 CIDR; each zone gets a /20 of it. @default '10.64.0.0/16' */
  readonly cidr?: string;
  /**
   * Whether to add an S3 Express One Zone gateway endpoint (free) so cache traffic stays on the AWS
   * network. An S3 gateway endpoint is always added.
   * @default true
   */
  readonly s3ExpressEndpoint?: boolean;
  /**
   * Only the VPC and its subnets: no internet gateway, routes or endpoints. For the local emulator
   * sandbox (moto cannot delete gateways or routes, so the stack could not be destroyed) or a network
   * whose routing is managed elsewhere.
   * @default false
   */
  readonly isolated?: boolean;
}

/**
 * A small VPC for a batch fleet, with subnets placed by AZ ID (`AWS::EC2::Subnet.AvailabilityZoneId`,
 * which the L2 `Vpc` cannot do): public subnets with an internet gateway (instances take no inbound
 * traffic; their security group has no ingress rules), no NAT gateway, and free gateway endpoints for S3
 * and S3 Express so dataset and cache traffic never crosses the internet gateway.
 */
export class FleetNetwork extends Construct implements IFleetNetwork {
  /** Uses an existing VPC and subnets (no lookups: synth stays offline). */
  static fromNetworkAttributes(scope: Construct, id: string, attrs: FleetNetworkAttributes): IFleetNetwork {
    const node = new Construct(scope, id);
    validateAzIds(node, 'subnetIds', Object.keys(attrs.subnetIds), Stack.of(node).region);
    const vpc = importVpc(node, attrs.vpcId, Object.keys(attrs.subnetIds));
    const subnets: Record<string, ec2.ISubnet> = {};
    for (const [azId, subnetId] of Object.entries(attrs.subnetIds)) {
      if (!/^subnet-[0-9a-f]+$/.test(subnetId)) {
        invalidProp(
          node,
          `subnetIds.${azId}`,
          `"${subnetId}" is not a subnet id`,
          'use an id such as subnet-0123abcd',
        );
      }
      subnets[azId] = ec2.Subnet.fromSubnetId(node, `Subnet-${azId}`, subnetId);
    }
    return Object.assign(node, { vpc, subnets });
  }

  /** The VPC. */
  readonly vpc: ec2.IVpc;
  /** The subnet per AZ ID. */
  readonly subnets: Record<string, ec2.ISubnet>;
  /** The L1 VPC. */
  readonly cfnVpc: ec2.CfnVPC;

  constructor(scope: Construct, id: string, props: FleetNetworkProps) {
    super(scope, id);
    validateAzIds(this, 'azIds', props.azIds, Stack.of(this).region);
    const cidr = props.cidr ?? '10.64.0.0/16';
    if (!/^\d{1,3}(\.\d{1,3}){3}\/(1[6-9]|2[0-4])$/.test(cidr)) {
      invalidProp(
        this,
        'cidr',
        `"${cidr}" is not an IPv4 CIDR between /16 and /24`,
        'for example 10.64.0.0/16',
      );
    }
    const bits = 32 - Number(cidr.split('/')[1]);
    const subnetBits = Math.min(12, bits - Math.ceil(Math.log2(props.azIds.length)));
    if (subnetBits < 4)
      invalidProp(
        this,
        'cidr',
        `${cidr} is too small for ${props.azIds.length} subnets`,
        'use a larger CIDR',
      );

    this.cfnVpc = new ec2.CfnVPC(this, 'Resource', {
      cidrBlock: cidr,
      enableDnsHostnames: true,
      enableDnsSupport: true,
    });
    Tags.of(this).add('Name', this.node.path);
    const isolated = props.isolated ?? false;
    const routeTable = isolated ? undefined : this.internetRouting();
    this.subnets = {};
    props.azIds.forEach((azId, i) => {
      const subnet = new ec2.CfnSubnet(this, `Subnet-${azId}`, {
        vpcId: this.cfnVpc.ref,
        availabilityZoneId: azId,
        cidrBlock: subnetCidr(cidr, i, subnetBits),
        mapPublicIpOnLaunch: !isolated,
      });
      if (routeTable) {
        new ec2.CfnSubnetRouteTableAssociation(this, `Subnet-${azId}-RouteTable`, {
          subnetId: subnet.ref,
          routeTableId: routeTable.ref,
        });
      }
      // No availabilityZone: the zone name differs per account and only a GetAtt could tell it.
      this.subnets[azId] = ec2.Subnet.fromSubnetAttributes(this, `Imported-${azId}`, {
        subnetId: subnet.ref,
        routeTableId: routeTable?.ref,
      });
    });
    this.vpc = importVpc(this, this.cfnVpc.ref, props.azIds);

    const region = Stack.of(this).region;
    const endpoints: Array<[string, string]> = routeTable ? [['S3Endpoint', 's3']] : [];
    if (routeTable && (props.s3ExpressEndpoint ?? true)) endpoints.push(['S3ExpressEndpoint', 's3express']);
    for (const [endpointId, service] of endpoints) {
      new ec2.CfnVPCEndpoint(this, endpointId, {
        vpcId: this.cfnVpc.ref,
        serviceName: `com.amazonaws.${region}.${service}`,
        vpcEndpointType: 'Gateway',
        routeTableIds: [routeTable!.ref],
      });
    }

    acknowledge(
      this.cfnVpc,
      'AwsSolutions-VPC7',
      'The fleet VPC only carries outbound traffic of batch instances whose security group has no ingress; flow logs are left to the account-wide VPC flow-log setup, or bring a VPC that has them with FleetNetwork.fromNetworkAttributes.',
    );
  }

  /** An internet gateway and the one route table all subnets share. */
  private internetRouting(): ec2.CfnRouteTable {
    const igw = new ec2.CfnInternetGateway(this, 'InternetGateway');
    const attachment = new ec2.CfnVPCGatewayAttachment(this, 'InternetGatewayAttachment', {
      vpcId: this.cfnVpc.ref,
      internetGatewayId: igw.ref,
    });
    const routeTable = new ec2.CfnRouteTable(this, 'RouteTable', { vpcId: this.cfnVpc.ref });
    const defaultRoute = new ec2.CfnRoute(this, 'DefaultRoute', {
      routeTableId: routeTable.ref,
      destinationCidrBlock: '0.0.0.0/0',
      gatewayId: igw.ref,
    });
    defaultRoute.node.addDependency(attachment);

    return routeTable;
  }
}

/** The i-th subnet of `hostBits` host bits inside a CIDR, computed here (moto has no `Fn::Cidr`). */
function subnetCidr(cidr: string, index: number, hostBits: number): string {
  const [address, prefix] = cidr.split('/');
  const base = address.split('.').reduce((n, octet) => n * 256 + Number(octet), 0);
  const mask = 2 ** (32 - Number(prefix));
  const start = base - (base % mask) + index * 2 ** hostBits;
  const octets = [24, 16, 8, 0].map((shift) => Math.floor(start / 2 ** shift) % 256);
  return `${octets.join('.')}/${32 - hostBits}`;
}

/**
 * The L2 view of the VPC that security groups and the Auto Scaling group take. The import insists on a
 * zone list; the fleet always selects explicit subnets, so the list is only a count and never rendered.
 */
function importVpc(scope: Construct, vpcId: string, azIds: string[]): ec2.IVpc {
  return ec2.Vpc.fromVpcAttributes(scope, 'Vpc', { vpcId, availabilityZones: azIds });
}
