/**
 * Whether a scratch file system's run may still be using it, for `mountfleet scratch delete`: judged on one
 * fresh DescribeFileSystems of it and the reaper's own evidence and rules (evidence.ts, decide.ts,
 * core/contract/owner-state.ts) — one DescribeInstances for its owner and, only when the reaper's rules need it, one
 * GetMetricData for its connections. Called right before the first irreversible call of a deletion.
 *
 * The run is **over** (the file system may go without --force) on the first of these, in this order:
 *
 * 1. lifecycle `deleting`/`deleted`: its deletion is under way already;
 * 2. (a mount target `creating`/`updating` is the opposite: someone is setting it up — alive, as the reaper holds);
 * 3. its run started its teardown (`mountfleet:teardown-started-at`, any age): a run unmounts before it tags;
 * 4. lifecycle `error`;
 * 5. its owner has let go of its scratch (owner-state.ts): EC2 says `shutting-down`, `terminated`, `stopping` or
 *    `stopped`, or does not know the instance once the file system is older than EC2's consistency window
 *    (OWNER_VISIBILITY_MINUTES). A job process does not outlive its instance, so neither the grace period
 *    nor connections in the window (which end minutes ago) keep it, as they keep it from the unattended reaper;
 * 6. the reaper would delete it now (decide.ts with the reaper's default settings): no mount target past the
 *    grace period, an idle mark a full window old on a file system still idle.
 *
 * Anything else is **alive**, or a live run cannot be ruled out: an owner EC2 shows `pending`/`running`, a
 * failed owner lookup, no owner tag, unreadable metrics — whatever the reaper keeps.
 */
import type { CloudWatchClient } from '@aws-sdk/client-cloudwatch';
import type { EC2Client } from '@aws-sdk/client-ec2';
import type { EFSClient, MountTargetDescription } from '@aws-sdk/client-efs';
import { TAG_TEARDOWN_STARTED_AT, REAPER_DEFAULTS } from '../contract';
import {
  decide,
  INSTANCE_ID_PATTERN,
  isNeed,
  OWNER_VISIBILITY_MINUTES,
  type ConnectionEvidence,
  type FileSystemFacts,
  type OwnerEvidence,
} from './decide';
import { connectionWindow, describeFacts, lookupOwners, readConnections } from './evidence';

export interface LivenessClients {
  readonly efs: EFSClient;
  readonly ec2: EC2Client;
  readonly cloudwatch: CloudWatchClient;
}

type RunLiveness =
  /** DescribeFileSystems does not find it (any more). */
  | { readonly status: 'gone' }
  | {
      readonly status: 'over' | 'alive';
      /** The file system as just read: its job, run and owner name the run. */
      readonly facts: FileSystemFacts;
      /** The evidence, for a person: why the run is over, or why it may be alive. */
      readonly evidence: string;
    };

/** Mount-target states that mean someone is setting the file system up (the reaper's rule too). */
const SETTING_UP = new Set(['creating', 'updating']);
const MINUTE = 60_000;

/**
 * Reads the file system again and judges its run (rules above). `mountTargets`: as the deletion just read
 * them (DescribeMountTargets). Read failures are never evidence that the run is over.
 */
export async function judgeRun(
  clients: LivenessClients,
  fleetId: string,
  fileSystemId: string,
  mountTargets: readonly MountTargetDescription[],
  now: number,
): Promise<RunLiveness> {
  const fs = await describeFacts(clients.efs, fileSystemId, fleetId);
  if (fs === undefined) return { status: 'gone' };
  const over = (evidence: string): RunLiveness => ({ status: 'over', facts: fs, evidence });
  const alive = (evidence: string): RunLiveness => ({ status: 'alive', facts: fs, evidence });

  if (fs.lifeCycleState === 'deleting') return over('its deletion is under way already');
  const settingUp = mountTargets.find((mt) => SETTING_UP.has(mt.LifeCycleState ?? ''));
  if (settingUp) {
    return alive(
      `mount target ${settingUp.MountTargetId} is ${settingUp.LifeCycleState}: someone is setting it up`,
    );
  }
  if (fs.teardownStartedAt !== undefined) {
    return over(`its run started its teardown at ${fs.teardownStartedAt} (${TAG_TEARDOWN_STARTED_AT})`);
  }
  if (fs.lifeCycleState === 'error') return over('lifecycle state error');

  const owner = fs.ownerInstanceId;
  let ownerEvidence: OwnerEvidence | undefined;
  if (owner !== undefined && INSTANCE_ID_PATTERN.test(owner)) {
    ownerEvidence = (await lookupOwners(clients.ec2, fleetId, [owner])).get(owner)!;
    const tooYoung = now - fs.createdAt < OWNER_VISIBILITY_MINUTES * MINUTE;
    if (ownerEvidence.kind === 'gone' && !(ownerEvidence.unknown && tooYoung)) {
      return over(`owner ${owner} ${ownerEvidence.detail}`);
    }
  }

  // What the reaper would do now, on the same reads.
  const ctx = {
    now,
    graceMinutes: REAPER_DEFAULTS.graceMinutes,
    idleWindowMinutes: REAPER_DEFAULTS.idleWindowMinutes,
  };
  let connections: ConnectionEvidence | undefined;
  let decision = decide(fs, { owner: ownerEvidence }, ctx);
  if (isNeed(decision) && decision.need === 'connections') {
    const window = connectionWindow(now, REAPER_DEFAULTS.idleWindowMinutes, REAPER_DEFAULTS.metricLagMinutes);
    connections = (await readConnections(clients.cloudwatch, [fs.id], window)).get(fs.id);
    decision = decide(fs, { owner: ownerEvidence, connections }, ctx);
  }
  // The owner was read above whenever decide() can ask for it (a well-formed owner tag).
  if (isNeed(decision)) return alive(`the reaper cannot decide yet (it needs the ${decision.need})`);
  if (decision.action === 'delete') return over(`the reaper would delete it now: ${decision.reason}`);
  const ownerNote =
    owner === undefined
      ? 'no owner tag'
      : ownerEvidence?.kind === 'present'
        ? `owner ${owner} is ${ownerEvidence.state}`
        : ownerEvidence?.kind === 'lookup-failed'
          ? `owner ${owner} could not be looked up (${ownerEvidence.error})`
          : ownerEvidence?.kind === 'gone'
            ? `owner ${owner} ${ownerEvidence.detail}, but the file system is too new for that to mean it is gone`
            : `owner tag "${owner}" is not an instance id`;
  return alive(
    decision.reason.startsWith(`owner ${owner} `)
      ? `the reaper keeps it: ${decision.reason}`
      : `${ownerNote}; the reaper keeps it: ${decision.reason}`,
  );
}
