/**
 * core/instance/imds.ts reads every IMDS answer to its end, 404s included, so a watcher that polls for "no notice
 * yet" neither piles up connections nor keeps its process alive after it is done. (The SDK's
 * MetadataService left each 404's socket open until the server's 5 s keep-alive timeout.)
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import {
  metadataService,
  readSpotInstanceAction,
  readTargetLifecycleState,
  type InstanceMetadataClient,
} from '../../../core/instance/imds';
import { ImdsStandIn } from '../../support/imds';

const REPO = join(__dirname, '..', '..', '..');
const POLLS = 20;

let imds: ImdsStandIn;
let client: InstanceMetadataClient | undefined;
beforeEach(async () => {
  imds = await ImdsStandIn.start();
});
afterEach(async () => {
  client?.close();
  client = undefined;
  await imds.stop();
});

test('polls that answer 404 reuse one connection and one token', async () => {
  client = metadataService({ endpoint: imds.endpoint });
  for (let i = 0; i < POLLS; i++) {
    expect(await readSpotInstanceAction(client)).toBeUndefined();
    expect(await readTargetLifecycleState(client)).toBeUndefined();
  }
  expect(imds.openConnections()).toBe(1);
  const requests = imds.requests();
  expect(requests.filter((r) => r.method === 'PUT')).toHaveLength(1);
  expect(requests.filter((r) => r.status === 404)).toHaveLength(2 * POLLS);
});

test('a process that polled exits at once when it is done', async () => {
  // The child polls the way `scratch run` and `mountfleet up` do, then prints the time it finished.
  const script = `
    const { readSpotInstanceAction, readTargetLifecycleState, metadataService } = require('./core/instance/imds');
    (async () => {
      const imds = metadataService();
      for (let i = 0; i < ${POLLS}; i++) {
        if ((await readSpotInstanceAction(imds)) !== undefined) throw new Error('unexpected notice');
        if ((await readTargetLifecycleState(imds)) !== undefined) throw new Error('unexpected state');
      }
      process.stdout.write(String(Date.now()));
    })();
  `;
  const child = spawn(process.execPath, ['--import', 'tsx', '-e', script], {
    cwd: REPO,
    env: { ...process.env, AWS_EC2_METADATA_SERVICE_ENDPOINT: imds.endpoint },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  const exitedAt = Date.now();
  expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
  expect(imds.requests().filter((r) => r.status === 404)).toHaveLength(2 * POLLS);
  // A leaked socket would hold the process until the stand-in's 5 s keep-alive timeout closes it.
  expect(exitedAt - Number(stdout)).toBeLessThan(1000);
});

test('a token IMDS no longer accepts is replaced, and the read still succeeds', async () => {
  client = metadataService({ endpoint: imds.endpoint });
  expect(await readTargetLifecycleState(client)).toBeUndefined();
  imds.expireTokens();
  imds.setTargetLifecycleState('Terminated');
  expect(await readTargetLifecycleState(client)).toBe('Terminated');
  expect(imds.requests().map((r) => `${r.method} ${r.status}`)).toEqual([
    'PUT 200',
    'GET 404',
    'GET 401',
    'PUT 200',
    'GET 200',
  ]);
});
