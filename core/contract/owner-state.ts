/**
 * What the state of a scratch file system's owner instance means: the one rule that the agent (which
 * tears its scratch down) and the reaper (which deletes what is left behind) both follow.
 *
 * | owner state | from | agent | reaper |
 * |---|---|---|---|
 * | gone | EC2 `shutting-down`, `terminated`, or not found | — | deletes (a confirmed end lifts the grace period) |
 * | going | Spot `terminate` notice, Auto Scaling `Terminated` | tears down | deletes on all-zero datapoints |
 * | stopped | EC2 `stopping`/`stopped`, Spot `stop`/`hibernate` notice | tears down | deletes after the grace period |
 * | alive | EC2 `pending`/`running` (and any state EC2 may add) | runs the job | metric evidence only (two-phase) |
 *
 * A stopped instance keeps no NFS mount and its job process is dead, so its scratch is of no use when it
 * resumes: the agent tears it down on the notice and the reaper treats a stopped owner as having let go.
 */

type OwnerState = 'gone' | 'going' | 'stopped' | 'alive';

const EC2_INSTANCE_STATES: Readonly<Record<string, OwnerState>> = {
  pending: 'alive',
  running: 'alive',
  stopping: 'stopped',
  stopped: 'stopped',
  'shutting-down': 'gone',
  terminated: 'gone',
};

/**
 * An instance's owner state from its EC2 state name; `undefined` means DescribeInstances did not return it
 * (terminated instances vanish after about an hour). A state this table does not know is never an end.
 */
export function ownerStateOfInstance(ec2State: string | undefined): OwnerState {
  if (ec2State === undefined) return 'gone';
  return EC2_INSTANCE_STATES[ec2State] ?? 'alive';
}

/** The owner state an announcement ahead of the end means (IMDS notice or EventBridge warning). */
export function ownerStateOfNotice(source: 'spot' | 'auto-scaling', action: string): OwnerState {
  if (action === 'terminate') return 'going';
  if (source === 'spot' && (action === 'stop' || action === 'hibernate')) return 'stopped';
  return 'alive';
}

/** The agent stops the job and tears its scratch down in every state but `alive`. */
export function endsScratchJob(state: OwnerState): boolean {
  return state !== 'alive';
}

/** The owner has let go of its scratch for good: the reaper deletes without metric evidence. */
export function ownerReleasedScratch(state: OwnerState): state is 'gone' | 'stopped' {
  return state === 'gone' || state === 'stopped';
}
