// The tuner's host-wide steps (plan-mounts.test.ts checks the whole plan).
import { lookupInstanceType } from '../../../core/instance/instance-type-lookup';
import { planNetwork } from '../../../core/tuner/host-profile';

const facts = (type: string) => lookupInstanceType(type, undefined, () => undefined);

describe('planNetwork', () => {
  test('a burstable type targets its baseline, rounded up to the 1 Gbps minimum, split over the mounts', async () => {
    const network = planNetwork(await facts('t3.large'), undefined, 2);
    expect(network).toMatchObject({ bind: [], perMountGbps: 1 });
    expect(network.decisions.map((d) => d.setting)).toEqual(['network target']);
    expect(network.decisions[0].value).toBe('1 Gbps for the host, 1 Gbps per mount');
  });

  test('a two-card type binds one interface per card when it has them, and says why not otherwise', async () => {
    const instance = await facts('c6in.32xlarge');
    const bound = planNetwork(instance, ['ens5', 'ens6', 'ens7'], 1);
    expect(bound.bind).toEqual(['ens5', 'ens6']);
    expect(bound.perMountGbps).toBe(400);
    const unknown = planNetwork(instance, undefined, 1);
    expect(unknown.bind).toEqual([]);
    expect(unknown.perMountGbps).toBe(200);
    expect(unknown.decisions[0]).toMatchObject({ setting: '--bind', value: '(not set)' });
    expect(unknown.decisions[0].reason).toMatch(/pass --interfaces/);
  });
});
