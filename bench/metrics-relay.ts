/**
 * Metrics relay benchmark: `npx tsx bench/metrics-relay.ts [--exports N]`. What the agent's relay costs on the
 * path of Mountpoint's metrics, with an export shaped like Mountpoint 1.24's busy ones (S3 requests and
 * errors per operation, latency and size histograms per FUSE and S3 operation: 45 series) and a local
 * server where the CloudWatch agent would listen. Prints, for N exports sent one after another:
 *   1. the round trip Mountpoint sees, straight to the CloudWatch agent and through the relay (p50, p99);
 *   2. the relay's own work per export: decoding it and adding it to a process's totals (mean, p99).
 * Target: the relay adds under 5 ms per export at p99 (Mountpoint exports every 10 s per process, and its
 * exporter gives up after 10 s).
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseArgs } from 'node:util';
import { MetricsRelay } from '../core/agent/metrics-relay';
import { MountpointCounters } from '../core/agent/mountpoint-counters';
import { decodeMetricsRequest } from '../core/agent/otlp-reader';
import { percentile } from '../core/measure/stats';
import { exponentialHistogramMetric, request, sumMetric } from '../test/support/otlp-encode';

const { values } = parseArgs({ options: { exports: { type: 'string', default: '2000' } } });
const exportsToSend = Number(values.exports);

const S3_OPERATIONS = ['GetObject', 'HeadObject', 'ListObjectsV2', 'PutObject', 'CreateMultipartUpload'];
const FUSE_OPERATIONS = ['lookup', 'getattr', 'open', 'read', 'readdirplus', 'release', 'statfs', 'flush'];

/** An export like a busy Mountpoint's: 5 + 5 + 1 sums, 2 x 5 and 3 x 8 exponential histograms (45 series). */
function busyExport(): Buffer {
  const s3 = (value: number) => S3_OPERATIONS.map((op) => ({ attributes: { s3_request: op }, value }));
  const s3Histogram = S3_OPERATIONS.map((op) => ({ attributes: { s3_request: op }, count: 900, sum: 2.7e7 }));
  const fuse = FUSE_OPERATIONS.map((op) => ({ attributes: { fuse_request: op }, count: 4000, sum: 1.2e6 }));
  return request(
    sumMetric('s3.request_count', 1, s3(900)),
    sumMetric('s3.request_errors', 1, s3(2)),
    exponentialHistogramMetric('s3.request_total_latency', 1, s3Histogram),
    exponentialHistogramMetric('s3.request_first_byte_latency', 1, s3Histogram),
    exponentialHistogramMetric('fuse.request_latency', 1, fuse),
    exponentialHistogramMetric('fuse.io_size', 1, fuse),
    exponentialHistogramMetric('experimental.fuse.idle_threads', 1, fuse),
    sumMetric('experimental.fuse.cache_hit', 1, [{ value: 3000 }]),
  );
}

async function roundTrips(url: string, body: Buffer, n: number): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i < n; i++) {
    const started = performance.now();
    const res = await fetch(url, {
      method: 'POST',
      body,
      headers: { 'content-type': 'application/x-protobuf' },
    });
    await res.arrayBuffer();
    times.push(performance.now() - started);
  }
  return times.sort((a, b) => a - b);
}

const ms = (sorted: number[], p: number) => `${percentile(sorted, p).toFixed(3)} ms`;

async function main(): Promise<void> {
  const body = busyExport();
  const cloudWatchAgent = createServer((req, res) => req.resume().on('end', () => res.writeHead(200).end()));
  await new Promise<void>((r) => cloudWatchAgent.listen(0, '127.0.0.1', r));
  const upstream = `http://127.0.0.1:${(cloudWatchAgent.address() as AddressInfo).port}`;
  const counters = new MountpointCounters(new Date().toISOString());
  const relay = await MetricsRelay.start({
    listen: 'http://127.0.0.1:0',
    upstream,
    onExport: (_key, points) => counters.record(points),
    log: (e) => process.stderr.write(`${JSON.stringify(e)}\n`),
  });
  const series = decodeMetricsRequest(body).length;
  process.stdout.write(`${exportsToSend} exports of ${body.length} bytes, ${series} series each\n`);

  await roundTrips(`${upstream}/v1/metrics`, body, 200); // warm-up: connections, JIT
  await roundTrips(`${relay.endpoint}/mounts/m/main/v1/metrics`, body, 200);
  const direct = await roundTrips(`${upstream}/v1/metrics`, body, exportsToSend);
  const relayed = await roundTrips(`${relay.endpoint}/mounts/m/main/v1/metrics`, body, exportsToSend);
  process.stdout.write(
    `round trip, straight to the CloudWatch agent: p50 ${ms(direct, 50)}, p99 ${ms(direct, 99)}\n` +
      `round trip, through the relay:               p50 ${ms(relayed, 50)}, p99 ${ms(relayed, 99)}\n` +
      `added by the relay: p50 ${(percentile(relayed, 50) - percentile(direct, 50)).toFixed(3)} ms, p99 ${(percentile(relayed, 99) - percentile(direct, 99)).toFixed(3)} ms\n`,
  );

  const work: number[] = [];
  for (let i = 0; i < exportsToSend; i++) {
    const started = performance.now();
    counters.record(decodeMetricsRequest(body));
    work.push(performance.now() - started);
  }
  work.sort((a, b) => a - b);
  const mean = work.reduce((a, b) => a + b, 0) / work.length;
  process.stdout.write(
    `decode + add to the totals: mean ${mean.toFixed(3)} ms, p99 ${ms(work, 99)} per export\n` +
      `totals after the run: ${counters.snapshot().s3Requests.GetObject} GetObject counted\n`,
  );
  await relay.stop();
  await new Promise<void>((r) => cloudWatchAgent.close(() => r()));
}

void main();
