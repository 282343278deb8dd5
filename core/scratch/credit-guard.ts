/**
 * The burst-credit guard of a running scratch job: every `intervalSeconds` it reads the file system's credit
 * from CloudWatch (core/scratch/credit-readings.ts) and, where readable, the mount's NFS byte counters
 * (core/scratch/mountstats.ts), projects when the credit runs out at the current rate, warns once at each of
 * 50, 80 and 95 % of the starting credit spent and once when the credit would run out before the job's
 * expected end, and at 90 % acts as asked: switch to Elastic throughput, or stop the job.
 *
 * The guard never fails the job: a failed or empty read is said once ("blind") and retried quietly.
 * Projections ignore the baseline credit the file system earns meanwhile (at least 1 MiB/s), so they err early.
 */
import type { CloudWatchClient } from '@aws-sdk/client-cloudwatch';
import { UpdateFileSystemCommand, type EFSClient } from '@aws-sdk/client-efs';
import { abortAfter } from '../abort';
import type { Clock } from '../clock';
import { INITIAL_BURST_CREDIT_GIB } from '../plan/model';
import { GIB, MIB, TIB } from '../plan/units';
import type { CreditMetrics } from './credit-metric';
import { EFS_METRIC_PERIOD_SECONDS, readCredit, type CreditReadings } from './credit-readings';
import type { NfsByteCounters } from './mountstats';
import { NfsMeter } from './nfs-meter';

export const ON_CREDIT_LOW = ['warn', 'elastic', 'stop'] as const;
export type OnCreditLow = (typeof ON_CREDIT_LOW)[number];

export const DEFAULT_CREDIT_CHECK_SECONDS = 60;
/** The credit of a new bursting file system (2.1 TiB). */
export const INITIAL_CREDIT_BYTES = INITIAL_BURST_CREDIT_GIB * GIB;
/** Fractions of the starting credit spent at which the guard warns. */
export const WARN_AT_SPENT = [0.5, 0.8, 0.95] as const;
/** Fraction spent at which `--on-credit-low elastic|stop` acts. */
export const ACT_AT_SPENT = 0.9;
/** The last read, after the job, waits at most this long: teardown must not wait for CloudWatch. */
const FINAL_READ_MS = 5000;

export interface CreditGuardOptions {
  readonly cloudwatch: CloudWatchClient;
  /** For UpdateFileSystem (`elastic`). */
  readonly efs: EFSClient;
  readonly fileSystemId: string;
  readonly intervalSeconds: number;
  readonly onCreditLow: OnCreditLow;
  /** The credit the file system started with; unset when unknown (its start is then read from CloudWatch). */
  readonly initialCreditBytes?: number;
  /** Bytes the job will read + write (`--expected-io`), counted in full. */
  readonly expectedIoBytes?: number;
  /** How long the job should run (`--expected-duration`). */
  readonly expectedDurationSeconds?: number;
  /** Elastic prices to quote when switching (USD per GB read / written). */
  readonly elasticPrices?: {
    readonly region: string;
    readonly readPerGb: number;
    readonly writePerGb: number;
  };
  /** The mount's NFS counters; undefined when unreadable. */
  readonly readCounters?: () => NfsByteCounters | undefined;
  /** Receives the metrics of each check that could see the credit. */
  readonly publish?: (metrics: CreditMetrics) => void;
  /** Ends the job through the run's stop path (`stop`). */
  readonly stopJob: () => void;
  readonly clock: Clock;
  readonly log: (line: string) => void;
}

/** What the guard measured, for the run summary. Byte counts are null when CloudWatch never answered with data. */
export interface CreditReport {
  /** Sum of MeteredIOBytes over the run. */
  readonly meteredIoBytes: number | null;
  /** BurstCreditBalance at the start minus the last one seen. */
  readonly burstCreditUsedBytes: number | null;
  readonly minBurstCreditBalanceBytes: number | null;
  readonly maxPercentIoLimit: number | null;
  /** Metered bytes (reads at a third) counted by the NFS client, when its counters were readable. */
  readonly nfsMeteredBytes: number | null;
  readonly throughputModeSwitchedAt?: string;
  /** GetMetricData calls made. */
  readonly checks: number;
  /** How long the guard watched: the job's run time. */
  readonly seconds: number;
}

export interface RunningCreditGuard {
  /** Ends the watch, reads CloudWatch a last time (bounded; skipped with `lastRead: false`), and reports. */
  stop(options?: { readonly lastRead?: boolean }): Promise<CreditReport>;
}

const tib = (bytes: number) => `${(bytes / TIB).toFixed(2)} TiB`;
const mibPerS = (bytesPerS: number) => `${(bytesPerS / MIB).toFixed(1)} MiB/s`;
export function formatDuration(seconds: number): string {
  const minutes = Math.max(0, Math.round(seconds / 60));
  return minutes < 60 ? `${minutes} min` : `${Math.floor(minutes / 60)} h ${minutes % 60} min`;
}

export function startCreditGuard(o: CreditGuardOptions): RunningCreditGuard {
  const startedAt = o.clock.now();
  const ended = new AbortController();
  // From the start of the minute before the job: a file system's balance as the job found it.
  const windowStart = Math.floor(startedAt / 60_000) * 60_000 - EFS_METRIC_PERIOD_SECONDS * 1000;
  const nfs = new NfsMeter(o.readCounters);
  nfs.sample(startedAt);

  let readings: CreditReadings | undefined;
  let checks = 0;
  let blindSaid = false;
  const warned = new Set<number>();
  let lateWarned = false;
  let acted = false;
  let switchedAt: string | undefined;
  const advice =
    o.onCreditLow === 'warn'
      ? '--on-credit-low elastic switches to Elastic throughput at 90 %, --on-credit-low stop ends the job; or split the work into jobs that each get fresh credit'
      : o.onCreditLow === 'elastic'
        ? 'the guard switches the file system to Elastic throughput at 90 % (--on-credit-low elastic)'
        : 'the guard stops the job at 90 % (--on-credit-low stop)';

  /** Bytes of credit spent per second now: the NFS counters' last interval, else the balance's recent slope. */
  const spendRate = (balance: CreditReadings['balance']): number => {
    const measured = nfs.lastRate();
    if (measured !== undefined) return measured;
    const recent = balance.slice(-5);
    if (recent.length >= 2) {
      const first = recent[0];
      const last = recent.at(-1)!;
      return Math.max(0, (first.value - last.value) / ((last.at - first.at) / 1000));
    }
    const lastMinute = readings?.meteredIo.at(-1)?.value;
    return lastMinute === undefined ? 0 : lastMinute / EFS_METRIC_PERIOD_SECONDS;
  };

  const switchToElastic = async () => {
    try {
      await o.efs.send(
        new UpdateFileSystemCommand({ FileSystemId: o.fileSystemId, ThroughputMode: 'elastic' }),
        {
          abortSignal: ended.signal,
        },
      );
      switchedAt = new Date(o.clock.now()).toISOString();
      const p = o.elasticPrices;
      o.log(
        `credit guard: switched ${o.fileSystemId} to Elastic throughput (--on-credit-low elastic): no credit limit from now on; ` +
          (p
            ? `reads cost $${p.readPerGb}/GB and writes $${p.writePerGb}/GB on top of storage (${p.region} prices of \`mountfleet plan\`)`
            : 'reads and writes are then billed per GB transferred') +
          '; EFS allows the next throughput-mode change of this file system only 24 h after this one',
      );
      return true;
    } catch (err) {
      if (ended.signal.aborted) return true; // the job ended meanwhile: nothing left to switch for
      const name = (err as Error).name;
      if (name === 'IncorrectFileSystemLifeCycleState') {
        // EFS changes the mode of an `available` file system only: try again at the next check.
        o.log(
          `credit guard: ${o.fileSystemId} is not available for a throughput-mode change yet; trying again at the next check`,
        );
        return false;
      }
      o.log(
        `credit guard: could not switch ${o.fileSystemId} to Elastic throughput (${name}: ${(err as Error).message}); ` +
          'the job keeps running on bursting throughput',
      );
      return true;
    }
  };

  const check = async (final: boolean) => {
    const now = o.clock.now();
    nfs.sample(now);
    try {
      checks += 1;
      readings = await readCredit(
        o.cloudwatch,
        o.fileSystemId,
        windowStart,
        now,
        final ? abortAfter(FINAL_READ_MS) : ended.signal,
      );
    } catch (err) {
      if (final || ended.signal.aborted) return;
      if (!blindSaid)
        o.log(
          `credit guard is blind: GetMetricData failed (${(err as Error).name}: ${(err as Error).message})` +
            `${nfs.readable && o.initialCreditBytes !== undefined ? '; counting the NFS client bytes meanwhile' : ''}; ` +
            `the job keeps running and the guard retries every ${o.intervalSeconds} s`,
        );
      blindSaid = true;
    }
    if (final) return;
    const balance = readings?.balance ?? [];
    let startCredit: number;
    let estimated: number;
    if (balance.length > 0) {
      startCredit = balance[0].value;
      // The last datapoint covers its minute; what the job moved since then comes from the NFS counters.
      estimated = balance.at(-1)!.value - nfs.since(balance.at(-1)!.at + EFS_METRIC_PERIOD_SECONDS * 1000);
    } else if (o.initialCreditBytes !== undefined && nfs.readable) {
      startCredit = o.initialCreditBytes;
      estimated = startCredit - nfs.since(startedAt);
    } else {
      if (!blindSaid && readings)
        o.log(
          `credit guard is blind: CloudWatch has no BurstCreditBalance datapoints for ${o.fileSystemId} yet ` +
            `(a new file system publishes its first after a few minutes); the job keeps running and the guard retries every ${o.intervalSeconds} s`,
        );
      blindSaid = true;
      return;
    }
    const spentFraction = Math.min(1, Math.max(0, (startCredit - estimated) / startCredit));
    const rate = spendRate(balance);
    const secondsLeft = rate > 0 ? Math.max(0, estimated) / rate : undefined;
    const runsOut =
      secondsLeft === undefined
        ? 'not being spent now'
        : `runs out in about ${formatDuration(secondsLeft)} (at ${new Date(now + secondsLeft * 1000).toISOString().slice(11, 16)} UTC)`;

    // On Elastic throughput the credit no longer limits the job: nothing left to warn about.
    const crossed = switchedAt ? [] : WARN_AT_SPENT.filter((t) => spentFraction >= t && !warned.has(t));
    if (crossed.length > 0) {
      for (const t of WARN_AT_SPENT) if (t <= crossed.at(-1)!) warned.add(t);
      o.log(
        `credit guard: ${Math.round(crossed.at(-1)! * 100)} % of the burst credit spent on ${o.fileSystemId} ` +
          `(${tib(Math.max(0, estimated))} of ${tib(startCredit)} left, spending ${mibPerS(rate)}): ${runsOut}; ` +
          `then throughput drops to the baseline (50 KiB/s per GiB stored). What to do: ${advice}`,
      );
    }

    const expectedLeft =
      o.expectedDurationSeconds !== undefined
        ? { seconds: o.expectedDurationSeconds - (now - startedAt) / 1000, from: '--expected-duration' }
        : o.expectedIoBytes !== undefined && rate > 0
          ? {
              seconds: Math.max(0, o.expectedIoBytes - (startCredit - estimated)) / rate,
              from: '--expected-io',
            }
          : undefined;
    if (
      !lateWarned &&
      !switchedAt &&
      secondsLeft !== undefined &&
      expectedLeft &&
      secondsLeft < expectedLeft.seconds
    ) {
      lateWarned = true;
      o.log(
        `credit guard: at ${mibPerS(rate)} the burst credit of ${o.fileSystemId} (${tib(Math.max(0, estimated))} left) runs out in about ${formatDuration(secondsLeft)}, ` +
          `before the job's expected end in about ${formatDuration(expectedLeft.seconds)} (${expectedLeft.from}). What to do: ${advice}`,
      );
    }

    let switched = 0;
    if (!acted && spentFraction >= ACT_AT_SPENT && o.onCreditLow !== 'warn') {
      if (o.onCreditLow === 'stop') {
        acted = true;
        o.log(
          `credit guard: ${Math.round(spentFraction * 100)} % of the burst credit spent: stopping the job (--on-credit-low stop) rather than let it crawl`,
        );
        o.stopJob();
      } else {
        acted = await switchToElastic();
        if (switchedAt) switched = 1;
      }
    }
    o.publish?.({
      creditUsedPercent: Math.round(spentFraction * 1000) / 10,
      ...(secondsLeft === undefined ? {} : { minutesToExhaustion: Math.round(secondsLeft / 60) }),
      modeSwitches: switched,
    });
  };

  const loop = (async () => {
    while (!ended.signal.aborted) {
      await o.clock.sleep(o.intervalSeconds * 1000, ended.signal);
      if (ended.signal.aborted) break;
      try {
        await check(false);
      } catch (err) {
        // Nothing in a check may end the job: a bug here is reported and the watch goes on.
        o.log(`credit guard: check failed (${(err as Error).message}); the job keeps running`);
      }
    }
  })();

  return {
    async stop({ lastRead = true } = {}) {
      ended.abort();
      await loop;
      if (lastRead) await check(true).catch(() => undefined);
      const balance = readings?.balance ?? [];
      const values = (s: readonly { value: number }[]) => s.map((d) => d.value);
      const metered = readings?.meteredIo ?? [];
      const ioLimit = readings?.percentIoLimit ?? [];
      return {
        meteredIoBytes: metered.length > 0 ? Math.round(values(metered).reduce((a, b) => a + b, 0)) : null,
        burstCreditUsedBytes:
          balance.length > 0 ? Math.round(balance[0].value - balance.at(-1)!.value) : null,
        minBurstCreditBalanceBytes: balance.length > 0 ? Math.round(Math.min(...values(balance))) : null,
        maxPercentIoLimit: ioLimit.length > 0 ? Math.max(...values(ioLimit)) : null,
        nfsMeteredBytes: nfs.readable ? Math.round(nfs.since(startedAt)) : null,
        ...(switchedAt ? { throughputModeSwitchedAt: switchedAt } : {}),
        checks,
        seconds: Math.round((o.clock.now() - startedAt) / 100) / 10,
      };
    },
  };
}
