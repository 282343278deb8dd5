/**
 * A rendered systemd unit on the real Mountpoint: its ExecStartPre=, ExecStart= and ExecStop= lines run in
 * order, as systemd runs them at boot and on every Restart=, in a private mount namespace against moto
 * (systemd itself does not run here). A mount with a local cache must start on a fresh cache volume.
 */
import { CreateBucketCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { s3Client } from '../../../../core/aws/clients';
import { parseAgentConfig } from '../../../../core/contract/agent-config';
import { FALLBACK_INSTANCE_TYPES } from '../../../../core/tuner/instance-facts';
import { renderMountUnit } from '../../../../core/agent/systemd-units';
import { planMounts } from '../../../../core/tuner/plan-mounts';
import { emulatorEndpoint, useEmulator } from '../../../support/emulator';
import { emulatorMountS3, realMountpointForTests } from '../../../support/real-mountpoint';

useEmulator();
const { binary, it } = realMountpointForTests();

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'mountfleet-unit-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** The unit's commands as one shell script: a leading '-' lets a command fail, as in systemd. */
function unitScript(unit: string, key: string): string[] {
  return unit
    .split('\n')
    .filter((l) => l.startsWith(`${key}=`))
    .map((l) => l.slice(key.length + 1))
    .map((cmd) => (cmd.startsWith('-') ? `${cmd.slice(1)} || true` : cmd));
}

it('a unit with a local cache starts Mountpoint on a fresh cache volume, and again after a crash (Restart=)', async () => {
  const s3 = s3Client();
  await s3.send(new CreateBucketCommand({ Bucket: 'unit-data' }));
  await s3.send(new PutObjectCommand({ Bucket: 'unit-data', Key: 'train/a.bin', Body: 'hello from S3' }));
  const config = parseAgentConfig({
    version: 1,
    fleetId: 'unit',
    region: 'us-east-1',
    mounts: [
      { bucket: 'unit-data', prefix: 'train/', path: join(dir, 'mnt'), dataset: 'immutable', cache: 'local' },
    ],
  });
  const plan = planMounts({
    config,
    instance: FALLBACK_INSTANCE_TYPES.get('g5.xlarge')!,
    memory: { totalMiB: 16_384, source: 'test' },
    cacheVolume: { kind: 'root', directory: join(dir, 'cache'), capacityMiB: 2048, reason: 'test' },
    runDir: join(dir, 'run'),
  });
  const [p] = plan.mounts[0].processes;
  expect(p.options.cacheDirectory).toBe(join(dir, 'cache', plan.mounts[0].name, 'main'));
  const unit = renderMountUnit({
    mountName: plan.mounts[0].name,
    process: p,
    mountS3: emulatorMountS3(dir, binary, emulatorEndpoint()),
    description: 'test',
  });
  // Start and read; the process crashes (kill -9: a dead FUSE mount stays); systemd's Restart=on-failure
  // runs the unit again, which must clear the dead mount and start on the same cache; then ExecStop=.
  const mnt = join(dir, 'mnt');
  const ours = `pgrep -f -- ' ${mnt}$'`;
  const start = [
    ...unitScript(unit, 'ExecStartPre'),
    ...unitScript(unit, 'ExecStart'),
    `cat ${join(mnt, 'a.bin')}; echo`,
    `stat -c '%a %U' ${p.options.cacheDirectory}`,
  ];
  const gone = `while ${ours} >/dev/null; do sleep 0.05; done`;
  const script = [
    'set -e',
    ...start,
    `kill -9 $(${ours})`,
    gone,
    ...start,
    ...unitScript(unit, 'ExecStop'),
    gone,
    `grep -c ' ${mnt} ' /proc/self/mountinfo || true`,
  ].join('\n');
  writeFileSync(join(dir, 'unit.sh'), script);
  const { stdout } = await promisify(execFile)(
    'unshare',
    ['-m', '--propagation', 'private', '--', 'bash', join(dir, 'unit.sh')],
    { env: process.env, timeout: 60_000 },
  );
  expect(stdout.trim().split('\n')).toEqual(['hello from S3', '700 root', 'hello from S3', '700 root', '0']);
}, 90_000);
