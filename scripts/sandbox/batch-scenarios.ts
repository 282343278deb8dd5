/**
 * The four Batch jobs of the sandbox, all submitted with the real CLI (`mountfleet batch submit --scratch`):
 * one succeeds, one fails (exit 3), one is cancelled before it starts, and one loses its instance (the Spot
 * reclaim stand-in: the instance is terminated under the running job, which Batch reports as
 * "Host EC2 (instance i-…) terminated.") and is retried by the teardown as a new attempt with a new file system.
 */
import { CancelJobCommand } from '@aws-sdk/client-batch';
import { waitFor } from './fleet';
import {
  runAttempt,
  submitWithCli,
  endAndDeliver,
  type BatchAttemptRecord,
  type BatchJobRecord,
  type BatchStage,
} from './batch-jobs';
import { hostTerminatedReason } from './batch-scheduler';

/** Writes and checks 8 MiB on its scratch, shows what Batch gave it. */
const OK_SCRIPT = [
  'set -e',
  'echo "job $AWS_BATCH_JOB_ID attempt $AWS_BATCH_JOB_ATTEMPT queue $AWS_BATCH_JQ_NAME"',
  'head -c 8388608 /dev/urandom > /scratch/data.bin',
  'cp /scratch/data.bin /scratch/copy.bin',
  'cmp /scratch/data.bin /scratch/copy.bin',
  'df -h /scratch | tail -1',
].join('; ');
/**
 * The reclaimed job: says how full its scratch was at start (a retry gets a new, empty one), then works until
 * its standard input ends: the first attempt's never does (the container stand-in holds it open), so it runs
 * until its instance is taken away; the retry's is empty, as in any Batch container, so it finishes.
 */
const RECLAIM_SCRIPT =
  'echo "started, scratch has $(ls -A /scratch | wc -l) entries"; touch /scratch/partial; cat > /dev/null; echo finished';

const attempt = (n: number, jobId: string): BatchAttemptRecord => ({ attempt: n, jobId, states: [] });

function judge(job: BatchJobRecord, checks: Record<string, boolean>): void {
  const failed = Object.entries(checks)
    .filter(([, ok]) => !ok)
    .map(([what]) => what);
  job.ok = failed.length === 0;
  if (!job.ok) job.outcome += `; NOT as expected: ${failed.join(', ')}`;
}

const cleanEnd = (a: BatchAttemptRecord) => a.fileSystemDeleted === true && a.revisionDeregistered === true;

/** Plays the four jobs on two played instances of the queue's zone; `terminate` ends an instance in EC2. */
export async function playBatchJobs(
  stage: BatchStage,
  instances: readonly [string, string],
  terminate: (instanceId: string) => Promise<void>,
): Promise<BatchJobRecord[]> {
  const [a, b] = instances;
  const stamp = Date.now().toString(36);
  const names = ['ok', 'fail', 'cancel', 'reclaim'].map((n) => `demo-batch-${n}-${stamp}`);
  const [okId, failId, cancelId, reclaimId] = await Promise.all([
    submitWithCli(stage, names[0], ['sh', '-c', OK_SCRIPT]),
    submitWithCli(stage, names[1], ['sh', '-c', 'echo "failing on purpose"; exit 3']),
    submitWithCli(stage, names[2], ['sleep', '600']),
    submitWithCli(stage, names[3], ['sh', '-c', RECLAIM_SCRIPT], 2),
  ]);
  const ok: BatchJobRecord = {
    name: names[0],
    scenario: 'succeeds',
    attempts: [attempt(1, okId)],
    outcome: '',
    ok: false,
  };
  const fail: BatchJobRecord = {
    name: names[1],
    scenario: 'fails (exit 3)',
    attempts: [attempt(1, failId)],
    outcome: '',
    ok: false,
  };
  const cancel: BatchJobRecord = {
    name: names[2],
    scenario: 'cancelled while RUNNABLE',
    attempts: [attempt(1, cancelId)],
    outcome: '',
    ok: false,
  };
  const reclaim: BatchJobRecord = {
    name: names[3],
    scenario: 'loses its instance (Spot reclaim), retried',
    attempts: [attempt(1, reclaimId)],
    outcome: '',
    ok: false,
  };

  await Promise.all([
    runAttempt(stage, ok.attempts[0], a),
    runAttempt(stage, fail.attempts[0], a),
    (async () => {
      await stage.batch.send(
        new CancelJobCommand({ jobId: cancelId, reason: 'sandbox: cancelled by its user' }),
      );
      await endAndDeliver(stage, cancel.attempts[0]);
    })(),
    runAttempt(stage, reclaim.attempts[0], b, async (container) => {
      await waitFor(
        'the reclaimed job to start',
        () => (container.output().includes('started') ? true : undefined),
        60_000,
      );
      // The instance goes away under the job: its container with it.
      container.kill();
      await terminate(b);
      return { statusReason: hostTerminatedReason(b) };
    }),
  ]);
  // The teardown resubmitted the reclaimed job as attempt 2 (a new job, file system and revision) before it
  // answered attempt 1's event, so the scheduler stand-in has seen it by now, or never will.
  const retry = [...stage.scheduler.jobs.values()].find(
    (j) => j.jobName === names[3] && j.jobId !== reclaimId,
  );
  if (retry) {
    reclaim.attempts.push(attempt(2, retry.jobId));
    await runAttempt(stage, reclaim.attempts[1], a);
  }

  const [o, f, c] = [ok.attempts[0], fail.attempts[0], cancel.attempts[0]];
  const [r1, r2 = attempt(2, '(none submitted)')] = reclaim.attempts;
  ok.outcome = `SUCCEEDED (exit ${o.exitCode}); scratch ${o.fileSystemId} ${cleanEnd(o) ? 'deleted, revision deregistered' : 'NOT cleaned'}`;
  judge(ok, { SUCCEEDED: o.states.at(-1) === 'SUCCEEDED', cleaned: cleanEnd(o) });
  fail.outcome = `FAILED (exit ${f.exitCode}), not retried; scratch ${cleanEnd(f) ? 'deleted' : 'NOT cleaned'}`;
  judge(fail, {
    'FAILED with exit 3': f.states.at(-1) === 'FAILED' && f.exitCode === 3,
    cleaned: cleanEnd(f),
    'one attempt': fail.attempts.length === 1,
  });
  cancel.outcome = `FAILED: "${c.statusReason}"; scratch ${cleanEnd(c) ? 'deleted' : 'NOT cleaned'}`;
  judge(cancel, { 'never started': !c.states.includes('STARTING'), cleaned: cleanEnd(c) });
  reclaim.outcome =
    `attempt 1 FAILED: "${r1.statusReason}"; attempt 2 ${r2.states.at(-1)} on a new file system ` +
    `(${r1.fileSystemId} → ${r2.fileSystemId}); both cleaned: ${cleanEnd(r1) && cleanEnd(r2)}`;
  judge(reclaim, {
    'host lost': r1.statusReason === hostTerminatedReason(b),
    'attempt 2 SUCCEEDED': r2.states.at(-1) === 'SUCCEEDED',
    'new file system': r2.fileSystemId !== undefined && r2.fileSystemId !== r1.fileSystemId,
    cleaned: cleanEnd(r1) && cleanEnd(r2),
  });
  return [ok, fail, cancel, reclaim];
}
