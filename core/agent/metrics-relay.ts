/**
 * The agent's OTLP metrics relay. Mountpoint's OTLP resource carries no attributes, so exports that reach
 * the CloudWatch agent cannot say which mount they came from. Each process therefore exports to its own
 * path on this relay (`relayProcessEndpoint`: `/mounts/<mount>/<role>`, Mountpoint appends `/v1/metrics`); the relay passes the
 * request on to the CloudWatch agent unchanged, answers with the CloudWatch agent's answer, and hands the
 * decoded points to the agent, which keeps per-process totals (`status --json`, `bench train`, `warm`).
 *
 * Any local process can post to it (loopback has no access control), and the relay runs in the agent's own
 * process, next to the supervisor and the Express cache watchdog. So what it takes is bounded, and a bad
 * export costs its sender, not the mounts:
 * - size: a body of at most `maxBodyBytes` as sent and `maxInflatedBytes` once inflated (zlib stops at
 *   the cap: a gzip bomb is never inflated whole); only `gzip` or no content-encoding; the decoder's own
 *   caps (core/agent/otlp-reader.ts: data points, attributes) for what a valid export may hold;
 * - time: a request must arrive whole within `requestTimeoutMs` (headers within `headersTimeoutMs`), and
 *   exports are decoded one at a time, one per turn of the event loop, so timers and I/O (the supervisor's
 *   restarts, the watchdog's probes, `down`'s SIGTERM) run between any two; the worst a bounded body can
 *   cost to decode is a few ms (bench/metrics-relay-hostile.ts);
 * - memory: at most `maxInFlight` exports held at once (more are answered 429 at once, unread), and
 *   `maxConnections` sockets; the CloudWatch agent's answer is read up to `maxUpstreamAnswerBytes`;
 * - the answer: an export that is not OTLP is answered 400, one over a cap 413, an encoding it does not
 *   take 415, and none of them reaches the CloudWatch agent or the counts; a good export is passed on
 *   unchanged, as before;
 * - the log: each kind of refusal is logged when it first happens and then at most once a minute, with how
 *   many were not logged in between, so a flood of bad exports does not flood the agent's log.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';
import { decodeMetricsRequest, OtlpLimitError, type MetricPoint, type OtlpLimits } from './otlp-reader';

/** How long the relay waits for the CloudWatch agent; below the exporter's own 10 s timeout. */
const FORWARD_TIMEOUT_MS = 5000;
/** A refusal of one kind is logged at most this often (the first one at once). */
const REFUSAL_LOG_INTERVAL_MS = 60_000;

/**
 * What the relay takes. Mountpoint's exports are a few KiB (a busy one: 45 series, 3 KB, uncompressed);
 * its whole documented metric set (20 metrics, about 150 series, 60 of them histograms) with every
 * exponential histogram at OpenTelemetry's 160 buckets would be about 40 KiB.
 */
export interface MetricsRelayLimits {
  /** Largest body as sent (gzip or not). @default 128 KiB — 3 times the largest Mountpoint can send. */
  readonly maxBodyBytes: number;
  /**
   * Largest body once inflated: zlib stops there. @default 128 KiB — the same bound on what the decoder
   * sees, whichever way the body came; the worst such body decodes in a few ms.
   */
  readonly maxInflatedBytes: number;
  /**
   * Exports held at once, from their first byte to their answer (bodies in memory: at most this times
   * `maxBodyBytes`, 4 MiB). @default 32 — one per process of 16 mounts with failover, each waiting out a slow
   * CloudWatch agent (5 s) at the same moment; Mountpoint exports once every 10 s per process.
   */
  readonly maxInFlight: number;
  /** Open connections; more are closed at once. @default 64 */
  readonly maxConnections: number;
  /**
   * Time for a whole request to arrive; a slower one is answered 408 and its connection closed.
   * @default 5000 — a 128 KiB export crosses loopback in under a millisecond.
   */
  readonly requestTimeoutMs: number;
  /** Time for a request's headers (and for a new connection's first request). @default 2000 */
  readonly headersTimeoutMs: number;
  /** Largest answer read back from the CloudWatch agent (an OTLP answer is a few bytes). @default 64 KiB */
  readonly maxUpstreamAnswerBytes: number;
  /** The decoder's caps (core/agent/otlp-reader.ts `OtlpLimits`). */
  readonly otlp?: Partial<OtlpLimits>;
}

export const DEFAULT_METRICS_RELAY_LIMITS: MetricsRelayLimits = {
  maxBodyBytes: 128 * 1024,
  maxInflatedBytes: 128 * 1024,
  maxInFlight: 32,
  maxConnections: 64,
  requestTimeoutMs: 5000,
  headersTimeoutMs: 2000,
  maxUpstreamAnswerBytes: 64 * 1024,
};

/** Why an export was not taken (`stats().refused`, and the `reason` of `metrics-relay-export-refused`). */
type RefusalReason =
  /** 415: a content-encoding other than gzip (or none). */
  | 'unsupported-encoding'
  /** 413: over `maxBodyBytes`, `maxInflatedBytes` or the decoder's caps. */
  | 'too-large'
  /** 400: not an OTLP metrics request (or not gzip when it says so). */
  | 'malformed'
  /** 429: `maxInFlight` exports already held. */
  | 'busy'
  /** No answer possible: the sender went away, or took longer than `requestTimeoutMs`, before its body ended. */
  | 'incomplete';

interface MetricsRelayStats {
  /** Exports held now. */
  readonly inFlight: number;
  /** Exports decoded and counted (then passed on). */
  readonly accepted: number;
  readonly refused: Readonly<Record<RefusalReason, number>>;
  /** The largest body the decoder was given (inflated when gzip): never more than `maxInflatedBytes`. */
  readonly largestDecodedBytes: number;
}

const ROUTE = /^\/mounts\/([^/]{1,255})\/([^/]{1,255})\/v1\/metrics$/;

interface MetricsRelayOptions {
  /** Where to listen, e.g. `http://127.0.0.1:4319`; port 0 takes any free port. */
  readonly listen: string;
  /** The CloudWatch agent's OTLP/HTTP receiver (`OTLP_ENDPOINT`). */
  readonly upstream: string;
  /** One export's points, with the process it came from (`<mount name>/<role>`). */
  readonly onExport: (processKey: string, points: readonly MetricPoint[]) => void;
  readonly log: (event: Record<string, unknown>) => void;
  /** Overrides of `DEFAULT_METRICS_RELAY_LIMITS` (tests use small ones). */
  readonly limits?: Partial<MetricsRelayLimits>;
}

interface Answer {
  readonly status: number;
  readonly contentType?: string;
  readonly body?: Buffer | string;
  /** Close the connection after answering: the request's body was not read (or not all of it). */
  readonly close?: boolean;
}

type Decoded = { readonly points: MetricPoint[] } | { readonly refused: Answer };

export class MetricsRelay {
  /** Where it listens (the real port when 0 was asked for). */
  readonly endpoint: string;
  private readonly limits: MetricsRelayLimits;
  private upstreamFailing = false;
  private inFlight = 0;
  private accepted = 0;
  private largestDecodedBytes = 0;
  private readonly refused: Record<RefusalReason, number> = {
    'unsupported-encoding': 0,
    'too-large': 0,
    malformed: 0,
    busy: 0,
    incomplete: 0,
  };
  /** Per kind of logged trouble: when it was last logged and how many since were not. */
  private readonly quiet = new Map<string, { loggedAt: number; suppressed: number }>();
  /** Decodes waiting for their turn: one per turn of the event loop. */
  private readonly turns: (() => void)[] = [];
  private turnScheduled = false;

  private constructor(
    private readonly server: Server,
    private readonly o: MetricsRelayOptions,
    limits: MetricsRelayLimits,
  ) {
    const { port } = server.address() as AddressInfo;
    this.endpoint = `http://${new URL(o.listen).hostname}:${port}`;
    this.limits = limits;
  }

  /** Listens; rejects when it cannot (the port is taken), so the agent can export straight instead. */
  static async start(o: MetricsRelayOptions): Promise<MetricsRelay> {
    const limits: MetricsRelayLimits = { ...DEFAULT_METRICS_RELAY_LIMITS, ...o.limits };
    const url = new URL(o.listen);
    const server = createServer({
      requestTimeout: limits.requestTimeoutMs,
      headersTimeout: Math.min(limits.headersTimeoutMs, limits.requestTimeoutMs),
      // Node looks for requests past their timeouts this often (30 s by default).
      connectionsCheckingInterval: Math.max(50, Math.min(1000, Math.floor(limits.requestTimeoutMs / 4))),
      keepAliveTimeout: 5000,
      maxHeaderSize: 16 * 1024,
    });
    server.maxConnections = limits.maxConnections;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(Number(url.port), url.hostname, () => {
        server.off('error', reject);
        resolve();
      });
    });
    const relay = new MetricsRelay(server, o, limits);
    server.on('request', (req: IncomingMessage, res: ServerResponse) => {
      relay.handle(req).then(
        ({ status, contentType, body, close }) => {
          const headers: Record<string, string> = {};
          if (contentType) headers['content-type'] = contentType;
          if (close) headers.connection = 'close';
          if (!res.destroyed) res.writeHead(status, headers).end(body);
        },
        (e: Error) => {
          if (!res.destroyed) res.writeHead(500, { connection: 'close' }).end(e.message);
        },
      );
    });
    return relay;
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  stats(): MetricsRelayStats {
    return {
      inFlight: this.inFlight,
      accepted: this.accepted,
      refused: { ...this.refused },
      largestDecodedBytes: this.largestDecodedBytes,
    };
  }

  private async handle(req: IncomingMessage): Promise<Answer> {
    const route = ROUTE.exec(req.url ?? '');
    if (req.method !== 'POST' || !route) return { status: 404, close: true };
    let processKey: string;
    try {
      processKey = `${decodeURIComponent(route[1])}/${decodeURIComponent(route[2])}`;
    } catch {
      return { status: 404, close: true }; // a malformed %-escape names no process
    }
    const encoding = req.headers['content-encoding']?.trim().toLowerCase() || 'identity';
    if (encoding !== 'identity' && encoding !== 'gzip')
      return this.refuse(
        'unsupported-encoding',
        415,
        processKey,
        `content-encoding ${encoding}: gzip or none`,
        {
          close: true,
        },
      );
    const { maxBodyBytes, maxInFlight } = this.limits;
    if (Number(req.headers['content-length']) > maxBodyBytes)
      return this.refuse('too-large', 413, processKey, `an export is at most ${maxBodyBytes} bytes`, {
        close: true,
      });
    if (this.inFlight >= maxInFlight)
      return this.refuse('busy', 429, processKey, `${maxInFlight} exports are being handled`, {
        close: true,
      });
    this.inFlight++;
    try {
      let body: Buffer | undefined;
      try {
        body = await readBody(req, maxBodyBytes);
      } catch (e) {
        return this.refuse('incomplete', 400, processKey, (e as Error).message, { close: true });
      }
      if (!body)
        return this.refuse('too-large', 413, processKey, `an export is at most ${maxBodyBytes} bytes`, {
          close: true,
        });
      // Decoded and counted in one turn, so no decoded export is held while others wait for theirs.
      const refused = await this.inTurn(() => {
        const decoded = this.decode(processKey, body, encoding === 'gzip');
        if ('refused' in decoded) return decoded.refused;
        this.accepted++;
        this.record(processKey, decoded.points);
        return undefined;
      });
      if (refused) return refused;
      return await this.forward(req, body);
    } finally {
      this.inFlight--;
    }
  }

  private record(processKey: string, points: MetricPoint[]): void {
    try {
      this.o.onExport(processKey, points);
    } catch (e) {
      this.logQuietly('record-failed', {
        event: 'metrics-relay-record-failed',
        process: processKey,
        error: (e as Error).message,
      });
    }
  }

  /** Inflates (up to the cap) and decodes one body; synchronous, bounded by the caps. */
  private decode(processKey: string, body: Buffer, gzip: boolean): Decoded {
    const { maxInflatedBytes } = this.limits;
    let bytes = body;
    if (gzip) {
      try {
        bytes = gunzipSync(body, { maxOutputLength: maxInflatedBytes });
      } catch (e) {
        const tooLarge = (e as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE';
        return {
          refused: tooLarge
            ? this.refuse(
                'too-large',
                413,
                processKey,
                `an export inflates to at most ${maxInflatedBytes} bytes`,
              )
            : this.refuse('malformed', 400, processKey, `not gzip: ${(e as Error).message}`),
        };
      }
    } else if (bytes.length > maxInflatedBytes) {
      return {
        refused: this.refuse('too-large', 413, processKey, `an export is at most ${maxInflatedBytes} bytes`),
      };
    }
    this.largestDecodedBytes = Math.max(this.largestDecodedBytes, bytes.length);
    try {
      return { points: decodeMetricsRequest(bytes, this.limits.otlp) };
    } catch (e) {
      return e instanceof OtlpLimitError
        ? { refused: this.refuse('too-large', 413, processKey, e.message) }
        : { refused: this.refuse('malformed', 400, processKey, (e as Error).message) };
    }
  }

  /**
   * Runs `work` in a turn of the event loop of its own, after every decode queued before it: two
   * decodes never run back to back, so timers and I/O due meanwhile run between them.
   */
  private inTurn<T>(work: () => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.turns.push(() => {
        try {
          resolve(work());
        } catch (e) {
          reject(e as Error);
        }
      });
      this.nextTurn();
    });
  }

  private nextTurn(): void {
    if (this.turnScheduled || this.turns.length === 0) return;
    this.turnScheduled = true;
    setImmediate(() => {
      this.turnScheduled = false;
      this.turns.shift()!();
      this.nextTurn();
    });
  }

  private refuse(
    reason: RefusalReason,
    status: number,
    processKey: string,
    detail: string,
    extra: Pick<Answer, 'close'> = {},
  ): Answer {
    this.refused[reason]++;
    this.logQuietly(reason, {
      event: 'metrics-relay-export-refused',
      reason,
      status,
      process: processKey,
      detail,
    });
    return { status, body: detail, ...extra };
  }

  /** Logs the first of a kind at once, then at most once per REFUSAL_LOG_INTERVAL_MS with the count not logged. */
  private logQuietly(kind: string, event: Record<string, unknown>): void {
    const now = Date.now();
    const last = this.quiet.get(kind);
    if (last && now - last.loggedAt < REFUSAL_LOG_INTERVAL_MS) {
      last.suppressed++;
      return;
    }
    this.quiet.set(kind, { loggedAt: now, suppressed: 0 });
    this.o.log(last?.suppressed ? { ...event, notLoggedSince: last.suppressed } : event);
  }

  /** Passes the export on; the answer Mountpoint gets is the CloudWatch agent's, or 503 when it is unreachable. */
  private async forward(req: IncomingMessage, body: Buffer): Promise<Answer> {
    const headers: Record<string, string> = {};
    for (const name of ['content-type', 'content-encoding']) {
      const value = req.headers[name];
      if (typeof value === 'string') headers[name] = value;
    }
    const limit = this.limits.maxUpstreamAnswerBytes;
    try {
      const res = await fetch(`${this.o.upstream}/v1/metrics`, {
        method: 'POST',
        headers,
        body,
        signal: AbortSignal.timeout(FORWARD_TIMEOUT_MS),
      });
      const answer = await readAnswer(res, limit);
      if (!answer) {
        const detail = `its answer was over ${limit} bytes`;
        this.upstreamChanged(false, detail);
        return { status: 502, body: `the CloudWatch agent at ${this.o.upstream}: ${detail}` };
      }
      // A 4xx other than 404 and 429 is the CloudWatch agent's verdict on that export, not on itself: an
      // export it refuses says nothing about the next (and a sender alternating them cannot flap the log).
      const upstreamOk = res.status < 500 && res.status !== 404 && res.status !== 429;
      this.upstreamChanged(upstreamOk, `HTTP ${res.status}`);
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

/**
 * The request's body, or undefined as soon as it is larger than `limit` (the rest is left unread: the
 * answer closes the connection). Rejects when the request ends before its body (the sender went away, or
 * the server's request timeout closed it).
 */
function readBody(req: IncomingMessage, limit: number): Promise<Buffer | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const done = () => {
      req.off('data', onData).off('end', onEnd).off('error', onError).off('close', onClose);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size <= limit) return void chunks.push(chunk);
      done();
      req.pause();
      resolve(undefined);
    };
    const onEnd = () => {
      done();
      resolve(Buffer.concat(chunks));
    };
    const onError = (e: Error) => {
      done();
      reject(new Error(`the request ended before its body: ${e.message}`));
    };
    const onClose = () => onError(new Error('connection closed'));
    req.on('data', onData).once('end', onEnd).once('error', onError).once('close', onClose);
  });
}

/** The answer's body, or undefined (its stream cancelled) as soon as it is larger than `limit`. */
async function readAnswer(res: Response, limit: number): Promise<Buffer | undefined> {
  if (!res.body) return Buffer.alloc(0);
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = res.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return Buffer.concat(chunks);
    size += value.length;
    if (size > limit) {
      await reader.cancel().catch(() => {});
      return undefined;
    }
    chunks.push(value);
  }
}
