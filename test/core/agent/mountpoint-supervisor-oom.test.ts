/**
 * The supervisor gives every Mountpoint it starts the oom_score_adj its systemd unit has (OOMScoreAdjust=-900): a
 * Mountpoint the OOM killer picks ends every job on its mount. Lowering a score needs CAP_SYS_RESOURCE; where the
 * test runs without it (some sandboxes), the refusal must be reported as an event instead.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Supervisor } from '../../../core/agent/mountpoint-supervisor';

/** CAP_SYS_RESOURCE (bit 24) in this process's effective set: what writing a negative oom_score_adj needs. */
const canLowerOomScore =
  (BigInt(`0x${/^CapEff:\s*([0-9a-f]+)$/m.exec(readFileSync('/proc/self/status', 'utf8'))![1]}`) >> 24n) & 1n;

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'mountfleet-oom-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

test('a started Mountpoint gets oom_score_adj -900 (or, without CAP_SYS_RESOURCE, an oom-adjust-failed event)', async () => {
  // Stands in for mount-s3 only as a process: it never mounts, so start() waits until it is stopped.
  const program = join(dir, 'mount-s3');
  writeFileSync(program, '#!/bin/sh\nexec sleep 60\n', { mode: 0o755 });
  const events: { type: string; error?: string }[] = [];
  const supervisor = new Supervisor(program, (e) => events.push(e));
  const starting = supervisor.start({
    key: 'm/main',
    mountPoint: join(dir, 'mnt'),
    args: ['bucket', join(dir, 'mnt')],
    environment: {},
  });
  // The supervisor writes the score right after it spawns, before pid() can name the process.
  const deadline = Date.now() + 10_000;
  while (supervisor.pid('m/main') === undefined && Date.now() < deadline)
    await new Promise((r) => setTimeout(r, 10));
  const pid = supervisor.pid('m/main')!;
  const score = readFileSync(`/proc/${pid}/oom_score_adj`, 'utf8').trim();
  await supervisor.stop('m/main');
  await expect(starting).rejects.toThrow(/stopped before it was mounted/);
  if (canLowerOomScore) {
    expect(score).toBe('-900');
  } else {
    expect(score).toBe('0');
    expect(events).toContainEqual({
      type: 'oom-adjust-failed',
      key: 'm/main',
      error: expect.stringContaining('EACCES'),
    });
  }
});
