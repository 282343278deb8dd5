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
import { connectionWindow, describeFacts, factsOf, lookupOwners, readConnections } from './evidence';
import { listMountTargets, mapFleetFileSystems, teardownFileSystem } from '../efs';
import { gatherBatchJobs, type BatchLookups } from './batch-jobs';
import { markIdle, unmarkIdle, type MarkResults } from './marks';
import { judgeRecheck, recheckInBatches, type Rechecked, type Work } from './recheck';
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

/**
 * Decides every file system, reading connections, owners and jobs in batches only where a decision needs them;
 * each round decides again only those still waiting for evidence (at 100,000 file systems, a decision of each
 * per round was 100,000 objects of garbage a round).
 */
async function decideAll(
  clients: ReaperClients,
  settings: ReaperSettings,
  fileSystems: readonly FileSystemFacts[],
  ctx: DecisionContext,
  knownOwners: ReadonlyMap<string, OwnerEvidence>,
  calls: BatchLookups,
): Promise<Decision[]> {
  const connections = new Map<string, ConnectionEvidence>();
  const owners = new Map<string, OwnerEvidence>(knownOwners);
  const batchJobs = new Map<string, BatchJobEvidence>();
  const decideOne = (fs: FileSystemFacts) =>
    decide(
      fs,
      {
        connections: connections.get(fs.id),
        owner: fs.ownerInstanceId === undefined ? undefined : owners.get(fs.ownerInstanceId),
        batchJob: batchJobs.get(fs.batchJobId ?? fs.id),
      },
      ctx,
    );
  const results = fileSystems.map(decideOne);
  /** The file systems (by index) whose decision waits for `need`. */
  const waitingFor = (need: Need['need']) =>
    results.flatMap((r, i) => (isNeed(r) && r.need === need ? [i] : []));
  const decideAgain = (indices: readonly number[]) => {
    for (const i of indices) results[i] = decideOne(fileSystems[i]);
  };

  const wantConnections = waitingFor('connections');
  if (wantConnections.length > 0) {
    const window = connectionWindow(ctx.now, settings.idleWindowMinutes, settings.metricLagMinutes);
    const ids = wantConnections.map((i) => fileSystems[i].id);
    for (const [id, evidence] of await readConnections(clients.cloudwatch, ids, window)) {
      connections.set(id, evidence);
    }
    decideAgain(wantConnections);
  }
  const wantOwners = waitingFor('owner');
  if (wantOwners.length > 0) {
    const ids = wantOwners.map((i) => (results[i] as Extract<Need, { need: 'owner' }>).instanceId);
    for (const [id, evidence] of await lookupOwners(clients.ec2, settings.fleetId, ids)) {
      owners.set(id, evidence);
    }
    decideAgain(wantOwners);
  }
  const wantJobs = waitingFor('batch-job');
  if (wantJobs.length > 0) {
    const wants = wantJobs.map((i) => ({
      fs: fileSystems[i],
      need: results[i] as Extract<Need, { need: 'batch-job' }>,
    }));
    for (const [key, evidence] of await gatherBatchJobs(clients.batch, settings.fleetId, wants, calls)) {
      batchJobs.set(key, evidence);
    }
    decideAgain(wantJobs);
  }
  return results.map((r, i) => {
    if (isNeed(r)) {
      throw new Error(`internal: no decision for ${fileSystems[i].id} after gathering evidence (${r.need})`);
    }
    return r;
  });
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
  const { deletions, reserve, marks, unmarks, now } = await decideAndSortOut(run, report);
  const stopped = () => run.timeLeft() <= 0;
  await inBatches(run, marks, 'marked', (fs) => markIdle(clients.tagging, fs, new Date(now), stopped));
  await inBatches(run, unmarks, 'unmarked', (fs) => unmarkIdle(clients.tagging, fs, stopped));
  await deleteAll(run, deletions, reserve);
  return report;
}

/**
 * Lists and decides the fleet (decideFleet), records what needs no call, and returns the work only: the
 * listing's facts of the file systems kept (most of 100,000) are garbage from here on.
 */
async function decideAndSortOut(run: ReapRun, report: ReapReport) {
  const { fileSystems, listingPages, decisions, now } = await decideFleet(run);
  report.scanned = fileSystems.length;
  return { ...sortOut(run, fileSystems, listingPages, decisions), now };
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
  // Where the listing showed each file system: the re-check before deleting plans its pass on it (recheck.ts).
  let pagesRead = 0;
  let listingPages: number[] = [];
  let fileSystems = await mapFleetFileSystems(
    clients.efs,
    settings.fleetId,
    (description) => {
      listingPages.push(pagesRead);
      return factsOf(description, settings.fleetId);
    },
    () => pagesRead++,
  );
  const event = run.options.goneInstance;
  if (event) {
    const owned = fileSystems.map((fs) => fs.ownerInstanceId === event.instanceId);
    fileSystems = fileSystems.filter((_, i) => owned[i]);
    listingPages = listingPages.filter((_, i) => owned[i]);
  }
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
  return { fileSystems, listingPages, decisions, now: ctx.now };
}

/**
 * Records what needs no call (foreign, kept, everything in a dry run, deletions beyond what the run may try) and
 * sorts the rest into the kinds of work. Deletions go in the listing's order: the first maxDeletionsPerRun, then
 * as many again in reserve, tried only in place of one that fails or is spared (deleteAll), so that file systems
 * a run cannot delete do not use up the deletions of every run after it.
 */
function sortOut(
  run: ReapRun,
  fileSystems: readonly FileSystemFacts[],
  listingPages: readonly number[],
  decisions: readonly Decision[],
) {
  const { settings, record } = run;
  const cap = settings.maxDeletionsPerRun;
  let decidedDeletions = 0;
  const deletions: Work[] = [];
  const reserve: Work[] = [];
  const marks: Work[] = [];
  const unmarks: Work[] = [];
  fileSystems.forEach((fs, i) => {
    const work: Work = { fs, decision: decisions[i], listingPage: listingPages[i] };
    const { decision } = work;
    if (decision.foreign) record(fs, decision, 'foreign');
    else if (decision.action === 'keep') record(fs, decision, 'kept');
    else if (decision.action === 'delete' && decidedDeletions++ >= cap) {
      if (settings.dryRun || reserve.length === cap) record(fs, decision, 'kept', deferred(cap));
      else reserve.push(work);
    } else if (settings.dryRun) {
      record(fs, decision, DRY_RUN_OUTCOME[decision.action]);
    } else if (decision.action === 'mark') marks.push(work);
    else if (decision.action === 'unmark') unmarks.push(work);
    else deletions.push(work);
  });
  return { deletions, reserve, marks, unmarks };
}

const deferred = (cap: number) => `deferred: at most ${cap} deletions per run`;

/**
 * Marks and unmarks go in batches (core/reaper/marks.ts), each only while the run has time; each file system
 * is recorded on its own, those the run had no time for as deferred.
 */
async function inBatches(
  run: ReapRun,
  items: readonly Work[],
  done: Outcome,
  apply: (fs: FileSystemFacts[]) => Promise<MarkResults>,
): Promise<void> {
  if (items.length === 0) return;
  const results = await apply(items.map((item) => item.fs));
  for (const { fs, decision } of items) {
    const error = results.get(fs.id);
    if (!results.has(fs.id)) run.record(fs, decision, 'kept', 'deferred: the run is out of time');
    else run.record(fs, decision, error === undefined ? done : 'failed', error);
  }
}

/**
 * Deletion in two steps, so that no worker sits waiting: first the deletions are re-checked in batches, one
 * DescribeFileSystems page right before each batch's first irreversible call (recheck.ts says why that is as
 * safe as a read per file system), and each unchanged one has its mount targets read and deleted and
 * DeleteFileSystem tried once (bounded concurrency); then all those whose mount targets are still deleting are
 * retried together, one DeleteFileSystem each per round, with backoff, up to the teardown bound. Waiting for
 * each in turn would cap deletions at `concurrency` per mount-target deletion time (tens of seconds in AWS),
 * far below the rate EFS allows. A deletion that fails or is spared lets one from `reserve` (sortOut) be tried in
 * its place, re-read alone right before its first delete, until the reserve or the run's time runs out.
 */
async function deleteAll(run: ReapRun, deletions: readonly Work[], reserve: readonly Work[]): Promise<void> {
  const { clients, settings, options, clock, record, timeLeft } = run;
  const concurrency = options.concurrency ?? DEFAULT_REAP_CONCURRENCY;
  const maxWaitMs = options.teardownMaxWaitMs ?? 120_000;
  const waiting: Work[] = [];
  /** Deletions that failed or were spared: each lets one from the reserve be tried in its place. */
  let freed = 0;
  const notDeleted = (work: Work, outcome: 'kept' | 'failed', detail: string) => {
    freed++;
    record(work.fs, work.decision, outcome, detail);
  };
  const deleteOne = async (item: Rechecked) => {
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
      if (checked.status === 'changed') return notDeleted(item, 'kept', checked.reason);
      if (checked.status === 'unread') throw new Error(`internal: ${fs.id} was not re-checked`);
      const result = await deleteFileSystem(clients.efs, checked.now, decision, clock);
      if (result.status === 'deleted') return record(fs, decision, 'deleted');
      if (result.status === 'contradicted') return notDeleted(item, 'kept', result.reason);
      waiting.push(item);
    } catch (err) {
      notDeleted(item, 'failed', errorText(err));
    }
  };
  const batches = recheckInBatches(clients.efs, settings.fleetId, deletions, {
    stopped: () => timeLeft() <= 0,
    onProgress: options.onProgress,
  });
  await drainBounded(batches.next, concurrency, deleteOne);
  const unused = [...reserve];
  while (freed > 0 && unused.length > 0 && timeLeft() > 0) {
    const instead = unused.splice(0, freed);
    freed = 0;
    // Listed after the batches' pages: each is re-read alone, by id, right before its first delete.
    await forEachBounded(instead, concurrency, (work) => deleteOne({ ...work, status: 'unread' }));
  }
  for (const { fs, decision } of unused) record(fs, decision, 'kept', deferred(settings.maxDeletionsPerRun));
  // The bound on the wait counts from here, not from the first deletion: the pass through a long batch at EFS's
  // rate can outlast it by itself (1,000 deletions at 10 requests/s take five minutes), and then none of the
  // deletions whose mount targets were still deleting would be retried in this run at all.
  const waitUntil = clock.now() + Math.max(0, Math.min(maxWaitMs, timeLeft()));
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
