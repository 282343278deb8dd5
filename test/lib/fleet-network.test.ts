import { Match, Template } from 'aws-cdk-lib/assertions';
import { FleetNetwork } from '../../lib';
import { AZS, testStack } from './support';

describe('FleetNetwork', () => {
  test('places one subnet per AZ ID with AvailabilityZoneId, and S3 + S3 Express gateway endpoints', () => {
    const stack = testStack();
    new FleetNetwork(stack, 'Network', { azIds: AZS });
    const t = Template.fromStack(stack);
    t.resourceCountIs('AWS::EC2::Subnet', 2);
    for (const [i, azId] of AZS.entries()) {
      t.hasResourceProperties('AWS::EC2::Subnet', {
        AvailabilityZoneId: azId,
        CidrBlock: `10.64.${i * 16}.0/20`,
        AvailabilityZone: Match.absent(),
      });
    }
    t.hasResourceProperties('AWS::EC2::VPCEndpoint', {
      ServiceName: 'com.amazonaws.us-east-1.s3',
      VpcEndpointType: 'Gateway',
    });
    t.hasResourceProperties('AWS::EC2::VPCEndpoint', { ServiceName: 'com.amazonaws.us-east-1.s3express' });
    t.resourceCountIs('AWS::EC2::NatGateway', 0);
  });

  test('isolated: only the VPC and subnets (no gateway, routes, endpoints or public IPs)', () => {
    const stack = testStack();
    new FleetNetwork(stack, 'Network', { azIds: AZS, isolated: true });
    const t = Template.fromStack(stack);
    t.resourceCountIs('AWS::EC2::Subnet', 2);
    t.hasResourceProperties('AWS::EC2::Subnet', { MapPublicIpOnLaunch: false });
    for (const type of [
      'AWS::EC2::InternetGateway',
      'AWS::EC2::RouteTable',
      'AWS::EC2::Route',
      'AWS::EC2::VPCEndpoint',
    ]) {
      t.resourceCountIs(type, 0);
    }
  });

  test('rejects an AZ name, naming the construct, the field and the fix', () => {
    const stack = testStack();
    expect(() => new FleetNetwork(stack, 'Network', { azIds: ['us-east-1a'] })).toThrow(
      /^Test\/Network: azIds\[0\]: "us-east-1a" is not an AZ ID — "us-east-1a" is an AZ name.*use the AZ ID/,
    );
  });

  test('rejects an AZ ID of another Region', () => {
    expect(() => new FleetNetwork(testStack(), 'Network', { azIds: ['euw1-az1'] })).toThrow(
      /azIds\[0\]: "euw1-az1" is not in the stack's Region us-east-1 — AZ IDs of us-east-1 start with "use1-"/,
    );
  });

  test('imports an existing VPC and subnets by AZ ID without lookups', () => {
    const stack = testStack();
    const net = FleetNetwork.fromNetworkAttributes(stack, 'Net', {
      vpcId: 'vpc-0abc',
      subnetIds: { 'use1-az4': 'subnet-0abc' },
    });
    expect(net.subnets['use1-az4'].subnetId).toBe('subnet-0abc');
    expect(() =>
      FleetNetwork.fromNetworkAttributes(testStack(), 'Net', {
        vpcId: 'vpc-0abc',
        subnetIds: { 'use1-az4': 'sub-1' },
      }),
    ).toThrow(/subnetIds\.use1-az4: "sub-1" is not a subnet id/);
  });
});
