/**
 * STAND-IN for the CloudWatch agent on a fleet instance (it cannot run here), reduced to what the fleet
 * uses it for:
 *  - an OTLP/HTTP metrics receiver (`POST /v1/metrics`, protobuf, as Mountpoint's exporter sends it) that
 *    writes each export to CloudWatch with PutMetricData in Mountpoint's namespace, with the one dimension
 *    the real agent's config appends (core/metrics.ts); sums, gauges and (exponential) histograms only;
 *  - CloudWatch Logs' embedded-metric-format extraction for the lines the mountfleet agent and the reaper
 *    write (`_aws.CloudWatchMetrics`), also turned into PutMetricData.
 * It counts what it wrote, per namespace and metric name.
 */
import { createServer, type Server } from 'node:http';
import { gunzipSync } from 'node:zlib';
import { CloudWatchClient, PutMetricDataCommand, type MetricDatum } from '@aws-sdk/client-cloudwatch';
import { clientConfig } from '../../core/aws';
import { MOUNTPOINT_FLEET_DIMENSION, MOUNTPOINT_METRICS_NAMESPACE } from '../../core/metrics';

/** Datapoints written, by namespace then metric name. */
export type MetricCounts = Record<string, Record<string, number>>;

export class CloudWatchAgentStandIn {
  private readonly counts: MetricCounts = {};
  readonly errors: string[] = [];
  /** Why it does not receive OTLP (the port was taken), if it does not. */
  notReceiving?: string;
  private readonly cloudwatch = new CloudWatchClient(clientConfig());
  private pending: Promise<unknown> = Promise.resolve();

  private constructor(private server: Server | undefined) {}

  /**
   * Listens where Mountpoint exports (`endpoint`, e.g. http://127.0.0.1:4318). When that port is taken
   * (another collector on this machine), it records why and receives nothing.
   */
  static async start(endpoint: string, autoScalingGroupName: string): Promise<CloudWatchAgentStandIn> {
    const url = new URL(endpoint);
    const server = createServer();
    const standIn = new CloudWatchAgentStandIn(server);
    server.on('request', (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        if (req.method !== 'POST' || req.url !== '/v1/metrics') {
          res.writeHead(404).end();
          return;
        }
        try {
          let body = Buffer.concat(chunks);
          if (req.headers['content-encoding'] === 'gzip') body = gunzipSync(body);
          standIn.put(MOUNTPOINT_METRICS_NAMESPACE, otlpToDatums(body, autoScalingGroupName));
          res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
        } catch (e) {
          standIn.errors.push(`OTLP: ${(e as Error).message}`);
          res.writeHead(400).end();
        }
      });
    });
    await new Promise<void>((resolve) => {
      server.once('error', (e) => {
        standIn.notReceiving = `cannot listen on ${url.host}: ${(e as Error).message}`;
        standIn.server = undefined;
        resolve();
      });
      server.listen(Number(url.port), url.hostname, () => resolve());
    });
    return standIn;
  }

  /** Embedded-metric-format lines (one JSON object per line; other lines are skipped). */
  putEmf(text: string): void {
    for (const line of text.split('\n')) {
      if (!line.startsWith('{')) continue;
      const o = JSON.parse(line) as Record<string, unknown> & {
        _aws?: { Timestamp: number; CloudWatchMetrics: EmfDirective[] };
      };
      for (const d of o._aws?.CloudWatchMetrics ?? []) {
        const timestamp = new Date(o._aws!.Timestamp);
        const datums = d.Dimensions.flatMap((dims) =>
          d.Metrics.filter((m) => typeof o[m.Name] === 'number').map((m) => ({
            MetricName: m.Name,
            Unit: m.Unit as MetricDatum['Unit'],
            Value: o[m.Name] as number,
            Timestamp: timestamp,
            Dimensions: dims.map((name) => ({ Name: name, Value: String(o[name]) })),
          })),
        );
        this.put(d.Namespace, datums);
      }
    }
  }

  /** Datapoints written so far (a copy). */
  datapoints(): MetricCounts {
    return JSON.parse(JSON.stringify(this.counts)) as MetricCounts;
  }

  /** Waits for every PutMetricData started so far. */
  async flushed(): Promise<void> {
    await this.pending;
  }

  async stop(): Promise<void> {
    await this.flushed();
    if (this.server) await new Promise<void>((r) => this.server!.close(() => r()));
  }

  /** Whether it listens for OTLP (false when the port was taken). */
  get receiving(): boolean {
    return this.server !== undefined;
  }

  private put(namespace: string, datums: MetricDatum[]): void {
    // PutMetricData takes at most 1,000 datums per call; the real agent batches the same way.
    for (let i = 0; i < datums.length; i += 1000) {
      const batch = datums.slice(i, i + 1000);
      this.pending = Promise.all([
        this.pending,
        this.cloudwatch
          .send(new PutMetricDataCommand({ Namespace: namespace, MetricData: batch }))
          .then(() => {
            const byName = (this.counts[namespace] ??= {});
            for (const d of batch) byName[d.MetricName!] = (byName[d.MetricName!] ?? 0) + 1;
          })
          .catch((e: unknown) => this.errors.push(`PutMetricData ${namespace}: ${(e as Error).message}`)),
      ]);
    }
  }
}

interface EmfDirective {
  readonly Namespace: string;
  readonly Dimensions: string[][];
  readonly Metrics: { Name: string; Unit?: string }[];
}

// --- The few protobuf messages of an OTLP ExportMetricsServiceRequest the stand-in needs -----------------

type Field = { readonly no: number; readonly wire: number; readonly bytes?: Buffer; readonly num?: bigint };

/** Top-level fields of one protobuf message (varint, 64-bit, length-delimited, 32-bit). */
function fields(buf: Buffer): Field[] {
  const out: Field[] = [];
  let i = 0;
  const varint = (): bigint => {
    let v = 0n;
    for (let shift = 0n; ; shift += 7n) {
      const b = buf[i++];
      if (b === undefined) throw new Error('truncated protobuf');
      v |= BigInt(b & 0x7f) << shift;
      if (b < 0x80) return v;
    }
  };
  while (i < buf.length) {
    const key = Number(varint());
    const no = key >>> 3;
    const wire = key & 7;
    if (wire === 0) out.push({ no, wire, num: varint() });
    else if (wire === 1) out.push({ no, wire, bytes: buf.subarray(i, (i += 8)) });
    else if (wire === 2) {
      const len = Number(varint());
      out.push({ no, wire, bytes: buf.subarray(i, (i += len)) });
    } else if (wire === 5) out.push({ no, wire, bytes: buf.subarray(i, (i += 4)) });
    else throw new Error(`unsupported protobuf wire type ${wire}`);
  }
  return out;
}

const sub = (fs: Field[], no: number): Buffer[] => fs.filter((f) => f.no === no).map((f) => f.bytes!);

/** An attribute's string form (AnyValue: string 1, bool 2, int 3, double 4). */
function attribute(kv: Buffer): [string, string] | undefined {
  const f = fields(kv);
  const key = sub(f, 1)[0]?.toString('utf8');
  const value = fields(sub(f, 2)[0] ?? Buffer.alloc(0))[0];
  if (!key || !value) return undefined;
  if (value.no === 1) return [key, value.bytes!.toString('utf8')];
  if (value.no === 2 || value.no === 3) return [key, String(value.num)];
  if (value.no === 4) return [key, String(value.bytes!.readDoubleLE(0))];
  return undefined;
}

function dimensions(point: Field[], attributesField: number, groupName: string) {
  const attrs = sub(point, attributesField)
    .map(attribute)
    .filter((a): a is [string, string] => a !== undefined && a[1] !== '');
  return [
    ...attrs.slice(0, 29).map(([Name, Value]) => ({ Name, Value })),
    { Name: MOUNTPOINT_FLEET_DIMENSION, Value: groupName },
  ];
}

const timeOf = (point: Field[], no: number) => {
  const ns = point.find((f) => f.no === no)?.bytes?.readBigUInt64LE(0);
  return ns ? new Date(Number(ns / 1_000_000n)) : new Date();
};

/**
 * Metric (name 1, unit 3, gauge 5, sum 7, histogram 9, exponential histogram 10) → datums; number points:
 * double 4, int 6; histograms as statistic sets (count, sum, min, max), as the CloudWatch agent sends them.
 */
export function otlpToDatums(request: Buffer, groupName: string): MetricDatum[] {
  const datums: MetricDatum[] = [];
  for (const rm of sub(fields(request), 1))
    for (const sm of sub(fields(rm), 2))
      for (const m of sub(fields(sm), 2)) {
        const mf = fields(m);
        const name = sub(mf, 1)[0]?.toString('utf8');
        if (!name) continue;
        for (const numbers of [...sub(mf, 5), ...sub(mf, 7)])
          for (const p of sub(fields(numbers), 1)) {
            const pf = fields(p);
            const dbl = pf.find((f) => f.no === 4)?.bytes?.readDoubleLE(0);
            const int = pf.find((f) => f.no === 6)?.bytes?.readBigInt64LE(0);
            datums.push({
              MetricName: name,
              Value: dbl ?? Number(int ?? 0n),
              Timestamp: timeOf(pf, 3),
              Dimensions: dimensions(pf, 7, groupName),
            });
          }
        // Histogram points: attributes 9, count 4, sum 5, min 11, max 12. Exponential histogram points (what
        // Mountpoint sends for latencies and sizes): attributes 1, count 4, sum 5, min 12, max 13.
        const histograms = [
          ...sub(mf, 9).map((h) => [h, { attributes: 9, min: 11, max: 12 }] as const),
          ...sub(mf, 10).map((h) => [h, { attributes: 1, min: 12, max: 13 }] as const),
        ];
        for (const [histogram, at] of histograms)
          for (const p of sub(fields(histogram), 1)) {
            const pf = fields(p);
            const count = Number(pf.find((f) => f.no === 4)?.bytes?.readBigUInt64LE(0) ?? 0n);
            if (count === 0) continue;
            const dbl = (no: number) => pf.find((f) => f.no === no)?.bytes?.readDoubleLE(0);
            const sum = dbl(5) ?? 0;
            datums.push({
              MetricName: name,
              StatisticValues: {
                SampleCount: count,
                Sum: sum,
                Minimum: dbl(at.min) ?? sum / count,
                Maximum: dbl(at.max) ?? sum / count,
              },
              Timestamp: timeOf(pf, 3),
              Dimensions: dimensions(pf, at.attributes, groupName),
            });
          }
      }
  return datums;
}
