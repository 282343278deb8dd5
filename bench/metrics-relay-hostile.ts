/**
 * Hostile exports benchmark: `npx tsx bench/metrics-relay-hostile.ts [--exports N]`. What each kind of export
 * a local process could post to the agent's metrics relay costs the agent, next to a normal one. The relay
 * runs in a child process of its own, as in the agent (with a local server where the CloudWatch agent
 * would listen); this process sends N exports of each kind one after another, then the same N all at once,
 * and prints per kind:
 *   - the answer (status) and the time to it, p50 and max, one after another;
 *   - the relay process's event-loop delay while it handled them (perf_hooks monitorEventLoopDelay: how late
 *     a timer of the supervisor or the watchdog would have run), p99 and max, one after another and all at once;
 *   - its memory: growth of RSS and heap from before the kind to after it (after a full GC: what it kept),
 *     and how far its peak RSS (getrusage maxrss, which never goes down) rose during the kind;
 *   - the relay's own work on one such body, timed here in this process: inflating (up to the cap) and
 *     decoding it as the relay does, mean and p99 of N (what one turn of its event loop costs).
 * Not a timed test: figures for docs/security.md.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { gunzipSync, gzipSync } from 'node:zlib';
import { DEFAULT_METRICS_RELAY_LIMITS, MetricsRelay } from '../core/agent/metrics-relay';
import { decodeMetricsRequest } from '../core/agent/otlp-reader';
import { MountpointCounters } from '../core/agent/mountpoint-counters';
import { percentile } from '../core/measure/stats';
import {
  attr,
  exponentialHistogramMetric,
  manyPoints,
  msg,
  request,
  str,
  sumMetric,
} from '../test/support/otlp-encode';

const MiB = 1024 * 1024;

/** The relay's side: measures while the parent sends. */
interface Measure {
  readonly loopP99Ms: number;
  readonly loopMaxMs: number;
  readonly rssGrowthMiB: number;
  readonly heapGrowthMiB: number;
  readonly peakRssRiseMiB: number;
}

async function child(): Promise<void> {
  const cloudWatchAgent = createServer((req, res) => req.resume().on('end', () => res.writeHead(200).end()));
  await new Promise<void>((r) => cloudWatchAgent.listen(0, '127.0.0.1', r));
  const counters = new MountpointCounters(new Date().toISOString());
  const relay = await MetricsRelay.start({
    listen: 'http://127.0.0.1:0',
    upstream: `http://127.0.0.1:${(cloudWatchAgent.address() as AddressInfo).port}`,
    onExport: (_key, points) => counters.record(points),
    log: () => {},
  });
  const delay = monitorEventLoopDelay({ resolution: 1 });
  delay.enable();
  let before = process.memoryUsage();
  let peakBefore = process.resourceUsage().maxRSS;
  process.on('message', (m: { op: 'begin' | 'end' | 'stop' }) => {
    if (m.op === 'begin') {
      global.gc?.();
      before = process.memoryUsage();
      peakBefore = process.resourceUsage().maxRSS;
      delay.reset();
      process.send!({ op: 'begun' });
    } else if (m.op === 'end') {
      global.gc?.();
      const after = process.memoryUsage();
      const measure: Measure = {
        loopP99Ms: delay.percentile(99) / 1e6,
        loopMaxMs: delay.max / 1e6,
        rssGrowthMiB: (after.rss - before.rss) / MiB,
        heapGrowthMiB: (after.heapUsed - before.heapUsed) / MiB,
        peakRssRiseMiB: (process.resourceUsage().maxRSS - peakBefore) / 1024,
      };
      process.send!({ op: 'measure', measure });
    } else {
      void relay.stop().then(() => cloudWatchAgent.close(() => process.exit(0)));
    }
  });
  process.send!({ op: 'ready', endpoint: relay.endpoint });
}

const S3_OPERATIONS = ['GetObject', 'HeadObject', 'ListObjectsV2', 'PutObject', 'CreateMultipartUpload'];
const FUSE_OPERATIONS = ['lookup', 'getattr', 'open', 'read', 'readdirplus', 'release', 'statfs', 'flush'];

/** As in bench/metrics-relay.ts: a busy Mountpoint's export, 45 series. */
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

const fill = (unit: Buffer, bytes: number) =>
  Buffer.concat(Array<Buffer>(Math.floor(bytes / unit.length)).fill(unit));
const gzipMembers = (members: number) =>
  Buffer.concat(Array<Buffer>(members).fill(gzipSync(Buffer.alloc(MiB))));

interface Kind {
  readonly name: string;
  readonly body: Buffer;
  readonly encoding?: string;
}

const KINDS: Kind[] = [
  { name: 'normal: a busy Mountpoint export (45 series)', body: busyExport() },
  { name: '1 MiB of 0xff (the issue)', body: Buffer.alloc(MiB, 0xff) },
  { name: '100 KiB of 0xff (under the size cap: decoder)', body: Buffer.alloc(100 * 1024, 0xff) },
  { name: 'gzip bomb 0.5 MiB -> 512 MiB (the issue)', body: gzipMembers(512), encoding: 'gzip' },
  { name: 'gzip bomb 100 KiB -> 100 MiB (under the size cap)', body: gzipMembers(100), encoding: 'gzip' },
  {
    name: '500 points x 8 attributes (most a valid export can hold)',
    body: request(
      ...Array.from({ length: 500 }, (_, i) =>
        Buffer.concat([
          str(1, `m${i}`),
          msg(7, msg(1, Buffer.concat(Array.from({ length: 8 }, (_, j) => attr(`k${j}`, `v${i}`))))),
        ]),
      ),
    ),
  },
  { name: '501 points (over the point cap)', body: manyPoints(501) },
  {
    name: '32,000 metrics in 128 KiB (most messages a body can hold)',
    body: msg(1, msg(2, fill(msg(2, Buffer.from([0x20, 0])), 128 * 1024 - 16))),
  },
  { name: 'content-encoding br (unsupported)', body: busyExport(), encoding: 'br' },
];

interface Sent {
  readonly status: number | string;
  readonly ms: number;
}

async function send(url: string, kind: Kind): Promise<Sent> {
  const started = performance.now();
  try {
    const res = await fetch(url, {
      method: 'POST',
      body: kind.body,
      headers: {
        'content-type': 'application/x-protobuf',
        ...(kind.encoding ? { 'content-encoding': kind.encoding } : {}),
      },
    });
    await res.arrayBuffer();
    return { status: res.status, ms: performance.now() - started };
  } catch (e) {
    const cause = (e as { cause?: { code?: string } }).cause;
    return { status: cause?.code ?? (e as Error).message, ms: performance.now() - started };
  }
}

/** The relay's synchronous work on one body (core/agent/metrics-relay.ts `decode`), in ms: mean and p99 of n. */
function work(kind: Kind, n: number): { mean: number; p99: number } {
  const { maxBodyBytes, maxInflatedBytes } = DEFAULT_METRICS_RELAY_LIMITS;
  const once = () => {
    if (kind.body.length > maxBodyBytes || (kind.encoding && kind.encoding !== 'gzip')) return; // never read
    try {
      const bytes =
        kind.encoding === 'gzip' ? gunzipSync(kind.body, { maxOutputLength: maxInflatedBytes }) : kind.body;
      decodeMetricsRequest(bytes);
    } catch {
      // refused: what it cost to find out is what counts
    }
  };
  for (let i = 0; i < 5; i++) once();
  const times: number[] = [];
  for (let i = 0; i < n; i++) {
    const started = performance.now();
    once();
    times.push(performance.now() - started);
  }
  times.sort((a, b) => a - b);
  return { mean: times.reduce((a, b) => a + b, 0) / n, p99: percentile(times, 99) };
}

function ask(relay: ChildProcess, op: 'begin' | 'end'): Promise<Measure | undefined> {
  return new Promise((resolve) => {
    const on = (m: { op: string; measure?: Measure }) => {
      if (m.op !== 'begun' && m.op !== 'measure') return;
      relay.off('message', on);
      resolve(m.measure);
    };
    relay.on('message', on);
    relay.send({ op });
  });
}

const f = (n: number, digits = 2) => n.toFixed(digits);
const statuses = (sent: readonly Sent[]) => {
  const counts = new Map<string, number>();
  for (const s of sent) counts.set(String(s.status), (counts.get(String(s.status)) ?? 0) + 1);
  return [...counts].map(([s, n]) => (counts.size === 1 ? s : `${s} x${n}`)).join(', ');
};

async function parent(): Promise<void> {
  const { values } = parseArgs({ options: { exports: { type: 'string', default: '50' } } });
  const n = Number(values.exports);
  const relay = fork(process.argv[1], ['--child'], { execArgv: [...process.execArgv, '--expose-gc'] });
  const endpoint = await new Promise<string>((resolve) =>
    relay.once('message', (m: { endpoint: string }) => resolve(m.endpoint)),
  );
  const url = `${endpoint}/mounts/m/main/v1/metrics`;
  for (let i = 0; i < 200; i++) await send(url, KINDS[0]); // warm-up: connections, JIT
  const load = (await import('node:os')).loadavg()[0];
  process.stdout.write(
    `${n} exports per kind, one after another, then ${n} at once; the relay in its own process; ` +
      `load average ${load.toFixed(1)} on ${(await import('node:os')).availableParallelism()} CPUs\n\n` +
      '| export | bytes sent | answer | time to answer p50 / max | loop delay p99 / max, one by one | loop delay max, all at once | RSS / heap kept | peak RSS rise | inflate + decode mean / p99 |\n' +
      '|---|---|---|---|---|---|---|---|---|\n',
  );
  for (const kind of KINDS) {
    await ask(relay, 'begin');
    const sent: Sent[] = [];
    for (let i = 0; i < n; i++) sent.push(await send(url, kind));
    const one = (await ask(relay, 'end'))!;
    await ask(relay, 'begin');
    const burst = await Promise.all(Array.from({ length: n }, () => send(url, kind)));
    const all = (await ask(relay, 'end'))!;
    const ms = sent.map((s) => s.ms).sort((a, b) => a - b);
    const cost = work(kind, n);
    process.stdout.write(
      `| ${kind.name} | ${kind.body.length.toLocaleString('en-US')} | ${statuses(sent)} (at once: ${statuses(burst)}) ` +
        `| ${f(percentile(ms, 50))} / ${f(ms[ms.length - 1])} ms ` +
        `| ${f(one.loopP99Ms)} / ${f(one.loopMaxMs)} ms | ${f(all.loopMaxMs)} ms ` +
        `| ${f(Math.max(one.rssGrowthMiB, all.rssGrowthMiB), 1)} / ${f(Math.max(one.heapGrowthMiB, all.heapGrowthMiB), 1)} MiB ` +
        `| ${f(one.peakRssRiseMiB + all.peakRssRiseMiB, 1)} MiB | ${f(cost.mean, 3)} / ${f(cost.p99, 3)} ms |\n`,
    );
  }
  relay.send({ op: 'stop' });
}

void (process.argv.includes('--child') ? child() : parent());
