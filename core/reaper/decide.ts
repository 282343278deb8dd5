/**
 * The reaper's decision for one file system, as a pure function of what is known about it.
 *
 * Evidence is gathered lazily: `decide` answers `{ need: 'connections' }` or `{ need: 'owner' }` when the
 * decision depends on evidence not read yet, so the caller reads metrics only for file systems that could
 * be touched and looks up owners only for those that metrics did not already settle. The rules, in order:
 *
 * 0. a file system the fleet did not make (CreationToken, One Zone, backups: fleet-file-systems.ts foreignReason) is
 *    reported as foreign and never touched, whatever its tags say;
 * 1. settling lifecycle states (creating, updating, deleting, deleted) and young file systems are kept —
 *    unless EC2 confirmed the owner has ended, when nothing can be setting them up;
 * 2. any client connection in the window vetoes everything (and clears an idle mark); unreadable metrics
 *    also keep the file system, because a live mount cannot be ruled out;
 * 3. strong evidence deletes: lifecycle `error`; no mount target; a teardown that started longer than the
 *    grace period ago; an owner that has let go of its scratch (core/contract/owner-state.ts: gone or stopped).
 *    A failed lookup is never "gone". A warning (Spot notice) names an instance that still runs: it deletes
 *    only on all-zero datapoints, never on none;
 * 4. a Batch run's file system (tag `mountfleet:batch-queue`: made by `mountfleet batch submit`, no owner
 *    instance) is judged by its job instead of an owner: kept while Batch says the job is active (SUBMITTED …
 *    RUNNING), whatever the metrics say; deleted once the job has been ended for the grace period (its teardown
 *    missed it), once Batch has not known the job for the batchUnknownJobMinutes setting, or once a submit that never tagged it is past its limit
 *    with no job of its run in the queue. A failed look-up is never evidence;
 * 5. metric-only evidence (owner running, every datapoint zero) is two-phase: mark, then delete once the
 *    mark has aged a full window and the file system is still idle. No datapoints is not zero.
 *
 * A mount target still being created or updated is evidence of use too; it is only visible to the
 * DescribeMountTargets call that deletion starts with, so reaper.ts applies that rule there.
 */
import {
  BATCH_ACTIVE_STATES,
  BATCH_SUBMIT_LIMIT_MINUTES,
  REAPER_DEFAULTS,
  TAG_BATCH_JOB,
  TAG_BATCH_QUEUE,
  TAG_FLEET,
  TAG_JOB,
  TAG_MARKED_IDLE_AT,
  TAG_OWNER_INSTANCE,
  TAG_RUN,
  TAG_TEARDOWN_STARTED_AT,
} from '../contract';

export interface FileSystemFacts {
  readonly id: string;
  /** `FileSystemArn`, for the batched tagging calls. */
  readonly arn?: string;
  /** Why the fleet did not make this file system although it carries the fleet tag: never touched. */
  readonly foreign?: string;
  /** The raw `mountfleet:teardown-started-at` tag, when present. */
  readonly teardownStartedAt?: string;
  readonly lifeCycleState: string;
  /** Epoch milliseconds. */
  readonly createdAt: number;
  readonly mountTargets: number;
  /** The `mountfleet:owner-instance` tag, when present. */
  readonly ownerInstanceId?: string;
  /** The `mountfleet:job` and `mountfleet:run` tags, when present (the re-check before deletion compares them). */
  readonly jobId?: string;
  readonly runId?: string;
  /** The raw `mountfleet:marked-idle-at` tag, when present. */
  readonly markedIdleAt?: string;
  /** The `mountfleet:fleet` tag (the listing keeps only this fleet's; the re-check compares it). */
  readonly fleet?: string;
  /** The `mountfleet:batch-queue` tag: a Batch run's file system, judged by its job (rule 4). */
  readonly batchQueue?: string;
  /** The `mountfleet:batch-job` tag: the Batch job using it, once its submit tagged it. */
  readonly batchJobId?: string;
}

/**
 * What Batch says of the job (or, for a file system its submit never tagged, of the jobs of its run in its queue).
 * `unknown`: Batch returned no such job (forgotten long after it ended, or none was submitted).
 */
export type BatchJobEvidence =
  | {
      readonly kind: 'known';
      readonly jobId: string;
      readonly status: string;
      /** When the job ended (epoch ms; DescribeJobs' and ListJobs' `stoppedAt`), if it did. */
      readonly stoppedAt?: number;
    }
  | { readonly kind: 'unknown' }
  | { readonly kind: 'lookup-failed'; readonly error: string };

export type ConnectionEvidence =
  /** Sum of ClientConnections over the window is above zero. */
  | { readonly kind: 'in-use'; readonly connections: number }
  /** Datapoints exist and every one is zero. */
  | { readonly kind: 'idle' }
  /** The query succeeded but CloudWatch has nothing for the window: not evidence of anything. */
  | { readonly kind: 'no-data' }
  /** GetMetricData failed for this file system's batch. */
  | { readonly kind: 'unavailable'; readonly error: string };

export type OwnerEvidence =
  /**
   * The owner has let go of its scratch: gone or stopped (core/contract/owner-state.ts). `unknown`: EC2 did not
   * return it at all — long gone, or so new that EC2 does not show it yet (see OWNER_VISIBILITY_MINUTES).
   */
  | {
      readonly kind: 'gone';
      readonly ownerState: 'gone' | 'stopped';
      readonly detail: string;
      readonly unknown?: boolean;
    }
  | { readonly kind: 'present'; readonly state: string }
  /** DescribeInstances failed: never evidence that the owner is gone. */
  | { readonly kind: 'lookup-failed'; readonly error: string };

interface Evidence {
  readonly connections?: ConnectionEvidence;
  readonly owner?: OwnerEvidence;
  readonly batchJob?: BatchJobEvidence;
}

export interface GoneInstance {
  readonly instanceId: string;
  readonly cause: string;
  /**
   * True when EC2 itself says the instance has ended (shutting-down, terminated or not found: reaper.ts
   * checks an event's claim with DescribeInstances), false for a warning ahead of it or a claim EC2 did
   * not bear out. Only a confirmed end lifts the grace period: nothing can be setting up or using a scratch
   * file system whose only user is gone, while a warned instance still runs its job.
   */
  readonly confirmed: boolean;
  /**
   * EC2 did not return the instance at all: long gone — or launched so recently that EC2 does not show it
   * yet, so a file system younger than OWNER_VISIBILITY_MINUTES is kept all the same.
   */
  readonly unknownToEc2?: boolean;
}

export interface DecisionContext {
  /** Epoch milliseconds. */
  readonly now: number;
  readonly graceMinutes: number;
  readonly idleWindowMinutes: number;
  /** A Batch job id Batch does not return counts as ended once the file system is this old. @default 60 */
  readonly batchUnknownJobMinutes?: number;
  /** The instance an interruption or termination event named: its going is the owner evidence. */
  readonly goneInstance?: GoneInstance;
}

type Action = 'delete' | 'mark' | 'unmark' | 'keep';
export interface Decision {
  readonly action: Action;
  readonly reason: string;
  /**
   * 'no-mount-target' when a deletion rests only on the file system having no mount target: a mount target
   * appearing before DeleteFileSystem contradicts that evidence, so the deletion must not tear it down.
   */
  readonly basis?: 'no-mount-target';
  /** Kept because the fleet did not make it (reported apart from the other kept file systems). */
  readonly foreign?: boolean;
}
export type Need =
  | { readonly need: 'connections' }
  | { readonly need: 'owner'; readonly instanceId: string }
  /** DescribeJobs of the tagged job (`jobId`), or, untagged, the jobs of the run in its queue. */
  | { readonly need: 'batch-job'; readonly jobId?: string };

export const INSTANCE_ID_PATTERN = /^i-[0-9a-f]{8,17}$/;

const MINUTE = 60_000;
const SETTLING_STATES: Record<string, string> = {
  creating: 'creating: not settled yet',
  updating: 'updating: not settled yet',
  deleting: 'deleting: deletion already in progress',
  deleted: 'deleted: already gone',
};

function minutesBetween(from: number, to: number): number {
  return Math.floor((to - from) / MINUTE);
}

function parseMark(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const t = Date.parse(value);
  return Number.isFinite(t) ? t : undefined;
}

export function isNeed(result: Decision | Need): result is Need {
  return 'need' in result;
}

const keep = (reason: string): Decision => ({ action: 'keep', reason });
const del = (reason: string): Decision => ({ action: 'delete', reason });

/** The rules in order (see the top of this file); each step answers, or passes to the next with undefined. */
export function decide(fs: FileSystemFacts, evidence: Evidence, ctx: DecisionContext): Decision | Need {
  const settled = foreignSettlingOrYoung(fs, ctx);
  if (settled) return settled;
  const connections = evidence.connections;
  if (connections === undefined) return { need: 'connections' };
  if (connections.kind === 'unavailable') {
    return keep(`ClientConnections unreadable (${connections.error}): a live mount cannot be ruled out`);
  }
  if (connections.kind === 'in-use') {
    const why = `in use: ${connections.connections} client connection(s) in the last ${ctx.idleWindowMinutes} min`;
    return fs.markedIdleAt !== undefined ? { action: 'unmark', reason: why } : keep(why);
  }
  const strong = strongEvidence(fs, ctx);
  if (strong) return strong;
  if (fs.batchQueue !== undefined) return batchRun(fs, evidence.batchJob, ctx);
  const owner = ownerEvidence(fs, evidence, connections, ctx);
  if (typeof owner !== 'string') return owner;
  return metricOnly(fs, owner, connections, ctx);
}

/** Rules 0 and 1: foreign, settling and young file systems are kept (a young one unless its owner has ended). */
function foreignSettlingOrYoung(fs: FileSystemFacts, ctx: DecisionContext): Decision | undefined {
  if (fs.foreign !== undefined) {
    return { action: 'keep', reason: `foreign: ${fs.foreign}; never deleted`, foreign: true };
  }
  const settling = SETTLING_STATES[fs.lifeCycleState];
  if (settling) return keep(settling);
  if (fs.lifeCycleState !== 'available' && fs.lifeCycleState !== 'error') {
    return keep(`lifecycle state ${fs.lifeCycleState}: not one the reaper acts on`);
  }
  const ownerConfirmedGone =
    fs.ownerInstanceId !== undefined &&
    ctx.goneInstance?.confirmed === true &&
    ctx.goneInstance.instanceId === fs.ownerInstanceId;
  if (ownerConfirmedGone && ctx.goneInstance?.unknownToEc2) {
    const visibility = unknownOwnerTooYoung(fs, fs.ownerInstanceId!, ctx);
    if (visibility) return visibility;
  }
  if (ctx.now - fs.createdAt < ctx.graceMinutes * MINUTE && !ownerConfirmedGone) {
    const ageMinutes = minutesBetween(fs.createdAt, ctx.now);
    return keep(`young: created ${ageMinutes} min ago, grace period ${ctx.graceMinutes} min`);
  }
  return undefined;
}

/** Rule 3 without the owner: lifecycle error, no mount target, a teardown stalled past the grace period. */
function strongEvidence(fs: FileSystemFacts, ctx: DecisionContext): Decision | undefined {
  if (fs.lifeCycleState === 'error') return del('lifecycle state error');
  if (fs.mountTargets === 0) {
    const ageMinutes = minutesBetween(fs.createdAt, ctx.now);
    return { ...del(`no mount target ${ageMinutes} min after creation`), basis: 'no-mount-target' };
  }
  const teardownStartedAt = parseMark(fs.teardownStartedAt);
  if (teardownStartedAt !== undefined && ctx.now - teardownStartedAt >= ctx.graceMinutes * MINUTE) {
    return del(
      `teardown started ${minutesBetween(teardownStartedAt, ctx.now)} min ago and did not finish (grace period ${ctx.graceMinutes} min)`,
    );
  }
  return undefined;
}

/**
 * Rule 3's owner: the event's instance, or what EC2 says of the owner tag. Answers a decision or a need, or
 * the note on the owner that the metric-only rule quotes.
 */
function ownerEvidence(
  fs: FileSystemFacts,
  evidence: Evidence,
  connections: Extract<ConnectionEvidence, { kind: 'idle' | 'no-data' }>,
  ctx: DecisionContext,
): Decision | Need | string {
  const owner = fs.ownerInstanceId;
  if (owner === undefined || !INSTANCE_ID_PATTERN.test(owner)) {
    return owner === undefined ? 'no owner tag' : `owner tag "${owner}" is not an instance id`;
  }
  if (ctx.goneInstance?.instanceId === owner) {
    // A warned instance still runs its job for about two minutes: only all-zero datapoints show it has
    // stopped using the file system, or EC2 saying it has already let go. No datapoints is not zero.
    if (!ctx.goneInstance.confirmed && connections.kind === 'no-data') {
      const ownerEvidence = evidence.owner;
      if (ownerEvidence === undefined) return { need: 'owner', instanceId: owner };
      if (ownerEvidence.kind === 'gone') return ownerGone(fs, owner, ownerEvidence, ctx);
      return keep(
        `${ctx.goneInstance.cause} for owner ${owner}: instance still running, no datapoints — waiting for it to end`,
      );
    }
    return del(`owner ${owner} is going: ${ctx.goneInstance.cause}`);
  }
  const ownerEvidence = evidence.owner;
  if (ownerEvidence === undefined) return { need: 'owner', instanceId: owner };
  if (ownerEvidence.kind === 'gone') return ownerGone(fs, owner, ownerEvidence, ctx);
  return ownerEvidence.kind === 'present'
    ? `owner ${owner} ${ownerEvidence.state}`
    : `owner ${owner} lookup failed (${ownerEvidence.error})`;
}

/** A submit never submits past its limit (core/batch/run.ts); this margin covers the clocks of submitter and EFS. */
const BATCH_UNTAGGED_MINUTES = BATCH_SUBMIT_LIMIT_MINUTES + 10;

const ACTIVE_JOB_STATES: ReadonlySet<string> = new Set(BATCH_ACTIVE_STATES);

/** Rule 4: a Batch run's file system, by what Batch says of its job. */
function batchRun(
  fs: FileSystemFacts,
  evidence: BatchJobEvidence | undefined,
  ctx: DecisionContext,
): Decision | Need {
  const ageMinutes = minutesBetween(fs.createdAt, ctx.now);
  const job = fs.batchJobId;
  if (job === undefined && ageMinutes < BATCH_UNTAGGED_MINUTES) {
    return keep(
      `Batch run without ${TAG_BATCH_JOB} yet, ${ageMinutes} min old: its submit may still be running (limit ${BATCH_SUBMIT_LIMIT_MINUTES} min)`,
    );
  }
  if (evidence === undefined) return { need: 'batch-job', jobId: job };
  const subject =
    job === undefined ? `no ${TAG_BATCH_JOB} tag ${ageMinutes} min after creation;` : `Batch job ${job}`;
  switch (evidence.kind) {
    case 'lookup-failed':
      return keep(`${subject} look-up failed (${evidence.error}): a running job cannot be ruled out`);
    case 'known':
      return batchJobKnown(fs, evidence, subject, ctx);
    case 'unknown': {
      if (job === undefined) {
        return del(
          `${subject} no job of its run in queue ${fs.batchQueue}: its submit ended without submitting`,
        );
      }
      const bound = ctx.batchUnknownJobMinutes ?? REAPER_DEFAULTS.batchUnknownJobMinutes;
      if (ageMinutes < bound) {
        return keep(`${subject} is not known to Batch yet; counts as ended only after ${bound} min`);
      }
      return del(`${subject} is unknown to Batch (ended long ago) ${ageMinutes} min after creation`);
    }
  }
}

/**
 * Rule 4, a job Batch describes: active keeps (and unmarks); ended deletes, but only once it has been ended for
 * the grace period. The Batch teardown is the designed path for an ended job (its "Job State Change" event
 * arrives within seconds, a failed delivery is retried for minutes, a failed attempt may be resubmitted first):
 * stepping in sooner would race it on the same mount targets and report as missed a teardown still under way.
 */
function batchJobKnown(
  fs: FileSystemFacts,
  evidence: Extract<BatchJobEvidence, { kind: 'known' }>,
  subject: string,
  ctx: DecisionContext,
): Decision {
  const ofRun = fs.batchJobId === undefined ? ` job ${evidence.jobId} of its run` : '';
  if (ACTIVE_JOB_STATES.has(evidence.status)) {
    const why = `${subject}${ofRun} is ${evidence.status}`;
    return fs.markedIdleAt !== undefined ? { action: 'unmark', reason: why } : keep(why);
  }
  if (evidence.stoppedAt !== undefined && ctx.now - evidence.stoppedAt < ctx.graceMinutes * MINUTE) {
    return keep(
      `${subject}${ofRun} ended ${evidence.status} ${minutesBetween(evidence.stoppedAt, ctx.now)} min ago: its teardown has the grace period (${ctx.graceMinutes} min) first`,
    );
  }
  return del(`${subject}${ofRun} ended ${evidence.status} and its teardown did not delete the file system`);
}

/** Rule 5, metric-only evidence: two-phase (mark, then delete once the mark is a full window old). */
function metricOnly(
  fs: FileSystemFacts,
  ownerNote: string,
  connections: Extract<ConnectionEvidence, { kind: 'idle' | 'no-data' }>,
  ctx: DecisionContext,
): Decision {
  if (connections.kind === 'no-data') {
    return keep(`${ownerNote}; no ClientConnections datapoints in the window (not evidence of idleness)`);
  }
  const idle = `${ownerNote}; 0 connections over the last ${ctx.idleWindowMinutes} min`;
  const markedAt = parseMark(fs.markedIdleAt);
  if (markedAt === undefined) return { action: 'mark', reason: `${idle}: marking ${TAG_MARKED_IDLE_AT}` };
  if (ctx.now - markedAt >= ctx.idleWindowMinutes * MINUTE) {
    return del(`${idle}; still idle ${minutesBetween(markedAt, ctx.now)} min after being marked`);
  }
  return keep(
    `${idle}; marked ${minutesBetween(markedAt, ctx.now)} min ago, deletes once the mark is ${ctx.idleWindowMinutes} min old`,
  );
}

/**
 * EC2 is eventually consistent: an instance launched moments ago may be missing from DescribeInstances
 * for minutes (AWS advises backing off for up to about five). So an owner EC2 does not know counts as gone
 * only once the file system is older than this; a younger one is kept, whatever the grace period.
 */
export const OWNER_VISIBILITY_MINUTES = 10;

/** Keeps a file system too young for its owner's absence from EC2 to mean anything; undefined otherwise. */
function unknownOwnerTooYoung(
  fs: FileSystemFacts,
  owner: string,
  ctx: DecisionContext,
): Decision | undefined {
  if (ctx.now - fs.createdAt >= OWNER_VISIBILITY_MINUTES * MINUTE) return undefined;
  return {
    action: 'keep',
    reason:
      `owner ${owner} is not known to EC2, but the file system is ${minutesBetween(fs.createdAt, ctx.now)} min old: ` +
      `a new instance can be missing from EC2's answers for minutes, so an unknown owner counts as gone only after ` +
      `${OWNER_VISIBILITY_MINUTES} min`,
  };
}

function ownerGone(
  fs: FileSystemFacts,
  owner: string,
  evidence: Extract<OwnerEvidence, { kind: 'gone' }>,
  ctx: DecisionContext,
): Decision {
  const tooYoung = evidence.unknown ? unknownOwnerTooYoung(fs, owner, ctx) : undefined;
  return tooYoung ?? { action: 'delete', reason: `owner ${owner} ${evidence.detail}` };
}

/** What the re-check before a deletion compares, with the name a report gives it. */
const RECHECKED: ReadonlyArray<readonly [keyof FileSystemFacts, string]> = [
  ['lifeCycleState', 'lifecycle state'],
  ['fleet', TAG_FLEET],
  ['batchQueue', TAG_BATCH_QUEUE],
  ['batchJobId', TAG_BATCH_JOB],
  ['ownerInstanceId', TAG_OWNER_INSTANCE],
  ['jobId', TAG_JOB],
  ['runId', TAG_RUN],
  ['teardownStartedAt', TAG_TEARDOWN_STARTED_AT],
  ['markedIdleAt', TAG_MARKED_IDLE_AT],
  ['foreign', 'ownership (CreationToken, One Zone, backups)'],
];

/**
 * What changed between the description a deletion was decided on and the one read right before deleting,
 * or undefined when nothing that matters did. Any change cancels the deletion for this run: someone acted
 * on the file system meanwhile, and the next run decides on what it finds then. A mount target that
 * appeared counts too when "no mount target" was the decision's evidence.
 */
export function changeSinceDecision(
  decided: FileSystemFacts,
  now: FileSystemFacts,
  decision: Decision,
): string | undefined {
  for (const [field, name] of RECHECKED) {
    if (decided[field] !== now[field]) {
      return `${name} changed from ${String(decided[field] ?? '(none)')} to ${String(now[field] ?? '(none)')}`;
    }
  }
  if (decision.basis === 'no-mount-target' && now.mountTargets > 0) {
    return `a mount target appeared (${now.mountTargets} now)`;
  }
  return undefined;
}
