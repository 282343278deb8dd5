/**
 * bench/training-scenarios.ts's peers part: the loaders a training user picks between, on the same samples in
 * the same shuffled order, with the same workers, batch size and step time, against the same emulator behind
 * the same per-request delay. The Amazon S3 Connector for PyTorch (one GET per sample, no cache: its client in
 * a process per worker, bench/s3-connector.ts), Mountpoint's defaults, mountfleet's profile (the agent's local
 * cache) and a fresh instance of a fleet whose zone's Express cache another instance warmed.
 *
 * Each peer reads two epochs with the loader alone (step 0: how fast it can feed, samples/s and S3 requests per
 * epoch), then one more at the pace of the accelerator of AWS's data-loading benchmark (about 138 samples/s:
 * the share of time that accelerator would wait for data); Mountpoint's defaults, which keep nothing, epoch 1.
 */
import { ListObjectsV2Command } from '@aws-sdk/client-s3';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { s3Client } from '../core/aws/clients';
import { benchTrain, type EpochResult, type SampleReader } from '../core/measure/train';
import { findDataSet, type DataSet } from '../core/measure/train-data';
import type { FaultProxy } from '../test/support/fault-proxy';
import type { MountProfile, MountRig } from './mount-rig';
import { connectorReader, connectorVersion } from './s3-connector';

export interface PeersSetting {
  readonly rig: MountRig;
  readonly proxy: FaultProxy;
  /** The emulator's process: its CPU is the rig's, not a loader's. */
  readonly motoPid: number;
  readonly bucket: string;
  readonly prefix: string;
  readonly profiles: {
    readonly defaults: MountProfile;
    readonly tuned: MountProfile;
    readonly express: MountProfile;
  };
  /** Warms the zone's Express cache from another instance (`mountfleet warm`), once. */
  readonly warmExpress: () => Promise<void>;
  readonly workers: number;
  readonly batchSize: number;
  readonly prefetch: number;
  /** The accelerator's pace for the last epoch: samples it takes per second. */
  readonly acceleratorSamplesPerSecond: number;
  readonly say: (line: string) => void;
}

/** One epoch of one peer. */
export interface PeerRow {
  readonly peer: string;
  readonly epoch: number;
  /** Loader alone (step 0), or at the accelerator's pace. */
  readonly paced: boolean;
  readonly samples: number;
  readonly samplesPerSecond: number;
  readonly dataWaitShare: number;
  /** The consumer's longest wait for a batch: at an epoch's start, the first batch's reads. */
  readonly longestWaitMs: number;
  readonly seconds: number;
  readonly s3Requests: number;
  readonly s3ByOperation: Readonly<Record<string, number>>;
}

/** Where one peer's CPU went, over its three epochs (mount and stop included): on this machine, CPU is a limit. */
export interface PeerCpu {
  readonly peer: string;
  /** Samples read over its epochs. */
  readonly samples: number;
  /** Seconds of CPU of the emulator (moto): the rig's. */
  readonly emulator: number;
  /** Seconds of CPU of everything else: the bench (with its fault proxy) and the loader (workers, Mountpoint). */
  readonly loaderAndProxy: number;
  readonly wallSeconds: number;
}

export interface PeersReport {
  readonly connector: string;
  readonly stepMs: number;
  readonly rows: readonly PeerRow[];
  readonly cpu: readonly PeerCpu[];
  readonly goals: readonly { readonly goal: string; readonly value: string; readonly met: boolean }[];
}

const PEERS = {
  connector: 'S3 Connector for PyTorch',
  defaults: "Mountpoint's defaults",
  tuned: "mountfleet's profile (local cache)",
  express: 'mountfleet, fresh instance, warm Express cache',
} as const;

/** The proxy's S3 requests, in all and by operation: a counter for benchTrain (and the demo part). */
export function s3Counter(proxy: FaultProxy) {
  return () => {
    const byOperation = Object.fromEntries(
      Object.entries(proxy.stats().byOperation)
        .filter(([key]) => key.startsWith('s3:'))
        .map(([key, v]) => [key.slice(3), v.requests]),
    );
    return { requests: proxy.count('s3'), byOperation };
  };
}

/** Requests by operation as a line, e.g. "GetObject 12, HeadObject 3" ("none" when there are none). */
export const operationsText = (byOperation: Readonly<Record<string, number>>): string =>
  Object.entries(byOperation)
    .filter(([, n]) => n > 0)
    .map(([op, n]) => `${op} ${n}`)
    .join(', ') || 'none';

const CLOCK_TICKS = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }));
const CORES = availableParallelism();

/**
 * CPU seconds of a process from /proc: its own, and (`withReaped`) its children's it has waited for — the
 * connector's workers and Mountpoint, once ended, are in the bench's.
 */
function cpuSeconds(pid: number | 'self', withReaped: boolean): number {
  // Fields after the command's closing parenthesis: utime is the 12th, stime, cutime, cstime follow.
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  const ticks = fields.slice(11, withReaped ? 15 : 13).reduce((a, b) => a + Number(b), 0);
  return ticks / CLOCK_TICKS;
}

/** Runs one peer, and measures the CPU it took on both sides of the emulator. */
async function withCpu(s: PeersSetting, peer: string, run: () => Promise<PeerRow[]>) {
  const before = {
    emulator: cpuSeconds(s.motoPid, false),
    self: cpuSeconds('self', true),
    wall: performance.now(),
  };
  const rows = await run();
  const cpu: PeerCpu = {
    peer,
    samples: rows.reduce((a, r) => a + r.samples, 0),
    emulator: cpuSeconds(s.motoPid, false) - before.emulator,
    loaderAndProxy: cpuSeconds('self', true) - before.self,
    wallSeconds: (performance.now() - before.wall) / 1000,
  };
  return { rows, cpu };
}

/** The sample keys under the prefix, listed as the connector's `from_prefix` lists them, in path order. */
async function listKeys(bucket: string, prefix: string): Promise<string[]> {
  const s3 = s3Client({ maxAttempts: 3 });
  const keys: string[] = [];
  try {
    let token: string | undefined;
    do {
      const page = await s3.send(
        new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix, ContinuationToken: token }),
      );
      for (const o of page.Contents ?? []) if (o.Key && !o.Key.endsWith('/')) keys.push(o.Key);
      token = page.NextContinuationToken;
    } while (token);
  } finally {
    s3.destroy();
  }
  // The order listFilePaths gives the mounted peers (one folder: path order is key order), so that the seeded
  // shuffle of every epoch hands every peer the same samples in the same order.
  return keys.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

/** Two epochs with the loader alone, then one at the accelerator's pace, on the same workers and data. */
async function measure(
  s: PeersSetting,
  peer: string,
  stepMs: number | 'epoch 1 only',
  dataSet: DataSet,
  sampleReader?: () => SampleReader,
): Promise<PeerRow[]> {
  const common = {
    dataSet,
    batchSize: s.batchSize,
    workers: s.workers,
    prefetch: s.prefetch,
    s3Counter: s3Counter(s.proxy),
    ...(sampleReader ? { sampleReader } : {}),
  };
  const loaderOnly = await benchTrain({ ...common, stepMs: 0, epochs: stepMs === 'epoch 1 only' ? 1 : 2 });
  const paced = stepMs === 'epoch 1 only' ? [] : await benchTrain({ ...common, stepMs, epochs: 1 });
  const row = (r: EpochResult, epoch: number, isPaced: boolean): PeerRow => ({
    peer,
    epoch,
    paced: isPaced,
    samples: r.samples,
    samplesPerSecond: r.samplesPerSecond,
    dataWaitShare: r.dataWaitShare,
    longestWaitMs: r.waitMs.max,
    seconds: r.seconds,
    s3Requests: r.s3?.requests ?? 0,
    s3ByOperation: r.s3?.byOperation ?? {},
  });
  const rows = [...loaderOnly.map((r) => row(r, r.epoch, false)), ...paced.map((r) => row(r, 3, true))];
  for (const r of rows)
    s.say(
      `${peer}, epoch ${r.epoch}${r.paced ? ' (paced)' : ''}: ${r.samplesPerSecond.toFixed(0)} samples/s, ` +
        `S3 ${operationsText(r.s3ByOperation)}`,
    );
  return rows;
}

/** Runs the four peers in turn and judges the goals. */
export async function runPeers(s: PeersSetting): Promise<PeersReport> {
  const connector = connectorVersion();
  if ('missing' in connector) throw new Error(`the S3 Connector for PyTorch peer: ${connector.missing}`);
  const stepMs = Math.round((s.batchSize * 1000) / s.acceleratorSamplesPerSecond);
  s.say(
    `peers: ${s.workers} workers, batch ${s.batchSize}, prefetch ${s.prefetch}; the paced epoch steps ${stepMs} ms ` +
      `per batch (${s.acceleratorSamplesPerSecond} samples/s); s3torchconnectorclient ${connector.version}`,
  );
  const rows: PeerRow[] = [];
  const cpu: PeerCpu[] = [];
  const run = async (peer: string, body: () => Promise<PeerRow[]>) => {
    const measured = await withCpu(s, peer, body);
    rows.push(...measured.rows);
    cpu.push(measured.cpu);
  };
  const keys = await listKeys(s.bucket, s.prefix);
  const target = {
    region: process.env.AWS_REGION ?? 'us-east-1',
    endpoint: s.proxy.endpoint,
    bucket: s.bucket,
  };
  const keyDataSet: DataSet = {
    format: 'files',
    path: `s3://${s.bucket}/${s.prefix}`,
    files: keys,
    samples: keys.length,
  };
  await run(PEERS.connector, () => measure(s, PEERS.connector, stepMs, keyDataSet, connectorReader(target)));
  const mounted = (peer: string, profile: MountProfile, step: number | 'epoch 1 only' = stepMs) =>
    run(peer, () =>
      s.rig.mounted(profile, async (path) => measure(s, peer, step, await findDataSet(path, 'files'))),
    );
  // Mountpoint's defaults keep no cache, and re-check each file before it is read: every epoch is epoch 1, the
  // slowest of the peers by far, and no goal is about it.
  await mounted(PEERS.defaults, s.profiles.defaults, 'epoch 1 only');
  await mounted(PEERS.tuned, s.profiles.tuned);
  await s.warmExpress();
  await mounted(PEERS.express, s.profiles.express);
  return { connector: connector.version, stepMs, rows, cpu, goals: judge(rows) };
}

function judge(rows: readonly PeerRow[]) {
  const find = (peer: string, epoch: number) => rows.find((r) => r.peer === peer && r.epoch === epoch)!;
  const ratio = (a: PeerRow, b: PeerRow) => a.samplesPerSecond / b.samplesPerSecond;
  const [c1, c2] = [find(PEERS.connector, 1), find(PEERS.connector, 2)];
  const [t1, t2, t3] = [find(PEERS.tuned, 1), find(PEERS.tuned, 2), find(PEERS.tuned, 3)];
  const x1 = find(PEERS.express, 1);
  const times = (x: number) => `${x.toFixed(2)}x`;
  return [
    {
      goal: 'mountfleet epoch 1 >= 1.0x the connector',
      value: times(ratio(t1, c1)),
      met: ratio(t1, c1) >= 1,
    },
    {
      goal: 'a fresh instance on a warm Express cache, epoch 1 >= 1.5x the connector',
      value: times(ratio(x1, c1)),
      met: ratio(x1, c1) >= 1.5,
    },
    {
      goal: 'mountfleet epoch 2 >= 15x the connector',
      value: times(ratio(t2, c2)),
      met: ratio(t2, c2) >= 15,
    },
    {
      goal: "mountfleet's data wait from epoch 2 <= 2 % (at the accelerator's pace)",
      value: `${(t3.dataWaitShare * 100).toFixed(1)} %`,
      met: t3.dataWaitShare <= 0.02,
    },
  ];
}

/** The peers' table and goals, as lines. */
export function peersLines(report: PeersReport): string[] {
  const pct = (x: number) => `${(x * 100).toFixed(1)} %`;
  const lines = [
    `${'peer'.padEnd(48)} epoch  samples/s  data wait  longest  seconds  S3 requests (by operation)`,
    ...report.rows.map(
      (r) =>
        `${r.peer.padEnd(48)} ${`${r.epoch}${r.paced ? 'p' : ' '}`.padStart(5)} ${r.samplesPerSecond.toFixed(0).padStart(10)} ` +
        `${(r.paced ? pct(r.dataWaitShare) : '-').padStart(10)} ${(r.paced ? `${r.longestWaitMs.toFixed(0)} ms` : '-').padStart(8)} ${r.seconds.toFixed(1).padStart(8)}  ${r.s3Requests} (${operationsText(r.s3ByOperation)})`,
    ),
    `(p: the epoch at the accelerator's pace, ${report.stepMs} ms per batch; the others with the loader alone)`,
    '',
    `${'CPU per sample, three epochs'.padEnd(48)} emulator  loader+proxy  busy of ${CORES} cores`,
    ...report.cpu.map(
      (c) =>
        `${c.peer.padEnd(48)} ${`${((c.emulator / c.samples) * 1000).toFixed(2)} ms`.padStart(8)} ` +
        `${`${((c.loaderAndProxy / c.samples) * 1000).toFixed(2)} ms`.padStart(13)} ` +
        `${`${(((c.emulator + c.loaderAndProxy) / (c.wallSeconds * CORES)) * 100).toFixed(0)} %`.padStart(16)}`,
    ),
    '',
    ...report.goals.map((g) => `goal ${g.met ? 'met    ' : 'NOT met'}: ${g.goal}: ${g.value}`),
  ];
  return lines;
}
