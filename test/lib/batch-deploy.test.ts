/**
 * The bundled app with the Batch scheduler deployed with the real CDK CLI into a moto server of its own:
 * bootstrap, deploy examples/sandbox-batch.config.json, read the queues and compute environments back through the
 * Batch API (the explicit launch-template version), destroy. moto makes Batch resources from CloudFormation without running
 * any instance (no Docker here): what this shows is that the template deploys and the queues order one environment each (moto drops the queues' tags: see below).
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  BatchClient,
  DescribeComputeEnvironmentsCommand,
  DescribeJobQueuesCommand,
} from '@aws-sdk/client-batch';
import { EMULATOR_ACCOUNT, EMULATOR_REGION, emulatorEnv, expectSuccess, runCdk } from '../support/cdk-cli';
import { MotoServer } from '../support/moto';
import { ensureBundles } from './support';

const CONFIG = ['-c', 'mountfleetConfig=examples/sandbox-batch.config.json'];
let moto: MotoServer;
let env: NodeJS.ProcessEnv;
const out = mkdtempSync(join(tmpdir(), 'mf-batch-deploy-'));

beforeAll(async () => {
  ensureBundles();
  moto = await MotoServer.start();
  env = emulatorEnv(moto.endpoint);
}, 30000);

afterAll(async () => {
  await moto?.stop();
});

test('bootstrap, deploy, read the queues back and destroy the Batch sandbox stack', async () => {
  expectSuccess(
    await runCdk(['bootstrap', `aws://${EMULATOR_ACCOUNT}/${EMULATOR_REGION}`, '-o', out, ...CONFIG], {
      env,
    }),
    'cdk bootstrap',
  );
  expectSuccess(
    await runCdk(
      ['deploy', 'Mountfleet', '--method=direct', '--require-approval', 'never', '-o', out, ...CONFIG],
      {
        env,
      },
    ),
    'cdk deploy',
  );
  const batch = new BatchClient({
    region: EMULATOR_REGION,
    endpoint: moto.endpoint,
    credentials: { accessKeyId: 'testing', secretAccessKey: 'testing' },
  });
  const queues = (await batch.send(new DescribeJobQueuesCommand({}))).jobQueues ?? [];
  expect(queues).toHaveLength(2);
  for (const q of queues) expect(q.computeEnvironmentOrder).toHaveLength(1);
  // Emulator gap (docs/sandbox.md): moto's CloudFormation creates AWS::Batch::JobQueue without its Tags, so the
  // contract's queue tags are not there to read; the template assertions (batch-compute-fleet.test.ts) hold them.
  // When moto keeps them, this fails and the stand-in note goes.
  expect(queues.map((q) => Object.keys(q.tags ?? {}).length)).toEqual([0, 0]);
  const ces = (await batch.send(new DescribeComputeEnvironmentsCommand({}))).computeEnvironments ?? [];
  expect(ces).toHaveLength(2);
  for (const ce of ces) {
    expect(ce.computeResources?.launchTemplate?.version).toMatch(/^\d+$/);
    expect(ce.serviceRole).toMatch(/:role\/.*BatchServiceRole/);
  }
  expectSuccess(
    await runCdk(['destroy', 'Mountfleet', '--force', '-o', out, ...CONFIG], { env }),
    'cdk destroy',
  );
}, 600000);
