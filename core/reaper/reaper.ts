/**
 * One reaper run: list this fleet's file systems, gather evidence in batches (only what the decisions
 * need), decide each file system (decide.ts), then act: idle marks in batches of 20, deletions with
 * bounded concurrency. Used by the Lambda (schedule and event fast path) and by `mountfleet reap`.
 *
 * Safety: only file systems tagged with this fleet, and made by it, are ever touched; a dry run makes no
 * change at all; a failure on one file system is recorded in the report and never fails the run; the run
 * stops starting new work when its time is nearly up, and leaves the rest (reported as kept) to the next.
 */
import type { BatchClient } from '@aws-sdk/client-batch';
import type { CloudWatchClient } from '@aws-sdk/client-cloudwatch';
import type { EC2Client } from '@aws-sdk/client-ec2';
import { DeleteFileSystemCommand, type EFSClient } from '@aws-sdk/client-efs';
import type { ResourceGroupsTaggingAPIClient } from '@aws-sdk/client-resource-groups-tagging-api';
import {
  errorName,
  errorText,
  PollTimeout,
  pollUntil,
  type Clock,
  type PollResult,
  systemClock,
} from '../common';
import { listMountTargets, teardownFileSystem } from '../efs';
import {
  decide,
  isNeed,
  type BatchJobEvidence,
  type ConnectionEvidence,
  type Decision,
  type DecisionContext,
  type FileSystemFacts,
  type GoneInstance,
  type Need,
  type OwnerEvidence,
} from './decide';
import {
  connectionWindow,
  describeFacts,
  listFleetFileSystems,
  lookupOwners,
  readConnections,
} from './evidence';
import { gatherBatchJobs, type BatchLookups } from './batch-jobs';
import { markIdle, unmarkIdle, type MarkResults } from './marks';
import { judgeRecheck, recheckInBatches, type Work } from './recheck';
import { emptyReport, type ReapReport } from './report';
import { type ReaperSettings } from '../contract';

export interface ReaperClients {
  readonly efs: EFSClient;
  /** Only for the fleet's Batch runs (DescribeJobs, 100 jobs a call). */
  readonly batch: BatchClient;
  readonly ec2: EC2Client;
  readonly cloudwatch: CloudWatchClient;
  /** Idle marks, 20 file systems a call. */
  readonly tagging: ResourceGroupsTaggingAPIClient;
}

export type Outcome = 'deleted' | 'marked' | 'unmarked' | 'kept' | 'foreign' | 'failed';

/** One line per file system: what was decided, why, and what came of it. */
interface DecisionRecord {
  readonly fileSystemId: string;
  readonly action: Decision['action'];
  readonly outcome: Outcome;
  readonly reason: string;
  readonly dryRun: boolean;
}

interface ReapOptions {
  readonly clock?: Clock;
  /** Event fast path: only this instance's file systems are considered, and its going is the owner evidence. */
  readonly goneInstance?: GoneInstance;
  /** Time left for the run (Lambda: context.getRemainingTimeInMillis); unlimited when unset. */
  readonly remainingTimeMs?: () => number;
  /** File systems acted on at once. @default 4 */
  readonly concurrency?: number;
  /** Longest wait for one file system's mount targets to go. @default 120000 */
  readonly teardownMaxWaitMs?: number;
  readonly onDecision?: (record: DecisionRecord) => void;
  readonly onProgress?: (message: string) => void;
}

const DEFAULT_REAP_CONCURRENCY = 4;

/** A dry run reports what it would have done under the same lists as a real run. */
const DRY_RUN_OUTCOME: Record<Decision['action'], Outcome> = {
  delete: 'deleted',
  mark: 'marked',
  unmark: 'unmarked',
  keep: 'kept',
};

async function forEachBounded<T>(items: readonly T[], limit: number, work: (item: T) => Promise<void>) {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await work(items[next++]);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

/**
 * Like forEachBounded, over items that come in batches: a worker that finds nothing left asks `nextBatch`
 * (one call at a time; the others wait for it) and stops when it answers undefined. A batch is thus fetched
 * only once the previous one has been handed out entirely.
 */
async function drainBounded<T>(
  nextBatch: () => Promise<T[] | undefined>,
  limit: number,
  work: (item: T) => Promise<void>,
): Promise<void> {
  const queue: T[] = [];
  let fetching: Promise<void> | undefined;
  let done = false;
  const take = async (): Promise<T | undefined> => {
    while (queue.length === 0 && !done) {
      fetching ??= nextBatch()
        .then((batch) => {
          if (batch === undefined) done = true;
          else queue.push(...batch);
        })
        .finally(() => (fetching = undefined));
      await fetching;
    }
    return queue.shift();
  };
  const worker = async () => {
    for (let item = await take(); item !== undefined; item = await take()) await work(item);
  };
  await Promise.all(Array.from({ length: limit }, worker));
}

/** Decides every file system, reading connections and owners in batches only where a decision needs them. */
async function decideAll(
  clients: ReaperClients,
  settings: ReaperSettings,
  fileSystems: readonly FileSystemFacts[],
  ctx: DecisionContext,
  knownOwners: ReadonlyMap<string, OwnerEvidence>,
  calls: BatchLookups,
): Promise<Map<string, Decision>> {
  const connections = new Map<string, ConnectionEvidence>();
  const owners = new Map<string, OwnerEvidence>(knownOwners);
  const batchJobs = new Map<string, BatchJobEvidence>();
  const round = () =>
    new Map<string, Decision | Need>(
      fileSystems.map((fs) => [
        fs.id,
        decide(
          fs,
          {
            connections: connections.get(fs.id),
            owner: fs.ownerInstanceId === undefined ? undefined : owners.get(fs.ownerInstanceId),
            batchJob: batchJobs.get(fs.batchJobId ?? fs.id),
          },
          ctx,
        ),
      ]),
    );

  let results = round();
  const wantConnections = [...results].filter(([, r]) => isNeed(r) && r.need === 'connections');
  if (wantConnections.length > 0) {
    const window = connectionWindow(ctx.now, settings.idleWindowMinutes, settings.metricLagMinutes);
    const read = await readConnections(
      clients.cloudwatch,
      wantConnections.map(([id]) => id),
      window,
    );
    for (const [id, evidence] of read) connections.set(id, evidence);
    results = round();
  }
  const wantOwners = [...results.values()].flatMap((r) =>
    isNeed(r) && r.need === 'owner' ? [r.instanceId] : [],
  );
  if (wantOwners.length > 0) {
    for (const [id, evidence] of await lookupOwners(clients.ec2, settings.fleetId, wantOwners)) {
      owners.set(id, evidence);
    }
    results = round();
  }
  const wantJobs = fileSystems.flatMap((fs) => {
    const r = results.get(fs.id);
    return r !== undefined && isNeed(r) && r.need === 'batch-job' ? [{ fs, need: r }] : [];
  });
  if (wantJobs.length > 0) {
    for (const [key, evidence] of await gatherBatchJobs(clients.batch, settings.fleetId, wantJobs, calls)) {
      batchJobs.set(key, evidence);
    }
    results = round();
  }
  return new Map(
    [...results].map(([id, r]) => {
      if (isNeed(r)) throw new Error(`internal: no decision for ${id} after gathering evidence (${r.need})`);
      return [id, r];
    }),
  );
}

type DeletionResult =
  | { readonly status: 'deleted' }
  /** Mount targets deleted, DeleteFileSystem refused while they finish deleting: retried by reap(). */
  | { readonly status: 'pending' }
  /** What the reaper saw at deletion time contradicts the decision's evidence: nothing was touched. */
  | { readonly status: 'contradicted'; readonly reason: string };

/** Mount-target states that mean someone is setting the file system up or changing it: evidence of use. */
const MOUNT_TARGET_IN_USE_STATES = new Set(['creating', 'updating']);

/**
 * Deletes one file system its re-check (recheck.ts) found unchanged since the decision, as that re-check read
 * it (`fs`): straight to DeleteFileSystem when it has no mount target, else the full teardown on the mount
 * targets described once here. FileSystemInUse on the direct delete means a mount target appeared since the
 * re-check: when "no mount target" was the decision's only evidence that contradicts it (someone is setting
 * the file system up), so it is kept; evidence that does not depend on mount targets (owner gone, lifecycle
 * error) still holds, and the full teardown removes the new mount target too — unless a mount target is
 * still being created or updated, which contradicts every decision.
 */
async function deleteFileSystem(
  efs: EFSClient,
  fs: FileSystemFacts,
  decision: Decision,
  clock: Clock,
): Promise<DeletionResult> {
  if (fs.mountTargets === 0) {
    try {
      await efs.send(new DeleteFileSystemCommand({ FileSystemId: fs.id }));
      return { status: 'deleted' };
    } catch (err) {
      const name = errorName(err);
      if (name === 'FileSystemNotFound') return { status: 'deleted' };
      if (name !== 'FileSystemInUse') throw err;
      if (decision.basis === 'no-mount-target') {
        return {
          status: 'contradicted',
          reason: 'a mount target appeared since the re-check; decided again next run',
        };
      }
    }
  }
  const mountTargets = await listMountTargets(efs, fs.id);
  if (mountTargets === 'gone') return { status: 'deleted' };
  const settingUp = mountTargets.find((mt) => MOUNT_TARGET_IN_USE_STATES.has(mt.LifeCycleState ?? ''));
  if (settingUp) {
    return {
      status: 'contradicted',
      reason: `mount target ${settingUp.MountTargetId} is ${settingUp.LifeCycleState}: in use; decided again next run`,
    };
  }
  // One DeleteFileSystem try; reap() retries the file systems whose mount targets are still deleting together.
  const outcome = await teardownFileSystem(efs, fs.id, { clock, maxWaitMs: 0, mountTargets });
  return outcome.status === 'pending' ? { status: 'pending' } : { status: 'deleted' };
}

/**
 * An event's claim that its instance has ended, checked with EC2 (one DescribeInstances on the instance-id
 * filter). Only an end EC2 bears out makes the event evidence (and lifts the grace period); a claim EC2
 * contradicts (a stale, replayed or forged event) or cannot check counts for nothing, and the instance's
 * file systems are decided by the ordinary rules on what EC2 said. The lookup's answer is kept for those.
 */
async function confirmEnd(
  ec2: EC2Client,
  fleetId: string,
  claimed: GoneInstance,
): Promise<{ goneInstance?: GoneInstance; owners: Map<string, OwnerEvidence> }> {
  const owners = await lookupOwners(ec2, fleetId, [claimed.instanceId]);
  const owner = owners.get(claimed.instanceId)!;
  if (owner.kind !== 'gone' || owner.ownerState !== 'gone') return { owners };
  return {
    // An instance EC2 does not know at all may be one it does not show yet: decide.ts keeps young file systems.
    goneInstance: {
      ...claimed,
      cause: `${claimed.cause}; EC2: ${owner.detail}`,
      unknownToEc2: owner.unknown,
    },
    owners,
  };
}

/** What every step of one reaper run shares. */
interface ReapRun {
  readonly clients: ReaperClients;
  readonly settings: ReaperSettings;
  readonly options: ReapOptions;
  readonly clock: Clock;
  /** Milliseconds left before the run must stop starting new work (Infinity without a deadline). */
  timeLeft(): number;
  /** The report's count of Batch calls, which the evidence gathering adds to. */
  readonly batchLookups: BatchLookups;
  /** Puts one file system's outcome in the report and tells onDecision. */
  record(fs: FileSystemFacts, decision: Decision, outcome: Outcome, detail?: string): void;
}

export async function reap(
  clients: ReaperClients,
  settings: ReaperSettings,
  options: ReapOptions = {},
): Promise<ReapReport> {
  const report = emptyReport(settings.fleetId, settings.dryRun);
  const marginMs = settings.deadlineMarginSeconds * 1000;
  const run: ReapRun = {
    clients,
    settings,
    options,
    clock: options.clock ?? systemClock,
    timeLeft: () => (options.remainingTimeMs ? options.remainingTimeMs() - marginMs : Infinity),
    record: recorder(report, settings, options),
    batchLookups: report.batchLookups,
  };
  const { fileSystems, decisions, now, listingPages } = await decideFleet(run);
  report.scanned = fileSystems.length;
  const { deletions, marks, unmarks } = sortOut(run, fileSystems, decisions);
  await inBatches(run, marks, 'marked', (fs) => markIdle(clients.tagging, fs, new Date(now)));
  await inBatches(run, unmarks, 'unmarked', (fs) => unmarkIdle(clients.tagging, fs));
  await deleteAll(run, deletions, listingPages);
  return report;
}

function recorder(report: ReapReport, settings: ReaperSettings, options: ReapOptions): ReapRun['record'] {
  return (fs, decision, outcome, detail) => {
    const reason = detail ? `${decision.reason}; ${detail}` : decision.reason;
    if (outcome === 'deleted') report.deleted.push(fs.id);
    else if (outcome === 'marked') report.marked.push(fs.id);
    else if (outcome === 'unmarked') report.unmarked.push(fs.id);
    else if (outcome === 'kept') report.kept.push({ id: fs.id, reason });
    else if (outcome === 'foreign') report.foreign.push({ id: fs.id, reason });
    else report.failed.push({ id: fs.id, error: detail ?? decision.reason });
    options.onDecision?.({
      fileSystemId: fs.id,
      action: decision.action,
      outcome,
      reason,
      dryRun: settings.dryRun,
    });
  };
}

/**
 * Lists the fleet's file systems (only the named instance's on the event fast path, whose claim EC2 must
 * bear out) and decides each one.
 */
async function decideFleet(run: ReapRun) {
  const { clients, settings } = run;
  let listingPages = 0;
  let fileSystems = await listFleetFileSystems(clients.efs, settings.fleetId, () => listingPages++);
  const event = run.options.goneInstance;
  if (event) fileSystems = fileSystems.filter((fs) => fs.ownerInstanceId === event.instanceId);
  let gone = event;
  let knownOwners = new Map<string, OwnerEvidence>();
  if (event?.confirmed && fileSystems.length > 0) {
    ({ goneInstance: gone, owners: knownOwners } = await confirmEnd(clients.ec2, settings.fleetId, event));
  }
  const ctx: DecisionContext = {
    now: run.clock.now(),
    graceMinutes: settings.graceMinutes,
    idleWindowMinutes: settings.idleWindowMinutes,
    batchUnknownJobMinutes: settings.batchUnknownJobMinutes,
    goneInstance: gone,
  };
  const decisions = await decideAll(clients, settings, fileSystems, ctx, knownOwners, run.batchLookups);
  return { fileSystems, decisions, now: ctx.now, listingPages };
}

/**
 * Records what needs no call (foreign, kept, beyond the deletion limit, everything in a dry run) and sorts the
 * rest into the three kinds of work.
 */
function sortOut(run: ReapRun, fileSystems: readonly FileSystemFacts[], decisions: Map<string, Decision>) {
  const { settings, record } = run;
  const deletions: Work[] = [];
  const marks: Work[] = [];
  const unmarks: Work[] = [];
  let deletionsAllowed = settings.maxDeletionsPerRun;
  for (const fs of fileSystems) {
    const decision = decisions.get(fs.id)!;
    if (decision.foreign) record(fs, decision, 'foreign');
    else if (decision.action === 'keep') record(fs, decision, 'kept');
    else if (decision.action === 'delete' && deletionsAllowed-- <= 0) {
      record(fs, decision, 'kept', `deferred: at most ${settings.maxDeletionsPerRun} deletions per run`);
    } else if (settings.dryRun) {
      record(fs, decision, DRY_RUN_OUTCOME[decision.action]);
    } else if (decision.action === 'mark') marks.push({ fs, decision });
    else if (decision.action === 'unmark') unmarks.push({ fs, decision });
    else deletions.push({ fs, decision });
  }
  return { deletions, marks, unmarks };
}

/** Marks and unmarks go in batches (core/reaper/marks.ts); each file system is recorded on its own. */
async function inBatches(
  run: ReapRun,
  items: readonly Work[],
  done: Outcome,
  apply: (fs: FileSystemFacts[]) => Promise<MarkResults>,
): Promise<void> {
  if (items.length === 0) return;
  if (run.timeLeft() <= 0) {
    for (const { fs, decision } of items)
      run.record(fs, decision, 'kept', 'deferred: the run is out of time');
    return;
  }
  const results = await apply(items.map((item) => item.fs));
  for (const { fs, decision } of items) {
    const error = results.get(fs.id);
    run.record(fs, decision, error === undefined ? done : 'failed', error);
  }
}

/**
 * Deletion in two steps, so that no worker sits waiting: first the deletions are re-checked in batches, one
 * DescribeFileSystems page right before each batch's first irreversible call (recheck.ts says why that is as
 * safe as a read per file system), and each unchanged one has its mount targets read and deleted and
 * DeleteFileSystem tried once (bounded concurrency); then all those whose mount targets are still deleting are
 * retried together, one DeleteFileSystem each per round, with backoff, up to the teardown bound. Waiting for
 * each in turn would cap deletions at `concurrency` per mount-target deletion time (tens of seconds in AWS),
 * far below the rate EFS allows.
 */
async function deleteAll(run: ReapRun, deletions: readonly Work[], listingPages: number): Promise<void> {
  const { clients, settings, options, clock, record, timeLeft } = run;
  const concurrency = options.concurrency ?? DEFAULT_REAP_CONCURRENCY;
  const maxWaitMs = options.teardownMaxWaitMs ?? 120_000;
  const waitUntil = clock.now() + Math.max(0, Math.min(maxWaitMs, timeLeft()));
  const waiting: Work[] = [];
  const batches = recheckInBatches(clients.efs, settings.fleetId, deletions, {
    listingPages,
    stopped: () => timeLeft() <= 0,
    onProgress: options.onProgress,
  });
  await drainBounded(batches.next, concurrency, async (item) => {
    const { fs, decision } = item;
    if (timeLeft() <= 0) {
      record(fs, decision, 'kept', 'deferred: the run is out of time, the next run continues');
      return;
    }
    try {
      const checked =
        item.status === 'unread'
          ? judgeRecheck(item, await describeFacts(clients.efs, fs.id, settings.fleetId))
          : item;
      if (checked.status === 'gone') return record(fs, decision, 'deleted');
      if (checked.status === 'changed') return record(fs, decision, 'kept', checked.reason);
      if (checked.status === 'unread') throw new Error(`internal: ${fs.id} was not re-checked`);
      const result = await deleteFileSystem(clients.efs, checked.now, decision, clock);
      if (result.status === 'deleted') return record(fs, decision, 'deleted');
      if (result.status === 'contradicted') return record(fs, decision, 'kept', result.reason);
      waiting.push(item);
    } catch (err) {
      record(fs, decision, 'failed', errorText(err));
    }
  });
  const left = await retryUntilDeleted(run, waiting, waitUntil);
  const waited = Math.round(maxWaitMs / 1000);
  for (const { fs, decision } of left) {
    record(
      fs,
      decision,
      'kept',
      `deletion in progress (still in use after ${waited} s), the next run resumes`,
    );
  }
}

/**
 * Retries DeleteFileSystem on every file system in `waiting` together, each round after a backoff
 * (pollUntil), until none is left, `waitUntil` or the run's time is up; returns those still in use.
 */
async function retryUntilDeleted(run: ReapRun, waiting: Work[], waitUntil: number): Promise<Work[]> {
  const { clients, options, clock, record, timeLeft } = run;
  let rounds = 0;
  const retryRound = async (): Promise<PollResult<true>> => {
    if (rounds++ > 0) {
      const still: Work[] = [];
      await forEachBounded(waiting, options.concurrency ?? DEFAULT_REAP_CONCURRENCY, async (item) => {
        try {
          // No mount targets to delete: one DeleteFileSystem, FileSystemInUse while they finish deleting.
          const outcome = await teardownFileSystem(clients.efs, item.fs.id, { mountTargets: [], clock });
          if (outcome.status === 'pending') still.push(item);
          else record(item.fs, item.decision, 'deleted');
        } catch (err) {
          record(item.fs, item.decision, 'failed', errorText(err));
        }
      });
      waiting = still;
    }
    return waiting.length === 0 || timeLeft() <= 0 ? { value: true } : { state: 'in use' };
  };
  try {
    await pollUntil(retryRound, {
      clock,
      timeoutMs: Math.max(0, waitUntil - clock.now()),
      initialPollMs: 1000,
      maxPollMs: 10_000,
      onWaiting: () =>
        options.onProgress?.(`waiting for the mount targets of ${waiting.length} file system(s) to delete`),
    });
  } catch (err) {
    if (!(err instanceof PollTimeout)) throw err;
  }
  return waiting;
}
