import { GetMetricDataCommand, PutMetricDataCommand } from '@aws-sdk/client-cloudwatch';
import { CreateSubnetCommand, CreateVpcCommand, DescribeInstancesCommand } from '@aws-sdk/client-ec2';
import {
  CreateFileSystemCommand,
  CreateMountTargetCommand,
  DeleteFileSystemCommand,
  DeleteMountTargetCommand,
  DescribeFileSystemsCommand,
  DescribeMountTargetsCommand,
  EFSClient,
  TagResourceCommand,
} from '@aws-sdk/client-efs';
import {
  CreateBucketCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadBucketCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
} from '@aws-sdk/client-s3';
import { request } from 'node:http';
import {
  clientConfig,
  cloudWatchClient,
  ec2Client,
  efsClient,
  s3Client,
  type ClientOptions,
} from '../../core/aws/clients';
import { useEmulator } from './emulator';
import { FaultProxy, useFaultProxy, type Fault, type ServiceName } from './fault-proxy';
import { freePort } from './ports';

/** One cheap, side-effect-free call per service, through clients built by core/aws/clients.ts. */
const CALLS: Record<'efs' | 'ec2' | 'cloudwatch' | 's3', (o?: ClientOptions) => Promise<unknown>> = {
  efs: (o) => efsClient(o).send(new DescribeFileSystemsCommand({})),
  ec2: (o) => ec2Client(o).send(new DescribeInstancesCommand({})),
  cloudwatch: (o) =>
    cloudWatchClient(o).send(
      new GetMetricDataCommand({
        StartTime: new Date(Date.now() - 3_600_000),
        EndTime: new Date(),
        MetricDataQueries: [
          {
            Id: 'q',
            MetricStat: {
              Metric: { Namespace: 'AWS/EFS', MetricName: 'ClientConnections' },
              Period: 60,
              Stat: 'Sum',
            },
          },
        ],
      }),
    ),
  s3: (o) => s3Client(o).send(new ListObjectsV2Command({ Bucket: 'fault-proxy-test' })),
};
const OPERATION = {
  efs: 'DescribeFileSystems',
  ec2: 'DescribeInstances',
  cloudwatch: 'GetMetricData',
  s3: 'ListObjectsV2',
};
const SERVICES = Object.keys(CALLS) as Array<keyof typeof CALLS>;

async function failure(promise: Promise<unknown>): Promise<Error & { $metadata?: { attempts?: number } }> {
  try {
    await promise;
  } catch (err) {
    return err as Error;
  }
  throw new Error('expected the call to fail');
}

describe('FaultProxy', () => {
  const emu = useEmulator();
  let proxy: FaultProxy;

  beforeAll(async () => {
    proxy = await FaultProxy.start({ target: emu.endpoint });
  });
  beforeEach(async () => {
    proxy.clear();
    proxy.resetStats();
    process.env.AWS_ENDPOINT_URL = proxy.endpoint;
    await s3Client().send(new CreateBucketCommand({ Bucket: 'fault-proxy-test' }));
    proxy.resetStats();
  });
  afterAll(() => proxy.stop());

  it('recognises service and operation of EFS, EC2, CloudWatch and S3 calls', async () => {
    const efs = efsClient({ maxAttempts: 1 });
    const ec2 = ec2Client({ maxAttempts: 1 });
    const vpc = await ec2.send(new CreateVpcCommand({ CidrBlock: '10.0.0.0/16' }));
    const subnet = await ec2.send(
      new CreateSubnetCommand({
        VpcId: vpc.Vpc!.VpcId!,
        CidrBlock: '10.0.1.0/24',
        AvailabilityZone: 'us-east-1a',
      }),
    );
    const fs = await efs.send(new CreateFileSystemCommand({ CreationToken: 'ops' }));
    await efs.send(
      new TagResourceCommand({ ResourceId: fs.FileSystemId!, Tags: [{ Key: 'k', Value: 'v' }] }),
    );
    const mt = await efs.send(
      new CreateMountTargetCommand({ FileSystemId: fs.FileSystemId!, SubnetId: subnet.Subnet!.SubnetId! }),
    );
    await efs.send(new DescribeMountTargetsCommand({ FileSystemId: fs.FileSystemId! }));
    await efs.send(new DeleteMountTargetCommand({ MountTargetId: mt.MountTargetId! }));
    await efs.send(new DescribeFileSystemsCommand({ FileSystemId: fs.FileSystemId! }));
    await efs.send(new DeleteFileSystemCommand({ FileSystemId: fs.FileSystemId! }));
    const cw = cloudWatchClient({ maxAttempts: 1 });
    await cw.send(
      new PutMetricDataCommand({
        Namespace: 'AWS/EFS',
        MetricData: [{ MetricName: 'ClientConnections', Value: 1 }],
      }),
    );
    await CALLS.cloudwatch({ maxAttempts: 1 });
    const s3 = s3Client({ maxAttempts: 1 });
    const Bucket = 'fault-proxy-test';
    await s3.send(new HeadBucketCommand({ Bucket }));
    await s3.send(new PutObjectCommand({ Bucket, Key: 'a/b.txt', Body: 'hello' }));
    await s3.send(new HeadObjectCommand({ Bucket, Key: 'a/b.txt' }));
    expect(
      await (await s3.send(new GetObjectCommand({ Bucket, Key: 'a/b.txt' }))).Body!.transformToString(),
    ).toBe('hello');
    await s3.send(new ListObjectsV2Command({ Bucket }));
    await s3.send(new DeleteObjectCommand({ Bucket, Key: 'a/b.txt' }));

    expect(proxy.requests().map((r) => `${r.service}:${r.operation}`)).toEqual([
      'ec2:CreateVpc',
      'ec2:CreateSubnet',
      'efs:CreateFileSystem',
      'efs:TagResource',
      'efs:CreateMountTarget',
      'efs:DescribeMountTargets',
      'efs:DeleteMountTarget',
      'efs:DescribeFileSystems',
      'efs:DeleteFileSystem',
      'cloudwatch:PutMetricData',
      'cloudwatch:GetMetricData',
      's3:HeadBucket',
      's3:PutObject',
      's3:HeadObject',
      's3:GetObject',
      's3:ListObjectsV2',
      's3:DeleteObject',
    ]);
    expect(proxy.requests().every((r) => r.outcome === 'forwarded' && r.attempt === 1)).toBe(true);
    expect(proxy.count('efs')).toBe(7);
    expect(proxy.count('s3', 'PutObject')).toBe(1);
    expect(proxy.stats().total).toEqual({ requests: 17, forwarded: 17, faulted: 0 });
  });

  it.each([
    ['efs', 'ThrottlingException', 429],
    ['ec2', 'RequestLimitExceeded', 503],
    ['cloudwatch', 'Throttling', 400],
    ['s3', 'SlowDown', 503],
  ] as const)(
    'throttles %s with %s (HTTP %d), which the SDK retries until it succeeds',
    async (service, code, status) => {
      proxy.addRule({ service, fault: { kind: 'throttle' }, times: 1 });
      const err = await failure(CALLS[service]({ maxAttempts: 1 }));
      expect(err.name).toBe(code);
      expect((err as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode).toBe(status);

      proxy.resetStats();
      proxy.addRule({ service, fault: { kind: 'throttle' }, times: 1 });
      // Standard mode: adaptive mode's client-side rate limiter would add seconds after a throttle.
      await CALLS[service]({ retryMode: 'standard' });
      expect(proxy.requests().map((r) => [r.operation, r.attempt, r.outcome])).toEqual([
        [OPERATION[service], 1, 'throttle'],
        [OPERATION[service], 2, 'forwarded'],
      ]);
    },
  );

  it.each(SERVICES)(
    'answers %s with 500 and 503 in its own format; the SDK retries both',
    async (service) => {
      proxy.addRule({ service, fault: { kind: '5xx', status: 500 }, times: 1 });
      proxy.addRule({ service, fault: { kind: '5xx', status: 503 }, times: 1 });
      await CALLS[service]();
      expect(proxy.requests().map((r) => r.outcome)).toEqual(['5xx', '5xx', 'forwarded']);

      proxy.addRule({ service, fault: { kind: '5xx', status: 500 }, times: 1 });
      const err = await failure(CALLS[service]({ maxAttempts: 1 }));
      const expected = {
        efs: 'InternalServerError',
        ec2: 'InternalError',
        cloudwatch: 'InternalServiceError',
        s3: 'InternalError',
      };
      // The SDK maps a query-compatible code back to its modeled error (CloudWatch InternalServiceFault).
      expect([expected[service], 'InternalServiceFault']).toContain(err.name);
    },
  );

  it('resets connections, which the SDK retries on a new connection', async () => {
    proxy.addRule({ service: '*', fault: { kind: 'reset' }, times: 2 });
    await CALLS.efs();
    expect(proxy.requests().map((r) => r.outcome)).toEqual(['reset', 'reset', 'forwarded']);
    proxy.addRule({ service: 'efs', fault: { kind: 'reset' } });
    const err = await failure(CALLS.efs({ maxAttempts: 1 }));
    expect(err.message).toMatch(/ECONNRESET/);
  });

  it('does not get a non-retryable error retried', async () => {
    proxy.addRule({
      service: 'efs',
      fault: { kind: 'error', status: 400, code: 'BadRequest', message: 'no' },
    });
    const err = await failure(CALLS.efs());
    expect(err.name).toBe('BadRequest');
    expect(err.$metadata?.attempts).toBe(1);
    expect(proxy.count('efs', 'DescribeFileSystems')).toBe(1);
  });

  it('delays a matching operation only, then forwards it', async () => {
    proxy.addRule({ service: 'efs', operation: 'CreateFileSystem', fault: { kind: 'delay', ms: 400 } });
    await CALLS.efs({ maxAttempts: 1 });
    expect(proxy.requests()[0].outcome).toBe('forwarded');
    const started = Date.now();
    await efsClient({ maxAttempts: 1 }).send(new CreateFileSystemCommand({ CreationToken: 'slow' }));
    expect(Date.now() - started).toBeGreaterThanOrEqual(400);
    expect(proxy.stats().byOperation['efs:CreateFileSystem']).toEqual({
      requests: 1,
      forwarded: 1,
      faulted: 1,
    });
  });

  it('holds a matching request until released, so a test can act in between, then forwards it', async () => {
    const efs = efsClient({ maxAttempts: 1 });
    let arrived!: () => void;
    const atHold = new Promise<void>((resolve) => (arrived = resolve));
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    proxy.addRule({
      service: 'efs',
      operation: 'DescribeFileSystems',
      match: () => (arrived(), true),
      fault: { kind: 'hold', until: released },
    });
    const described = efs.send(new DescribeFileSystemsCommand({}));
    await atHold;
    // Made while the read waits: the read, forwarded after the release, sees it.
    const made = await new EFSClient({ ...clientConfig({ maxAttempts: 1 }), endpoint: emu.endpoint }).send(
      new CreateFileSystemCommand({ CreationToken: 'made-while-held' }),
    );
    release();
    expect((await described).FileSystems!.map((f) => f.FileSystemId)).toContain(made.FileSystemId);
    expect(proxy.stats().byOperation['efs:DescribeFileSystems']).toEqual({
      requests: 1,
      forwarded: 1,
      faulted: 1,
    });
  });

  it('rewrites a forwarded response body (a lifecycle state moto never reports)', async () => {
    const efs = efsClient({ maxAttempts: 1 });
    const fs = await efs.send(new CreateFileSystemCommand({ CreationToken: 'rewrite' }));
    proxy.addRule({
      service: 'efs',
      operation: 'DescribeFileSystems',
      match: (r) => r.query.get('FileSystemId') === fs.FileSystemId,
      fault: {
        kind: 'rewrite',
        rewrite: (body) => body.replace(/"LifeCycleState": ?"available"/, '"LifeCycleState": "deleting"'),
      },
      times: 1,
    });
    const described = () => efs.send(new DescribeFileSystemsCommand({ FileSystemId: fs.FileSystemId }));
    expect((await described()).FileSystems![0].LifeCycleState).toBe('deleting');
    expect((await described()).FileSystems![0].LifeCycleState).toBe('available');
  });

  it('applies a rule with a probability, using the injected random source', async () => {
    const draws = [0.9, 0.1, 0.6, 0.2];
    const seeded = await FaultProxy.start({ target: emu.endpoint, random: () => draws.shift() ?? 1 });
    try {
      process.env.AWS_ENDPOINT_URL = seeded.endpoint;
      const id = seeded.addRule({ service: 'efs', fault: { kind: 'throttle' }, probability: 0.5, times: 5 });
      for (let i = 0; i < 4; i++) await CALLS.efs({ maxAttempts: 1 }).catch(() => undefined);
      expect(seeded.requests().map((r) => r.outcome)).toEqual([
        'forwarded',
        'throttle',
        'forwarded',
        'throttle',
      ]);
      expect(seeded.remaining(id)).toBe(3);
    } finally {
      await seeded.stop();
    }
  });

  it('rate-limits a service with a token bucket; retries get every call through', async () => {
    proxy.setRateLimit({ service: 'efs', ratePerSecond: 2, burst: 3 });
    const results = await Promise.allSettled(Array.from({ length: 6 }, () => CALLS.efs({ maxAttempts: 1 })));
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(3);
    const throttled = results.filter((r) => r.status === 'rejected');
    expect(throttled.map((r) => (r as PromiseRejectedResult).reason.name)).toEqual(
      Array(3).fill('ThrottlingException'),
    );
    await CALLS.ec2({ maxAttempts: 1 }); // other services are not limited

    proxy.setRateLimit({ service: 'efs', ratePerSecond: 20, burst: 2 });
    // Standard mode keeps this quick; test/core/aws/clients.test.ts covers adaptive mode under throttling.
    const efs = efsClient({ retryMode: 'standard' });
    await Promise.all(Array.from({ length: 4 }, () => efs.send(new DescribeFileSystemsCommand({}))));
    expect(proxy.stats().byOperation['efs:DescribeFileSystems'].forwarded).toBe(3 + 4);
  });

  it('black-holes a request until stop(), which frees the held socket', async () => {
    const held = await FaultProxy.start({ target: emu.endpoint });
    held.addRule({ service: '*', fault: { kind: 'blackhole' } });
    const outcome = new Promise<string>((resolve) => {
      const req = request(`${held.endpoint}/2015-02-01/file-systems`, (res) =>
        resolve(`answered ${res.statusCode}`),
      );
      req.once('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
      req.end();
    });
    const early = await Promise.race([
      outcome,
      new Promise((r) => setTimeout(() => r('still waiting'), 300)),
    ]);
    expect(early).toBe('still waiting');
    const stopped = Date.now();
    await held.stop();
    expect(Date.now() - stopped).toBeLessThan(1000);
    expect(await outcome).toBe('ECONNRESET');
    expect(held.requests()[0]).toMatchObject({
      service: 'efs',
      operation: 'DescribeFileSystems',
      outcome: 'blackhole',
    });
  });

  it('answers 502 when the target is down, which the SDK treats as transient', async () => {
    const orphan = await FaultProxy.start({ target: `http://127.0.0.1:${await freePort()}` });
    try {
      process.env.AWS_ENDPOINT_URL = orphan.endpoint;
      const err = await failure(CALLS.efs({ maxAttempts: 2, retryMode: 'standard' }));
      expect(err.$metadata?.attempts).toBe(2);
      expect(orphan.requests().map((r) => r.outcome)).toEqual(['upstream-error', 'upstream-error']);
      expect(orphan.stats().total).toEqual({ requests: 2, forwarded: 2, faulted: 0 });
    } finally {
      await orphan.stop();
    }
  });

  it('counts faults for a wildcard rule in every service', async () => {
    const fault: Fault = { kind: '5xx', status: 503 };
    proxy.addRule({ service: '*', fault, times: 4 });
    for (const service of SERVICES) await CALLS[service]({ maxAttempts: 1 }).catch(() => undefined);
    const byService = proxy.stats().byService;
    for (const service of SERVICES as ServiceName[]) {
      expect(byService[service]).toEqual({ requests: 1, forwarded: 0, faulted: 1 });
    }
  });
});

describe('useFaultProxy', () => {
  const emu = useEmulator();
  const faults = useFaultProxy(emu, { services: ['efs'] });

  it('routes only the named services through a proxy that starts each test without rules', async () => {
    expect(process.env.AWS_ENDPOINT_URL).toBe(emu.endpoint);
    expect(process.env.AWS_ENDPOINT_URL_EFS).toBe(faults.proxy.endpoint);
    faults.proxy.addRule({ service: 'efs', fault: { kind: 'throttle' } });
    await CALLS.ec2({ maxAttempts: 1 });
    expect((await failure(CALLS.efs({ maxAttempts: 1 }))).name).toBe('ThrottlingException');
    expect(faults.proxy.requests().map((r) => r.service)).toEqual(['efs']);
  });

  it('clears the previous test’s rules and counts', async () => {
    expect(faults.proxy.stats().total.requests).toBe(0);
    await CALLS.efs({ maxAttempts: 1 });
  });
});
