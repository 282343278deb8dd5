/**
 * A private host for tests of cgroup-based nftables rules: a shell scenario runs in a fresh child cgroup of the
 * machine's cgroup v2 root (a unique name, removed afterwards), in cgroup, mount, network and PID namespaces of
 * its own. Inside, cgroup2 is mounted at /sys/fs/cgroup as on Amazon Linux 2023, with that child cgroup as its
 * root, so a scenario can make `ecstasks.slice` there without touching the machine's real root; /run is a tmpfs
 * (for `ip netns`). Nothing outlives the scenario: its processes die with the PID namespace (and with us, through
 * --pdeathsig), its mounts, network namespaces and nftables tables with theirs.
 *
 * nft resolves a `socket cgroupv2 level N "path"` rule in the cgroup namespace of the process that loads it,
 * which needs Linux 6.12 or a kernel with that fix backported ("netfilter: nft_socket: make cgroupsv2 matching
 * work with namespaces").
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, rmdirSync } from 'node:fs';
import { join } from 'node:path';

let scenarios = 0;

/** Where the machine's cgroup v2 hierarchy is mounted (/sys/fs/cgroup/unified on a hybrid machine). */
export function cgroup2Root(): string {
  for (const line of readFileSync('/proc/self/mountinfo', 'utf8').split('\n')) {
    const [mount, fields] = line.split(' - ');
    if (fields?.startsWith('cgroup2 ')) return mount.split(' ')[4];
  }
  throw new Error('no cgroup2 file system is mounted on this machine');
}

/**
 * Waits (at most 5 s) until no process is left in a cgroup or below it: after a scenario killed for its timeout,
 * the kernel ends the rest of its PID namespace asynchronously.
 */
function waitUntilEmpty(cgroup: string): void {
  const deadline = Date.now() + 5000;
  const pause = new Int32Array(new SharedArrayBuffer(4));
  while (
    !/^populated 0$/m.test(readFileSync(join(cgroup, 'cgroup.events'), 'utf8')) &&
    Date.now() < deadline
  ) {
    Atomics.wait(pause, 0, 0, 10);
  }
}

/** Removes a cgroup and every cgroup below it. */
function removeCgroupTree(dir: string): void {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.isDirectory()) removeCgroupTree(join(dir, entry.name));
  }
  rmdirSync(dir);
}

export interface ScenarioResult {
  readonly status: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * Runs `scenario` (sh, `set -eu`, lo up) in a private host and returns its output. `env` is added to the
 * environment; `timeoutMs` bounds the run (the scenario is killed past it).
 */
export function runInPrivateHost(
  scenario: string,
  options: { env?: Record<string, string>; timeoutMs?: number } = {},
): ScenarioResult {
  const cgroup = join(cgroup2Root(), `mountfleet-test-${process.pid}-${++scenarios}`);
  mkdirSync(cgroup);
  const prelude = [
    'set -eu',
    'mount -t cgroup2 cgroup2 /sys/fs/cgroup',
    'mount -t tmpfs tmpfs /run',
    'ip link set lo up',
  ].join('\n');
  try {
    const r = spawnSync(
      'sh',
      [
        '-c',
        // Into the new cgroup first: the cgroup namespace unshare makes is rooted where the process is.
        'echo $$ > "$1/cgroup.procs" && exec setpriv --pdeathsig KILL unshare --cgroup --mount --propagation private --net --pid --fork --kill-child --mount-proc sh -c "$2"',
        'sh',
        cgroup,
        `${prelude}\n${scenario}`,
      ],
      {
        encoding: 'utf8',
        env: { ...process.env, ...options.env },
        timeout: options.timeoutMs ?? 60_000,
        killSignal: 'SIGKILL',
      },
    );
    return { status: r.status, stdout: r.stdout, stderr: r.stderr };
  } finally {
    waitUntilEmpty(cgroup);
    removeCgroupTree(cgroup);
  }
}
