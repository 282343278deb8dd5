import { parseAgentConfig } from '../../../core/contract/agent-config';
import { resolveFleetId, zoneSettings } from '../../../core/scratch/settings';

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

describe('zoneSettings', () => {
  it("takes the subnet of the instance's AZ ID and the rest from agent.json", () => {
    expect(zoneSettings({}, config, 'use1-az6')).toEqual({
      subnetId: 'subnet-0a6',
      securityGroupId: 'sg-0aaa',
      teardownGraceSeconds: 30,
      kmsKeyId: 'alias/scratch',
    });
  });

  it("lets flags override agent.json, and works from flags alone (with the schema's default grace)", () => {
    const flags = { subnet: 'subnet-0ff', securityGroup: 'sg-0ff', teardownGraceSeconds: 5 };
    expect(zoneSettings(flags, config, 'use1-az4')).toMatchObject({
      subnetId: 'subnet-0ff',
      securityGroupId: 'sg-0ff',
      teardownGraceSeconds: 5,
    });
    expect(zoneSettings({ ...flags, teardownGraceSeconds: undefined }, undefined, 'use1-az1')).toEqual({
      subnetId: 'subnet-0ff',
      securityGroupId: 'sg-0ff',
      teardownGraceSeconds: 20,
    });
  });

  it("says what is missing, and holds a flag to its agent.json field's rule", () => {
    expect(() => zoneSettings({}, config, 'use1-az1')).toThrow(
      /no scratch subnet for this instance's zone use1-az1: pass --subnet SUBNET_ID \(agent.json scratch.subnets has use1-az4, use1-az6\)/,
    );
    expect(() => zoneSettings({}, undefined, 'use1-az1')).toThrow(/\(agent.json has no scratch section\)/);
    expect(() => zoneSettings({ subnet: 'subnet-01' }, undefined, 'use1-az1')).toThrow(
      'no scratch security group: pass --security-group SG_ID (agent.json has no scratch section)',
    );
    expect(() => zoneSettings({ subnet: 'sub-1' }, config, 'use1-az4')).toThrow(
      '--subnet sub-1: must be a subnet id such as subnet-0123abcd',
    );
    expect(() => zoneSettings({ securityGroup: 'group-1' }, config, 'use1-az4')).toThrow(
      '--security-group group-1: must be a security group id such as sg-0123abcd',
    );
    expect(() => zoneSettings({ teardownGraceSeconds: 601 }, config, 'use1-az4')).toThrow(
      '--teardown-grace 601: must be a whole number of seconds, 0-600',
    );
  });

  it('exits 2 on what it refuses', () => {
    expect(() => zoneSettings({}, undefined, 'use1-az1')).toThrow(expect.objectContaining({ exitStatus: 2 }));
  });
});

describe('resolveFleetId', () => {
  it('takes the flag first, then agent.json, and checks it', () => {
    expect(resolveFleetId('adhoc', config)).toBe('adhoc');
    expect(resolveFleetId(undefined, config)).toBe('gpu');
    expect(() => resolveFleetId(undefined, undefined)).toThrow(/no fleet: pass --fleet ID/);
    expect(() => resolveFleetId('F!', config)).toThrow(/fleet id "F!"/);
  });
});
