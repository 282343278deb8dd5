/**
 * The burst-credit guard of a running scratch job: every `intervalSeconds` it reads the file system's credit
 * from CloudWatch (readings.ts) and, where readable, the mount's NFS byte counters
 * (mountstats.ts), projects when the credit runs out at the current rate, warns once at each of
 * 50, 80 and 95 % of the starting credit spent and once when the credit would run out before the job's
 * expected end, and at 90 % acts as asked: switch to Elastic throughput, or stop the job.
 *
 * The guard never fails the job: a failed or empty read is said once ("blind") and retried quietly.
 * Projections ignore the baseline credit the file system earns meanwhile (at least 1 MiB/s), so they err early.
 *
 * Nothing the guard does is remembered as done before it is: the switch to Elastic is tried again at every
 * check until EFS takes it or says it cannot be done (switchFailure), a stop is marked only once asked for,
 * and a mode switch whose metric line could not be written is carried to the next line written.
 */
import type { CloudWatchClient } from '@aws-sdk/client-cloudwatch';
import { DescribeFileSystemsCommand, UpdateFileSystemCommand, type EFSClient } from '@aws-sdk/client-efs';
import { abortAfter, type Clock, errorName, errorText, formatWholeMinutes, MIB, TIB } from '../common';
import type { CreditMetrics } from './metric';
import { EFS_METRIC_PERIOD_SECONDS, readCredit, type CreditReadings, type Datapoint } from './readings';
import type { NfsByteCounters } from './mountstats';
import { NfsMeter } from './nfs-meter';

export const ON_CREDIT_LOW = ['warn', 'elastic', 'stop'] as const;
export type OnCreditLow = (typeof ON_CREDIT_LOW)[number];

export const DEFAULT_CREDIT_CHECK_SECONDS = 60;
/** Fractions of the starting credit spent at which the guard warns. */
const WARN_AT_SPENT = [0.5, 0.8, 0.95] as const;
/** Fraction spent at which `--on-credit-low elastic|stop` acts. */
const ACT_AT_SPENT = 0.9;
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
  /**
   * Receives the metrics of each check that could see the credit; throws when they could not be written
   * (the guard says so once, and carries a mode switch not written yet to the next check's metrics).
   */
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
  /**
   * Set when `--on-credit-low elastic` was due and the switch never happened: the attempts and why the
   * last one failed (or why none was made).
   */
  readonly throughputModeSwitchFailed?: string;
  /** GetMetricData calls made. */
  readonly checks: number;
  /** How long the guard watched: the job's run time. */
  readonly seconds: number;
}

interface RunningCreditGuard {
  /** Ends the watch, reads CloudWatch a last time (bounded; skipped with `lastRead: false`), and reports. */
  stop(options?: { readonly lastRead?: boolean }): Promise<CreditReport>;
}

const tib = (bytes: number) => `${(bytes / TIB).toFixed(2)} TiB`;
const mibPerS = (bytesPerS: number) => `${(bytesPerS / MIB).toFixed(1)} MiB/s`;

/** What the checks of one running guard share: its options, the NFS meter, and what it has read and said. */
interface GuardState {
  readonly options: CreditGuardOptions;
  readonly startedAt: number;
  /** Start of the CloudWatch window every check reads. */
  readonly windowStart: number;
  readonly ended: AbortController;
  readonly nfs: NfsMeter;
  /** What the warnings suggest, given `--on-credit-low`. */
  readonly advice: string;
  readings?: CreditReadings;
  checks: number;
  blindSaid: boolean;
  /** Thresholds of WARN_AT_SPENT already warned of. */
  readonly warned: Set<number>;
  lateWarned: boolean;
  /** `--on-credit-low stop` has asked the run to stop the job. */
  stopAsked: boolean;
  /** `--on-credit-low elastic`: the attempts so far, while the switch is due and not done. */
  readonly switching: SwitchAttempts;
  switchedAt?: string;
  /** Mode switches not yet in a metric line written (publish failed): carried to the next one. */
  unpublishedSwitches: number;
  publishFailSaid: boolean;
}

/** The switch to Elastic once it is due: how it went so far and when to try again. */
interface SwitchAttempts {
  /** UpdateFileSystem calls made. */
  attempts: number;
  /** `Name: message` of the last failure. */
  lastError?: string;
  /** The error name last said, so that the same failure at the next check is not said again. */
  lastSaid?: string;
  /** No attempt before this time (EFS's 24-hour rule). */
  notBefore?: number;
  /** Why EFS cannot make the change at all: never tried again. */
  impossible?: string;
  /** The job ended while an UpdateFileSystem was in flight: whether it took effect is unknown. */
  cutShort?: boolean;
}

export function startCreditGuard(o: CreditGuardOptions): RunningCreditGuard {
  const startedAt = o.clock.now();
  const guard: GuardState = {
    options: o,
    startedAt,
    // From the start of the minute before the job: a file system's balance as the job found it.
    windowStart: Math.floor(startedAt / 60_000) * 60_000 - EFS_METRIC_PERIOD_SECONDS * 1000,
    ended: new AbortController(),
    nfs: new NfsMeter(o.readCounters),
    advice: adviceFor(o.onCreditLow),
    checks: 0,
    blindSaid: false,
    warned: new Set(),
    lateWarned: false,
    stopAsked: false,
    switching: { attempts: 0 },
    unpublishedSwitches: 0,
    publishFailSaid: false,
  };
  guard.nfs.sample(startedAt);
  const watching = watch(guard);
  return {
    async stop({ lastRead = true } = {}) {
      guard.ended.abort();
      await watching;
      if (lastRead) await readOnceMore(guard).catch(() => undefined);
      const report = creditReport(guard);
      if (report.throughputModeSwitchFailed !== undefined) {
        o.log(
          `credit guard: the job ended without the switch to Elastic throughput (--on-credit-low elastic): ` +
            `${report.throughputModeSwitchFailed}; it ran on bursting throughput past ${Math.round(ACT_AT_SPENT * 100)} % of its credit`,
        );
      }
      return report;
    },
  };
}

function adviceFor(onCreditLow: OnCreditLow): string {
  return onCreditLow === 'warn'
    ? '--on-credit-low elastic switches to Elastic throughput at 90 %, --on-credit-low stop ends the job; or split the work into jobs that each get fresh credit'
    : onCreditLow === 'elastic'
      ? 'the guard switches the file system to Elastic throughput at 90 % (--on-credit-low elastic)'
      : 'the guard stops the job at 90 % (--on-credit-low stop)';
}

/** Checks every interval until the job ends. */
async function watch(guard: GuardState): Promise<void> {
  const { options: o, ended } = guard;
  while (!ended.signal.aborted) {
    await o.clock.sleep(o.intervalSeconds * 1000, ended.signal);
    if (ended.signal.aborted) break;
    try {
      await check(guard);
    } catch (err) {
      // Nothing in a check may end the job: a bug here is reported and the watch goes on.
      o.log(`credit guard: check failed (${(err as Error).message}); the job keeps running`);
    }
  }
}

/** One check while the job runs: read, estimate, warn, act at 90 %, publish. */
async function check(guard: GuardState): Promise<void> {
  const now = guard.options.clock.now();
  guard.nfs.sample(now);
  if (!(await readCloudWatch(guard, now))) return;
  const { options: o, nfs } = guard;
  const credit = estimateCredit(guard.readings?.balance ?? [], nfs, o.initialCreditBytes, guard.startedAt);
  if (!credit) {
    // Without readings every read failed, and the first failure said so.
    if (guard.readings)
      sayBlind(
        guard,
        `credit guard is blind: CloudWatch has no BurstCreditBalance datapoints for ${o.fileSystemId} yet ` +
          `(a new file system publishes its first after a few minutes); the job keeps running and the guard retries every ${o.intervalSeconds} s`,
      );
    return;
  }
  const outlook = creditOutlook(credit, spendRate(nfs, guard.readings), now);
  warnAtThresholds(guard, outlook);
  warnIfLate(guard, outlook);
  guard.unpublishedSwitches += await actWhenLow(guard, outlook.spentFraction);
  publish(guard, creditMetrics(outlook, guard.unpublishedSwitches));
}

/** Publishes a check's metrics; a failure is said once, and a mode switch in them waits for the next line. */
function publish(guard: GuardState, metrics: CreditMetrics): void {
  const { options: o } = guard;
  if (!o.publish) return;
  try {
    o.publish(metrics);
    guard.unpublishedSwitches = 0;
  } catch (err) {
    if (!guard.publishFailSaid) {
      o.log(
        `credit guard: cannot write its metrics (${(err as Error).message}); trying again at every check ` +
          '(a throughput-mode switch is counted in the first line written after it)',
      );
    }
    guard.publishFailSaid = true;
  }
}

/**
 * Reads CloudWatch into `guard.readings`; a failure is said once and the last readings stand. False when the
 * job ended during the read: the check then has nothing left to do.
 */
async function readCloudWatch(guard: GuardState, now: number): Promise<boolean> {
  const { options: o, nfs } = guard;
  guard.checks += 1;
  try {
    guard.readings = await readCredit(
      o.cloudwatch,
      o.fileSystemId,
      guard.windowStart,
      now,
      guard.ended.signal,
    );
  } catch (err) {
    if (guard.ended.signal.aborted) return false;
    sayBlind(
      guard,
      `credit guard is blind: GetMetricData failed (${(err as Error).name}: ${(err as Error).message})` +
        `${nfs.readable && o.initialCreditBytes !== undefined ? '; counting the NFS client bytes meanwhile' : ''}; ` +
        `the job keeps running and the guard retries every ${o.intervalSeconds} s`,
    );
  }
  return true;
}

/** The read after the job, for the report; bounded by FINAL_READ_MS, and its failure left to the caller. */
async function readOnceMore(guard: GuardState): Promise<void> {
  const { options: o } = guard;
  const now = o.clock.now();
  guard.nfs.sample(now);
  guard.checks += 1;
  guard.readings = await readCredit(
    o.cloudwatch,
    o.fileSystemId,
    guard.windowStart,
    now,
    abortAfter(FINAL_READ_MS),
  );
}

/** Being blind is said once per run: the guard retries quietly. */
function sayBlind(guard: GuardState, line: string): void {
  if (!guard.blindSaid) guard.options.log(line);
  guard.blindSaid = true;
}

/** The credit the job started from and the credit left now, in bytes. */
interface CreditEstimate {
  readonly startCredit: number;
  /** Negative once the job has moved more than the credit. */
  readonly left: number;
}

/**
 * CloudWatch's last balance less what the NFS counters saw the job move since; before CloudWatch has a
 * datapoint, the starting credit (when known) less all the job moved. Undefined when neither can be told.
 */
export function estimateCredit(
  balance: readonly Datapoint[],
  nfs: NfsMeter,
  initialCreditBytes: number | undefined,
  startedAt: number,
): CreditEstimate | undefined {
  if (balance.length > 0) {
    const last = balance.at(-1)!;
    // The last datapoint covers its minute; what the job moved since then comes from the NFS counters.
    const movedSince = nfs.since(last.at + EFS_METRIC_PERIOD_SECONDS * 1000);
    return { startCredit: balance[0].value, left: last.value - movedSince };
  }
  if (initialCreditBytes !== undefined && nfs.readable)
    return { startCredit: initialCreditBytes, left: initialCreditBytes - nfs.since(startedAt) };
  return undefined;
}

/** Bytes of credit spent per second now: the NFS counters' last interval, else the balance's recent slope. */
export function spendRate(nfs: NfsMeter, readings: CreditReadings | undefined): number {
  const measured = nfs.lastRate();
  if (measured !== undefined) return measured;
  const recent = (readings?.balance ?? []).slice(-5);
  if (recent.length >= 2) {
    const first = recent[0];
    const last = recent.at(-1)!;
    return Math.max(0, (first.value - last.value) / ((last.at - first.at) / 1000));
  }
  const lastMinute = readings?.meteredIo.at(-1)?.value;
  return lastMinute === undefined ? 0 : lastMinute / EFS_METRIC_PERIOD_SECONDS;
}

/** What one check sees: the credit, the fraction of it spent, how fast, and how long what is left lasts. */
interface CreditOutlook extends CreditEstimate {
  readonly now: number;
  /** 0 to 1. */
  readonly spentFraction: number;
  /** Bytes per second. */
  readonly rate: number;
  /** Undefined while nothing is being spent. */
  readonly secondsLeft: number | undefined;
}

/** Projects the estimate at the current rate; ignoring the baseline credit earned meanwhile, it errs early. */
export function creditOutlook(credit: CreditEstimate, rate: number, now: number): CreditOutlook {
  const { startCredit, left } = credit;
  return {
    startCredit,
    left,
    now,
    spentFraction: Math.min(1, Math.max(0, (startCredit - left) / startCredit)),
    rate,
    secondsLeft: rate > 0 ? Math.max(0, left) / rate : undefined,
  };
}

/** The highest threshold of WARN_AT_SPENT reached and not warned of yet; undefined when there is none. */
export function thresholdToWarn(spentFraction: number, warned: ReadonlySet<number>): number | undefined {
  return WARN_AT_SPENT.filter((t) => spentFraction >= t && !warned.has(t)).at(-1);
}

/** Warns once per threshold; a check that crosses several names the highest and marks all of them said. */
function warnAtThresholds(guard: GuardState, outlook: CreditOutlook): void {
  // On Elastic throughput the credit no longer limits the job: nothing left to warn about.
  if (guard.switchedAt) return;
  const threshold = thresholdToWarn(outlook.spentFraction, guard.warned);
  if (threshold === undefined) return;
  for (const t of WARN_AT_SPENT) if (t <= threshold) guard.warned.add(t);
  const { left, startCredit, rate, secondsLeft, now } = outlook;
  const runsOut =
    secondsLeft === undefined
      ? 'not being spent now'
      : `runs out in about ${formatWholeMinutes(secondsLeft)} (at ${new Date(now + secondsLeft * 1000).toISOString().slice(11, 16)} UTC)`;
  guard.options.log(
    `credit guard: ${Math.round(threshold * 100)} % of the burst credit spent on ${guard.options.fileSystemId} ` +
      `(${tib(Math.max(0, left))} of ${tib(startCredit)} left, spending ${mibPerS(rate)}): ${runsOut}; ` +
      `then throughput drops to the baseline (50 KiB/s per GiB stored). What to do: ${guard.advice}`,
  );
}

/** How much longer the job should run, and which flag says so. */
interface ExpectedTimeLeft {
  readonly seconds: number;
  readonly from: '--expected-duration' | '--expected-io';
}

/** From `--expected-duration`, else from `--expected-io` at the current rate; undefined when neither tells. */
export function expectedTimeLeft(
  expected: Pick<CreditGuardOptions, 'expectedDurationSeconds' | 'expectedIoBytes'>,
  elapsedSeconds: number,
  spentBytes: number,
  rate: number,
): ExpectedTimeLeft | undefined {
  if (expected.expectedDurationSeconds !== undefined)
    return { seconds: expected.expectedDurationSeconds - elapsedSeconds, from: '--expected-duration' };
  if (expected.expectedIoBytes !== undefined && rate > 0)
    return { seconds: Math.max(0, expected.expectedIoBytes - spentBytes) / rate, from: '--expected-io' };
  return undefined;
}

/** Warns once when, at the current rate, the credit runs out before the job's expected end. */
function warnIfLate(guard: GuardState, outlook: CreditOutlook): void {
  const { options: o } = guard;
  const { startCredit, left, rate, secondsLeft, now } = outlook;
  if (guard.lateWarned || guard.switchedAt || secondsLeft === undefined) return;
  const expected = expectedTimeLeft(o, (now - guard.startedAt) / 1000, startCredit - left, rate);
  if (expected && secondsLeft < expected.seconds) {
    guard.lateWarned = true;
    o.log(
      `credit guard: at ${mibPerS(rate)} the burst credit of ${o.fileSystemId} (${tib(Math.max(0, left))} left) runs out in about ${formatWholeMinutes(secondsLeft)}, ` +
        `before the job's expected end in about ${formatWholeMinutes(expected.seconds)} (${expected.from}). What to do: ${guard.advice}`,
    );
  }
}

/**
 * At ACT_AT_SPENT, what `--on-credit-low` asks: stop the job, or switch to Elastic (tried at every check
 * until it is done or EFS says it cannot be: see switchFailure). Returns the check's mode switches for the
 * metric: 1 when this check switched.
 */
async function actWhenLow(guard: GuardState, spentFraction: number): Promise<number> {
  const { options: o } = guard;
  if (spentFraction < ACT_AT_SPENT || o.onCreditLow === 'warn') return 0;
  if (o.onCreditLow === 'stop') {
    if (guard.stopAsked) return 0;
    o.log(
      `credit guard: ${Math.round(spentFraction * 100)} % of the burst credit spent: stopping the job (--on-credit-low stop) rather than let it crawl`,
    );
    o.stopJob();
    guard.stopAsked = true; // only once the run has been asked: a stop that threw is asked again next check
    return 0;
  }
  const s = guard.switching;
  if (guard.switchedAt || s.impossible || (s.notBefore !== undefined && o.clock.now() < s.notBefore))
    return 0;
  return (await switchToElastic(guard)) ? 1 : 0;
}

/** What the guard does after UpdateFileSystem failed with an error: when it tries again, and why. */
interface SwitchFailure {
  /**
   * `next-check`: the failure is passing (throttling, a server error, the file system busy), so the next check
   * tries again; `in-24-hours`: EFS's 24-hour rule, tried again once 24 h have passed since the refusal;
   * `never`: EFS says the change cannot be made, and asking again gets the same answer.
   */
  readonly next: 'next-check' | 'in-24-hours' | 'never';
  readonly why: string;
}

/** EFS lets a file system change its throughput mode again only this long after a change (TooManyRequests). */
const MODE_CHANGE_INTERVAL_MS = 24 * 3600 * 1000;

/**
 * What an UpdateFileSystem error means for the switch, from the errors the EFS API reference lists for the
 * call (botocore's EFS model, 2015-02-01: the codes and their HTTP statuses):
 *
 * - `BadRequest` (400): the request is malformed or has an invalid value — the same request gets the same answer;
 * - `FileSystemNotFound` (404): the file system is gone — nothing to switch;
 * - `ThroughputLimitExceeded` (400): the throughput limit is reached — a quota, raised only through AWS Support;
 * - `AccessDeniedException` (403, IAM): the role may not call it — no retry grants the permission;
 * - `TooManyRequests` (429): the 24-hour rule, not a request rate — impossible until 24 h after the file
 *   system's last mode change. EFS does not say when that was, so the guard waits 24 h from the refusal;
 * - `IncorrectFileSystemLifeCycleState` (409): the file system is not `available` (e.g. `updating`) — passing;
 * - `InsufficientThroughputCapacity` (503): EFS has no capacity for it now — its documentation says try again later;
 * - `InternalServerError` (500), throttling (`ThrottlingException` 429 and kin), timeouts and connection
 *   errors — passing, and every other error too: one call a check costs little next to the credit cliff the
 *   switch exists to avoid.
 */
function switchFailure(errorCode: string): SwitchFailure {
  switch (errorCode) {
    case 'BadRequest':
      return {
        next: 'never',
        why: 'EFS refuses the request itself (malformed or an invalid value), and would refuse it again',
      };
    case 'FileSystemNotFound':
      return { next: 'never', why: 'the file system no longer exists' };
    case 'ThroughputLimitExceeded':
      return {
        next: 'never',
        why: "the file system's throughput limit is reached: only a quota increase (AWS Support) lifts it",
      };
    case 'AccessDeniedException':
    case 'AccessDenied':
      return {
        next: 'never',
        why: 'the instance role may not call elasticfilesystem:UpdateFileSystem (ScratchFileSystems.grantCreateAndDelete grants it)',
      };
    case 'TooManyRequests':
      return {
        next: 'in-24-hours',
        why: "EFS allows a file system's throughput mode to change only 24 h after its last change (a change made by hand?)",
      };
    case 'IncorrectFileSystemLifeCycleState':
      return { next: 'next-check', why: 'the file system is not available for a throughput-mode change yet' };
    case 'InsufficientThroughputCapacity':
      return { next: 'next-check', why: 'EFS has no throughput capacity for it now' };
    case 'InternalServerError':
      return { next: 'next-check', why: 'an EFS server error' };
    default:
      return {
        next: 'next-check',
        why: /Throttl|TooManyRequestsException|RequestLimitExceeded|SlowDown/.test(errorCode)
          ? 'EFS throttled the call'
          : 'a failure that may pass',
      };
  }
}

/**
 * UpdateFileSystem to Elastic throughput; true when the file system is on Elastic now. Before trying again,
 * it reads the file system: an earlier attempt whose answer was lost (or throttled after it took effect
 * within the SDK's own retries) may have switched it already.
 */
async function switchToElastic(guard: GuardState): Promise<boolean> {
  const { options: o, ended, switching: s } = guard;
  try {
    if (s.attempts > 0 && (await alreadyElastic(guard))) {
      guard.switchedAt = new Date(o.clock.now()).toISOString();
      o.log(
        `credit guard: ${o.fileSystemId} is on Elastic throughput: an earlier attempt switched it (--on-credit-low elastic); no credit limit from now on`,
      );
      return true;
    }
    s.attempts += 1;
    await o.efs.send(
      new UpdateFileSystemCommand({ FileSystemId: o.fileSystemId, ThroughputMode: 'elastic' }),
      {
        abortSignal: ended.signal,
      },
    );
    guard.switchedAt = new Date(o.clock.now()).toISOString();
    const p = o.elasticPrices;
    o.log(
      `credit guard: switched ${o.fileSystemId} to Elastic throughput (--on-credit-low elastic${s.attempts > 1 ? `, attempt ${s.attempts}` : ''}): no credit limit from now on; ` +
        (p
          ? `reads cost $${p.readPerGb}/GB and writes $${p.writePerGb}/GB on top of storage (${p.region} prices of \`mountfleet plan\`)`
          : 'reads and writes are then billed per GB transferred') +
        '; EFS allows the next throughput-mode change of this file system only 24 h after this one',
    );
    return true;
  } catch (err) {
    if (ended.signal.aborted) {
      s.cutShort = true; // the job ended meanwhile: nothing left to switch for
      return false;
    }
    sayFailure(guard, err);
    return false;
  }
}

/** Whether DescribeFileSystems shows the file system on Elastic throughput; false when it cannot tell. */
async function alreadyElastic(guard: GuardState): Promise<boolean> {
  const { options: o, ended } = guard;
  try {
    const out = await o.efs.send(new DescribeFileSystemsCommand({ FileSystemId: o.fileSystemId }), {
      abortSignal: ended.signal,
    });
    return out.FileSystems?.[0]?.ThroughputMode === 'elastic';
  } catch {
    return false; // UpdateFileSystem itself tells what is wrong
  }
}

/** Records a failed switch and says it, with what happens next; the same failure again is not said again. */
function sayFailure(guard: GuardState, err: unknown): void {
  const { options: o, switching: s } = guard;
  const name = errorName(err) || 'Error';
  const failure = switchFailure(name);
  s.lastError = errorText(err);
  const now = o.clock.now();
  let next: string;
  if (failure.next === 'never') {
    s.impossible = failure.why;
    next = 'not trying again';
  } else if (failure.next === 'in-24-hours') {
    s.notBefore = now + MODE_CHANGE_INTERVAL_MS;
    next = `trying again at ${new Date(s.notBefore).toISOString().slice(0, 16)} UTC (24 h from now) if the job still runs`;
  } else {
    next = `trying again at every check (every ${o.intervalSeconds} s) until it is done`;
  }
  if (s.lastSaid === name && failure.next === 'next-check') return;
  s.lastSaid = name;
  o.log(
    `credit guard: could not switch ${o.fileSystemId} to Elastic throughput (${s.lastError}): ${failure.why}; ` +
      `${next}; the job keeps running on bursting throughput meanwhile`,
  );
}

/** Why the due switch to Elastic never happened, for the report; undefined when it happened or was never due. */
function switchNeverHappened(guard: GuardState): string | undefined {
  const s = guard.switching;
  if (guard.switchedAt || (s.attempts === 0 && !s.cutShort)) return undefined;
  const tries = `${s.attempts} attempt(s)`;
  if (s.cutShort) return `${tries}; the job ended while UpdateFileSystem was in flight (its outcome unknown)`;
  if (s.impossible) return `${tries}, the last failed with ${s.lastError}: ${s.impossible}`;
  if (s.notBefore !== undefined && guard.options.clock.now() < s.notBefore) {
    return `${tries}, the last failed with ${s.lastError}: EFS's 24-hour rule, next try not before ${new Date(s.notBefore).toISOString()}`;
  }
  return `${tries}, the last failed with ${s.lastError}`;
}

/** The check's metrics: percent spent to a tenth, minutes left while the credit is being spent. */
export function creditMetrics(outlook: CreditOutlook, modeSwitches: number): CreditMetrics {
  const { spentFraction, secondsLeft } = outlook;
  return {
    creditUsedPercent: Math.round(spentFraction * 1000) / 10,
    ...(secondsLeft === undefined ? {} : { minutesToExhaustion: Math.round(secondsLeft / 60) }),
    modeSwitches,
  };
}

/** CloudWatch's part of the report: sums and extremes of the series read last; null where a series is empty. */
export function cloudWatchTotals(
  readings: CreditReadings | undefined,
): Pick<
  CreditReport,
  'meteredIoBytes' | 'burstCreditUsedBytes' | 'minBurstCreditBalanceBytes' | 'maxPercentIoLimit'
> {
  const balance = readings?.balance ?? [];
  const metered = readings?.meteredIo ?? [];
  const ioLimit = readings?.percentIoLimit ?? [];
  const values = (s: readonly Datapoint[]) => s.map((d) => d.value);
  return {
    meteredIoBytes: metered.length > 0 ? Math.round(values(metered).reduce((a, b) => a + b, 0)) : null,
    burstCreditUsedBytes: balance.length > 0 ? Math.round(balance[0].value - balance.at(-1)!.value) : null,
    minBurstCreditBalanceBytes: balance.length > 0 ? Math.round(Math.min(...values(balance))) : null,
    maxPercentIoLimit: ioLimit.length > 0 ? Math.max(...values(ioLimit)) : null,
  };
}

/** The run summary's view of the guard, once the job has ended. */
function creditReport(guard: GuardState): CreditReport {
  const { nfs, startedAt, switchedAt } = guard;
  const switchFailed = switchNeverHappened(guard);
  return {
    ...cloudWatchTotals(guard.readings),
    nfsMeteredBytes: nfs.readable ? Math.round(nfs.since(startedAt)) : null,
    ...(switchedAt ? { throughputModeSwitchedAt: switchedAt } : {}),
    ...(switchFailed ? { throughputModeSwitchFailed: switchFailed } : {}),
    checks: guard.checks,
    seconds: Math.round((guard.options.clock.now() - startedAt) / 100) / 10,
  };
}
