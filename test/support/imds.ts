/**
 * An IMDSv2 stand-in (instance metadata service) on a loopback port, for the agent's instance-side code:
 *
 *   const imds = await ImdsStandIn.start({ instanceType: 'g5.xlarge', availabilityZoneId: 'use1-az6' });
 *   process.env.AWS_EC2_METADATA_SERVICE_ENDPOINT = imds.endpoint;
 *   imds.scheduleSpotInterruption({ action: 'terminate', time: new Date(Date.now() + 120_000) });
 *   await imds.stop();
 *
 * It behaves like an instance launched with `HttpTokens: required`: a session token from
 * `PUT /latest/api/token` is needed for every read (401 without), and tokens expire after their TTL.
 */
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

export interface InstanceMetadata {
  readonly instanceId: string;
  readonly instanceType: string;
  readonly region: string;
  readonly availabilityZone: string;
  readonly availabilityZoneId: string;
  readonly accountId: string;
  readonly imageId: string;
  readonly privateIp: string;
  readonly architecture: string;
}

export const DEFAULT_INSTANCE_METADATA: InstanceMetadata = {
  instanceId: 'i-0123456789abcdef0',
  instanceType: 'm6i.2xlarge',
  region: 'us-east-1',
  availabilityZone: 'us-east-1a',
  availabilityZoneId: 'use1-az4',
  accountId: '123456789012',
  imageId: 'ami-0123456789abcdef0',
  privateIp: '10.0.1.23',
  architecture: 'x86_64',
};

export type SpotAction = 'terminate' | 'stop' | 'hibernate';

export interface ImdsRequestRecord {
  readonly method: string;
  readonly path: string;
  readonly status: number;
}

export interface ImdsStandInOptions extends Partial<InstanceMetadata> {
  /** Port to listen on (loopback only). @default a free port */
  readonly port?: number;
}

const MAX_TOKEN_TTL_SECONDS = 21600;

export class ImdsStandIn {
  private metadata: InstanceMetadata;
  private spotAction: { action: SpotAction; time: Date } | undefined;
  private targetLifecycleState: string | undefined;
  private readonly tokens = new Map<string, number>(); // token -> expiry (ms since epoch)
  private readonly log: ImdsRequestRecord[] = [];
  private readonly sockets = new Set<Socket>();
  private delayMs = 0;

  private constructor(
    private readonly server: Server,
    metadata: InstanceMetadata,
  ) {
    this.metadata = metadata;
  }

  static async start(options: ImdsStandInOptions = {}): Promise<ImdsStandIn> {
    const { port, ...values } = options;
    const server = createServer();
    const imds = new ImdsStandIn(server, { ...DEFAULT_INSTANCE_METADATA, ...values });
    server.on('request', (req: IncomingMessage, res: ServerResponse) => imds.handle(req, res));
    server.on('connection', (socket: Socket) => {
      imds.sockets.add(socket);
      socket.once('close', () => imds.sockets.delete(socket));
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port ?? 0, '127.0.0.1', () => resolve());
    });
    return imds;
  }

  /** http://127.0.0.1:PORT: set it as AWS_EC2_METADATA_SERVICE_ENDPOINT. */
  get endpoint(): string {
    const address = this.server.address();
    if (address === null || typeof address === 'string') throw new Error('IMDS stand-in is not listening');
    return `http://127.0.0.1:${address.port}`;
  }

  /** Changes served values from now on. */
  set(values: Partial<InstanceMetadata>): void {
    this.metadata = { ...this.metadata, ...values };
  }

  get values(): InstanceMetadata {
    return this.metadata;
  }

  /** From now on `spot/instance-action` (and `spot/termination-time` for terminate) answer with this notice. */
  scheduleSpotInterruption(notice: { action: SpotAction; time: Date | string }): void {
    this.spotAction = { action: notice.action, time: new Date(notice.time) };
  }

  cancelSpotInterruption(): void {
    this.spotAction = undefined;
  }

  /**
   * From now on `autoscaling/target-lifecycle-state` answers this (`InService`, `Terminated`, ...);
   * undefined (the start) answers 404, as for an instance outside any Auto Scaling group.
   */
  setTargetLifecycleState(state: string | undefined): void {
    this.targetLifecycleState = state;
  }

  /** Client connections open right now (a client that leaks sockets shows up here). */
  openConnections(): number {
    return this.sockets.size;
  }

  /** Answers every request this much later (0 to stop), to test callers' timeouts. */
  setDelay(ms: number): void {
    this.delayMs = ms;
  }

  /** Invalidates every issued token, as an expiry would. */
  expireTokens(): void {
    this.tokens.clear();
  }

  /** Requests answered so far, oldest first. */
  requests(): readonly ImdsRequestRecord[] {
    return [...this.log];
  }

  async stop(): Promise<void> {
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    for (const socket of this.sockets) socket.destroy();
    await closed;
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    // Like the real service, tolerate the `//latest/...` that MetadataService builds from a bare endpoint.
    // (not through `new URL`, which would read `//latest` as a host name).
    const path = (req.url ?? '/').split('?')[0].replace(/\/{2,}/g, '/');
    const answer = () => {
      const { status, body, contentType } = this.route(req, path);
      this.log.push({ method: req.method ?? 'GET', path, status });
      res
        .writeHead(status, { 'content-type': contentType, 'content-length': Buffer.byteLength(body) })
        .end(body);
    };
    req.resume();
    if (this.delayMs > 0) setTimeout(answer, this.delayMs).unref();
    else answer();
  }

  private route(req: IncomingMessage, path: string): { status: number; body: string; contentType: string } {
    const text = (status: number, body = '') => ({ status, body, contentType: 'text/plain' });
    if (path === '/latest/api/token') {
      if (req.method !== 'PUT') return text(405);
      const ttl = Number(req.headers['x-aws-ec2-metadata-token-ttl-seconds']);
      if (!Number.isInteger(ttl) || ttl < 1 || ttl > MAX_TOKEN_TTL_SECONDS) return text(400);
      const token = randomBytes(32).toString('base64url');
      this.tokens.set(token, Date.now() + ttl * 1000);
      return text(200, token);
    }
    if (req.method !== 'GET') return text(405);
    const token = req.headers['x-aws-ec2-metadata-token'];
    const expiry = typeof token === 'string' ? this.tokens.get(token) : undefined;
    if (expiry === undefined || expiry < Date.now()) return text(401);
    const value = this.read(path.replace(/^\/latest\//, ''));
    if (value === undefined) return text(404);
    return typeof value === 'string'
      ? text(200, value)
      : { status: 200, body: JSON.stringify(value, null, 2), contentType: 'application/json' };
  }

  private read(path: string): string | object | undefined {
    const m = this.metadata;
    const spot = this.spotAction;
    const time = spot?.time.toISOString().replace(/\.\d{3}Z$/, 'Z');
    switch (path) {
      case 'meta-data/':
        return [
          'ami-id',
          'instance-id',
          'instance-type',
          'local-ipv4',
          'placement/',
          ...(spot ? ['spot/'] : []),
        ].join('\n');
      case 'meta-data/ami-id':
        return m.imageId;
      case 'meta-data/instance-id':
        return m.instanceId;
      case 'meta-data/instance-type':
        return m.instanceType;
      case 'meta-data/local-ipv4':
        return m.privateIp;
      case 'meta-data/placement/':
        return ['availability-zone', 'availability-zone-id', 'region'].join('\n');
      case 'meta-data/placement/region':
        return m.region;
      case 'meta-data/placement/availability-zone':
        return m.availabilityZone;
      case 'meta-data/placement/availability-zone-id':
        return m.availabilityZoneId;
      case 'meta-data/spot/instance-action':
        return spot ? { action: spot.action, time } : undefined;
      case 'meta-data/autoscaling/target-lifecycle-state':
        return this.targetLifecycleState;
      case 'meta-data/spot/termination-time':
        return spot?.action === 'terminate' ? time : undefined;
      case 'dynamic/instance-identity/document':
        return {
          accountId: m.accountId,
          architecture: m.architecture,
          availabilityZone: m.availabilityZone,
          imageId: m.imageId,
          instanceId: m.instanceId,
          instanceType: m.instanceType,
          pendingTime: '2026-01-01T00:00:00Z',
          privateIp: m.privateIp,
          region: m.region,
          version: '2017-09-30',
        };
    }
    return undefined;
  }
}
