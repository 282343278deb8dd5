/**
 * The Amazon S3 Connector for PyTorch as a peer of the Mountpoint rows in bench/training-scenarios.ts: each
 * worker of core/measure/train is a Python process of its own (bench/s3-connector-worker.py) with one
 * `MountpointS3Client`, reading a sample with one GET to its end, as the connector's map-style dataset does in
 * a DataLoader worker process. The client is `s3torchconnectorclient` (pinned in scripts/setup.sh), from the
 * project's virtualenv; it needs no torch.
 */
import { type ChildProcessWithoutNullStreams, execFileSync, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { SampleReader } from '../core/measure/train';
import { REPO_ROOT } from '../test/support/moto';

const PYTHON = join(REPO_ROOT, '.venv', 'bin', 'python');
const WORKER = join(__dirname, 's3-connector-worker.py');

export interface ConnectorTarget {
  readonly region: string;
  /** The S3 endpoint, addressed path-style (the rig's proxy in front of the emulator). */
  readonly endpoint: string;
  readonly bucket: string;
}

/** The connector client's version, or why it cannot run here (with the fix). */
export function connectorVersion(): { version: string } | { missing: string } {
  const fix = 'run scripts/setup.sh (it installs the pinned s3torchconnectorclient into .venv)';
  if (!existsSync(PYTHON)) return { missing: `${PYTHON} not found: ${fix}` };
  try {
    const version = execFileSync(
      PYTHON,
      ['-c', 'import importlib.metadata as m; print(m.version("s3torchconnectorclient"))'],
      { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] },
    ).trim();
    return { version };
  } catch {
    return { missing: `s3torchconnectorclient is not in .venv: ${fix}` };
  }
}

/** One worker process; its samples are object keys, one GET in flight at a time. */
class ConnectorWorker implements SampleReader {
  private readonly child: ChildProcessWithoutNullStreams;
  private readonly answers: AsyncIterator<string>;
  private stderr = '';

  constructor(target: ConnectorTarget) {
    this.child = spawn(PYTHON, [WORKER, target.region, target.endpoint, target.bucket], {
      // Python's own stdio buffering aside, nothing else between the bench and the client.
      env: { ...process.env, PYTHONUNBUFFERED: '1' },
    });
    this.child.stderr.on(
      'data',
      (chunk: Buffer) => (this.stderr = (this.stderr + chunk.toString()).slice(-4000)),
    );
    this.answers = createInterface({ input: this.child.stdout })[Symbol.asyncIterator]();
  }

  readSample = async (key: string): Promise<number> => {
    this.child.stdin.write(`${key}\n`);
    const answer = await this.answers.next();
    if (answer.done)
      throw new Error(`the S3 connector worker ended (exit ${this.child.exitCode}): ${this.stderr.trim()}`);
    if (answer.value.startsWith('!'))
      throw new Error(`s3torchconnectorclient get_object ${key}: ${answer.value.slice(1)}`);
    return Number(answer.value);
  };

  close = async (): Promise<void> => {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = new Promise((resolve) => this.child.once('exit', resolve));
    // End of input ends its loop after the GET in flight; a worker of a failed run is stopped.
    this.child.stdin.end();
    await exited;
  };
}

/** Opens one connector worker process per bench worker. */
export const connectorReader = (target: ConnectorTarget) => (): SampleReader => new ConnectorWorker(target);
