/**
 * The README's main job, end to end: the sandbox deploys the bundled app into its own emulator with the
 * real CDK CLI, runs the scratch jobs and the reaper, destroys everything, and reports in JSON.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { REPO_ROOT } from '../support/moto';

interface ReaperRun {
  deleted: string[];
  kept: { id: string; reason: string }[];
  failed: unknown[];
}

interface SandboxReport {
  ok: boolean;
  leakedFileSystems: string[];
  jobs: { id: string; outcome: string; exitCode?: number | null; fileSystemId?: string }[];
  reaper: Record<'eventFastPath' | 'scheduled', ReaperRun>;
  steps: { title: string; ok: boolean; seconds: number }[];
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
  it('deploys, runs the jobs, reaps the orphan, keeps what is in use, leaks nothing', async () => {
    const r = await runSandbox();
    if (r.code !== 0) throw new Error(`sandbox exited ${r.code}:\n${r.stderr.slice(-6000)}`);
    const report = JSON.parse(r.stdout) as SandboxReport;
    expect(report.ok).toBe(true);
    expect(report.leakedFileSystems).toEqual([]);
    expect(report.steps.every((s) => s.ok)).toBe(true);
    const job = (id: string) => report.jobs.find((j) => j.id === id)!;
    expect(job('demo-write-read').exitCode).toBe(0);
    expect(job('demo-killed').fileSystemId).toMatch(/^fs-[0-9a-f]+$/);
    expect(job('demo-in-use').fileSystemId).toMatch(/^fs-[0-9a-f]+$/);
    const { eventFastPath, scheduled } = report.reaper;
    expect(eventFastPath.deleted).toEqual([job('demo-killed').fileSystemId]);
    expect(scheduled.deleted).toEqual([]);
    expect(scheduled.kept.map((k) => k.id)).toEqual([job('demo-in-use').fileSystemId]);
    expect([...eventFastPath.failed, ...scheduled.failed]).toEqual([]);
  }, 300_000);
});
