/**
 * A fault-injecting HTTP reverse proxy for tests and benchmarks, put between the SDK and the emulator:
 *
 *   const proxy = await FaultProxy.start({ target: emu.endpoint });
 *   process.env.AWS_ENDPOINT_URL_EFS = proxy.endpoint;          // or AWS_ENDPOINT_URL for every service
 *   proxy.addRule({ service: 'efs', operation: 'DeleteFileSystem', fault: { kind: 'throttle' }, times: 2 });
 *   proxy.setRateLimit({ service: 'ec2', ratePerSecond: 10, burst: 10 });
 *   proxy.count('efs', 'DescribeFileSystems');                   // API calls seen, for benchmarks
 *   await proxy.stop();
 *
 * It recognises the service (from the SigV4 credential scope) and the operation (from each protocol's
 * wire shape) of every request, and answers injected errors in that service's own error format, so the
 * SDK classifies them exactly as it would a real AWS answer (throttling, server error, or neither).
 */
import { randomUUID } from 'node:crypto';
import {
  createServer,
  request as httpRequest,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type OutgoingHttpHeaders,
  type Server,
  type ServerResponse,
} from 'node:http';
import type { Socket } from 'node:net';

/** 'efs' | 'cloudwatch' | 'ec2' | 's3' for the services we know; otherwise the SigV4 scope name (e.g. 'autoscaling'). */
export type ServiceName = 'efs' | 'cloudwatch' | 'ec2' | 's3' | (string & {});

export type Fault =
  /** The service's own throttling error (EFS 429 ThrottlingException, EC2 503 RequestLimitExceeded, ...). */
  | { readonly kind: 'throttle' }
  /** A server error in the service's format (InternalError / ServiceUnavailable and kin). */
  | { readonly kind: '5xx'; readonly status?: 500 | 503 }
  /** Any other error in the service's format, e.g. a non-retryable 400 `BadRequest`. */
  | { readonly kind: 'error'; readonly status: number; readonly code: string; readonly message?: string }
  /** Waits, then forwards. */
  | { readonly kind: 'delay'; readonly ms: number }
  /**
   * Holds the request until `until` settles, then forwards it: a test changes the world between two calls
   * of the code under test, on an event instead of a time (`match` can announce the arrival).
   */
  | { readonly kind: 'hold'; readonly until: Promise<unknown> }
  /** Forwards, then replaces the response body (e.g. to show a lifecycle state moto never reports). */
  | { readonly kind: 'rewrite'; readonly rewrite: (body: string, request: RequestInfo) => string }
  /** Answers this itself, without forwarding (an operation the emulator does not implement). */
  | { readonly kind: 'respond'; readonly status: number; readonly body: string; readonly contentType: string }
  /** Resets the TCP connection (RST) without answering. */
  | { readonly kind: 'reset' }
  /** Reads the request and never answers; the socket stays open until the client gives up or stop(). */
  | { readonly kind: 'blackhole' };

export type FaultKind = Fault['kind'];

/** What the proxy understood of a request; passed to rule predicates and rewrites. */
export interface RequestInfo {
  readonly service: ServiceName;
  /** The API operation, e.g. 'DescribeFileSystems'; 'Unknown' when the shape was not recognised. */
  readonly operation: string;
  readonly method: string;
  /** Path without the query string. */
  readonly path: string;
  readonly query: URLSearchParams;
  readonly headers: IncomingHttpHeaders;
  /** The request body as text (not kept for S3, whose bodies are streamed through). */
  readonly body?: string;
  /** The SDK's attempt number from `amz-sdk-request: attempt=N; max=M`, when sent. */
  readonly attempt?: number;
}

export interface Rule {
  /** Service to match, or '*' for every service. */
  readonly service: ServiceName | '*';
  /** Operation to match; every operation when unset. */
  readonly operation?: string;
  /** Extra condition, e.g. `(r) => r.path.includes(fileSystemId)`. */
  readonly match?: (request: RequestInfo) => boolean;
  readonly fault: Fault;
  /** How many matching requests get the fault; unlimited when unset. */
  readonly times?: number;
  /** Chance (0..1) that a matching request gets the fault; a miss neither faults nor uses up `times`. */
  readonly probability?: number;
}

/** Request headers the proxy adds on the way to the emulator. */
export interface HeaderRule {
  readonly match: (request: RequestInfo) => boolean;
  readonly headers: Readonly<Record<string, string>>;
}

export interface RateLimit {
  /** Limits this service only; all requests together when unset. */
  readonly service?: ServiceName;
  readonly ratePerSecond: number;
  /** Bucket size: requests allowed at once after a quiet period. @default ratePerSecond */
  readonly burst?: number;
}

export interface OperationStats {
  /** Requests received. */
  requests: number;
  /** Requests passed on to the target (delayed and rewritten ones included). */
  forwarded: number;
  /** Requests that a rule or the rate limit acted on (delayed and rewritten ones included). */
  faulted: number;
}

export interface ProxyStats {
  readonly total: OperationStats;
  /** Keyed by service, e.g. 'efs'. */
  readonly byService: Readonly<Record<string, OperationStats>>;
  /** Keyed by 'service:Operation', e.g. 'efs:DescribeFileSystems'. */
  readonly byOperation: Readonly<Record<string, OperationStats>>;
}

export type Outcome = 'forwarded' | 'rate-limited' | 'upstream-error' | FaultKind;

export interface RequestRecord {
  readonly service: ServiceName;
  readonly operation: string;
  readonly method: string;
  readonly path: string;
  readonly attempt?: number;
  readonly outcome: Outcome;
}

export interface FaultProxyOptions {
  /** Where requests go, e.g. the emulator's http://127.0.0.1:PORT. */
  readonly target: string;
  /** Port to listen on (loopback only). @default a free port */
  readonly port?: number;
  /** Random source for `probability`, replaceable for deterministic tests. @default Math.random */
  readonly random?: () => number;
}

const MAX_LOG = 10_000;

interface ActiveRule extends Rule {
  readonly id: number;
  remaining: number;
}

interface Bucket {
  readonly ratePerSecond: number;
  readonly burst: number;
  tokens: number;
  refilledAt: number;
}

export class FaultProxy {
  private readonly rules: ActiveRule[] = [];
  private readonly headerRules: HeaderRule[] = [];
  private readonly buckets = new Map<string, Bucket>();
  private readonly sockets = new Set<Socket>();
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly log: RequestRecord[] = [];
  private counters = emptyCounters();
  private readonly arrivals = new Map<string, number>();
  private nextRuleId = 1;
  private stopped = false;

  private constructor(
    private readonly server: Server,
    private readonly target: URL,
    private readonly random: () => number,
  ) {}

  /** Starts the proxy on a loopback port. */
  static async start(options: FaultProxyOptions): Promise<FaultProxy> {
    const server = createServer();
    const proxy = new FaultProxy(server, new URL(options.target), options.random ?? Math.random);
    server.on('request', (req: IncomingMessage, res: ServerResponse) => {
      proxy.handle(req, res).catch((err: unknown) => {
        if (!res.headersSent && !res.destroyed) {
          res.writeHead(500, { 'content-type': 'text/plain' }).end(`fault proxy error: ${String(err)}`);
        }
      });
    });
    server.on('connection', (socket: Socket) => {
      proxy.sockets.add(socket);
      socket.once('close', () => proxy.sockets.delete(socket));
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(options.port ?? 0, '127.0.0.1', () => resolve());
    });
    return proxy;
  }

  /** http://127.0.0.1:PORT: set it as AWS_ENDPOINT_URL or AWS_ENDPOINT_URL_<SERVICE>. */
  get endpoint(): string {
    const address = this.server.address();
    if (address === null || typeof address === 'string') throw new Error('fault proxy is not listening');
    return `http://127.0.0.1:${address.port}`;
  }

  /** Adds a rule; rules are tried in the order added and the first that fires wins. Returns its id. */
  addRule(rule: Rule): number {
    const id = this.nextRuleId++;
    this.rules.push({ ...rule, id, remaining: rule.times ?? Infinity });
    return id;
  }

  removeRule(id: number): void {
    const index = this.rules.findIndex((r) => r.id === id);
    if (index >= 0) this.rules.splice(index, 1);
  }

  /** How many more times a rule will fire (0 once used up or removed). */
  remaining(id: number): number {
    return this.rules.find((r) => r.id === id)?.remaining ?? 0;
  }

  /** A token bucket per service (or for all traffic); requests over it get the service's throttling error. */
  setRateLimit(limit: RateLimit): void {
    const burst = limit.burst ?? limit.ratePerSecond;
    this.buckets.set(limit.service ?? '*', {
      ratePerSecond: limit.ratePerSecond,
      burst,
      tokens: burst,
      refilledAt: Date.now(),
    });
  }

  /** Removes every rule and rate limit (statistics are kept: see resetStats). */
  /**
   * Adds request headers to every forwarded request `match` accepts, whatever fault rule applies: for an
   * emulator that needs a header the real client does not send (see express-session-standin.ts).
   */
  addHeaderRule(rule: HeaderRule): void {
    this.headerRules.push(rule);
  }

  clear(): void {
    this.rules.length = 0;
    this.headerRules.length = 0;
    this.buckets.clear();
  }

  resetStats(): void {
    this.counters = emptyCounters();
    this.arrivals.clear();
    this.log.length = 0;
  }

  stats(): ProxyStats {
    return structuredClone(this.counters);
  }

  /** Requests received for a service (and operation): the API-call count benchmarks report. */
  count(service: ServiceName, operation?: string): number {
    const key = operation === undefined ? service : `${service}:${operation}`;
    const table = operation === undefined ? this.counters.byService : this.counters.byOperation;
    return table[key]?.requests ?? 0;
  }

  /**
   * Requests that have reached the proxy for a service's operation, counted on arrival: unlike count(), this
   * includes requests still held by a delay or a black hole.
   */
  arrived(service: ServiceName, operation: string): number {
    return this.arrivals.get(`${service}:${operation}`) ?? 0;
  }

  /** The most recent requests (up to 10,000), oldest first. */
  requests(): readonly RequestRecord[] {
    return [...this.log];
  }

  /** Stops listening and destroys every open connection, black-holed ones included. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    for (const socket of this.sockets) socket.destroy();
    await closed;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://proxy');
    const service = serviceOf(req.headers, url);
    // S3 bodies can be large and are not needed to recognise the operation: stream them through.
    const body = service === 's3' ? undefined : await readBody(req);
    const info: RequestInfo = {
      service,
      operation: operationOf(service, req.method ?? 'GET', url, req.headers, body),
      method: req.method ?? 'GET',
      path: url.pathname,
      query: url.searchParams,
      headers: req.headers,
      body: body?.toString('utf8'),
      attempt: attemptOf(req.headers),
    };

    const arrivalKey = `${service}:${info.operation}`;
    this.arrivals.set(arrivalKey, (this.arrivals.get(arrivalKey) ?? 0) + 1);
    const fault = this.pickFault(info);
    let outcome: Outcome = fault?.kind ?? 'forwarded';
    if (fault?.kind === 'delay') await this.sleep(fault.ms);
    if (fault?.kind === 'hold') await fault.until.catch(() => undefined);
    if (this.stopped) return;
    if (fault === undefined || fault.kind === 'delay' || fault.kind === 'hold' || fault.kind === 'rewrite') {
      if (!this.takeToken(service)) outcome = 'rate-limited';
    }
    const record = this.record(info, outcome);

    // Not forwarding: still read a streamed (S3) body, so the client finishes sending and reads our answer.
    if (outcome !== 'forwarded' && outcome !== 'delay' && outcome !== 'hold' && outcome !== 'rewrite')
      req.resume();
    if (outcome === 'rate-limited' || fault?.kind === 'throttle')
      return sendError(res, info, throttlingError(info));
    if (fault?.kind === '5xx') return sendError(res, info, serverError(info, fault.status ?? 500));
    if (fault?.kind === 'error') return sendError(res, info, fault);
    if (fault?.kind === 'reset') return void req.socket.resetAndDestroy();
    if (fault?.kind === 'blackhole') return; // never answer
    if (fault?.kind === 'respond') {
      res.writeHead(fault.status, { 'content-type': fault.contentType, 'x-amzn-requestid': randomUUID() });
      return void res.end(fault.body);
    }
    await this.forward(req, res, info, body, fault?.kind === 'rewrite' ? fault.rewrite : undefined, record);
  }

  /** The first rule that matches and fires; uses up one of its `times`. */
  private pickFault(info: RequestInfo): Fault | undefined {
    for (const rule of this.rules) {
      if (rule.remaining <= 0) continue;
      if (rule.service !== '*' && rule.service !== info.service) continue;
      if (rule.operation !== undefined && rule.operation !== info.operation) continue;
      if (rule.match && !rule.match(info)) continue;
      if (rule.probability !== undefined && this.random() >= rule.probability) continue;
      rule.remaining -= 1;
      return rule.fault;
    }
    return undefined;
  }

  private takeToken(service: ServiceName): boolean {
    const buckets = [this.buckets.get(service), this.buckets.get('*')].filter((b) => b !== undefined);
    const now = Date.now();
    for (const b of buckets) {
      b.tokens = Math.min(b.burst, b.tokens + ((now - b.refilledAt) / 1000) * b.ratePerSecond);
      b.refilledAt = now;
    }
    if (buckets.some((b) => b.tokens < 1)) return false;
    for (const b of buckets) b.tokens -= 1;
    return true;
  }

  private record(info: RequestInfo, outcome: Outcome): { outcome: Outcome } {
    const forwarded =
      outcome === 'forwarded' || outcome === 'delay' || outcome === 'hold' || outcome === 'rewrite';
    const faulted = outcome !== 'forwarded';
    for (const s of [
      this.counters.total,
      (this.counters.byService[info.service] ??= zero()),
      (this.counters.byOperation[`${info.service}:${info.operation}`] ??= zero()),
    ]) {
      s.requests += 1;
      if (forwarded) s.forwarded += 1;
      if (faulted) s.faulted += 1;
    }
    const { service, operation, method, path, attempt } = info;
    const record = { service, operation, method, path, attempt, outcome };
    this.log.push(record);
    if (this.log.length > MAX_LOG) this.log.shift();
    return record;
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.timers.delete(timer);
        resolve();
      }, ms);
      this.timers.add(timer);
    });
  }

  private forward(
    req: IncomingMessage,
    res: ServerResponse,
    info: RequestInfo,
    body: Buffer | undefined,
    rewrite: ((body: string, request: RequestInfo) => string) | undefined,
    record: { outcome: Outcome },
  ): Promise<void> {
    const headers: OutgoingHttpHeaders = { ...req.headers };
    for (const rule of this.headerRules) if (rule.match(info)) Object.assign(headers, rule.headers);
    // The proxy already answered any `Expect: 100-continue`; passing it on would get a second 100.
    delete headers.expect;
    return new Promise<void>((resolve) => {
      const upstream = httpRequest(
        {
          hostname: this.target.hostname,
          port: this.target.port,
          method: req.method,
          path: req.url,
          headers,
          agent: false,
        },
        (up) => {
          const responseHeaders = withoutHopByHop(up.headers);
          if (rewrite === undefined) {
            res.writeHead(up.statusCode ?? 502, responseHeaders);
            up.pipe(res);
            up.once('end', () => resolve());
            up.once('error', () => resolve());
            return;
          }
          readBody(up)
            .then((raw) => {
              const text = rewrite(raw.toString('utf8'), info);
              delete responseHeaders['content-length'];
              res.writeHead(up.statusCode ?? 502, responseHeaders).end(text);
            })
            .catch((err: unknown) => {
              res
                .writeHead(500, { 'content-type': 'text/plain' })
                .end(`fault proxy: rewrite failed: ${String(err)}`);
            })
            .finally(resolve);
        },
      );
      upstream.once('error', (err) => {
        // Counted as forwarded (it was attempted); the log says how it ended.
        record.outcome = 'upstream-error';
        if (!res.headersSent) {
          res
            .writeHead(502, { 'content-type': 'text/plain' })
            .end(`fault proxy: upstream failed: ${err.message}`);
        } else {
          res.destroy();
        }
        resolve();
      });
      if (body !== undefined) upstream.end(body);
      else req.pipe(upstream);
    });
  }
}

const ENDPOINT_VARIABLE: Record<'efs' | 'ec2' | 'cloudwatch' | 's3', string> = {
  efs: 'AWS_ENDPOINT_URL_EFS',
  ec2: 'AWS_ENDPOINT_URL_EC2',
  cloudwatch: 'AWS_ENDPOINT_URL_CLOUDWATCH',
  s3: 'AWS_ENDPOINT_URL_S3',
};

/**
 * Jest hooks for a test file: starts a proxy in front of the emulator, routes the given services through
 * it (all of them, through AWS_ENDPOINT_URL, when none are given), clears its rules and counts before each
 * test, and stops it after the file. Call after useEmulator().
 */
export function useFaultProxy(
  emulator: { readonly endpoint: string },
  options: { readonly services?: ReadonlyArray<keyof typeof ENDPOINT_VARIABLE> } = {},
): { readonly proxy: FaultProxy } {
  let proxy: FaultProxy | undefined;
  const variables = options.services?.map((s) => ENDPOINT_VARIABLE[s]) ?? ['AWS_ENDPOINT_URL'];
  beforeAll(async () => {
    proxy = await FaultProxy.start({ target: emulator.endpoint });
  });
  beforeEach(() => {
    proxy!.clear();
    proxy!.resetStats();
    for (const name of variables) process.env[name] = proxy!.endpoint;
  });
  afterAll(async () => {
    for (const name of variables) {
      if (name === 'AWS_ENDPOINT_URL') process.env[name] = emulator.endpoint;
      else delete process.env[name];
    }
    await proxy?.stop();
  });
  return {
    get proxy(): FaultProxy {
      if (!proxy) throw new Error('useFaultProxy: the proxy starts in beforeAll; use it inside tests');
      return proxy;
    },
  };
}

function emptyCounters(): {
  total: OperationStats;
  byService: Record<string, OperationStats>;
  byOperation: Record<string, OperationStats>;
} {
  return { total: zero(), byService: {}, byOperation: {} };
}

function zero(): OperationStats {
  return { requests: 0, forwarded: 0, faulted: 0 };
}

function readBody(stream: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    stream.on('data', (c: Buffer) => chunks.push(c));
    stream.once('end', () => resolve(Buffer.concat(chunks)));
    stream.once('error', reject);
  });
}

const HOP_BY_HOP = [
  'connection',
  'keep-alive',
  'transfer-encoding',
  'proxy-connection',
  'upgrade',
  'te',
  'trailer',
];

function withoutHopByHop(headers: IncomingHttpHeaders): OutgoingHttpHeaders {
  const out: OutgoingHttpHeaders = { ...headers };
  for (const h of HOP_BY_HOP) delete out[h];
  return out;
}

function attemptOf(headers: IncomingHttpHeaders): number | undefined {
  const m = /attempt=(\d+)/.exec(String(headers['amz-sdk-request'] ?? ''));
  return m ? Number(m[1]) : undefined;
}

// ---------------------------------------------------------------------------------------------------
// Recognising the service and the operation

const SCOPE_TO_SERVICE: Record<string, ServiceName> = {
  elasticfilesystem: 'efs',
  monitoring: 'cloudwatch',
  ec2: 'ec2',
  s3: 's3',
  s3express: 's3',
};

/** From the SigV4 credential scope (`Credential=AKID/DATE/REGION/SERVICE/aws4_request`), header or presigned query. */
export function serviceOf(headers: IncomingHttpHeaders, url: URL): ServiceName {
  const credential =
    /Credential=([^,\s]+)/.exec(String(headers.authorization ?? ''))?.[1] ??
    url.searchParams.get('X-Amz-Credential') ??
    '';
  const scope = credential.split('/')[3];
  if (scope) return SCOPE_TO_SERVICE[scope] ?? scope;
  // Unsigned requests: guess from the wire shape.
  if (url.pathname.startsWith('/2015-02-01/')) return 'efs';
  if (String(headers['x-amz-target'] ?? '').startsWith('GraniteServiceVersion20100801.')) return 'cloudwatch';
  return 'unknown';
}

/** EFS REST-JSON routes, from the SDK's model: [method, path pattern, operation]; most specific first. */
const EFS_ROUTES: ReadonlyArray<readonly [string, RegExp, string]> = (
  [
    ['POST', '/access-points', 'CreateAccessPoint'],
    ['GET', '/access-points', 'DescribeAccessPoints'],
    ['DELETE', '/access-points/*', 'DeleteAccessPoint'],
    ['GET', '/account-preferences', 'DescribeAccountPreferences'],
    ['PUT', '/account-preferences', 'PutAccountPreferences'],
    ['POST', '/create-tags/*', 'CreateTags'],
    ['POST', '/delete-tags/*', 'DeleteTags'],
    ['GET', '/tags/*', 'DescribeTags'],
    ['GET', '/resource-tags/*', 'ListTagsForResource'],
    ['POST', '/resource-tags/*', 'TagResource'],
    ['DELETE', '/resource-tags/*', 'UntagResource'],
    ['GET', '/file-systems/replication-configurations', 'DescribeReplicationConfigurations'],
    ['POST', '/file-systems', 'CreateFileSystem'],
    ['GET', '/file-systems', 'DescribeFileSystems'],
    ['DELETE', '/file-systems/*', 'DeleteFileSystem'],
    ['PUT', '/file-systems/*', 'UpdateFileSystem'],
    ['GET', '/file-systems/*/backup-policy', 'DescribeBackupPolicy'],
    ['PUT', '/file-systems/*/backup-policy', 'PutBackupPolicy'],
    ['GET', '/file-systems/*/policy', 'DescribeFileSystemPolicy'],
    ['PUT', '/file-systems/*/policy', 'PutFileSystemPolicy'],
    ['DELETE', '/file-systems/*/policy', 'DeleteFileSystemPolicy'],
    ['GET', '/file-systems/*/lifecycle-configuration', 'DescribeLifecycleConfiguration'],
    ['PUT', '/file-systems/*/lifecycle-configuration', 'PutLifecycleConfiguration'],
    ['POST', '/file-systems/*/replication-configuration', 'CreateReplicationConfiguration'],
    ['DELETE', '/file-systems/*/replication-configuration', 'DeleteReplicationConfiguration'],
    ['PUT', '/file-systems/*/protection', 'UpdateFileSystemProtection'],
    ['POST', '/mount-targets', 'CreateMountTarget'],
    ['GET', '/mount-targets', 'DescribeMountTargets'],
    ['DELETE', '/mount-targets/*', 'DeleteMountTarget'],
    ['GET', '/mount-targets/*/security-groups', 'DescribeMountTargetSecurityGroups'],
    ['PUT', '/mount-targets/*/security-groups', 'ModifyMountTargetSecurityGroups'],
  ] as const
).map(
  ([method, path, op]) => [method, new RegExp(`^/2015-02-01${path.replace(/\*/g, '[^/]+')}/?$`), op] as const,
);

export function operationOf(
  service: ServiceName,
  method: string,
  url: URL,
  headers: IncomingHttpHeaders,
  body: Buffer | undefined,
): string {
  const target = headers['x-amz-target'];
  if (typeof target === 'string') return target.slice(target.lastIndexOf('.') + 1); // AWS JSON 1.0/1.1
  const rpcV2 = /\/service\/[^/]+\/operation\/([^/?]+)$/.exec(url.pathname); // Smithy RPC v2 CBOR
  if (rpcV2) return rpcV2[1];
  if (String(headers['content-type'] ?? '').startsWith('application/x-www-form-urlencoded') && body) {
    const action = new URLSearchParams(body.toString('utf8')).get('Action'); // AWS query and EC2 query
    if (action) return action;
  }
  if (service === 'efs') {
    return EFS_ROUTES.find(([m, re]) => m === method && re.test(url.pathname))?.[2] ?? 'Unknown';
  }
  if (service === 's3') return s3OperationOf(method, url, headers);
  if (service === 'batch') return batchOperationOf(method, url.pathname);
  return url.searchParams.get('Action') ?? 'Unknown';
}

/** Batch REST-JSON: `POST /v1/<operation in lower case>` (tags: `/v1/tags/<arn>`). */
const BATCH_OPERATIONS = [
  'CancelJob',
  'DescribeJobDefinitions',
  'DescribeJobQueues',
  'DescribeJobs',
  'DeregisterJobDefinition',
  'ListJobs',
  'RegisterJobDefinition',
  'SubmitJob',
  'TerminateJob',
];

function batchOperationOf(method: string, pathname: string): string {
  if (pathname.startsWith('/v1/tags/')) {
    return { GET: 'ListTagsForResource', POST: 'TagResource', DELETE: 'UntagResource' }[method] ?? 'Unknown';
  }
  const name = /^\/v1\/([a-z]+)$/.exec(pathname)?.[1];
  return BATCH_OPERATIONS.find((op) => op.toLowerCase() === name) ?? 'Unknown';
}

/** S3 REST-XML, path-style addressing (the SDK uses it whenever an endpoint override is set). */
function s3OperationOf(method: string, url: URL, headers: IncomingHttpHeaders): string {
  const q = url.searchParams;
  // The SDK names many operations itself in `x-id`.
  const named = q.get('x-id');
  if (named) return named;
  const [, bucket = '', ...keyParts] = url.pathname.split('/');
  const key = keyParts.join('/');
  const has = (name: string) => q.has(name);
  const subresource = (ops: Record<string, string>, fallback: string) =>
    Object.entries(ops).find(([name]) => has(name))?.[1] ?? fallback;
  if (!bucket) return method === 'GET' ? 'ListBuckets' : 'Unknown';
  if (!key) {
    switch (method) {
      case 'HEAD':
        return 'HeadBucket';
      case 'GET':
        if (q.get('list-type') === '2') return 'ListObjectsV2';
        return subresource(
          {
            session: 'CreateSession',
            versions: 'ListObjectVersions',
            uploads: 'ListMultipartUploads',
            location: 'GetBucketLocation',
            tagging: 'GetBucketTagging',
            lifecycle: 'GetBucketLifecycleConfiguration',
            policy: 'GetBucketPolicy',
            versioning: 'GetBucketVersioning',
          },
          'ListObjects',
        );
      case 'PUT':
        return subresource(
          {
            tagging: 'PutBucketTagging',
            lifecycle: 'PutBucketLifecycleConfiguration',
            policy: 'PutBucketPolicy',
            versioning: 'PutBucketVersioning',
          },
          'CreateBucket',
        );
      case 'DELETE':
        return subresource(
          {
            tagging: 'DeleteBucketTagging',
            lifecycle: 'DeleteBucketLifecycle',
            policy: 'DeleteBucketPolicy',
          },
          'DeleteBucket',
        );
      case 'POST':
        return has('delete') ? 'DeleteObjects' : 'Unknown';
    }
    return 'Unknown';
  }
  switch (method) {
    case 'HEAD':
      return 'HeadObject';
    case 'GET':
      return subresource(
        { uploadId: 'ListParts', tagging: 'GetObjectTagging', attributes: 'GetObjectAttributes' },
        'GetObject',
      );
    case 'PUT':
      if (has('partNumber')) return headers['x-amz-copy-source'] ? 'UploadPartCopy' : 'UploadPart';
      if (has('tagging')) return 'PutObjectTagging';
      return headers['x-amz-copy-source'] ? 'CopyObject' : 'PutObject';
    case 'POST':
      return subresource(
        { uploads: 'CreateMultipartUpload', uploadId: 'CompleteMultipartUpload', restore: 'RestoreObject' },
        'Unknown',
      );
    case 'DELETE':
      return subresource(
        { uploadId: 'AbortMultipartUpload', tagging: 'DeleteObjectTagging' },
        'DeleteObject',
      );
  }
  return 'Unknown';
}

// ---------------------------------------------------------------------------------------------------
// Answering in each service's own error format

interface ServiceError {
  readonly status: number;
  readonly code: string;
  readonly message?: string;
}

function throttlingError(info: RequestInfo): ServiceError {
  switch (info.service) {
    case 'efs':
      return { status: 429, code: 'ThrottlingException', message: 'Rate exceeded' };
    case 'ec2':
      return { status: 503, code: 'RequestLimitExceeded', message: 'Request limit exceeded.' };
    case 's3':
      return { status: 503, code: 'SlowDown', message: 'Please reduce your request rate.' };
    default:
      // CloudWatch and the other query-heritage services say `Throttling`; JSON-only services `ThrottlingException`.
      return protocolOf(info) === 'json' && !queryCompatible(info)
        ? { status: 400, code: 'ThrottlingException', message: 'Rate exceeded' }
        : { status: 400, code: 'Throttling', message: 'Rate exceeded' };
  }
}

function serverError(info: RequestInfo, status: 500 | 503): ServiceError {
  const unavailable = { status: 503, code: info.service === 'ec2' ? 'Unavailable' : 'ServiceUnavailable' };
  if (status === 503) return { ...unavailable, message: 'Service is unavailable. Please try again.' };
  const code =
    info.service === 'efs'
      ? 'InternalServerError'
      : info.service === 'cloudwatch'
        ? 'InternalServiceError'
        : 'InternalError';
  return { status: 500, code, message: 'We encountered an internal error. Please try again.' };
}

type Protocol = 'restJson' | 'json' | 'ec2Query' | 'query' | 'restXml';

function protocolOf(info: RequestInfo): Protocol {
  if (info.service === 's3') return 'restXml';
  if (info.service === 'ec2') return 'ec2Query';
  if (info.headers['x-amz-target'] !== undefined) return 'json';
  if (String(info.headers['content-type'] ?? '').startsWith('application/x-www-form-urlencoded'))
    return 'query';
  return 'restJson';
}

/** Services moved from the query protocol to JSON keep their old error codes in `x-amzn-query-error`. */
function queryCompatible(info: RequestInfo): boolean {
  return info.headers['x-amzn-query-mode'] === 'true';
}

function sendError(res: ServerResponse, info: RequestInfo, error: ServiceError): void {
  const requestId = randomUUID();
  const message = error.message ?? error.code;
  const fault = error.status >= 500 ? 'Receiver' : 'Sender';
  const headers: OutgoingHttpHeaders = { 'x-amzn-requestid': requestId, 'x-amz-request-id': requestId };
  let body: string;
  switch (protocolOf(info)) {
    case 'restJson':
      headers['content-type'] = 'application/json';
      headers['x-amzn-errortype'] = error.code;
      body = JSON.stringify({ ErrorCode: error.code, Message: message });
      break;
    case 'json':
      headers['content-type'] = String(info.headers['content-type'] ?? 'application/x-amz-json-1.0');
      if (queryCompatible(info)) headers['x-amzn-query-error'] = `${error.code};${fault}`;
      body = JSON.stringify({ __type: error.code, message });
      break;
    case 'ec2Query':
      headers['content-type'] = 'text/xml;charset=UTF-8';
      body =
        `<?xml version="1.0" encoding="UTF-8"?>\n<Response><Errors><Error><Code>${xml(error.code)}</Code>` +
        `<Message>${xml(message)}</Message></Error></Errors><RequestID>${requestId}</RequestID></Response>`;
      break;
    case 'query':
      headers['content-type'] = 'text/xml';
      body =
        `<ErrorResponse><Error><Type>${fault}</Type><Code>${xml(error.code)}</Code>` +
        `<Message>${xml(message)}</Message></Error><RequestId>${requestId}</RequestId></ErrorResponse>`;
      break;
    case 'restXml':
      headers['content-type'] = 'application/xml';
      body =
        `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${xml(error.code)}</Code>` +
        `<Message>${xml(message)}</Message><RequestId>${requestId}</RequestId></Error>`;
      break;
  }
  // A HEAD answer has no body; the SDK then classifies by status code alone, as with real S3.
  if (info.method === 'HEAD') body = '';
  headers['content-length'] = Buffer.byteLength(body);
  res.writeHead(error.status, headers).end(body);
}

function xml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}
