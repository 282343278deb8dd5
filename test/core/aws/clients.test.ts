import { ListMetricsCommand } from '@aws-sdk/client-cloudwatch';
import { DescribeInstancesCommand } from '@aws-sdk/client-ec2';
import { CreateFileSystemCommand, DescribeFileSystemsCommand } from '@aws-sdk/client-efs';
import { CreateBucketCommand, GetObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { randomBytes } from 'node:crypto';
import {
  cloudWatchClient,
  ec2Client,
  efsClient,
  s3Client,
  s3EndpointOverridden,
} from '../../../core/aws/clients';
import { useEmulator } from '../../support/emulator';
import { FaultProxy } from '../../support/fault-proxy';

const ENDPOINT_VARIABLES = ['AWS_ENDPOINT_URL_EFS', 'AWS_ENDPOINT_URL_S3'] as const;

describe('core/aws clients', () => {
  const emu = useEmulator();
  let proxy: FaultProxy;

  beforeAll(async () => {
    proxy = await FaultProxy.start({ target: emu.endpoint });
  });
  beforeEach(() => {
    proxy.clear();
    proxy.resetStats();
    process.env.AWS_ENDPOINT_URL = emu.endpoint;
    for (const name of ENDPOINT_VARIABLES) delete process.env[name];
  });
  afterAll(async () => {
    for (const name of ENDPOINT_VARIABLES) delete process.env[name];
    await proxy.stop();
  });

  it('reach the emulator through AWS_ENDPOINT_URL', async () => {
    const efs = efsClient({ maxAttempts: 1 });
    await efs.send(new CreateFileSystemCommand({ CreationToken: 'direct' }));
    expect((await efs.send(new DescribeFileSystemsCommand({}))).FileSystems).toHaveLength(1);
    expect(proxy.stats().total.requests).toBe(0);
  });

  it('send one service to AWS_ENDPOINT_URL_<SERVICE> and the others to AWS_ENDPOINT_URL', async () => {
    const general = await FaultProxy.start({ target: emu.endpoint });
    try {
      process.env.AWS_ENDPOINT_URL = general.endpoint;
      process.env.AWS_ENDPOINT_URL_EFS = proxy.endpoint;
      await efsClient({ maxAttempts: 1 }).send(new DescribeFileSystemsCommand({}));
      await ec2Client({ maxAttempts: 1 }).send(new DescribeInstancesCommand({}));
      await cloudWatchClient({ maxAttempts: 1 }).send(new ListMetricsCommand({}));
      expect(proxy.requests().map((r) => `${r.service}:${r.operation}`)).toEqual(['efs:DescribeFileSystems']);
      expect(general.requests().map((r) => `${r.service}:${r.operation}`)).toEqual([
        'ec2:DescribeInstances',
        'cloudwatch:ListMetrics',
      ]);
    } finally {
      await general.stop();
    }
  });

  it('absorb throttling with their default adaptive retries', async () => {
    process.env.AWS_ENDPOINT_URL = proxy.endpoint;
    proxy.addRule({
      service: 'efs',
      operation: 'DescribeFileSystems',
      fault: { kind: 'throttle' },
      times: 2,
    });
    const out = await efsClient().send(new DescribeFileSystemsCommand({}));
    expect(out.$metadata.attempts).toBe(3);
    expect(proxy.requests().map((r) => r.outcome)).toEqual(['throttle', 'throttle', 'forwarded']);
  });

  it('get a burst of calls through a service-side rate limit', async () => {
    process.env.AWS_ENDPOINT_URL = proxy.endpoint;
    proxy.setRateLimit({ service: 'efs', ratePerSecond: 20, burst: 5 });
    const efs = efsClient();
    const calls = await Promise.allSettled(
      Array.from({ length: 10 }, () => efs.send(new DescribeFileSystemsCommand({}))),
    );
    expect(calls.filter((c) => c.status === 'rejected')).toEqual([]);
    expect(proxy.stats().byService.efs.forwarded).toBe(10);
    expect(proxy.stats().byService.efs.faulted).toBeGreaterThan(0);
  });

  it('fail a black-holed call after the idle timeout on each attempt instead of hanging', async () => {
    process.env.AWS_ENDPOINT_URL = proxy.endpoint;
    proxy.addRule({ service: 'efs', fault: { kind: 'blackhole' } });
    const started = Date.now();
    const err = await efsClient({ requestTimeoutMs: 300, maxAttempts: 2 })
      .send(new DescribeFileSystemsCommand({}))
      .then(
        () => undefined,
        (e: Error) => e,
      );
    const elapsed = Date.now() - started;
    expect(err?.name).toBe('TimeoutError');
    expect(proxy.requests().map((r) => r.outcome)).toEqual(['blackhole', 'blackhole']);
    // Two 300 ms idle timeouts plus one short retry backoff.
    expect(elapsed).toBeGreaterThanOrEqual(600);
    expect(elapsed).toBeLessThan(2500);
  });

  it('let a slow answer through when it comes within the idle timeout', async () => {
    process.env.AWS_ENDPOINT_URL = proxy.endpoint;
    proxy.addRule({ service: 'efs', fault: { kind: 'delay', ms: 400 } });
    const out = await efsClient({ requestTimeoutMs: 1000, maxAttempts: 1 }).send(
      new DescribeFileSystemsCommand({}),
    );
    expect(out.FileSystems).toEqual([]);
  });

  it('use path-style S3 addressing when an endpoint is overridden, for small and multi-megabyte objects', async () => {
    process.env.AWS_ENDPOINT_URL_S3 = proxy.endpoint;
    expect(s3EndpointOverridden()).toBe(true);
    const s3 = s3Client({ maxAttempts: 1 });
    await s3.send(new CreateBucketCommand({ Bucket: 'mountfleet-data' }));
    await s3.send(new PutObjectCommand({ Bucket: 'mountfleet-data', Key: 'dir/small.txt', Body: 'hello' }));
    const large = randomBytes(3 * 1024 * 1024); // large enough for the SDK to send `Expect: 100-continue`
    await s3.send(new PutObjectCommand({ Bucket: 'mountfleet-data', Key: 'dir/large.bin', Body: large }));
    const small = await s3.send(new GetObjectCommand({ Bucket: 'mountfleet-data', Key: 'dir/small.txt' }));
    expect(await small.Body!.transformToString()).toBe('hello');
    const back = await s3.send(new GetObjectCommand({ Bucket: 'mountfleet-data', Key: 'dir/large.bin' }));
    expect(Buffer.from(await back.Body!.transformToByteArray()).equals(large)).toBe(true);
    expect(proxy.requests().map((r) => `${r.method} ${r.path}`)).toEqual([
      'PUT /mountfleet-data/',
      'PUT /mountfleet-data/dir/small.txt',
      'PUT /mountfleet-data/dir/large.bin',
      'GET /mountfleet-data/dir/small.txt',
      'GET /mountfleet-data/dir/large.bin',
    ]);
  });

  it('tell whether S3 goes through an endpoint override', () => {
    expect(s3EndpointOverridden({})).toBe(false);
    expect(s3EndpointOverridden({ AWS_ENDPOINT_URL: 'http://127.0.0.1:1' })).toBe(true);
    expect(s3EndpointOverridden({ AWS_ENDPOINT_URL_S3: 'http://127.0.0.1:1' })).toBe(true);
  });
});
