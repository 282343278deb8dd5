/**
 * The agent's OTLP metrics relay. Mountpoint's OTLP resource carries no attributes, so exports that reach
 * the CloudWatch agent cannot say which mount they came from. Each process therefore exports to its own
 * path on this relay (`relayProcessEndpoint`: `/mounts/<mount>/<role>`, Mountpoint appends `/v1/metrics`); the relay passes the
 * request on to the CloudWatch agent unchanged, answers with the CloudWatch agent's answer, and hands the
 * decoded points to the agent, which keeps per-process totals (`status --json`, `bench train`, `warm`).
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';
import { decodeMetricsRequest, type MetricPoint } from '../otlp';

/** Largest export accepted. Mountpoint's are a few KiB (a few dozen series). */
const MAX_BODY_BYTES = 16 * 1024 * 1024;
/** How long the relay waits for the CloudWatch agent; below the exporter's own 10 s timeout. */
const FORWARD_TIMEOUT_MS = 5000;

const ROUTE = /^\/mounts\/([^/]+)\/([^/]+)\/v1\/metrics$/;

export interface MetricsRelayOptions {
  /** Where to listen, e.g. `http://127.0.0.1:4319`; port 0 takes any free port. */
  readonly listen: string;
  /** The CloudWatch agent's OTLP/HTTP receiver (`OTLP_ENDPOINT`). */
  readonly upstream: string;
  /** One export's points, with the process it came from (`<mount name>/<role>`). */
  readonly onExport: (processKey: string, points: readonly MetricPoint[]) => void;
  readonly log: (event: Record<string, unknown>) => void;
}

export class MetricsRelay {
  /** Where it listens (the real port when 0 was asked for). */
  readonly endpoint: string;
  private upstreamFailing = false;

  private constructor(
    private readonly server: Server,
    private readonly o: MetricsRelayOptions,
  ) {
    const { port } = server.address() as AddressInfo;
    this.endpoint = `http://${new URL(o.listen).hostname}:${port}`;
  }

  /** Listens; rejects when it cannot (the port is taken), so the agent can export straight instead. */
  static async start(o: MetricsRelayOptions): Promise<MetricsRelay> {
    const url = new URL(o.listen);
    const server = createServer();
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(Number(url.port), url.hostname, () => {
        server.off('error', reject);
        resolve();
      });
    });
    const relay = new MetricsRelay(server, o);
    server.on('request', (req, res) => {
      relay.handle(req).then(
        ({ status, contentType, body }) =>
          res.writeHead(status, contentType ? { 'content-type': contentType } : {}).end(body),
        (e: Error) => res.writeHead(500).end(e.message),
      );
    });
    return relay;
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private async handle(
    req: IncomingMessage,
  ): Promise<{ status: number; contentType?: string; body?: Buffer | string }> {
    const route = ROUTE.exec(req.url ?? '');
    if (req.method !== 'POST' || !route) return { status: 404 };
    const body = await readBody(req);
    if (!body) return { status: 413, body: `an export is at most ${MAX_BODY_BYTES} bytes` };
    const processKey = `${decodeURIComponent(route[1])}/${decodeURIComponent(route[2])}`;
    const answer = await this.forward(req, body);
    let points: MetricPoint[];
    try {
      points = decodeMetricsRequest(req.headers['content-encoding'] === 'gzip' ? gunzipSync(body) : body);
    } catch (e) {
      this.o.log({ event: 'metrics-relay-decode-failed', process: processKey, error: (e as Error).message });
      return answer;
    }
    try {
      this.o.onExport(processKey, points);
    } catch (e) {
      this.o.log({ event: 'metrics-relay-record-failed', process: processKey, error: (e as Error).message });
    }
    return answer;
  }

  /** Passes the export on; the answer Mountpoint gets is the CloudWatch agent's, or 503 when it is unreachable. */
  private async forward(req: IncomingMessage, body: Buffer) {
    const headers: Record<string, string> = {};
    for (const name of ['content-type', 'content-encoding']) {
      const value = req.headers[name];
      if (typeof value === 'string') headers[name] = value;
    }
    try {
      const res = await fetch(`${this.o.upstream}/v1/metrics`, {
        method: 'POST',
        headers,
        body,
        signal: AbortSignal.timeout(FORWARD_TIMEOUT_MS),
      });
      const answer = Buffer.from(await res.arrayBuffer());
      this.upstreamChanged(res.ok, `HTTP ${res.status}`);
      return { status: res.status, contentType: res.headers.get('content-type') ?? undefined, body: answer };
    } catch (e) {
      // fetch says only "fetch failed"; the reason (ECONNREFUSED, a timeout) is in its cause.
      const cause = (e as { cause?: { code?: string; message?: string } }).cause;
      const error = cause?.code ?? cause?.message ?? (e as Error).message;
      this.upstreamChanged(false, error);
      return { status: 503, body: `the CloudWatch agent at ${this.o.upstream} did not answer: ${error}` };
    }
  }

  /** Logs when forwarding starts failing and when it works again, not every export. */
  private upstreamChanged(ok: boolean, detail: string): void {
    if (ok === !this.upstreamFailing) return;
    this.upstreamFailing = !ok;
    this.o.log({
      event: ok ? 'metrics-relay-upstream-ok' : 'metrics-relay-upstream-failing',
      upstream: this.o.upstream,
      detail,
    });
  }
}

/** The request's body, or undefined when it is larger than MAX_BODY_BYTES. */
async function readBody(req: IncomingMessage): Promise<Buffer | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) return undefined;
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}
