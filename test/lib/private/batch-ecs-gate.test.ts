/**
 * The ECS start gate (lib/private/batch-ecs-gate.ts) run for real, under dash and bash, in a private host
 * (test/support/private-host.ts: its own mount and network namespaces, cgroup2 at /sys/fs/cgroup), with real nft
 * and findmnt. systemd is not PID 1 here: a systemctl stand-in records each call and, for `start ecstasks.slice`,
 * makes the slice's cgroup as systemd does when it starts a slice. It waits for the ready file and a mount point
 * (a tmpfs mounted by the scenario), gives up when the bound passes, and refuses when the rules do not load.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ECS_GATE_GIVE_UP, ecsGateScript } from '../../../lib/private/batch-ecs-gate';
import { IMDS_TABLE, imdsRules } from '../../../lib/private/batch-imds-rules';
import { runInPrivateHost } from '../../support/private-host';

const SYSTEMCTL_STANDIN = `#!/bin/sh
# STAND-IN for systemctl (tests only; systemd is not PID 1 here): records the call; \`start ecstasks.slice\` makes
# the slice's cgroup, as systemd does when it starts a slice, unless SLICE_CGROUP=absent.
echo "systemctl $*" >> "$CALLS"
if [ "$*" = 'start ecstasks.slice' ] && [ "\${SLICE_CGROUP:-made}" = made ]; then
  mkdir -p /sys/fs/cgroup/ecstasks.slice
fi
`;

/** A give-up command for the seam: records that it ran. */
const GIVE_UP_STANDIN = `#!/bin/sh
echo "give-up $*" >> "$CALLS"
`;

/** Shared by the scenarios: a run directory, the stand-ins on PATH, the ready file the gate reads. */
const SETUP = String.raw`
d=$(mktemp -d /run/gate.XXXXXX)
mkdir "$d/data"
export PATH="$FIXTURES/bin:$PATH" CALLS="$d/calls" MOUNTFLEET_GATE_READY_FILE="$d/mounts-ready"
report() {
  sed 's/^/call: /' "$d/calls"
  sed 's/^/gate: /' "$d/gate.err"
  echo "tables: $(nft list tables | grep -c mountfleet_imds || :)"
}
`;

let fixtures: string;
beforeAll(() => {
  fixtures = mkdtempSync(join(tmpdir(), 'mf-ecs-gate-'));
  mkdirSync(join(fixtures, 'bin'));
  writeFileSync(join(fixtures, 'ecs-start-gate'), ecsGateScript(), { mode: 0o755 });
  writeFileSync(join(fixtures, 'bin', 'systemctl'), SYSTEMCTL_STANDIN, { mode: 0o755 });
  writeFileSync(join(fixtures, 'bin', 'give-up'), GIVE_UP_STANDIN, { mode: 0o755 });
});
afterAll(() => rmSync(fixtures, { recursive: true, force: true }));

const run = (scenario: string, env: Record<string, string> = {}) => {
  const r = runInPrivateHost(SETUP + scenario, { env: { FIXTURES: fixtures, ...env } });
  expect(r.stderr).toBe('');
  expect(r.status).toBe(0);
  return r.stdout.trim().split('\n');
};

test('dash and bash are here, and the gate is valid sh for dash', () => {
  for (const shell of ['dash', 'bash']) expect(spawnSync(shell, ['-c', 'true']).status).toBe(0);
  expect(spawnSync('dash', ['-n', join(fixtures, 'ecs-start-gate')]).status).toBe(0);
});

test.each(['dash', 'bash'])(
  '%s: loads the rules, waits for a running agent’s ready file and every mount, then lets the ECS agent start',
  (shell) => {
    const lines = run(
      String.raw`
"$SHELL_UNDER_TEST" "$FIXTURES/ecs-start-gate" "$d/data" 2> "$d/gate.err" &
gate=$!
running() { [ -e "/proc/$gate" ] && [ "$(cut -d' ' -f3 "/proc/$gate/stat" 2>/dev/null)" != Z ]; }
# The gate's next wait on the mount table: a findmnt other than the one given (the gate's are the only ones in this
# PID namespace; each runs in a subshell of the gate's).
next_wait() {
  while :; do
    p=$(pgrep -x findmnt || :)
    if [ -n "$p" ] && [ "$p" != "$1" ]; then echo "$p"; return; fi
    running || { echo "the gate ended while it had to wait" >&2; exit 3; }
  done
}
# Two new waits: the check before the second one came after whatever the scenario changed.
checked_again() { w=$(next_wait "$w"); w=$(next_wait "$w"); }
w=none
checked_again
echo "waits without a ready file; tables: $(nft list tables | grep -c mountfleet_imds)"
echo $$ > "$d/mounts-ready"
checked_again
echo "waits for the mount"
sh -c 'echo $$' > "$d/mounts-ready"
mount -t tmpfs data "$d/data"
checked_again
echo "waits while the ready file names an ended process"
echo $$ > "$d/mounts-ready"
wait "$gate" && echo "gate exited 0" || echo "gate exited $?"
# An ECS agent restart passes the gate again: the table is replaced, no rule doubled.
"$SHELL_UNDER_TEST" "$FIXTURES/ecs-start-gate" "$d/data" 2>> "$d/gate.err" && echo "again: exited 0"
echo "rules: $(nft list table ${IMDS_TABLE} | grep -c ' counter ')"
report
`,
      { SHELL_UNDER_TEST: shell },
    );
    const started =
      'gate: mountfleet ecs-start-gate: IMDS rules loaded and every mount live: the ECS agent starts';
    expect(lines).toEqual([
      'waits without a ready file; tables: 1',
      'waits for the mount',
      'waits while the ready file names an ended process',
      'gate exited 0',
      'again: exited 0',
      `rules: ${
        imdsRules()
          .split('\n')
          .filter((l) => l.includes(' counter ')).length
      }`,
      'call: systemctl start ecstasks.slice',
      'call: systemctl start ecstasks.slice',
      started,
      started,
      'tables: 1',
    ]);
  },
  60_000,
);

test('dash: gives up through the give-up command once the bound passes, naming what is not ready', () => {
  const lines = run(String.raw`
echo $$ > "$d/mounts-ready"
MOUNTFLEET_GATE_SECONDS=2 MOUNTFLEET_GATE_GIVE_UP="give-up --stand-in" \
  dash "$FIXTURES/ecs-start-gate" "$d/data" 2> "$d/gate.err" && echo "gate exited 0" || echo "gate exited $?"
echo "run dir: $d"
report
`);
  const dir = lines.find((l) => l.startsWith('run dir: '))!.slice('run dir: '.length);
  expect(lines.filter((l) => !l.startsWith('run dir: '))).toEqual([
    'gate exited 1',
    'call: systemctl start ecstasks.slice',
    'call: give-up --stand-in',
    `gate: mountfleet ecs-start-gate: not ready after 2 s: ${dir}/data is not a mount point; giving up (give-up --stand-in): the instance terminates, and Batch replaces it`,
    'tables: 1',
  ]);
}, 60_000);

test('dash: refuses, and powers off, when the rules do not load (the slice’s cgroup is not there for nft)', () => {
  const lines = run(
    String.raw`
echo $$ > "$d/mounts-ready"
mount -t tmpfs data "$d/data"
dash "$FIXTURES/ecs-start-gate" "$d/data" 2> "$d/gate.err" && echo "gate exited 0" || echo "gate exited $?"
report
`,
    { SLICE_CGROUP: 'absent' },
  );
  expect(lines[0]).toBe('gate exited 1');
  expect(lines).toContain('call: systemctl start ecstasks.slice');
  expect(lines).toContain(`call: systemctl ${ECS_GATE_GIVE_UP.replace(/^systemctl /, '')}`);
  expect(lines).toContain(
    `gate: mountfleet ecs-start-gate: could not load the rules that keep job containers from IMDS; giving up (${ECS_GATE_GIVE_UP}): the instance terminates, and Batch replaces it`,
  );
  // nft's own words come first, naming the cgroup it could not find.
  expect(lines.filter((l) => l.startsWith('gate: ')).join('\n')).toMatch(/ecstasks\.slice/);
  expect(lines[lines.length - 1]).toBe('tables: 0');
}, 60_000);
