/**
 * A data-loader worker's reads on a thread of its own, made with blocking calls, as a PyTorch DataLoader's
 * worker process makes them: N workers have N reads in flight. Node's async fs calls would all share libuv's
 * thread pool instead (4 threads unless UV_THREADPOOL_SIZE was in the environment before it started), so that
 * 16 "workers" would never have more than 4 reads in flight.
 */
import { Worker } from 'node:worker_threads';

/** Bytes per read: Mountpoint's FUSE reads are at most 1 MiB. */
const READ_BYTES = 1024 * 1024;

/**
 * The thread's code, as source text: the agent ships as one bundled file, so the thread cannot load a module
 * of its own, and a compiled function's text is not self-contained (tsx's transform adds calls to helpers it
 * defines outside). It answers one request at a time: read a file whole; or open, read the next chunk, close.
 */
const THREAD_SOURCE = `
const { parentPort } = require('node:worker_threads');
const { closeSync, openSync, readSync } = require('node:fs');
const scratch = Buffer.allocUnsafe(${READ_BYTES});
function answer(request) {
  switch (request.op) {
    case 'readFile': {
      const fd = openSync(request.path, 'r');
      try {
        let bytes = 0;
        for (let n; (n = readSync(fd, scratch, 0, scratch.length, null)) > 0; ) bytes += n;
        return [{ bytes }];
      } finally {
        closeSync(fd);
      }
    }
    case 'open':
      return [{ fd: openSync(request.path, 'r') }];
    case 'read': {
      const chunk = new ArrayBuffer(${READ_BYTES});
      const bytes = readSync(request.fd, new Uint8Array(chunk), 0, chunk.byteLength, null);
      return [{ chunk, bytes }, [chunk]];
    }
    case 'close':
      closeSync(request.fd);
      return [{}];
  }
  throw new Error('unknown request ' + request.op);
}
parentPort.on('message', (request) => {
  let reply;
  try {
    reply = answer(request);
  } catch (e) {
    reply = [{ error: { message: e.message, code: e.code } }];
  }
  parentPort.postMessage(...reply);
});
`;

type Request =
  | { readonly op: 'readFile' | 'open'; readonly path: string }
  | { readonly op: 'read' | 'close'; readonly fd: number };

interface Reply {
  readonly bytes?: number;
  readonly fd?: number;
  readonly chunk?: ArrayBuffer;
  readonly error?: { readonly message: string; readonly code?: string };
}

/** One worker's reader: one request at a time, as one worker has one read in flight. */
export class ReadThread {
  private readonly thread = new Worker(THREAD_SOURCE, { eval: true });
  private pending?: { resolve: (reply: Reply) => void; reject: (error: Error) => void };
  private failure?: Error;

  constructor() {
    this.thread.on('message', (reply: Reply) => {
      const pending = this.pending;
      this.pending = undefined;
      if (reply.error)
        pending?.reject(Object.assign(new Error(reply.error.message), { code: reply.error.code }));
      else pending?.resolve(reply);
    });
    this.thread.on('error', (error) => this.fail(error));
    this.thread.on('exit', (code) => this.fail(new Error(`the read thread ended (exit code ${code})`)));
  }

  /** Reads the file at `path` to its end; resolves to its size in bytes. */
  async readFile(path: string): Promise<number> {
    return (await this.request({ op: 'readFile', path })).bytes!;
  }

  /** The file at `path` from start to end, a read at a time; the file is closed when the caller stops. */
  async *chunks(path: string): AsyncGenerator<Buffer> {
    const { fd } = await this.request({ op: 'open', path });
    try {
      for (;;) {
        const { chunk, bytes } = await this.request({ op: 'read', fd: fd! });
        if (!bytes) return;
        yield Buffer.from(chunk!, 0, bytes);
      }
    } finally {
      await this.request({ op: 'close', fd: fd! });
    }
  }

  /** Ends the thread (after its read in flight, if any). */
  async close(): Promise<void> {
    await this.thread.terminate();
  }

  private request(request: Request): Promise<Reply> {
    if (this.failure) return Promise.reject(this.failure);
    if (this.pending) return Promise.reject(new Error('a ReadThread takes one request at a time'));
    return new Promise((resolve, reject) => {
      this.pending = { resolve, reject };
      this.thread.postMessage(request);
    });
  }

  private fail(error: Error): void {
    this.failure ??= error;
    this.pending?.reject(error);
    this.pending = undefined;
  }
}
