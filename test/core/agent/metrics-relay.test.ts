/**
 * The agent's OTLP metrics relay over real HTTP: exports pass on unchanged to where the CloudWatch agent
 * listens (here a recording server), Mountpoint gets the CloudWatch agent's answer, and the agent gets the
 * decoded points with the process they came from. Any local process can post to it: hostile exports
 * (endless varints, gzip bombs, huge valid ones, floods, slow senders) are refused to their sender, never
 * passed on, and never hold up the next export. Every wait is for an answer or an event, never for time.
 */
import { once } from 'node:events';
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import {
  DEFAULT_METRICS_RELAY_LIMITS,
  MetricsRelay,
  type MetricsRelayLimits,
} from '../../../core/agent/metrics-relay';
import type { MetricPoint } from '../../../core/agent/otlp-reader';
import { manyPoints, request, sumMetric } from '../../support/otlp-encode';

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

async function startRelay(upstream: string, limits?: Partial<MetricsRelayLimits>) {
  const exports: { key: string; points: readonly MetricPoint[] }[] = [];
  const events: Record<string, unknown>[] = [];
  const logged: ((e: Record<string, unknown>) => void)[] = [];
  relay = await MetricsRelay.start({
    listen: 'http://127.0.0.1:0',
    upstream,
    onExport: (key, points) => exports.push({ key, points }),
    log: (e) => {
      events.push(e);
      for (const l of logged) l(e);
    },
    limits,
  });
  /** Resolves with the first event logged from now on that `match`es. */
  const nextEvent = (match: (e: Record<string, unknown>) => boolean) =>
    new Promise<Record<string, unknown>>((resolve) => logged.push((e) => match(e) && resolve(e)));
  return { relay, exports, events, nextEvent };
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

test('a body that is not OTLP is answered 400 and goes nowhere; a flood of them is logged once; other paths and methods get 404', async () => {
  const upstream = await upstreamServer();
  try {
    const { relay, exports, events } = await startRelay(upstream.endpoint);
    const url = `${relay.endpoint}/mounts/m/main/v1/metrics`;
    const garbage = Buffer.from([0x0a, 0xff, 0xff]);
    for (let i = 0; i < 5; i++) {
      const res = await post(url, garbage);
      expect(res.status).toBe(400);
      expect(await res.text()).toMatch(/not an OTLP metrics request: truncated varint/);
    }
    expect((await post(url, gzipSync(garbage), { 'content-encoding': 'gzip' })).status).toBe(400);
    expect((await post(url, garbage, { 'content-encoding': 'gzip' })).status).toBe(400); // not gzip
    expect(upstream.received).toEqual([]);
    expect(exports).toEqual([]);
    expect(events).toEqual([
      {
        event: 'metrics-relay-export-refused',
        reason: 'malformed',
        status: 400,
        process: 'm/main',
        detail: expect.stringMatching(/truncated varint/),
      },
    ]);
    expect(relay.stats().refused.malformed).toBe(7);
    expect((await post(`${relay.endpoint}/v1/metrics`, EXPORT)).status).toBe(404);
    expect((await fetch(url)).status).toBe(404);
    expect((await post(`${relay.endpoint}/mounts/${'m'.repeat(256)}/main/v1/metrics`, EXPORT)).status).toBe(
      404,
    );
    expect((await post(`${relay.endpoint}/mounts/%E0%A4%A/main/v1/metrics`, EXPORT)).status).toBe(404);
    expect(upstream.received).toHaveLength(0);
    // A good export after all that is passed on as ever.
    expect((await post(url, EXPORT)).status).toBe(200);
    expect(upstream.received.map((r) => r.body)).toEqual([EXPORT]);
  } finally {
    await close(upstream.server);
  }
});

test('1 MiB of 0xff bytes is refused at once, and the relay answers a good export meanwhile; within the size cap, the endless varint is refused by the decoder', async () => {
  const upstream = await upstreamServer();
  try {
    const { relay, exports } = await startRelay(upstream.endpoint);
    const url = `${relay.endpoint}/mounts/m/main/v1/metrics`;
    const big = post(url, Buffer.alloc(1024 * 1024, 0xff));
    const small = post(url, Buffer.alloc(100 * 1024, 0xff)); // under maxBodyBytes: reaches the decoder
    const zipped = post(url, gzipSync(Buffer.alloc(1024 * 1024, 0xff)), { 'content-encoding': 'gzip' });
    const good = post(url, EXPORT);
    expect((await good).status).toBe(200);
    expect((await big).status).toBe(413);
    const refused = await small;
    expect(refused.status).toBe(400);
    expect(await refused.text()).toMatch(/varint at byte 0 is longer than 10 bytes/);
    expect((await zipped).status).toBe(413); // 1 KB as sent, over the inflate cap once inflated
    expect(upstream.received.map((r) => r.body)).toEqual([EXPORT]);
    expect(exports).toHaveLength(1);
    expect(relay.stats()).toMatchObject({ accepted: 1, refused: { 'too-large': 2, malformed: 1 } });
  } finally {
    await close(upstream.server);
  }
});

test('a gzip bomb is refused at the inflate cap: the decoder never sees more than maxInflatedBytes', async () => {
  const upstream = await upstreamServer();
  try {
    const { relay } = await startRelay(upstream.endpoint);
    const url = `${relay.endpoint}/mounts/m/main/v1/metrics`;
    // One gzip member of 1 MiB of zeros is about 1 KiB; gunzip reads concatenated members as one stream.
    const mebibyte = gzipSync(Buffer.alloc(1024 * 1024));
    // The issue's bomb: 0.5 MiB that inflates to 512 MiB. Over the body cap as sent.
    const issueBomb = Buffer.concat(Array<Buffer>(512).fill(mebibyte));
    expect((await post(url, issueBomb, { 'content-encoding': 'gzip' })).status).toBe(413);
    // Under the body cap as sent (about 100 KiB), 100 MiB once inflated.
    const bomb = Buffer.concat(Array<Buffer>(100).fill(mebibyte));
    expect(bomb.length).toBeLessThan(DEFAULT_METRICS_RELAY_LIMITS.maxBodyBytes);
    const res = await post(url, bomb, { 'content-encoding': 'gzip' });
    expect(res.status).toBe(413);
    expect(await res.text()).toBe(
      `an export inflates to at most ${DEFAULT_METRICS_RELAY_LIMITS.maxInflatedBytes} bytes`,
    );
    expect(relay.stats().largestDecodedBytes).toBe(0);
    // A good gzip export still decodes; what the decoder saw is its inflated size.
    expect((await post(url, gzipSync(EXPORT), { 'content-encoding': 'gzip' })).status).toBe(200);
    expect(relay.stats().largestDecodedBytes).toBe(EXPORT.length);
    expect(upstream.received).toHaveLength(1);
  } finally {
    await close(upstream.server);
  }
});

test('with an injected inflate cap, a body that inflates just past it is refused and one at it decodes', async () => {
  const upstream = await upstreamServer();
  try {
    const cap = 8 * 1024;
    const { relay } = await startRelay(upstream.endpoint, { maxInflatedBytes: cap });
    const url = `${relay.endpoint}/mounts/m/main/v1/metrics`;
    const points = manyPoints(300); // about 12 KiB
    expect(points.length).toBeGreaterThan(cap);
    expect((await post(url, gzipSync(points), { 'content-encoding': 'gzip' })).status).toBe(413);
    expect((await post(url, points)).status).toBe(413); // the same cap without gzip
    const fits = manyPoints(100);
    expect(fits.length).toBeLessThanOrEqual(cap);
    expect((await post(url, gzipSync(fits), { 'content-encoding': 'gzip' })).status).toBe(200);
    expect(relay.stats().largestDecodedBytes).toBe(fits.length);
  } finally {
    await close(upstream.server);
  }
});

test('a valid export over the decoder caps (data points) is answered 413 and passed on nowhere', async () => {
  const upstream = await upstreamServer();
  try {
    const { relay, exports, events } = await startRelay(upstream.endpoint);
    const url = `${relay.endpoint}/mounts/m/main/v1/metrics`;
    const huge = manyPoints(501);
    expect(huge.length).toBeLessThan(DEFAULT_METRICS_RELAY_LIMITS.maxBodyBytes);
    const res = await post(url, huge);
    expect(res.status).toBe(413);
    expect(await res.text()).toBe('the export has more than 500 data points');
    expect(upstream.received).toEqual([]);
    expect(exports).toEqual([]);
    expect(events).toEqual([
      expect.objectContaining({ reason: 'too-large', status: 413, process: 'm/main' }),
    ]);
    expect((await post(url, manyPoints(500))).status).toBe(200);
    expect(exports[0].points).toHaveLength(500);
  } finally {
    await close(upstream.server);
  }
});

test('a content-encoding other than gzip is refused with 415, unread', async () => {
  const upstream = await upstreamServer();
  try {
    const { relay } = await startRelay(upstream.endpoint);
    const url = `${relay.endpoint}/mounts/m/main/v1/metrics`;
    for (const encoding of ['br', 'deflate', 'gzip, gzip', 'zstd']) {
      const res = await post(url, EXPORT, { 'content-encoding': encoding });
      expect(res.status).toBe(415);
    }
    expect((await post(url, EXPORT, { 'content-encoding': 'identity' })).status).toBe(200);
    expect(upstream.received).toHaveLength(1);
    expect(relay.stats().refused['unsupported-encoding']).toBe(4);
  } finally {
    await close(upstream.server);
  }
});

test('more exports at once than maxInFlight: the one past it is answered 429 at once; the held ones finish', async () => {
  // A CloudWatch agent that holds every request until released.
  const held: ServerResponse[] = [];
  const arrived: (() => void)[] = [];
  const upstream = createServer((req, res) => {
    req.resume().on('end', () => {
      held.push(res);
      arrived.shift()?.();
    });
  });
  await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
  try {
    const { relay, events } = await startRelay(
      `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`,
      { maxInFlight: 2 },
    );
    const url = `${relay.endpoint}/mounts/m/main/v1/metrics`;
    const bothArrived = new Promise<void>((r) => arrived.push(() => arrived.push(r)));
    const first = post(url, EXPORT);
    const second = post(url, EXPORT);
    await bothArrived;
    expect(relay.stats().inFlight).toBe(2);
    const third = await post(url, EXPORT);
    expect(third.status).toBe(429);
    expect(events).toEqual([expect.objectContaining({ reason: 'busy', status: 429 })]);
    for (const res of held) res.writeHead(200).end();
    expect((await first).status).toBe(200);
    expect((await second).status).toBe(200);
    const fourthArrived = new Promise<void>((r) => arrived.push(r));
    const fourth = post(url, EXPORT);
    await fourthArrived;
    held[2].writeHead(200).end();
    expect((await fourth).status).toBe(200);
    expect(relay.stats()).toMatchObject({ inFlight: 0, accepted: 3, refused: { busy: 1 } });
  } finally {
    upstream.closeAllConnections();
    await close(upstream);
  }
});

/** A raw connection that sends `text` and then nothing more: resolves with what the relay sent back when it closes. */
async function stall(endpoint: string, text: string): Promise<string> {
  const { port } = new URL(endpoint);
  const socket = connect(Number(port), '127.0.0.1');
  let answer = '';
  socket.on('data', (d: Buffer) => (answer += d.toString()));
  socket.on('error', () => {});
  if (text) {
    await once(socket, 'connect');
    socket.write(text);
  }
  await once(socket, 'close');
  return answer;
}

test('a slow sender cannot hold a connection or an export slot: a stalled body, stalled headers and a silent connection are closed with 408', async () => {
  const upstream = await upstreamServer();
  try {
    const { relay, nextEvent } = await startRelay(upstream.endpoint, {
      requestTimeoutMs: 400,
      headersTimeoutMs: 200,
      maxInFlight: 1,
    });
    const url = `${relay.endpoint}/mounts/m/main/v1/metrics`;
    const incomplete = nextEvent((e) => e.reason === 'incomplete');
    const stalledBody = stall(
      relay.endpoint,
      `POST /mounts/m/main/v1/metrics HTTP/1.1\r\nHost: relay\r\nContent-Length: 100\r\n\r\n0123456789`,
    );
    const stalledHeaders = stall(relay.endpoint, 'POST /mounts/m/main/v1/metrics HTTP/1.1\r\nHost: re');
    const silent = stall(relay.endpoint, '');
    expect(await stalledBody).toMatch(/^HTTP\/1\.1 408 /);
    expect(await stalledHeaders).toMatch(/^HTTP\/1\.1 408 /);
    expect(await silent).toMatch(/^(HTTP\/1\.1 408 |$)/);
    expect(await incomplete).toMatchObject({ event: 'metrics-relay-export-refused', process: 'm/main' });
    // Its slot is free again: the one export allowed in flight gets through.
    expect(relay.stats().inFlight).toBe(0);
    expect((await post(url, EXPORT)).status).toBe(200);
    expect(upstream.received).toHaveLength(1);
  } finally {
    await close(upstream.server);
  }
});

test("the CloudWatch agent's answer is read up to a cap: an endless one is cut off and answered 502", async () => {
  let upstreamClosed: Promise<unknown> | undefined;
  const upstream = createServer((req, res) => {
    req.resume().on('end', () => {
      res.writeHead(200, { 'content-type': 'application/x-protobuf' });
      const chunk = Buffer.alloc(64 * 1024, 1);
      const write = () => {
        while (!res.destroyed && res.write(chunk));
      };
      res.on('drain', write);
      upstreamClosed = once(res, 'close');
      write();
    });
  });
  await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
  try {
    const { relay, events } = await startRelay(
      `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`,
      { maxUpstreamAnswerBytes: 128 * 1024 },
    );
    const res = await post(`${relay.endpoint}/mounts/m/main/v1/metrics`, EXPORT);
    expect(res.status).toBe(502);
    expect(await res.text()).toMatch(/its answer was over 131072 bytes/);
    await upstreamClosed; // the relay stopped reading and let go of the answer
    expect(events).toEqual([
      expect.objectContaining({
        event: 'metrics-relay-upstream-failing',
        detail: 'its answer was over 131072 bytes',
      }),
    ]);
  } finally {
    upstream.closeAllConnections();
    await close(upstream);
  }
});

test('an export the CloudWatch agent refuses (4xx) is answered with its answer but is not an outage: senders alternating them cannot flap the log', async () => {
  let status = 200;
  const upstream = createServer((req, res) => req.resume().on('end', () => res.writeHead(status).end()));
  await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
  try {
    const { relay, events } = await startRelay(
      `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`,
    );
    const url = `${relay.endpoint}/mounts/m/main/v1/metrics`;
    for (let i = 0; i < 4; i++) {
      status = i % 2 ? 200 : 400;
      expect((await post(url, EXPORT)).status).toBe(status);
    }
    expect(events).toEqual([]);
    status = 503; // the CloudWatch agent itself failing is logged, once
    expect((await post(url, EXPORT)).status).toBe(503);
    expect((await post(url, EXPORT)).status).toBe(503);
    expect(events).toEqual([
      expect.objectContaining({ event: 'metrics-relay-upstream-failing', detail: 'HTTP 503' }),
    ]);
  } finally {
    await close(upstream);
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
