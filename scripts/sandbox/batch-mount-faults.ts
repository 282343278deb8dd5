/**
 * The Batch section's mount faults: a job runs on the played Batch host (batch-host.ts: the fleet's real mounts,
 * its agent's guard) when its mount fails under it — Mountpoint killed (`kill -9`), or the zone's Express cache
 * black-holed at the fault proxy. Each job is submitted with two attempts through the real CLI; the host's agent
 * ends the first attempt's container (its reason in the job's log, exit 137); the deployed teardown retries it as a
 * new run, which the scheduler stand-in places on the host once its agent says the mounts are live again, as the
 * ECS start gate holds the ECS agent until then; the retry reads the data and succeeds.
 */
import { waitFor } from './fleet';
import { runAttempt, submitWithCli, type BatchJobRecord, type BatchStage } from './batch-jobs';
import type { PlayedBatchHost } from './batch-host';
import type { FaultProxy } from '../../test/support/fault-proxy';

/**
 * Reads the data set through the fleet path, says so, and works until its standard input ends (the first
 * attempt's never does: the sandbox holds it open until the fault ends the job); then reads it again.
 */
const READ_SCRIPT = (path: string) =>
  `cat ${path}/shard-0000.tar > /dev/null && echo "read the data set"; cat > /dev/null; ` +
  `cat ${path}/shard-0000.tar > /dev/null && echo "read it again: finished"`;

/** How long a job may run on after the fault before the sandbox calls the guard's work failed. */
const JOB_END_BOUND_MS = 120_000;

/** What the report shows of one fault: when it came, when the host ended the job, what the job's log got. */
export interface MountFaultRecord extends BatchJobRecord {
  readonly fault: string;
  /** From the fault to the container's exit (the attempt's end as Batch sees it). */
  endedSeconds?: number;
  /** The line the host's agent wrote into the job's log. */
  jobLogLine?: string;
}

/** Plays the two faults, one after the other, on the host; returns a record per job. */
export async function playMountFaults(
  stage: BatchStage,
  host: PlayedBatchHost,
  proxy: FaultProxy,
  mountPath: string,
): Promise<MountFaultRecord[]> {
  const stamp = Date.now().toString(36);
  const restart = await faultUnderJob(stage, host, `demo-batch-restart-${stamp}`, mountPath, {
    name: 'Mountpoint killed (kill -9) under a running job',
    reason: 'Mountpoint restarted',
    inject: () => {
      host.killMountpoint();
      return () => undefined;
    },
  });
  const dark = await faultUnderJob(stage, host, `demo-batch-dark-${stamp}`, mountPath, {
    name: "the zone's Express cache black-holed under a running job",
    reason: 'Express cache zone down',
    inject: () => {
      const bucket = host.expressBucket;
      if (!bucket) throw new Error('the Batch host has no Express cache bucket in its zone');
      const rule = proxy.addRule({
        service: 's3',
        match: (r) => r.path === `/${bucket}` || r.path.startsWith(`/${bucket}/`),
        fault: { kind: 'blackhole' },
      });
      return () => proxy.removeRule(rule);
    },
  });
  return [restart, dark];
}

async function faultUnderJob(
  stage: BatchStage,
  host: PlayedBatchHost,
  name: string,
  mountPath: string,
  fault: {
    readonly name: string;
    /** What the host's agent must say ended the job. */
    readonly reason: string;
    readonly inject: () => () => void;
  },
): Promise<MountFaultRecord> {
  const jobId = await submitWithCli(stage, name, ['sh', '-c', READ_SCRIPT(mountPath)], 2);
  const record: MountFaultRecord = {
    name,
    scenario: fault.name,
    fault: fault.name,
    attempts: [{ attempt: 1, jobId, states: [] }],
    outcome: '',
    ok: false,
  };
  let faultAt = 0;
  let restore = () => undefined as void;
  await runAttempt(stage, record.attempts[0], host.instanceId, async (container) => {
    await waitFor(
      'the job to read its data',
      () => (container.output().includes('read the data set') ? true : undefined),
      60_000,
    );
    faultAt = Date.now();
    restore = fault.inject();
    // Bounded: a guard that does not act would leave the job running for good.
    const code = await Promise.race([
      container.exited,
      new Promise<'not ended'>((r) => setTimeout(() => r('not ended'), JOB_END_BOUND_MS).unref()),
    ]);
    if (code === 'not ended') {
      container.kill();
      throw new Error(
        `${fault.name}: the host's agent did not end the job within ${JOB_END_BOUND_MS / 1000} s`,
      );
    }
    record.endedSeconds = (Date.now() - faultAt) / 1000;
    record.jobLogLine = container
      .stderr()
      .split('\n')
      .find((l) => l.startsWith('mountfleet: ending this job'));
    // What Docker reports of a container killed by SIGKILL: exit 137, and Batch's usual reason.
    return { exitCode: code ?? 137 };
  });
  // The teardown resubmitted attempt 1 as attempt 2 (exit 137, attempts left) before it answered the event.
  const retry = [...stage.scheduler.jobs.values()].find((j) => j.jobName === name && j.jobId !== jobId);
  if (retry) {
    // Batch places a job only on a host whose ECS agent runs: the gate holds it until the mounts are live.
    await host.waitReady('the Batch host to be ready again after the fault');
    record.attempts.push({ attempt: 2, jobId: retry.jobId, states: [] });
    await runAttempt(stage, record.attempts[1], host.instanceId);
  }
  restore();
  const [a1, a2] = record.attempts;
  record.outcome =
    `attempt 1 ended by the host's agent ${record.endedSeconds?.toFixed(2)} s after the fault (exit ${a1.exitCode}); ` +
    `attempt 2 ${a2?.states.at(-1) ?? 'not submitted'}`;
  const failed = Object.entries({
    [`the job was told why (${fault.reason})`]: record.jobLogLine?.includes(`(${fault.reason})`) === true,
    'attempt 1 exit 137': a1.exitCode === 137,
    'attempt 2 SUCCEEDED': a2?.states.at(-1) === 'SUCCEEDED',
    'both cleaned': [a1, a2].every((a) => a?.fileSystemDeleted === true && a.revisionDeregistered === true),
  }).filter(([, ok]) => !ok);
  record.ok = failed.length === 0;
  if (!record.ok) record.outcome += `; NOT as expected: ${failed.map(([w]) => w).join(', ')}`;
  return record;
}
