/**
 * The units a Batch host's user data writes beside the gate (lib/private/batch-user-data.ts), checked by systemd's
 * own parser: the ECS agent's drop-in, read with a stand-in of ecs.service (the real one ships with the
 * ECS-optimized AMI, not here), and the task cgroup's slice.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ECS_GATE_PATH, ECS_GATE_SECONDS } from '../../../lib/private/batch-ecs-gate';
import { ECS_DROP_IN_PATH, ecsDropIn, ecsTaskSlice } from '../../../lib/private/batch-user-data';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'mf-ecs-units-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** systemd-analyze verify on the files given; its complaints about them (it also reads the machine's units). */
function verify(...files: string[]): string[] {
  const r = spawnSync('systemd-analyze', ['verify', ...files], { encoding: 'utf8' });
  return r.stderr.split('\n').filter((l) => l.includes(dir) || /^(ecs\.service|ecstasks\.slice):/.test(l));
}

test('the drop-in and the slice pass systemd-analyze verify, with mount paths that need quoting', () => {
  const paths = ['/mnt/imagenet', '/mnt/with space', '/mnt/100%', '/mnt/$HOME'];
  const gate = join(dir, 'ecs-start-gate');
  writeFileSync(gate, '#!/bin/sh\n', { mode: 0o755 });
  // STAND-IN for ecs.service (its shape on the ECS-optimized AL2023 AMI, without the units it depends on).
  writeFileSync(
    join(dir, 'ecs.service'),
    '[Unit]\nDescription=ECS agent stand-in\n\n[Service]\nType=simple\nExecStart=/bin/true\n',
  );
  mkdirSync(join(dir, 'ecs.service.d'));
  const dropIn = ecsDropIn(paths);
  writeFileSync(
    join(dir, 'ecs.service.d', ECS_DROP_IN_PATH.split('/').pop()!),
    dropIn.replace(ECS_GATE_PATH, gate),
  );
  writeFileSync(join(dir, 'ecstasks.slice'), ecsTaskSlice());

  expect(verify(join(dir, 'ecs.service'), join(dir, 'ecstasks.slice'))).toEqual([]);
  expect(Number(/^TimeoutStartSec=(\d+)$/m.exec(dropIn)![1])).toBeGreaterThan(ECS_GATE_SECONDS);
  // Quoted for systemd: a space stays inside the argument, % and $ are escaped (no specifier, no variable).
  expect(dropIn).toContain(
    `ExecStartPre=${ECS_GATE_PATH} "/mnt/imagenet" "/mnt/with space" "/mnt/100%%" "/mnt/$$HOME"\n`,
  );
});

test('verify reads the drop-in (it names a gate that is not there)', () => {
  writeFileSync(join(dir, 'ecs.service'), '[Service]\nType=simple\nExecStart=/bin/true\n');
  mkdirSync(join(dir, 'ecs.service.d'));
  writeFileSync(join(dir, 'ecs.service.d', '10-mountfleet.conf'), ecsDropIn(['/mnt/data']));
  expect(verify(join(dir, 'ecs.service')).join('\n')).toContain(`Command ${ECS_GATE_PATH} is not executable`);
});
