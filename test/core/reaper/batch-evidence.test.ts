/**
 * The reaper and Batch runs (core/reaper/decide.ts rule 4, evidence.ts lookupBatchJobs / lookupRunJobs), against
 * the emulator: a Batch run's file system has no owner instance, so its job is the evidence. moto's Docker-less
 * Batch marks every job SUCCEEDED inside SubmitJob; an active job is a stand-in — the fault proxy rewrites the
 * job's status in moto's DescribeJobs / ListJobs answers to the state a queued or running job has on AWS.
 */
import { RegisterJobDefinitionCommand, SubmitJobCommand, type BatchClient } from '@aws-sdk/client-batch';
import { TagResourceCommand, type Tag } from '@aws-sdk/client-efs';
import { reaperSettingsFromEnv, reaperSettingsFromFlags } from '../../../core/contract/reaper-settings';
import { creationToken } from '../../../core/contract/creation-token';
import { TAG_BATCH_JOB, TAG_BATCH_QUEUE, runJobDefinitionName } from '../../../core/contract/batch';
import { TAG_RUN } from '../../../core/contract/tags';
import { reap } from '../../../core/reaper/reaper';
import type { ReapReport } from '../../../core/reaper/report';
import { generateRunId } from '../../../core/contract/naming';
import { createScratchFileSystem } from '../../support/fixtures';
import { createBatchFleet, FLEET, type BatchFleet } from '../batch/batch-fleet';
import { clockAt, describeAll, reaperClients, seedConnections, useReaperEmulator } from './scenario';

const settings = reaperSettingsFromFlags({ fleetId: FLEET });

const keptReason = (report: ReapReport, id: string) => report.kept.find((k) => k.id === id)?.reason;

/**
 * Stand-in for a job in another state than moto's (SUCCEEDED at once): its status in moto's answers becomes
 * `status`, and with `stoppedAt` (epoch ms) the time it ended becomes that.
 */
function jobsShownAs(jobIds: readonly string[], status: string, stoppedAt?: number) {
  return (body: string) =>
    JSON.stringify(JSON.parse(body), (_key, value: unknown) => {
      if (value && typeof value === 'object' && 'jobId' in value && 'status' in value) {
        const job = value as { jobId: string; status: string };
        if (!jobIds.includes(job.jobId)) return job;
        return stoppedAt === undefined ? { ...job, status } : { ...job, status, stoppedAt };
      }
      return value;
    });
}

async function submit(batch: BatchClient, fleet: BatchFleet, jobDefinition = fleet.jobDefinition) {
  const out = await batch.send(
    new SubmitJobCommand({ jobName: 'encode', jobQueue: fleet.queueArn, jobDefinition }),
  );
  return out.jobId!;
}

/** A Batch run's file system as `mountfleet batch submit` makes it (with `jobId` once tagged). */
async function batchFileSystem(
  c: ReturnType<typeof reaperClients>,
  fleet: BatchFleet,
  options: { runId?: string; jobId?: string } = {},
): Promise<string> {
  const runId = options.runId ?? generateRunId();
  const extraTags: Tag[] = [
    { Key: TAG_RUN, Value: runId },
    { Key: TAG_BATCH_QUEUE, Value: fleet.queue },
    ...(options.jobId ? [{ Key: TAG_BATCH_JOB, Value: options.jobId }] : []),
  ];
  return createScratchFileSystem(
    c.efs,
    {
      fleet: FLEET,
      job: 'encode',
      mountTargetSubnet: fleet.net.subnets[0],
      securityGroupId: fleet.net.securityGroupId,
      extraTags,
    },
    creationToken(FLEET, runId),
  );
}

describe('the reaper and Batch runs (emulator)', () => {
  const emu = useReaperEmulator();
  let fleet: BatchFleet;
  beforeEach(async () => {
    emu.proxy.clear();
    await emu.reset();
    const c = reaperClients();
    fleet = await createBatchFleet(emu.endpoint, c.batch, c.ec2);
  });

  it('keeps the file system of a RUNNABLE job over window after window with 0 connections, and never marks it', async () => {
    const c = reaperClients();
    const jobId = await submit(c.batch, fleet);
    const id = await batchFileSystem(c, fleet, { jobId });
    await seedConnections(c.cloudwatch, [id], [0, 0, 0], Date.now());
    emu.proxy.addRule({
      service: 'batch',
      operation: 'DescribeJobs',
      fault: { kind: 'rewrite', rewrite: jobsShownAs([jobId], 'RUNNABLE') },
    });

    for (const minutes of [60, 120, 240]) {
      const report = await reap(c, settings, { clock: clockAt(minutes) });
      expect(report.deleted).toEqual([]);
      expect(report.marked).toEqual([]);
      expect(keptReason(report, id)).toBe(`Batch job ${jobId} is RUNNABLE`);
    }
    expect((await describeAll(c.efs)).has(id)).toBe(true);
  });

  it('deletes the file system of a job that ended (its teardown missed it)', async () => {
    const c = reaperClients();
    const jobId = await submit(c.batch, fleet); // moto: SUCCEEDED at once
    const id = await batchFileSystem(c, fleet, { jobId });

    const report = await reap(c, settings, { clock: clockAt(60) });

    expect(report.deleted).toEqual([id]);
    expect(report.batchLookups).toEqual({ describeJobs: 1, listJobs: 0 });
  });

  it.each(['SUCCEEDED', 'FAILED'])(
    'leaves a job that ended %s to its teardown for the grace period after it ended, then deletes',
    async (status) => {
      const c = reaperClients();
      const jobId = await submit(c.batch, fleet);
      const id = await batchFileSystem(c, fleet, { jobId });
      const base = Date.now();
      // The job ran for 2 hours and ended 10 min before the first run of the reaper.
      const endedAt = base + 110 * 60_000;
      emu.proxy.addRule({
        service: 'batch',
        operation: 'DescribeJobs',
        fault: { kind: 'rewrite', rewrite: jobsShownAs([jobId], status, endedAt) },
      });

      const early = await reap(c, settings, { clock: clockAt(120, base) });
      expect(early.deleted).toEqual([]);
      expect(keptReason(early, id)).toBe(
        `Batch job ${jobId} ended ${status} 10 min ago: its teardown has the grace period (30 min) first`,
      );

      const late = await reap(c, settings, { clock: clockAt(140, base) });
      expect(late.deleted).toEqual([id]);
    },
  );

  it('keeps a job id Batch does not know for an hour after creation, then deletes', async () => {
    const c = reaperClients();
    const id = await batchFileSystem(c, fleet, { jobId: '0b1e6c9f-0000-4000-8000-000000000000' });

    const early = await reap(c, settings, { clock: clockAt(50) });
    expect(early.deleted).toEqual([]);
    expect(keptReason(early, id)).toMatch(/is not known to Batch yet; counts as ended only after 60 min$/);

    const late = await reap(c, settings, { clock: clockAt(70) });
    expect(late.deleted).toEqual([id]);
  });

  it('takes the bound on unknown jobs from its setting', async () => {
    const c = reaperClients();
    const id = await batchFileSystem(c, fleet, { jobId: '0b1e6c9f-0000-4000-8000-000000000001' });
    const patient = reaperSettingsFromFlags({ fleetId: FLEET, batchUnknownJobMinutes: '180' });

    const early = await reap(c, patient, { clock: clockAt(170) });
    expect(early.deleted).toEqual([]);
    expect(keptReason(early, id)).toMatch(/counts as ended only after 180 min$/);

    const late = await reap(c, patient, { clock: clockAt(181) });
    expect(late.deleted).toEqual([id]);
  });

  it('refuses a bound below 15 min, naming the variable', () => {
    expect(() =>
      reaperSettingsFromEnv({ MOUNTFLEET_FLEET_ID: FLEET, MOUNTFLEET_BATCH_UNKNOWN_JOB_MINUTES: '5' }),
    ).toThrow(/MOUNTFLEET_BATCH_UNKNOWN_JOB_MINUTES="5": must be at least 15/);
  });

  it.each([
    {
      failure: 'is throttled on every try (the SDK retries, in vain)',
      fault: { status: 429, code: 'TooManyRequestsException', message: 'Too Many Requests' },
      minCalls: 2,
    },
    {
      failure: 'is refused (not retried): a failed look-up is never evidence',
      fault: { status: 400, code: 'ClientException', message: 'denied' },
      minCalls: 1,
    },
  ])('keeps the file system when DescribeJobs $failure', async ({ fault, minCalls }) => {
    const c = reaperClients();
    const jobId = await submit(c.batch, fleet);
    const id = await batchFileSystem(c, fleet, { jobId });
    emu.proxy.addRule({ service: 'batch', operation: 'DescribeJobs', fault: { kind: 'error', ...fault } });
    emu.proxy.resetStats();

    const report = await reap(c, settings, { clock: clockAt(120) });

    expect(report.deleted).toEqual([]);
    expect(keptReason(report, id)).toMatch(
      new RegExp(
        `^Batch job ${jobId} look-up failed \\(.*${fault.message}.*\\): a running job cannot be ruled out$`,
      ),
    );
    expect(emu.proxy.count('batch', 'DescribeJobs')).toBeGreaterThanOrEqual(minCalls);
    expect((await describeAll(c.efs)).has(id)).toBe(true);
  });

  it('asks Batch about 250 file systems in 3 DescribeJobs calls', async () => {
    const c = reaperClients();
    for (let i = 0; i < 250; i++) {
      await batchFileSystem(c, fleet, { jobId: `0b1e6c9f-0000-4000-8000-${String(i).padStart(12, '0')}` });
    }
    emu.proxy.resetStats();

    const report = await reap(c, reaperSettingsFromFlags({ fleetId: FLEET, dryRun: true }), {
      clock: clockAt(50),
    });

    expect(report.scanned).toBe(250);
    expect(emu.proxy.count('batch', 'DescribeJobs')).toBe(3);
    expect(emu.proxy.count('batch')).toBe(3);
    expect(report.batchLookups).toEqual({ describeJobs: 3, listJobs: 0 });
  });

  describe('a run its submit never tagged with a job', () => {
    it('is kept while its submit may still be running', async () => {
      const c = reaperClients();
      const id = await batchFileSystem(c, fleet);
      emu.proxy.resetStats();

      const report = await reap(c, settings, { clock: clockAt(30) });

      expect(report.deleted).toEqual([]);
      expect(keptReason(report, id)).toMatch(
        /^Batch run without mountfleet:batch-job yet, 30 min old: its submit may still be running \(limit 25 min\)$/,
      );
      expect(emu.proxy.count('batch')).toBe(0);
    });

    it('is deleted past the submit limit when no job of its run is in its queue', async () => {
      const c = reaperClients();
      await submit(c.batch, fleet); // another job in the queue, of the fleet's job definition
      const id = await batchFileSystem(c, fleet);

      const report = await reap(c, settings, { clock: clockAt(40) });

      expect(report.deleted).toEqual([id]);
    });

    it('is spared when its job tag appears between the decision and the re-check before deleting', async () => {
      const c = reaperClients();
      const id = await batchFileSystem(c, fleet);
      const lateJob = '0b1e6c9f-0000-4000-8000-00000000beef';
      // Right after the reaper's ListJobs (no job of the run: decided delete), the run's job tag is written, as
      // a submit would after SubmitJob; the re-check must see it.
      const clients = reaperClients();
      clients.batch.middlewareStack.add(
        (next, context) => async (args) => {
          const out = await next(args);
          if (context.commandName === 'ListJobsCommand') {
            await c.efs.send(
              new TagResourceCommand({ ResourceId: id, Tags: [{ Key: TAG_BATCH_JOB, Value: lateJob }] }),
            );
          }
          return out;
        },
        { step: 'initialize', name: 'lateJobTag' },
      );

      const report = await reap(clients, settings, { clock: clockAt(40) });

      expect(report.deleted).toEqual([]);
      expect(keptReason(report, id)).toContain(
        `re-checked before deleting: ${TAG_BATCH_JOB} changed from (none) to ${lateJob}`,
      );
      expect((await describeAll(c.efs)).has(id)).toBe(true);
    });

    it('is kept when ListJobs never stops paging: 20 pages, then a failed look-up', async () => {
      const c = reaperClients();
      const id = await batchFileSystem(c, fleet);
      emu.proxy.addRule({
        service: 'batch',
        operation: 'ListJobs',
        fault: {
          kind: 'respond',
          status: 200,
          contentType: 'application/json',
          body: JSON.stringify({ jobSummaryList: [], nextToken: 'more' }),
        },
      });

      const report = await reap(c, settings, { clock: clockAt(40) });

      expect(report.deleted).toEqual([]);
      expect(keptReason(report, id)).toMatch(
        /look-up failed \(.*more than 20 pages\): a running job cannot be ruled out$/,
      );
      expect(report.batchLookups).toEqual({ describeJobs: 0, listJobs: 20 });
    });

    it("is kept while its run's job is active, and deleted once it ended", async () => {
      const c = reaperClients();
      const runId = generateRunId();
      const revision = await c.batch.send(
        new RegisterJobDefinitionCommand({
          jobDefinitionName: runJobDefinitionName(FLEET, runId),
          type: 'container',
          containerProperties: { image: 'busybox', vcpus: 1, memory: 128, command: ['true'] },
        }),
      );
      const jobId = await submit(c.batch, fleet, revision.jobDefinitionArn!);
      const id = await batchFileSystem(c, fleet, { runId });
      const running = emu.proxy.addRule({
        service: 'batch',
        operation: 'ListJobs',
        fault: { kind: 'rewrite', rewrite: jobsShownAs([jobId], 'RUNNING') },
      });

      const kept = await reap(c, settings, { clock: clockAt(40) });
      expect(kept.deleted).toEqual([]);
      expect(keptReason(kept, id)).toMatch(new RegExp(`job ${jobId} of its run is RUNNING$`));
      expect(kept.batchLookups).toEqual({ describeJobs: 0, listJobs: 1 });

      emu.proxy.removeRule(running);
      const ended = await reap(c, settings, { clock: clockAt(40) });
      expect(ended.deleted).toEqual([id]);
    });
  });
});
