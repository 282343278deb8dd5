/**
 * STAND-IN for the AWS APIs the reaper reads and writes, at a scale moto cannot hold: one in-process HTTP server
 * that the real SDK clients talk to (AWS_ENDPOINT_URL), answering what the reaper calls, in each service's wire
 * protocol, at the documented page sizes:
 *
 * - EFS (REST-JSON): DescribeFileSystems (at most 100 a page, Marker/NextMarker; or one by FileSystemId),
 *   DescribeMountTargets, DeleteMountTarget, DeleteFileSystem (409 FileSystemInUse while a mount target exists);
 *   a deleted file system shows `deleting` for `deletingMs`, then is gone;
 * - CloudWatch (JSON 1.0): GetMetricData, at most 500 queries a call, one Sum per query over the window;
 * - EC2 (EC2 query, XML): DescribeInstances on the `instance-id` (at most 200 values, FilterLimitExceeded) and
 *   tag filters, MaxResults up to 1,000 a page;
 * - Batch (REST-JSON): DescribeJobs, at most 100 ids a call;
 * - Resource Groups Tagging (JSON 1.1): TagResources / UntagResources, at most 20 ARNs a call.
 *
 * moto holds all of this, but not at 100,000 file systems in any useful time (docs/reaper.md, figures): one
 * GetMetricData of 500 queries over 10,000 file systems' datapoints took it 48 s.
 *
 * Each service has a token bucket (RATE_LIMITS: what AWS documents, and what the project assumes where AWS
 * publishes nothing). On the wall clock, a request over it gets the service's throttling error, as AWS answers,
 * and the SDK's adaptive retries back off. On a VirtualClock, a request over it waits instead, by moving the
 * clock to when its token arrives: a simulation in which the reaper runs at once while its time passes as
 * the rate limits make it pass. Every answered and throttled request is counted by operation.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Clock } from '../../../core/common/clock';
import { operationOf, serviceOf } from '../../support/fault-proxy';

/** Requests a second and bucket size of one service's token bucket. */
export interface RateLimit {
  readonly ratePerSecond: number;
  readonly burst: number;
}

/**
 * What the stand-in enforces, per service (all of that service's operations share one bucket):
 * - efs: unpublished — EFS documents no API rate; peers found ~10 requests/s (docs/reaper.md), as bench/reaper.ts
 *   assumes for its deletion figures;
 * - ec2: the non-mutating actions' bucket of 100 tokens refilled at 20 a second
 *   (https://docs.aws.amazon.com/ec2/latest/devguide/ec2-api-throttling.html);
 * - cloudwatch: GetMetricData 50 transactions a second
 *   (https://aws.amazon.com/premiumsupport/knowledge-center/cloudwatch-getmetricdata-api);
 * - batch: 50 transactions a second for each account
 *   (https://repost.aws/knowledge-center/aws-batch-requests-error);
 * - tagging: unpublished; assumed as EFS's.
 */
export const RATE_LIMITS: Readonly<Record<StandInService, RateLimit>> = {
  efs: { ratePerSecond: 10, burst: 10 },
  ec2: { ratePerSecond: 20, burst: 100 },
  cloudwatch: { ratePerSecond: 50, burst: 50 },
  batch: { ratePerSecond: 50, burst: 50 },
  tagging: { ratePerSecond: 10, burst: 10 },
};

type StandInService = 'efs' | 'ec2' | 'cloudwatch' | 'batch' | 'tagging';

const DESCRIBE_FILE_SYSTEMS_MAX = 100;
const METRIC_QUERIES_MAX = 500;
const INSTANCE_FILTER_VALUES_MAX = 200;
const INSTANCES_PAGE_MAX = 1000;
const JOB_IDS_MAX = 100;
const TAGGING_ARNS_MAX = 20;
const ACCOUNT = '123456789012';
const REGION = 'us-east-1';

/** A clock the stand-in moves: rate-limit waits and the reaper's sleeps pass at once. */
export class VirtualClock implements Clock {
  constructor(private time: number) {}
  now(): number {
    return this.time;
  }
  advance(ms: number): void {
    this.time += Math.max(0, ms);
  }
  /** Resolves on the next turn of the event loop with the time moved on (an aborted signal skips the wait). */
  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    if (!signal?.aborted) this.advance(ms);
    return new Promise((resolve) => setImmediate(resolve));
  }
}

export interface FileSystemSpec {
  readonly tags: Readonly<Record<string, string>>;
  readonly creationToken: string;
  /** Epoch milliseconds. */
  readonly createdAt: number;
  readonly lifeCycleState?: string;
  /** One Zone unless null. @default 'us-east-1a' */
  readonly availabilityZoneName?: string | null;
  readonly mountTargets?: number;
}

interface MountTarget {
  readonly id: string;
  state: 'available' | 'deleting';
  goneAt?: number;
}

interface FileSystem {
  readonly id: string;
  readonly seq: number;
  readonly spec: FileSystemSpec;
  readonly tags: Map<string, string>;
  lifeCycleState: string;
  mountTargets: MountTarget[];
  goneAt?: number;
  gone?: boolean;
}

interface Job {
  readonly status: string;
  readonly stoppedAt?: number;
}

export interface StandInOptions {
  /** The stand-in's time; a VirtualClock turns throttling into waiting. @default the wall clock */
  readonly clock?: Clock;
  /** How long a deleted file system shows `deleting` before it is gone. @default 0 */
  readonly deletingMs?: number;
  /** How long a deleted mount target shows `deleting` before it is gone. @default 0 */
  readonly mountTargetDeletingMs?: number;
  /** Per-service limits; `false` for none. @default RATE_LIMITS */
  readonly rateLimits?: Readonly<Record<StandInService, RateLimit>> | false;
}

interface Bucket extends RateLimit {
  tokens: number;
  at: number;
}

class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/** An AWS-shaped HTTP answer: status, content type, extra headers and body. */
interface Answer {
  readonly status?: number;
  readonly type: string;
  readonly headers?: Readonly<Record<string, string>>;
  readonly body: string;
}

const json = (value: unknown, type = 'application/json'): Answer => ({ type, body: JSON.stringify(value) });

export class AwsStandIn {
  private readonly fileSystems = new Map<string, FileSystem>();
  private readonly mountTargetOwners = new Map<string, FileSystem>();
  /** Creation order: the order of the listing (EFS leaves it unspecified; this one is stable). */
  private order: FileSystem[] = [];
  private removed = 0;
  private readonly instances = new Map<string, { state: string; tags: Map<string, string> }>();
  private readonly connections = new Map<string, number>();
  private readonly jobs = new Map<string, Job>();
  private readonly undeletable = new Set<string>();
  private readonly buckets = new Map<string, Bucket>();
  private readonly counts = new Map<string, { answered: number; throttled: number }>();
  private nextSeq = 0;
  private nextInstance = 0;
  /** DeleteFileSystem or DeleteMountTarget calls on what was already deleting or gone: deletions done twice. */
  repeatDeletions = 0;

  private constructor(
    private readonly server: Server,
    private readonly clock: Clock,
    private readonly options: StandInOptions,
  ) {}

  static async start(options: StandInOptions = {}): Promise<AwsStandIn> {
    const server = createServer();
    const standIn = new AwsStandIn(
      server,
      options.clock ?? { now: Date.now, sleep: async () => {} },
      options,
    );
    server.on('request', (req, res) => void standIn.handle(req, res));
    server.keepAliveTimeout = 60_000;
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return standIn;
  }

  get endpoint(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  stop(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  // ---- the world ------------------------------------------------------------------------------------------

  addFileSystem(spec: FileSystemSpec): string {
    const seq = this.nextSeq++;
    const id = `fs-${seq.toString(16).padStart(17, '0')}`;
    const fs: FileSystem = {
      id,
      seq,
      spec,
      tags: new Map(Object.entries(spec.tags)),
      lifeCycleState: spec.lifeCycleState ?? 'available',
      mountTargets: Array.from({ length: spec.mountTargets ?? 0 }, (_, i) => ({
        id: `fsmt-${seq.toString(16).padStart(15, '0')}${i}`,
        state: 'available' as const,
      })),
    };
    this.fileSystems.set(id, fs);
    for (const mt of fs.mountTargets) this.mountTargetOwners.set(mt.id, fs);
    this.order.push(fs);
    return id;
  }

  /** An EC2 instance in `state`, tagged with `tags`. */
  addInstance(state: string, tags: Readonly<Record<string, string>> = {}): string {
    const id = `i-${(this.nextInstance++).toString(16).padStart(17, '0')}`;
    this.instances.set(id, { state, tags: new Map(Object.entries(tags)) });
    return id;
  }

  /** Sum of ClientConnections over any window for this file system; none set: no datapoints. */
  setConnections(fileSystemId: string, sum: number): void {
    this.connections.set(fileSystemId, sum);
  }

  addJob(jobId: string, job: Job): void {
    this.jobs.set(jobId, job);
  }

  /** DeleteMountTarget and DeleteFileSystem on this file system answer AccessDeniedException (403), for good. */
  denyDeletion(fileSystemId: string): void {
    this.undeletable.add(fileSystemId);
  }

  /** The file system as the stand-in has it now (undefined once gone). */
  fileSystem(id: string): { lifeCycleState: string; tags: ReadonlyMap<string, string> } | undefined {
    const fs = this.live(id);
    return fs && { lifeCycleState: fs.lifeCycleState, tags: fs.tags };
  }

  /** File systems ever added. */
  get created(): number {
    return this.nextSeq;
  }

  /** Answered and throttled requests by `service:Operation` since the last reset. */
  calls(): Record<string, { answered: number; throttled: number }> {
    return Object.fromEntries([...this.counts].map(([k, v]) => [k, { ...v }]));
  }

  resetCalls(): void {
    this.counts.clear();
  }

  // ---- HTTP -----------------------------------------------------------------------------------------------

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks);
    const url = new URL(req.url ?? '/', 'http://stand-in');
    const scope = serviceOf(req.headers, url);
    const service = (scope === 'batch' ? 'batch' : scope) as StandInService;
    const operation = operationOf(scope, req.method ?? 'GET', url, req.headers, body);
    const key = `${service}:${operation}`;
    const count = this.counts.get(key) ?? { answered: 0, throttled: 0 };
    this.counts.set(key, count);
    let answer: Answer;
    try {
      if (!this.takeToken(service)) {
        count.throttled++;
        throw throttling(service);
      }
      count.answered++;
      answer = this.answer(service, operation, url, body.toString('utf8'), req.method ?? 'GET');
    } catch (err) {
      if (!(err instanceof ApiError)) throw err;
      answer = errorAnswer(service, err, req.headers['x-amzn-query-mode'] === 'true');
    }
    res.writeHead(answer.status ?? 200, {
      ...answer.headers,
      'content-type': answer.type,
      'content-length': Buffer.byteLength(answer.body),
      'x-amzn-requestid': randomUUID(),
    });
    res.end(answer.body);
  }

  /** One token from the service's bucket; on a VirtualClock, waits for it by moving the clock. */
  private takeToken(service: StandInService): boolean {
    const limits = this.options.rateLimits ?? RATE_LIMITS;
    if (limits === false || limits[service] === undefined) return true;
    const now = this.clock.now();
    const bucket = this.buckets.get(service) ?? {
      ...limits[service],
      tokens: limits[service].burst,
      at: now,
    };
    this.buckets.set(service, bucket);
    bucket.tokens = Math.min(bucket.burst, bucket.tokens + ((now - bucket.at) / 1000) * bucket.ratePerSecond);
    bucket.at = now;
    if (bucket.tokens < 1) {
      if (!(this.clock instanceof VirtualClock)) return false;
      const waitMs = ((1 - bucket.tokens) / bucket.ratePerSecond) * 1000;
      this.clock.advance(waitMs);
      bucket.tokens = 1;
      bucket.at = this.clock.now();
    }
    bucket.tokens -= 1;
    return true;
  }

  private answer(service: StandInService, operation: string, url: URL, body: string, method: string): Answer {
    switch (`${service}:${operation}`) {
      case 'efs:DescribeFileSystems':
        return json(this.describeFileSystems(url.searchParams));
      case 'efs:DescribeMountTargets':
        return json(this.describeMountTargets(url.searchParams.get('FileSystemId') ?? ''));
      case 'efs:DeleteMountTarget':
        this.deleteMountTarget(decodeURIComponent(url.pathname.split('/').pop() ?? ''));
        return { status: 204, type: 'application/json', body: '' };
      case 'efs:DeleteFileSystem':
        this.deleteFileSystem(decodeURIComponent(url.pathname.split('/').pop() ?? ''));
        return { status: 204, type: 'application/json', body: '' };
      case 'cloudwatch:GetMetricData':
        return json(this.getMetricData(JSON.parse(body) as MetricDataRequest), 'application/x-amz-json-1.0');
      case 'ec2:DescribeInstances':
        return { type: 'text/xml;charset=UTF-8', body: this.describeInstances(new URLSearchParams(body)) };
      case 'batch:DescribeJobs':
        return json(this.describeJobs((JSON.parse(body) as { jobs?: string[] }).jobs ?? []));
      case 'tagging:TagResources':
      case 'tagging:UntagResources':
        return json(
          this.tagResources(operation, JSON.parse(body) as TaggingRequest),
          'application/x-amz-json-1.1',
        );
      default:
        throw new ApiError(
          400,
          'UnknownOperationException',
          `the stand-in does not answer ${method} ${operation}`,
        );
    }
  }

  // ---- EFS ------------------------------------------------------------------------------------------------

  /** The file system unless it is gone; a deletion that has run its course is finished here. */
  private live(id: string): FileSystem | undefined {
    const fs = this.fileSystems.get(id);
    if (fs === undefined) return undefined;
    fs.mountTargets = fs.mountTargets.filter((mt) => mt.goneAt === undefined || mt.goneAt > this.clock.now());
    if (fs.goneAt !== undefined && fs.goneAt <= this.clock.now()) {
      this.fileSystems.delete(id);
      fs.gone = true;
      this.removed++;
      return undefined;
    }
    return fs;
  }

  private describeFileSystems(query: URLSearchParams) {
    const id = query.get('FileSystemId');
    if (id !== null) {
      const fs = this.live(id);
      if (fs === undefined)
        throw new ApiError(404, 'FileSystemNotFound', `File system '${id}' does not exist.`);
      return { FileSystems: [this.description(fs)] };
    }
    const maxItems = Math.min(
      Number(query.get('MaxItems') ?? DESCRIBE_FILE_SYSTEMS_MAX),
      DESCRIBE_FILE_SYSTEMS_MAX,
    );
    const marker = query.get('Marker');
    const startSeq = marker === null ? 0 : Number(Buffer.from(marker, 'base64url').toString());
    if (this.removed > this.order.length / 2) {
      // Between pages only: a walk through `order` must not see it change under it.
      this.order = this.order.filter((f) => !f.gone);
      this.removed = 0;
    }
    const page: FileSystem[] = [];
    let next: FileSystem | undefined;
    // `order` holds ascending seqs (gone ones skipped): binary search for the marker, then walk.
    let lo = 0;
    for (let hi = this.order.length; lo < hi;) {
      const mid = (lo + hi) >> 1;
      if (this.order[mid].seq < startSeq) lo = mid + 1;
      else hi = mid;
    }
    for (let i = lo; i < this.order.length; i++) {
      const fs = this.order[i];
      if (fs.gone || this.live(fs.id) === undefined) continue;
      if (page.length === maxItems) {
        next = fs;
        break;
      }
      page.push(fs);
    }
    return {
      ...(marker === null ? {} : { Marker: marker }),
      FileSystems: page.map((fs) => this.description(fs)),
      ...(next ? { NextMarker: Buffer.from(String(next.seq)).toString('base64url') } : {}),
    };
  }

  /** A DescribeFileSystems entry with every field EFS returns (its size is what the reaper parses). */
  private description(fs: FileSystem) {
    const az = fs.spec.availabilityZoneName === undefined ? 'us-east-1a' : fs.spec.availabilityZoneName;
    return {
      OwnerId: ACCOUNT,
      CreationToken: fs.spec.creationToken,
      FileSystemId: fs.id,
      FileSystemArn: `arn:aws:elasticfilesystem:${REGION}:${ACCOUNT}:file-system/${fs.id}`,
      CreationTime: fs.spec.createdAt / 1000,
      LifeCycleState: fs.lifeCycleState,
      Name: fs.tags.get('Name'),
      NumberOfMountTargets: fs.mountTargets.length,
      SizeInBytes: { Value: 6144, ValueInIA: 0, ValueInStandard: 6144, ValueInArchive: 0 },
      PerformanceMode: 'generalPurpose',
      Encrypted: true,
      KmsKeyId: `arn:aws:kms:${REGION}:${ACCOUNT}:key/${randomUUIDOf(fs.seq)}`,
      ThroughputMode: 'bursting',
      ...(az === null ? {} : { AvailabilityZoneName: az, AvailabilityZoneId: 'use1-az1' }),
      Tags: [...fs.tags].map(([Key, Value]) => ({ Key, Value })),
      FileSystemProtection: { ReplicationOverwriteProtection: 'ENABLED' },
    };
  }

  private describeMountTargets(fileSystemId: string) {
    const fs = this.live(fileSystemId);
    if (fs === undefined) {
      throw new ApiError(404, 'FileSystemNotFound', `File system '${fileSystemId}' does not exist.`);
    }
    return {
      MountTargets: fs.mountTargets.map((mt) => ({
        OwnerId: ACCOUNT,
        MountTargetId: mt.id,
        FileSystemId: fs.id,
        SubnetId: 'subnet-0123456789abcdef0',
        LifeCycleState: mt.state,
        IpAddress: '10.0.0.10',
        NetworkInterfaceId: 'eni-0123456789abcdef0',
        AvailabilityZoneId: 'use1-az1',
        AvailabilityZoneName: 'us-east-1a',
        VpcId: 'vpc-0123456789abcdef0',
      })),
    };
  }

  private deleteMountTarget(mountTargetId: string): void {
    const fs = this.mountTargetOwners.get(mountTargetId);
    if (fs !== undefined) this.refuseIfDenied(fs.id);
    const mt = (fs && this.live(fs.id))?.mountTargets.find((m) => m.id === mountTargetId);
    if (mt === undefined)
      throw new ApiError(404, 'MountTargetNotFound', `Mount target '${mountTargetId}' does not exist.`);
    if (mt.state === 'deleting') {
      this.repeatDeletions++;
      throw new ApiError(409, 'IncorrectMountTargetState', `Mount target '${mountTargetId}' is deleting.`);
    }
    mt.state = 'deleting';
    mt.goneAt = this.clock.now() + (this.options.mountTargetDeletingMs ?? 0);
  }

  private refuseIfDenied(fileSystemId: string): void {
    if (this.undeletable.has(fileSystemId)) {
      throw new ApiError(403, 'AccessDeniedException', `not authorized to delete ${fileSystemId}`);
    }
  }

  private deleteFileSystem(id: string): void {
    this.refuseIfDenied(id);
    const fs = this.live(id);
    if (fs === undefined) {
      this.repeatDeletions++;
      throw new ApiError(404, 'FileSystemNotFound', `File system '${id}' does not exist.`);
    }
    if (fs.lifeCycleState === 'deleting') {
      this.repeatDeletions++;
      return;
    }
    if (fs.mountTargets.length > 0) {
      throw new ApiError(409, 'FileSystemInUse', `File system '${id}' has mount targets.`);
    }
    fs.lifeCycleState = 'deleting';
    fs.goneAt = this.clock.now() + (this.options.deletingMs ?? 0);
  }

  // ---- CloudWatch -----------------------------------------------------------------------------------------

  private getMetricData(request: MetricDataRequest) {
    const queries = request.MetricDataQueries ?? [];
    if (queries.length > METRIC_QUERIES_MAX) {
      throw new ApiError(
        400,
        'ValidationError',
        `The collection MetricDataQueries must not have a size greater than ${METRIC_QUERIES_MAX}.`,
      );
    }
    return {
      MetricDataResults: queries.map((q) => {
        const id = q.MetricStat?.Metric?.Dimensions?.find((d) => d.Name === 'FileSystemId')?.Value ?? '';
        const sum = this.connections.get(id);
        return {
          Id: q.Id,
          Label: 'ClientConnections',
          Timestamps: sum === undefined ? [] : [request.StartTime],
          Values: sum === undefined ? [] : [sum],
          StatusCode: 'Complete',
        };
      }),
      Messages: [],
    };
  }

  // ---- EC2 ------------------------------------------------------------------------------------------------

  private describeInstances(params: URLSearchParams): string {
    const filters: { name: string; values: string[] }[] = [];
    for (let n = 1; params.has(`Filter.${n}.Name`); n++) {
      const values: string[] = [];
      for (let v = 1; params.has(`Filter.${n}.Value.${v}`); v++)
        values.push(params.get(`Filter.${n}.Value.${v}`)!);
      if (values.length > INSTANCE_FILTER_VALUES_MAX) {
        throw new ApiError(
          400,
          'FilterLimitExceeded',
          `The maximum number of filter values specified on a single call is ${INSTANCE_FILTER_VALUES_MAX}`,
        );
      }
      filters.push({ name: params.get(`Filter.${n}.Name`)!, values });
    }
    const matches = (id: string, tags: Map<string, string>) =>
      filters.every(({ name, values }) =>
        name === 'instance-id'
          ? values.includes(id)
          : name.startsWith('tag:') && values.includes(tags.get(name.slice(4)) ?? '\0'),
      );
    const pageSize = Math.min(Number(params.get('MaxResults') ?? INSTANCES_PAGE_MAX), INSTANCES_PAGE_MAX);
    const start = Number(params.get('NextToken') ?? 0);
    const all = [...this.instances].filter(([id, i]) => matches(id, i.tags));
    const page = all.slice(start, start + pageSize);
    const items = page
      .map(
        ([id, i]) =>
          `<item><reservationId>r-${id.slice(2)}</reservationId><ownerId>${ACCOUNT}</ownerId><instancesSet><item>` +
          `<instanceId>${id}</instanceId><instanceState><code>16</code><name>${i.state}</name></instanceState>` +
          `<instanceType>m7i.large</instanceType><tagSet>${[...i.tags].map(([k, v]) => `<item><key>${k}</key><value>${v}</value></item>`).join('')}</tagSet>` +
          `</item></instancesSet></item>`,
      )
      .join('');
    const nextToken = start + pageSize < all.length ? `<nextToken>${start + pageSize}</nextToken>` : '';
    return (
      `<?xml version="1.0" encoding="UTF-8"?>\n<DescribeInstancesResponse xmlns="http://ec2.amazonaws.com/doc/2016-11-15/">` +
      `<requestId>${randomUUID()}</requestId><reservationSet>${items}</reservationSet>${nextToken}</DescribeInstancesResponse>`
    );
  }

  // ---- Batch and tagging ----------------------------------------------------------------------------------

  private describeJobs(ids: readonly string[]) {
    if (ids.length > JOB_IDS_MAX) {
      throw new ApiError(400, 'ClientException', `at most ${JOB_IDS_MAX} job ids a DescribeJobs call`);
    }
    return {
      jobs: ids.flatMap((jobId) => {
        const job = this.jobs.get(jobId);
        return job === undefined
          ? []
          : [{ jobId, jobName: jobId, jobQueue: 'queue', jobDefinition: 'def', ...job }];
      }),
    };
  }

  private tagResources(operation: string, request: TaggingRequest) {
    const arns = request.ResourceARNList ?? [];
    if (arns.length > TAGGING_ARNS_MAX) {
      throw new ApiError(400, 'InvalidParameterException', `at most ${TAGGING_ARNS_MAX} ARNs a call`);
    }
    const FailedResourcesMap: Record<
      string,
      { StatusCode: number; ErrorCode: string; ErrorMessage: string }
    > = {};
    for (const arn of arns) {
      const fs = this.live(arn.slice(arn.lastIndexOf('/') + 1));
      if (fs === undefined) {
        FailedResourcesMap[arn] = {
          StatusCode: 404,
          ErrorCode: 'InvalidParameterException',
          ErrorMessage: 'not found',
        };
      } else if (operation === 'TagResources') {
        for (const [k, v] of Object.entries(request.Tags ?? {})) fs.tags.set(k, v);
      } else {
        for (const k of request.TagKeys ?? []) fs.tags.delete(k);
      }
    }
    return { FailedResourcesMap };
  }
}

interface MetricDataRequest {
  readonly StartTime?: number;
  readonly MetricDataQueries?: {
    readonly Id?: string;
    readonly MetricStat?: { readonly Metric?: { readonly Dimensions?: { Name?: string; Value?: string }[] } };
  }[];
}

interface TaggingRequest {
  readonly ResourceARNList?: string[];
  readonly Tags?: Record<string, string>;
  readonly TagKeys?: string[];
}

/** A stable, well-formed UUID for a number (the KMS key id of a description). */
function randomUUIDOf(n: number): string {
  const hex = n.toString(16).padStart(32, '0');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

function throttling(service: StandInService): ApiError {
  switch (service) {
    case 'efs':
      return new ApiError(429, 'ThrottlingException', 'Rate exceeded');
    case 'ec2':
      return new ApiError(503, 'RequestLimitExceeded', 'Request limit exceeded.');
    case 'batch':
      return new ApiError(429, 'TooManyRequestsException', 'Too Many Requests');
    case 'cloudwatch':
      return new ApiError(400, 'Throttling', 'Rate exceeded');
    case 'tagging':
      return new ApiError(400, 'ThrottledException', 'Rate exceeded');
  }
}

/** An error in the service's own protocol, so the SDK classifies it as it would AWS's. */
function errorAnswer(service: StandInService, err: ApiError, queryCompatible: boolean): Answer {
  if (service === 'ec2') {
    return {
      status: err.status,
      type: 'text/xml;charset=UTF-8',
      body:
        `<?xml version="1.0" encoding="UTF-8"?>\n<Response><Errors><Error><Code>${err.code}</Code>` +
        `<Message>${err.message}</Message></Error></Errors><RequestID>${randomUUID()}</RequestID></Response>`,
    };
  }
  if (service === 'cloudwatch' || service === 'tagging') {
    // JSON protocols name the error in `__type`; CloudWatch's query-compatible mode also in a header.
    const type = service === 'cloudwatch' ? 'application/x-amz-json-1.0' : 'application/x-amz-json-1.1';
    const fault = err.status >= 500 ? 'Receiver' : 'Sender';
    const headers = queryCompatible ? { 'x-amzn-query-error': `${err.code};${fault}` } : undefined;
    return { ...json({ __type: err.code, message: err.message }, type), status: err.status, headers };
  }
  // REST-JSON (EFS, Batch): the code in `x-amzn-errortype`.
  return {
    status: err.status,
    type: 'application/json',
    headers: { 'x-amzn-errortype': err.code },
    body: JSON.stringify({ ErrorCode: err.code, Message: err.message, message: err.message }),
  };
}

/**
 * Jest hooks for a test file on the stand-in: the function returned starts one as every SDK client's endpoint
 * (AWS_ENDPOINT_URL), and the last one started is stopped after each test.
 */
export function useStandIn(): (options?: StandInOptions) => Promise<AwsStandIn> {
  let running: AwsStandIn | undefined;
  afterEach(async () => {
    delete process.env.AWS_ENDPOINT_URL;
    await running?.stop();
    running = undefined;
  });
  return async (options = {}) => {
    running = await AwsStandIn.start(options);
    process.env.AWS_ENDPOINT_URL = running.endpoint;
    return running;
  };
}
