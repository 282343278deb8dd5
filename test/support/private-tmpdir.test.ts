import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { removePrivateTmpdir, usePrivateTmpdir } from './private-tmpdir';
import { mountsUnder } from './standins';

const isRoot = process.getuid?.() === 0;

let parent: string;
// Jest gives each test file its own copy of process.env; the one usePrivateTmpdir sets is restored after.
const savedTmpdir = process.env.TMPDIR;
beforeEach(() => {
  parent = mkdtempSync(join(tmpdir(), 'mf-tmpdir-'));
});
afterEach(() => {
  process.env.TMPDIR = savedTmpdir;
  for (const m of mountsUnder(parent)) execFileSync('umount', ['-l', m]);
  rmSync(parent, { recursive: true, force: true });
});

test("a run's directory becomes TMPDIR; a stopped run's is removed, a live run's is left alone", () => {
  const stale = join(parent, 'mountfleet-jest-999999999-abc'); // beyond pid_max: no such process
  const live = join(parent, `mountfleet-jest-${process.pid}-abc`);
  for (const dir of [stale, live]) mkdirSync(dir);

  const dir = usePrivateTmpdir(parent);

  expect(process.env.TMPDIR).toBe(dir);
  expect(readdirSync(parent).sort()).toEqual([live, dir].map((d) => d.slice(parent.length + 1)).sort());
});

(isRoot ? test : test.skip)('removal detaches a mount left inside and never deletes into it first', () => {
  const dir = join(parent, 'run');
  const mounted = join(dir, 'left-mounted');
  mkdirSync(mounted, { recursive: true });
  writeFileSync(join(dir, 'cdk.out-file'), 'x');
  execFileSync('mount', ['-t', 'tmpfs', 'mf-tmpdir-test', mounted]);

  expect(removePrivateTmpdir(dir)).toEqual([mounted]);

  expect(existsSync(dir)).toBe(false);
  expect(mountsUnder(parent)).toEqual([]);
});
