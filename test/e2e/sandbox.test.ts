/**
 * The README's main job, end to end: the sandbox deploys the bundled app into its own emulator with the
 * real CDK CLI (Express cache, alarms, dashboard), mounts the dataset in two zones, darkens each zone's
 * Express cache in turn, runs the scratch jobs and the reaper, plays the Batch section (a second stack with
 * Batch queues, four jobs through the real CLI and the deployed teardown), collects the metrics, destroys
 * everything, and reports in JSON.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { OTLP_ENDPOINT } from '../../core/contract/metric-names';
import type { BatchJobRecord } from '../../scripts/sandbox/batch-jobs';
import type { SandboxReport as Report } from '../../scripts/sandbox/report';
import { REPO_ROOT } from '../support/moto';

interface ReaperRun {
  deleted: string[];
  kept: { id: string; reason: string }[];
  failed: unknown[];
}

type SandboxReport = Required<Omit<Report, 'reaper'>> & {
  ok: boolean;
  reaper: Record<'eventFastPath' | 'scheduled', ReaperRun>;
  steps: { title: string; ok: boolean; seconds: number }[];
};

/** Whether a loopback port can be listened on again (nothing the sandbox started still holds it). */
function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

function runSandbox(): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(
      process.execPath,
      ['--require', 'tsx/cjs', join(REPO_ROOT, 'scripts', 'sandbox', 'main.ts'), '--json'],
      { cwd: REPO_ROOT, env: process.env, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('local sandbox (npm run demo)', () => {
  it('deploys everything, mounts in two zones, survives each zone going dark, reaps the orphan, ships metrics, leaks nothing', async () => {
    const r = await runSandbox();
    if (r.code !== 0) throw new Error(`sandbox exited ${r.code}:\n${r.stderr.slice(-6000)}`);
    const report = JSON.parse(r.stdout) as SandboxReport;
    expect(report.ok).toBe(true);
    expect(report.leakedFileSystems).toEqual([]);
    expect(report.steps.every((s) => s.ok)).toBe(true);
    const job = (id: string) => report.jobs.find((j) => j.id === id)!;
    expect(job('demo-write-read').exitCode).toBe(0);
    // The burst-credit guard's account from the run summary (the emulator has no datapoints for a job this short).
    expect(job('demo-write-read').outcome).toMatch(
      /; guard: [1-9]\d* check\(s\), credit used no datapoints, metered no datapoints$/,
    );
    expect(job('demo-killed').fileSystemId).toMatch(/^fs-[0-9a-f]+$/);
    expect(job('demo-in-use').fileSystemId).toMatch(/^fs-[0-9a-f]+$/);
    const { eventFastPath, scheduled } = report.reaper;
    expect(eventFastPath.deleted).toEqual([job('demo-killed').fileSystemId]);
    expect(scheduled.deleted).toEqual([]);
    expect(scheduled.kept.map((k) => k.id)).toEqual([job('demo-in-use').fileSystemId]);
    expect([...eventFastPath.failed, ...scheduled.failed]).toEqual([]);

    // Deployed with the Express cache (one bucket per zone) and alarms; the emulator's gaps stood in for.
    expect(new Set(report.zonesUsed).size).toBeGreaterThanOrEqual(2);
    expect(report.standIns.directoryBuckets).toEqual(
      report.zonesUsed.map((z) => `sandbox-cache--${z}--x-s3`),
    );
    expect(report.standIns.alarms.length).toBeGreaterThanOrEqual(3);
    expect(report.standIns.notStoodIn).toEqual([]);

    // Mounts: one played instance per zone read the seeded 4 MiB through Mountpoint, then each zone went dark.
    expect(['official', 'harness', 'stand-in']).toContain(report.mountS3.kind);
    expect(report.zones.map((z) => z.zoneId)).toEqual(report.zonesUsed);
    for (const z of report.zones) {
      expect(z).toMatchObject({
        heldOnExpress: true,
        heldBytesRead: 4 * 1048576,
        heldBytesSame: true,
        agentExit: 0,
        leftMounted: 0,
      });
      expect(z.blackholedRequests).toBeGreaterThan(0);
      // The design's promise: a dark zone costs seconds, not minutes per file.
      expect(z.failoverSeconds).toBeLessThan(15);
      expect(z.recoverySeconds).toBeLessThan(15);
      expect(z.restartSeconds).toBeLessThan(15);
    }
    expect(report.zones[0].otherZoneKeptCache).toBe(true);

    // Batch: the second stack's four jobs, submitted with the real CLI, each attempt's scratch torn down by the
    // deployed teardown handler (delivered its Job State Change by the event stand-in), nothing left.
    const batch = report.batch;
    expect(batch.stack).toBe('Mountfleet-batch');
    const states = (j: BatchJobRecord) => j.attempts.map((a) => a.states.join(' '));
    const byScenario = Object.fromEntries((batch.jobs ?? []).map((j) => [j.scenario, j]));
    const STARTED = 'SUBMITTED PENDING RUNNABLE STARTING RUNNING';
    expect(Object.keys(byScenario)).toHaveLength(4);
    const ok = byScenario['succeeds'];
    const fail = byScenario['fails (exit 3)'];
    const cancel = byScenario['cancelled while RUNNABLE'];
    const reclaim = byScenario['loses its instance (Spot reclaim), retried'];
    expect(states(ok)).toEqual([`${STARTED} SUCCEEDED`]);
    expect(ok.attempts[0].exitCode).toBe(0);
    expect(states(fail)).toEqual([`${STARTED} FAILED`]);
    expect(fail.attempts[0].exitCode).toBe(3);
    expect(states(cancel)).toEqual(['SUBMITTED PENDING RUNNABLE FAILED']);
    expect(states(reclaim)).toEqual([`${STARTED} FAILED`, `${STARTED} SUCCEEDED`]);
    // The retry started on a new, empty file system (attempt 1 had left a file on its own).
    expect(reclaim.attempts[1].output).toMatch(/^started, scratch has 0 entries\nfinished$/);
    expect(reclaim.attempts[0].statusReason).toMatch(/^Host EC2 \(instance i-[0-9a-f]+\) terminated\.$/);
    const attempts = batch.jobs!.flatMap((j) => j.attempts);
    expect(attempts).toHaveLength(5);
    // Every attempt had a file system of its own, and the teardown deleted it and deregistered its revision.
    expect(new Set(attempts.map((a) => a.fileSystemId)).size).toBe(5);
    for (const a of attempts) {
      expect(a.fileSystemId).toMatch(/^fs-[0-9a-f]+$/);
      expect(a).toMatchObject({ fileSystemDeleted: true, revisionDeregistered: true });
      expect(a.teardown).toEqual([expect.objectContaining({ status: 'torn-down', fileSystem: 'deleted' })]);
    }
    // The retry was the teardown's: its answer to attempt 1's event names attempt 2's job.
    expect(reclaim.attempts[0].teardown).toEqual([
      expect.objectContaining({
        retry: expect.objectContaining({
          status: 'submitted',
          run: expect.objectContaining({ jobId: reclaim.attempts[1].jobId }),
        }),
      }),
    ]);
    expect(batch.jobs!.every((j) => j.ok)).toBe(true);
    // A mount failing under a running job on the played host (its agent, the guard): the job is ended with the
    // reason in its log (exit 137), the teardown retries it, and the retry runs on the live mount.
    expect(batch.mountFaults?.map((f) => f.fault)).toEqual([
      'Mountpoint killed (kill -9) under a running job',
      "the zone's Express cache black-holed under a running job",
    ]);
    for (const [f, reason] of batch.mountFaults!.map(
      (x, i) => [x, i === 0 ? 'Mountpoint restarted' : 'Express cache zone down'] as const,
    )) {
      expect(f.jobLogLine).toMatch(
        new RegExp(`^mountfleet: ending this job: /mnt/datasets .*\\(${reason}\\)`),
      );
      expect(states(f)).toEqual([`${STARTED} FAILED`, `${STARTED} SUCCEEDED`]);
      expect(f.attempts[0].exitCode).toBe(137);
      expect(f.ok).toBe(true);
    }
    expect(batch.leakedFileSystems).toEqual([]);
    expect(batch.activeRunRevisions).toEqual([]);
    expect(readFileSync(batch.teardownLog!, 'utf8')).toMatch(/"message":"run torn down"/);

    // Metrics arrived in the emulator's CloudWatch and are listed there.
    const { datapoints, listed } = report.metrics;
    expect(report.metrics.errors).toEqual([]);
    expect(report.metrics.dashboards).toContain('mountfleet-sandbox-storage');
    expect(report.metrics.logGroups).toContain('/mountfleet/sandbox/agent-metrics');
    expect(datapoints['Mountfleet/Reaper'].Deleted).toBeGreaterThan(0);
    expect(datapoints['Mountfleet/Express'].ExpressCacheSwitches).toBeGreaterThanOrEqual(
      2 * report.zones.length,
    );
    // What the dashboard charts from Mountpoint, latencies (exponential histograms) included.
    if (report.metrics.otlpReceiving)
      expect(Object.keys(datapoints['Mountfleet/Mountpoint'] ?? {})).toEqual(
        expect.arrayContaining(['fuse.request_latency', 'experimental.fuse.cache_hit']),
      );
    for (const [namespace, names] of Object.entries(datapoints))
      expect(listed[namespace]).toEqual(Object.keys(names).sort());

    // Human output stays readable: the reaper's JSON log lines went to the file the report names.
    expect(r.stderr).not.toMatch(/^\{"level"/m);
    expect(readFileSync(report.reaperLog, 'utf8')).toMatch(/"message":"decision"/);

    // Nothing left: no mount of the sandbox's, and Mountpoint's OTLP port is free again.
    expect(readFileSync('/proc/self/mountinfo', 'utf8')).not.toMatch(/mountfleet-sandbox-/);
    if (report.metrics.otlpReceiving) expect(await portFree(Number(new URL(OTLP_ENDPOINT).port))).toBe(true);
  }, 300_000);
});
