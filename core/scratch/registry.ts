/**
 * Which `scratch run` processes are alive on this instance: each one leaves `<runDir>/scratch-runs/<pid>.json`
 * while it runs, so that `mountfleet up` can wait for their teardown before it lets Auto Scaling terminate
 * the instance. A file whose process is gone (SIGKILL, crash) is ignored and removed.
 */
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { processAlive } from '../system';

export interface ScratchRunRecord {
  readonly pid: number;
  readonly jobId: string;
  readonly startedAt: string;
}

const directory = (runDir: string) => join(runDir, 'scratch-runs');

/** Records this process as a running scratch job; returns what removes the record. */
export function registerScratchRun(runDir: string, jobId: string, now: Date = new Date()): () => void {
  mkdirSync(directory(runDir), { recursive: true });
  const file = join(directory(runDir), `${process.pid}.json`);
  const record: ScratchRunRecord = { pid: process.pid, jobId, startedAt: now.toISOString() };
  writeFileSync(file, `${JSON.stringify(record)}\n`);
  return () => rmSync(file, { force: true });
}

/** The scratch runs whose process is still alive. */
export function activeScratchRuns(runDir: string): ScratchRunRecord[] {
  let names: string[];
  try {
    names = readdirSync(directory(runDir)).filter((n) => /^\d+\.json$/.test(n));
  } catch {
    return [];
  }
  const active: ScratchRunRecord[] = [];
  for (const name of names) {
    const file = join(directory(runDir), name);
    let record: ScratchRunRecord;
    try {
      record = JSON.parse(readFileSync(file, 'utf8')) as ScratchRunRecord;
    } catch {
      continue; // being written or removed right now
    }
    if (processAlive(record.pid)) active.push(record);
    else rmSync(file, { force: true });
  }
  return active;
}
