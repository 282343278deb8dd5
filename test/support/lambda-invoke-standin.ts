/**
 * STAND-IN for Lambda's Invoke API (the pinned moto runs function code only in Docker, which this machine lacks):
 * an HTTP server on loopback that answers `POST /2015-03-31/functions/{name}/invocations` as Lambda does for a
 * synchronous invocation, by calling a handler in this process: its result is the 200 answer's JSON; a handler that
 * throws gives 200 with `X-Amz-Function-Error: Unhandled` and Lambda's error document. Point
 * AWS_ENDPOINT_URL_LAMBDA at `endpoint`; signatures are not checked. The sandbox plugs in the deployed bundle
 * (scripts/sandbox/reaper.ts invokeDeployedHandler), the tests the core function with emulator clients.
 *
 *   const lambda = await LambdaInvokeStandIn.start((name, payload) => handler(payload));
 *   process.env.AWS_ENDPOINT_URL_LAMBDA = lambda.endpoint;
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';

/** Runs one invocation of the named function with the decoded payload. */
export type InvokeHandler = (functionName: string, payload: unknown) => Promise<unknown>;

/** One invocation as the stand-in received it. */
export interface InvocationRecord {
  readonly functionName: string;
  readonly invocationType: string;
  readonly payload: unknown;
}

/** Lambda's synchronous payload limit: a larger request is refused, as Lambda refuses it. */
const MAX_PAYLOAD_BYTES = 6 * 1024 * 1024;
const INVOKE_PATH = /^\/2015-03-31\/functions\/([^/]+)\/invocations$/;

export class LambdaInvokeStandIn {
  readonly invocations: InvocationRecord[] = [];

  private constructor(
    private readonly server: Server,
    private readonly handler: InvokeHandler,
  ) {}

  static async start(handler: InvokeHandler): Promise<LambdaInvokeStandIn> {
    const server = createServer();
    const standIn = new LambdaInvokeStandIn(server, handler);
    server.on('request', (req: IncomingMessage, res: ServerResponse) => void standIn.handle(req, res));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    return standIn;
  }

  /** http://127.0.0.1:PORT: set it as AWS_ENDPOINT_URL_LAMBDA. */
  get endpoint(): string {
    const address = this.server.address();
    if (address === null || typeof address === 'string') throw new Error('Lambda stand-in is not listening');
    return `http://127.0.0.1:${address.port}`;
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const match = INVOKE_PATH.exec(new URL(req.url ?? '/', 'http://x').pathname);
    if (req.method !== 'POST' || match === null) {
      return send(res, 404, {
        message: `the Lambda stand-in answers Invoke only (${req.method} ${req.url})`,
      });
    }
    const body = await readBody(req);
    if (body === undefined) return send(res, 413, { Type: 'User', message: 'RequestTooLargeException' });
    const functionName = decodeURIComponent(match[1]);
    const invocationType = String(req.headers['x-amz-invocation-type'] ?? 'RequestResponse');
    let payload: unknown;
    try {
      payload = body.length === 0 ? {} : JSON.parse(body.toString('utf8'));
    } catch {
      return send(res, 400, { Type: 'User', message: 'InvalidRequestContentException: payload is not JSON' });
    }
    this.invocations.push({ functionName, invocationType, payload });
    try {
      const result = await this.handler(functionName, payload);
      send(res, 200, result ?? null);
    } catch (err) {
      const e = err as Error;
      send(
        res,
        200,
        { errorType: e.name ?? 'Error', errorMessage: e.message ?? String(err), trace: [] },
        {
          'x-amz-function-error': 'Unhandled',
        },
      );
    }
  }
}

/** The request body, or undefined past Lambda's payload limit. */
async function readBody(req: IncomingMessage): Promise<Buffer | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_PAYLOAD_BYTES) return undefined;
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

function send(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  res.writeHead(status, {
    'content-type': 'application/json',
    'x-amz-executed-version': '$LATEST',
    ...headers,
  });
  res.end(JSON.stringify(body));
}
