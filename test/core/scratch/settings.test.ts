import { parseAgentConfig } from '../../../core/contract/agent-config';
import { resolveScratchSettings } from '../../../core/scratch/settings';

const config = parseAgentConfig({
  version: 1,
  fleetId: 'gpu',
  region: 'us-east-1',
  scratch: {
    securityGroupId: 'sg-0aaa',
    subnets: { 'use1-az4': 'subnet-0a4', 'use1-az6': 'subnet-0a6' },
    teardownGraceSeconds: 30,
    kmsKeyId: 'alias/scratch',
  },
});

describe('resolveScratchSettings', () => {
  it("takes the subnet of the instance's AZ ID and the rest from agent.json", () => {
    expect(resolveScratchSettings({}, config, 'use1-az6')).toEqual({
      fleetId: 'gpu',
      subnetId: 'subnet-0a6',
      securityGroupId: 'sg-0aaa',
      path: '/mnt/scratch',
      teardownGraceSeconds: 30,
      kmsKeyId: 'alias/scratch',
    });
  });

  it('lets flags override agent.json, and works from flags alone', () => {
    const flags = {
      fleet: 'adhoc',
      subnet: 'subnet-0ff',
      securityGroup: 'sg-0ff',
      path: '/scratch/',
      teardownGraceSeconds: 5,
    };
    expect(resolveScratchSettings(flags, config, 'use1-az4')).toMatchObject({
      fleetId: 'adhoc',
      subnetId: 'subnet-0ff',
      securityGroupId: 'sg-0ff',
      path: '/scratch',
      teardownGraceSeconds: 5,
    });
    expect(
      resolveScratchSettings({ ...flags, teardownGraceSeconds: undefined }, undefined, 'use1-az1'),
    ).toEqual({
      fleetId: 'adhoc',
      subnetId: 'subnet-0ff',
      securityGroupId: 'sg-0ff',
      path: '/scratch',
      teardownGraceSeconds: 20,
    });
  });

  it('says what is missing or wrong', () => {
    expect(() => resolveScratchSettings({}, undefined, 'use1-az4')).toThrow(/no fleet: pass --fleet ID/);
    expect(() => resolveScratchSettings({}, config, 'use1-az1')).toThrow(
      /no scratch subnet for this instance's zone use1-az1: pass --subnet SUBNET_ID \(agent.json scratch.subnets has use1-az4, use1-az6\)/,
    );
    expect(() => resolveScratchSettings({ fleet: 'f', subnet: 'subnet-01' }, undefined, 'use1-az1')).toThrow(
      /no scratch security group/,
    );
    expect(() => resolveScratchSettings({ fleet: 'F!' }, config, 'use1-az4')).toThrow(/fleet id "F!"/);
    expect(() => resolveScratchSettings({ subnet: 'sub-1' }, config, 'use1-az4')).toThrow(
      /must be a subnet id/,
    );
    expect(() => resolveScratchSettings({ path: '/' }, config, 'use1-az4')).toThrow(
      /--path: "\/" is a system directory/,
    );
    expect(() => resolveScratchSettings({ path: '/a/../b' }, config, 'use1-az4')).toThrow(
      /--path: must not contain "\." or "\.\." segments/,
    );
    expect(() => resolveScratchSettings({ teardownGraceSeconds: 601 }, config, 'use1-az4')).toThrow(/0-600/);
  });
});
