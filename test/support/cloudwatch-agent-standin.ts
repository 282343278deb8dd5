/**
 * STAND-IN for the CloudWatch agent on a fleet instance (it cannot run here), reduced to what the fleet
 * uses it for:
 *  - an OTLP/HTTP metrics receiver (`POST /v1/metrics`, protobuf, as Mountpoint's exporter sends it) that
 *    writes each export to CloudWatch with PutMetricData in Mountpoint's namespace, with the one dimension
 *    the real agent's config appends (core/contract/metric-names.ts); sums, gauges and (exponential) histograms only;
 *  - CloudWatch Logs' embedded-metric-format extraction for the lines the mountfleet agent and the reaper
 *    write (`_aws.CloudWatchMetrics`), also turned into PutMetricData.
 * It counts what it wrote, per namespace and metric name.
 */
import { createServer, type Server } from 'node:http';
import { gunzipSync } from 'node:zlib';
import { CloudWatchClient, PutMetricDataCommand, type MetricDatum } from '@aws-sdk/client-cloudwatch';
import { clientConfig } from '../../core/aws/clients';
import { MOUNTPOINT_FLEET_DIMENSION, MOUNTPOINT_METRICS_NAMESPACE } from '../../core/contract/metric-names';
import { decodeMetricsRequest } from '../../core/agent/otlp-reader';

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

/**
 * OTLP data points → datums, as the CloudWatch agent sends them: numbers as values, histograms as statistic
 * sets (count, sum, min, max); attributes become dimensions, plus the one the agent's config appends.
 */
export function otlpToDatums(request: Buffer, groupName: string): MetricDatum[] {
  return decodeMetricsRequest(request).flatMap((p): MetricDatum[] => {
    const Dimensions = [
      ...Object.entries(p.attributes)
        .filter(([, value]) => value !== '')
        .slice(0, 29)
        .map(([Name, Value]) => ({ Name, Value })),
      { Name: MOUNTPOINT_FLEET_DIMENSION, Value: groupName },
    ];
    const Timestamp = p.timeMs ? new Date(p.timeMs) : new Date();
    if (!p.histogram) return [{ MetricName: p.name, Value: p.value, Timestamp, Dimensions }];
    const { count, sum, min, max } = p.histogram;
    if (count === 0) return [];
    return [
      {
        MetricName: p.name,
        StatisticValues: {
          SampleCount: count,
          Sum: sum,
          Minimum: min ?? sum / count,
          Maximum: max ?? sum / count,
        },
        Timestamp,
        Dimensions,
      },
    ];
  });
}
