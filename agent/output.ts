/** How commands write their results: `--json` as one JSON document on stdout; phrases several commands share. */
import {
  closeSync,
  constants as fsConstants,
  fstatSync,
  ftruncateSync,
  openSync,
  rmSync,
  writeSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import { type S3Count } from '../core/agent';
import { MIB, UsageError } from '../core/common';
import { makeDirectories } from '../core/system';

/** Bytes in MiB (2^20) to one decimal, without the unit: `12.3` for `12.3 MiB`. */
export const mib = (bytes: number) => (bytes / MIB).toFixed(1);

/** Bytes in MB (10^6, as throughput is quoted) to one decimal, without the unit: `12.3` for `12.3 MB`. */
export const mb = (bytes: number) => (bytes / 1e6).toFixed(1);

/** Prints `value` as the one pretty-printed JSON document a `--json` run writes on stdout. */
export function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

/** `1234 S3 requests (GetObject 1200, HeadObject 34), 0 cache hits`. */
export function s3Phrase(s3: S3Count): string {
  const ops = Object.entries(s3.byOperation ?? {})
    .sort(([, a], [, b]) => b - a)
    .map(([op, n]) => `${op} ${n}`);
  return (
    `${s3.requests} S3 requests` +
    (ops.length ? ` (${ops.join(', ')})` : '') +
    (s3.errors ? `, ${s3.errors} failed` : '') +
    (s3.cacheHits !== undefined ? `, ${s3.cacheHits} cache hits` : '')
  );
}

/**
 * A file a command was asked to write its result to (`--summary`, `--chart`), opened before the work starts:
 * a destination that cannot be written is a usage error (exit 2, naming the flag and the path) before any
 * AWS call or long run, never a failure found after it. The file is written through the descriptor opened
 * then, so a path re-pointed meanwhile (a symlink put in its place) changes nothing; a symlink already there is
 * refused, not followed (mountfleet often runs as root). A write that fails throws: no command reports success
 * without the output it was asked for.
 */
export class OutputFile {
  private constructor(
    private readonly flag: string,
    readonly path: string,
    private fd: number | undefined,
    /** This open created the file: discard() removes it again. */
    private readonly created: boolean,
  ) {}

  static open(flag: string, path: string): OutputFile {
    const { O_WRONLY, O_CREAT, O_EXCL, O_NOFOLLOW, O_NONBLOCK } = fsConstants;
    // O_NONBLOCK: a FIFO without a reader is refused at once (ENXIO) instead of blocking the open.
    const flags = O_WRONLY | O_NOFOLLOW | O_NONBLOCK;
    let fd: number;
    let created = true;
    try {
      try {
        fd = openSync(path, flags | O_CREAT | O_EXCL, 0o644);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
        created = false;
        fd = openSync(path, flags);
      }
    } catch (err) {
      throw new UsageError(`${flag} ${path}: ${whyNotWritable(err as NodeJS.ErrnoException, path)}`, {
        cause: err,
      });
    }
    if (!fstatSync(fd).isFile()) {
      closeSync(fd);
      throw new UsageError(`${flag} ${path}: not a regular file: give the path of a file to write`);
    }
    return new OutputFile(flag, path, fd, created);
  }

  /**
   * Files `names` in the directory `dir` a flag names (`--out DIR`), the directory made when missing: all of them
   * opened, or none (a usage error naming the flag).
   */
  static openAllIn(flag: string, dir: string, names: readonly string[]): OutputFile[] {
    try {
      makeDirectories(dir);
    } catch (err) {
      throw new UsageError(
        `${flag} ${dir} cannot be created (${(err as NodeJS.ErrnoException).code ?? (err as Error).message}): give a writable directory`,
        { cause: err },
      );
    }
    const opened: OutputFile[] = [];
    try {
      for (const name of names) opened.push(OutputFile.open(flag, join(dir, name)));
      return opened;
    } catch (err) {
      for (const file of opened) file.discard();
      throw err;
    }
  }

  /** Replaces the file's content; throws an Error naming the flag and the path when it cannot. */
  write(text: string): void {
    if (this.fd === undefined) throw new Error(`${this.flag} ${this.path}: already written or discarded`);
    const fd = this.fd;
    this.fd = undefined;
    try {
      ftruncateSync(fd);
      // A short write (a file system filling up) is carried on until it fails or everything is written.
      const bytes = Buffer.from(text);
      for (let done = 0; done < bytes.length;) done += writeSync(fd, bytes, done, bytes.length - done, done);
    } catch (err) {
      throw new Error(`${this.flag} ${this.path} was not written: ${(err as Error).message}`, {
        cause: err,
      });
    } finally {
      closeSync(fd);
    }
  }

  /** The command ends without a result: closes the file, and removes it when this open created it. */
  discard(): void {
    if (this.fd === undefined) return;
    closeSync(this.fd);
    this.fd = undefined;
    if (this.created) rmSync(this.path, { force: true });
  }
}

function whyNotWritable(err: NodeJS.ErrnoException, path: string): string {
  switch (err.code) {
    case 'EISDIR':
      return 'is a directory: give the path of a file to write';
    case 'ELOOP':
      return "is a symbolic link: give the file's own path";
    case 'ENOENT':
    case 'ENOTDIR':
      return `${dirname(path)} is not a directory: create it or give another path`;
    case 'ENXIO':
      return 'is a FIFO no process reads: give the path of a file to write';
    default:
      return `cannot be written (${err.code ?? err.message}): give a path on a writable file system`;
  }
}
