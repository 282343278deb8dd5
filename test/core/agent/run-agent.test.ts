/**
 * `mountfleet up`'s refusals come before it installs or mounts anything, and say how the command ends: no
 * systemd without --supervise (exit 2), a run dir another `up` holds (exit 75, naming it). Starting the mounts
 * for real: test/agent/commands/up/ (the real Mountpoint harness).
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runAgent } from '../../../core/agent/run-agent';
import { EXIT_STATUS, MountfleetError, UsageError } from '../../../core/common/errors';
import { acquireLock } from '../../../core/system/lock';

let home: string;
let config: string;
const savedRunDir = process.env.MOUNTFLEET_RUN_DIR;
beforeEach(() => {
  home = mkdtempSync(join(tmpdir(), 'mf-run-agent-'));
  process.env.MOUNTFLEET_RUN_DIR = join(home, 'run');
  config = join(home, 'agent.json');
  writeFileSync(
    config,
    JSON.stringify({
      version: 1,
      fleetId: 'f',
      region: 'us-east-1',
      mounts: [{ bucket: 'data-bucket', path: join(home, 'data') }],
    }),
  );
});
afterEach(() => {
  rmSync(home, { recursive: true, force: true });
  if (savedRunDir === undefined) delete process.env.MOUNTFLEET_RUN_DIR;
  else process.env.MOUNTFLEET_RUN_DIR = savedRunDir;
});

const stopOn = jest.fn(() => ({ dispose: () => {} }));

(existsSync('/run/systemd/system') ? test.skip : test)(
  'without systemd it asks for --supervise (exit 2)',
  async () => {
    const run = runAgent({ configFile: config, supervise: false, install: true }, { stopOn });
    await expect(run).rejects.toThrow(new UsageError('systemd is not running here; use --supervise'));
    expect(stopOn).not.toHaveBeenCalled();
  },
);

test('a run dir another up holds is refused (exit 75), naming the holder, before anything is installed', async () => {
  mkdirSync(process.env.MOUNTFLEET_RUN_DIR!);
  const holder = { pid: 4242, startedAt: '2026-01-01T00:00:00.000Z', config: '/etc/other.json' };
  const lock = await acquireLock(join(process.env.MOUNTFLEET_RUN_DIR!, 'agent.lock'), {
    holder: JSON.stringify(holder),
    waitSeconds: 0,
  });
  if (lock.status !== 'held') throw new Error('the test could not take the lock');
  try {
    const err = await runAgent({ configFile: config, supervise: true, install: true }, { stopOn }).catch(
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(MountfleetError);
    expect((err as MountfleetError).exitStatus).toBe(EXIT_STATUS.inUse);
    expect((err as Error).message).toBe(
      `refusing: ${process.env.MOUNTFLEET_RUN_DIR} is in use by mountfleet up pid 4242 (since 2026-01-01T00:00:00.000Z, ` +
        'config /etc/other.json): run `mountfleet down` first, or give this agent its own MOUNTFLEET_RUN_DIR',
    );
    expect(stopOn).not.toHaveBeenCalled();
  } finally {
    lock.release();
  }
});
