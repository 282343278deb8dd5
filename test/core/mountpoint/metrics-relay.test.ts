/**
 * The agent's OTLP metrics relay over real HTTP: exports pass on unchanged to where the CloudWatch agent
 * listens (here a recording server), Mountpoint gets the CloudWatch agent's answer, and the agent gets the
 * decoded points with the process they came from.
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import { MetricsRelay } from '../../../core/mountpoint/metrics-relay';
import type { MetricPoint } from '../../../core/otlp';
import { request, sumMetric } from '../../support/otlp-encode';

interface Received {
  readonly url: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: Buffer;
}

/** Where the CloudWatch agent would listen: records each request and answers `status`. */
async function upstreamServer(
  status = 200,
): Promise<{ endpoint: string; received: Received[]; server: Server }> {
  const received: Received[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({ url: req.url!, headers: req.headers, body: Buffer.concat(chunks) });
      res.writeHead(status, { 'content-type': 'application/x-protobuf' }).end(Buffer.from([1, 2, 3]));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, received, server };
}

const close = (server: Server) => new Promise<void>((r) => server.close(() => r()));

const EXPORT = request(
  sumMetric('s3.request_count', 1, [{ attributes: { s3_request: 'GetObject' }, value: 5 }]),
);

let relay: MetricsRelay | undefined;
afterEach(async () => {
  await relay?.stop();
  relay = undefined;
});

async function startRelay(upstream: string) {
  const exports: { key: string; points: readonly MetricPoint[] }[] = [];
  const events: Record<string, unknown>[] = [];
  relay = await MetricsRelay.start({
    listen: 'http://127.0.0.1:0',
    upstream,
    onExport: (key, points) => exports.push({ key, points }),
    log: (e) => events.push(e),
  });
  return { relay, exports, events };
}

const post = (url: string, body: Buffer, headers: Record<string, string> = {}) =>
  fetch(url, { method: 'POST', body, headers: { 'content-type': 'application/x-protobuf', ...headers } });

test("passes each export on unchanged (gzip too) and answers with the CloudWatch agent's answer; the agent gets the points and the process", async () => {
  const upstream = await upstreamServer();
  try {
    const { relay, exports } = await startRelay(upstream.endpoint);
    const plain = await post(`${relay.endpoint}/mounts/mnt-data/xz/v1/metrics`, EXPORT);
    expect(plain.status).toBe(200);
    expect(Buffer.from(await plain.arrayBuffer())).toEqual(Buffer.from([1, 2, 3]));
    const zipped = gzipSync(EXPORT);
    const gz = await post(`${relay.endpoint}/mounts/mnt-data/direct/v1/metrics`, zipped, {
      'content-encoding': 'gzip',
    });
    expect(gz.status).toBe(200);

    expect(upstream.received.map((r) => r.url)).toEqual(['/v1/metrics', '/v1/metrics']);
    expect(upstream.received[0].body).toEqual(EXPORT);
    expect(upstream.received[0].headers['content-type']).toBe('application/x-protobuf');
    expect(upstream.received[1].body).toEqual(zipped);
    expect(upstream.received[1].headers['content-encoding']).toBe('gzip');
    expect(exports.map((e) => e.key)).toEqual(['mnt-data/xz', 'mnt-data/direct']);
    for (const e of exports)
      expect(e.points).toEqual([
        expect.objectContaining({
          name: 's3.request_count',
          value: 5,
          attributes: { s3_request: 'GetObject' },
        }),
      ]);
  } finally {
    await close(upstream.server);
  }
});

test('with the CloudWatch agent down, Mountpoint gets 503 and the counts still reach the agent; failing and recovering are logged once each', async () => {
  const upstream = await upstreamServer();
  const port = (upstream.server.address() as AddressInfo).port;
  await close(upstream.server);
  const { relay, exports, events } = await startRelay(upstream.endpoint);
  const url = `${relay.endpoint}/mounts/m/main/v1/metrics`;
  expect((await post(url, EXPORT)).status).toBe(503);
  expect((await post(url, EXPORT)).status).toBe(503);
  expect(exports).toHaveLength(2);
  const back = createServer((req, res) => req.resume().on('end', () => res.writeHead(200).end()));
  await new Promise<void>((r) => back.listen(port, '127.0.0.1', r));
  try {
    expect((await post(url, EXPORT)).status).toBe(200);
  } finally {
    await close(back);
  }
  expect(events.map((e) => e.event)).toEqual(['metrics-relay-upstream-failing', 'metrics-relay-upstream-ok']);
  expect(events[0]).toMatchObject({
    upstream: upstream.endpoint,
    detail: expect.stringMatching(/ECONNREFUSED/),
  });
});

test('a body it cannot read is still passed on, and logged; other paths and methods get 404 and go nowhere', async () => {
  const upstream = await upstreamServer();
  try {
    const { relay, exports, events } = await startRelay(upstream.endpoint);
    const garbage = Buffer.from([0x0a, 0xff, 0xff]);
    expect((await post(`${relay.endpoint}/mounts/m/main/v1/metrics`, garbage)).status).toBe(200);
    expect(upstream.received.map((r) => r.body)).toEqual([garbage]);
    expect(exports).toEqual([]);
    expect(events).toEqual([
      expect.objectContaining({ event: 'metrics-relay-decode-failed', process: 'm/main' }),
    ]);
    expect((await post(`${relay.endpoint}/v1/metrics`, EXPORT)).status).toBe(404);
    expect((await fetch(`${relay.endpoint}/mounts/m/main/v1/metrics`)).status).toBe(404);
    expect(upstream.received).toHaveLength(1);
  } finally {
    await close(upstream.server);
  }
});

test('refuses to start on a port that is taken (the agent then has Mountpoint export straight to the CloudWatch agent)', async () => {
  const taken = await upstreamServer();
  try {
    await expect(
      MetricsRelay.start({
        listen: taken.endpoint,
        upstream: taken.endpoint,
        onExport: () => {},
        log: () => {},
      }),
    ).rejects.toThrow(/EADDRINUSE/);
  } finally {
    await close(taken.server);
  }
});

test('a failure to record an export (the state file cannot be written) is logged; Mountpoint still gets the answer', async () => {
  const upstream = await upstreamServer();
  try {
    const events: Record<string, unknown>[] = [];
    relay = await MetricsRelay.start({
      listen: 'http://127.0.0.1:0',
      upstream: upstream.endpoint,
      onExport: () => {
        throw new Error('ENOSPC: no space left on device');
      },
      log: (e) => events.push(e),
    });
    expect((await post(`${relay.endpoint}/mounts/m/main/v1/metrics`, EXPORT)).status).toBe(200);
    expect(events).toEqual([
      { event: 'metrics-relay-record-failed', process: 'm/main', error: 'ENOSPC: no space left on device' },
    ]);
  } finally {
    await close(upstream.server);
  }
});
