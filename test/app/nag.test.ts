import { Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { resolveAppConfig, type AppConfigInput } from '../../lib/app-config';
import { MountfleetStack } from '../../lib/mountfleet-stack';
import { ensureBundles, fastApp } from '../lib/support';

beforeAll(ensureBundles);

/** cdk-nag v3: every AwsSolutions finding is either fixed or acknowledged with a reason. */
describe('cdk-nag AwsSolutions', () => {
  test.each<[string, AppConfigInput]>([
    ['zero config (Express cache, scratch, alarms, dashboard)', {}],
    ['sandbox profile', { profile: 'sandbox' }],
    [
      'mounts, existing VPC, named cache buckets',
      {
        network: { vpcId: 'vpc-0abc', subnetIds: { 'use1-az4': 'subnet-0aaa', 'use1-az6': 'subnet-0bbb' } },
        expressCache: { bucketBaseName: 'ml-cache' },
        fleet: {
          mounts: [
            { bucket: 'my-datasets', prefix: 'imagenet/', path: '/mnt/imagenet', dataset: 'immutable' },
            { bucket: 'my-datasets', prefix: 'out/', path: '/mnt/out', access: 'read-write' },
          ],
        },
      },
    ],
  ])('%s: no unacknowledged finding', (_name, input) => {
    const app = fastApp();
    const [config] = resolveAppConfig(input, '(test)');
    new MountfleetStack(app, config.stackName, { config });
    const pack = new AwsSolutionsChecks(app);
    Validations.of(app).addPlugins(pack);
    const { violations } = pack.validateScope(app);
    expect(
      violations.map((v) => `${v.ruleName} ${v.violatingResources.map((r) => r.constructPath).join(',')}`),
    ).toEqual([]);
  });

  test('every acknowledgement carries a specific reason', () => {
    const app = fastApp();
    const [config] = resolveAppConfig({}, '(test)');
    const stack = new MountfleetStack(app, config.stackName, { config });
    const reasons = stack.node
      .findAll()
      .flatMap((c) => c.node.metadata.filter((m) => m.type === Validations.ACKNOWLEDGED_RULES_METADATA_KEY))
      .flatMap((m) => Object.values(m.data as Record<string, string>));
    expect(reasons.length).toBeGreaterThan(5);
    for (const reason of reasons) expect(String(reason).length).toBeGreaterThan(60);
  });
});
