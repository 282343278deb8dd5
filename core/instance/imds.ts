/**
 * What the agent reads from the instance metadata service (IMDSv2 only, short timeouts): who and where the
 * instance is, whether EC2 has scheduled a Spot interruption, and whether Auto Scaling is terminating it.
 * The endpoint follows the SDK's `AWS_EC2_METADATA_SERVICE_ENDPOINT`, so tests point it at
 * test/support/imds.ts.
 *
 * Our own small client rather than the SDK's `MetadataService`, which (3.1163) throws on any non-200 answer
 * without reading its body: the socket then stays busy until IMDS closes it, so every "no notice yet" 404
 * of a poll left a connection open and kept a finished process alive for seconds. It also fetches a new
 * token for every read, and after one token-fetch timeout stops fetching tokens for good (with IMDSv1
 * disabled, every later read fails) — fatal for a watcher that polls for the lifetime of an instance.
 * This client reads every body to its end, keeps one keep-alive connection (idle sockets do not hold the
 * process open), reuses its token until shortly before it expires and fetches a new one on a 401.
 *
 * Neither it nor `MetadataService` looks at `AWS_EC2_METADATA_DISABLED` (only the SDK's credential
 * provider does): these reads are explicit, not a fallback.
 */
import { Agent, request as httpRequest, type IncomingMessage } from 'node:http';
import { MountfleetError, PollTimeout, pollUntil, type PollResult } from '../common';

export interface InstanceIdentity {
  readonly instanceId: string;
  readonly instanceType: string;
  readonly region: string;
  readonly availabilityZone: string;
  /** e.g. `use1-az4`: the same physical zone in every account, which the Express cache buckets are named by. */
  readonly availabilityZoneId: string;
}

interface SpotInstanceAction {
  readonly action: 'terminate' | 'stop' | 'hibernate';
  /** When EC2 will act (about two minutes after the notice appears). */
  readonly time: Date;
}

interface MetadataServiceOptions {
  /** Overrides AWS_EC2_METADATA_SERVICE_ENDPOINT. */
  readonly endpoint?: string;
  /** Per HTTP request, token fetch included. @default 1000 */
  readonly timeoutMs?: number;
  /** Retries after the first try of a read (404s and other 4xx answers are never retried). @default 2 */
  readonly retries?: number;
  /**
   * Keep retrying a read, with jittered backoff, until this much time has passed since its first try
   * (instead of a fixed number of `retries`): for reads a run cannot start without, when many processes
   * start at once and IMDS answers some of them late.
   */
  readonly budgetMs?: number;
  /** Aborting ends a read at once (with an error). */
  readonly signal?: AbortSignal;
}

/** What every IMDS read goes through. */
export interface InstanceMetadataReader {
  /** The text at PATH (e.g. `latest/meta-data/instance-id`), or undefined when IMDS answers 404. */
  get(path: string): Promise<string | undefined>;
}

/** An IMDS answer other than 200 or 404 (after retries), or the endpoint not answering at all. */
class MetadataServiceError extends MountfleetError {
  override readonly name = 'MetadataServiceError';

  constructor(
    message: string,
    readonly statusCode?: number,
  ) {
    super(message);
  }
}

const DEFAULT_ENDPOINT = 'http://169.254.169.254';
const TOKEN_TTL_SECONDS = 21600;
/** A token is replaced this long before it expires, so a read never races its expiry. */
const TOKEN_REFRESH_MARGIN_MS = 60_000;
const RETRY_BACKOFF_MS = 100;
/**
 * The most an answer may be: the largest read here, the identity document, is under 1 KiB (user data, up to
 * 16 KiB, is never read). Bounds what a wrong endpoint (AWS_EC2_METADATA_SERVICE_ENDPOINT) can make the agent
 * hold within a request's timeout.
 */
const MAX_ANSWER_BYTES = 64 * 1024;

/** Network errors, timeouts (no status), throttling and server errors are retried; other answers are final. */
const retryable = (status: number | undefined) => status === undefined || status === 429 || status >= 500;

interface Answer {
  readonly status: number;
  readonly body: string;
}

/** An IMDSv2-only client (no fallback to unauthenticated IMDSv1) that gives up within seconds. */
export class InstanceMetadataClient implements InstanceMetadataReader {
  private readonly base: URL;
  private readonly timeoutMs: number;
  private readonly retries: number;
  private readonly budgetMs?: number;
  private readonly signal?: AbortSignal;
  // Keep-alive: a watcher polling every few seconds reuses one connection. Node unreferences idle pooled
  // sockets, so they never keep a finished process alive.
  private readonly agent = new Agent({ keepAlive: true, maxSockets: 2 });
  private token?: { value: string; refreshAt: number };
  private pendingToken?: Promise<string>;

  constructor(options: MetadataServiceOptions = {}) {
    this.base = new URL(
      options.endpoint ?? process.env.AWS_EC2_METADATA_SERVICE_ENDPOINT ?? DEFAULT_ENDPOINT,
    );
    this.timeoutMs = options.timeoutMs ?? 1000;
    this.retries = options.retries ?? 2;
    this.budgetMs = options.budgetMs;
    this.signal = options.signal;
  }

  /**
   * The text at `path`, or undefined on a 404. Tries again (pollUntil) after a network error, a timeout, a
   * 429 or a 5xx: `retries` times 100 ms apart, or with jittered backoff until `budgetMs` has passed; an
   * abort ends the tries at once. Then throws MetadataServiceError with the last failure.
   */
  async get(path: string): Promise<string | undefined> {
    const started = Date.now();
    let attempts = 0;
    let lastError: Error | undefined;
    const fixed = this.budgetMs === undefined;
    const tryOnce = async (): Promise<PollResult<{ readonly body?: string } | 'out of tries'>> => {
      attempts++;
      let answer: Answer;
      try {
        answer = await this.authorizedGet(path);
      } catch (err) {
        // A token refused for good (403: IMDS turned off for this instance) is not worth retrying.
        if (err instanceof MetadataServiceError && !retryable(err.statusCode)) throw err;
        lastError = err as Error;
        return fixed && attempts > this.retries ? { value: 'out of tries' } : { state: 'failing' };
      }
      if (answer.status === 200) return { value: { body: answer.body } };
      if (answer.status === 404) return { value: {} };
      lastError = new MetadataServiceError(`IMDS answered ${answer.status} for ${path}`, answer.status);
      if (!retryable(answer.status)) throw lastError;
      return fixed && attempts > this.retries ? { value: 'out of tries' } : { state: 'failing' };
    };
    try {
      const read = await pollUntil(tryOnce, {
        signal: this.signal,
        timeoutMs: this.budgetMs ?? Infinity,
        initialPollMs: RETRY_BACKOFF_MS,
        maxPollMs: fixed ? RETRY_BACKOFF_MS : 2000,
        // A fixed number of retries waits the whole RETRY_BACKOFF_MS between them.
        ...(fixed ? { random: () => 1 } : {}),
      });
      if (read !== 'out of tries') return read.body;
    } catch (err) {
      const stopped = this.signal?.aborted === true && err === this.signal.reason;
      if (!(err instanceof PollTimeout) && !stopped) throw err;
    }
    throw this.gaveUp(path, attempts, started, lastError);
  }

  /** The error after the last try: how many, how long, the bound, and what failed last. */
  private gaveUp(path: string, attempts: number, started: number, lastError?: Error): MetadataServiceError {
    const seconds = ((Date.now() - started) / 1000).toFixed(1);
    const bound =
      this.budgetMs === undefined
        ? `${this.retries} retries`
        : `budget ${Math.round(this.budgetMs / 1000)} s, ${this.timeoutMs / 1000} s per attempt`;
    return new MetadataServiceError(
      `cannot read ${path} from IMDS at ${this.base.origin}: ${attempts} attempt(s) in ${seconds} s (${bound})` +
        `${this.signal?.aborted ? ', stopped' : ''}: ${lastError?.message ?? 'interrupted'}`,
      lastError instanceof MetadataServiceError ? lastError.statusCode : undefined,
    );
  }

  private async authorizedGet(path: string): Promise<Answer> {
    const answer = await this.send('GET', path, { 'x-aws-ec2-metadata-token': await this.sessionToken() });
    if (answer.status !== 401) return answer;
    // The token expired early or IMDS forgot it: one fresh token, at once.
    this.token = undefined;
    return this.send('GET', path, { 'x-aws-ec2-metadata-token': await this.sessionToken() });
  }

  /** Closes the pooled connection (the process can exit without it; this is for tidy tests). */
  close(): void {
    this.agent.destroy();
  }

  private sessionToken(): Promise<string> {
    if (this.token && Date.now() < this.token.refreshAt) return Promise.resolve(this.token.value);
    // Concurrent reads share one token request.
    this.pendingToken ??= this.fetchToken().finally(() => (this.pendingToken = undefined));
    return this.pendingToken;
  }

  private async fetchToken(): Promise<string> {
    const answer = await this.send('PUT', 'latest/api/token', {
      'x-aws-ec2-metadata-token-ttl-seconds': String(TOKEN_TTL_SECONDS),
    });
    if (answer.status !== 200 || answer.body === '') {
      throw new MetadataServiceError(`IMDS answered ${answer.status} to the token request`, answer.status);
    }
    this.token = {
      value: answer.body,
      refreshAt: Date.now() + TOKEN_TTL_SECONDS * 1000 - TOKEN_REFRESH_MARGIN_MS,
    };
    return answer.body;
  }

  /** One HTTP exchange, its body always read to the end, bounded by the timeout as a whole. */
  private send(method: 'GET' | 'PUT', path: string, headers: Record<string, string>): Promise<Answer> {
    const url = new URL(path, this.base.href.endsWith('/') ? this.base : `${this.base.href}/`);
    return new Promise<Answer>((resolve, reject) => {
      const req = httpRequest(url, { method, headers, agent: this.agent, signal: this.signal });
      const timer = setTimeout(
        () => req.destroy(new Error(`no answer within ${this.timeoutMs} ms`)),
        this.timeoutMs,
      );
      const fail = (err: Error) => {
        clearTimeout(timer);
        reject(err);
      };
      req.once('error', fail);
      req.once('response', (res: IncomingMessage) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > MAX_ANSWER_BYTES)
            req.destroy(new Error(`IMDS answer to ${path} is over ${MAX_ANSWER_BYTES} bytes`));
          else chunks.push(chunk);
        });
        res.once('error', fail);
        res.once('end', () => {
          clearTimeout(timer);
          resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') });
        });
      });
      req.end();
    });
  }
}

/** The client every read below uses by default. */
export function metadataService(options: MetadataServiceOptions = {}): InstanceMetadataClient {
  return new InstanceMetadataClient(options);
}

const IDENTITY_DOCUMENT = 'latest/dynamic/instance-identity/document';
const AVAILABILITY_ZONE_ID = 'latest/meta-data/placement/availability-zone-id';
const SPOT_INSTANCE_ACTION = 'latest/meta-data/spot/instance-action';
const TARGET_LIFECYCLE_STATE = 'latest/meta-data/autoscaling/target-lifecycle-state';

async function required(imds: InstanceMetadataReader, path: string): Promise<string> {
  const text = await imds.get(path);
  if (text === undefined) throw new MetadataServiceError(`IMDS has no ${path}`, 404);
  return text;
}

/** Two reads: the identity document, plus the AZ ID, which the document does not carry. */
export async function readInstanceIdentity(
  imds: InstanceMetadataReader = metadataService(),
): Promise<InstanceIdentity> {
  const [documentText, availabilityZoneId] = await Promise.all([
    required(imds, IDENTITY_DOCUMENT),
    required(imds, AVAILABILITY_ZONE_ID),
  ]);
  const document = JSON.parse(documentText) as Record<string, unknown>;
  const field = (name: string): string => {
    const value = document[name];
    if (typeof value !== 'string' || value === '') {
      throw new Error(`instance identity document has no ${name}`);
    }
    return value;
  };
  return {
    instanceId: field('instanceId'),
    instanceType: field('instanceType'),
    region: field('region'),
    availabilityZone: field('availabilityZone'),
    availabilityZoneId: availabilityZoneId.trim(),
  };
}

/** The pending Spot interruption notice, or undefined when there is none (IMDS answers 404). */
export async function readSpotInstanceAction(
  imds: InstanceMetadataReader = metadataService(),
): Promise<SpotInstanceAction | undefined> {
  const text = await imds.get(SPOT_INSTANCE_ACTION);
  if (text === undefined) return undefined;
  const notice = JSON.parse(text) as { action?: unknown; time?: unknown };
  const time = new Date(String(notice.time));
  if (!['terminate', 'stop', 'hibernate'].includes(String(notice.action)) || Number.isNaN(time.getTime())) {
    throw new Error(`unexpected spot/instance-action: ${text}`);
  }
  return { action: notice.action as SpotInstanceAction['action'], time };
}

/**
 * The Auto Scaling state the instance is moving to (`InService`, `Terminated`, `Detached`, `Standby`,
 * `Warmed:*`), or undefined when it is not in an Auto Scaling group (IMDS answers 404).
 */
export async function readTargetLifecycleState(
  imds: InstanceMetadataReader = metadataService(),
): Promise<string | undefined> {
  return (await imds.get(TARGET_LIFECYCLE_STATE))?.trim() || undefined;
}
