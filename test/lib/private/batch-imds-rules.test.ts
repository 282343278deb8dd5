/**
 * The IMDS rules a Batch host's gate loads (lib/private/batch-imds-rules.ts), loaded for real with nft in a private
 * host (test/support/private-host.ts) laid out like an ECS host: cgroup2 at /sys/fs/cgroup with a job container's
 * `ecstasks.slice/ecstasks-<task>.slice/docker-<id>.scope` and the ECS agent's `system.slice/docker-<id>.scope`;
 * an IMDS stand-in (any GET answered 200) in a network namespace of its own behind the host's `eth0`, at
 * 169.254.169.254 and fd00:ec2::254, as the hypervisor side of a real instance; and a bridge-mode container in a
 * second namespace behind a veth named `docker0`. Every caller is probed before the rules (all answered: the
 * layout works) and after they were loaded twice.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { IMDS_TABLE, imdsRules } from '../../../lib/private/batch-imds-rules';
import { runInPrivateHost } from '../../support/private-host';

/** The IMDS stand-in: answers any GET with 200 on port 80 of every address (IPv4 too, through `::`). */
const IMDS_STANDIN = `
require('node:http')
  .createServer((req, res) => res.end('imds stand-in\\n'))
  .listen({ port: 80, host: '::', ipv6Only: false }, () => console.log('listening'));
`;

/** One GET to port 80 of an address: answered, refused, or no answer within 2 s (the bound on a dropped one). */
const PROBE = `
let said = false;
const say = (what) => { if (!said) { said = true; console.log(what); } };
const req = require('node:http').get({ host: process.argv[2], port: 80, path: '/latest/meta-data/', timeout: 2000 }, (res) => {
  say('answered ' + res.statusCode);
  res.resume();
});
req.on('timeout', () => { say('no answer'); req.destroy(); });
req.on('error', (e) => say(e.code === 'ECONNREFUSED' ? 'refused' : 'error ' + e.code));
`;

const TASK_SCOPE = 'ecstasks.slice/ecstasks-0123456789abcdef.slice/docker-job.scope';
const AGENT_SCOPE = 'system.slice/docker-ecsagent.scope';

const SCENARIO = String.raw`
cg=/sys/fs/cgroup
mkdir -p "$cg/${TASK_SCOPE}" "$cg/${AGENT_SCOPE}"

# The IMDS side, one hop away through eth0, with a route back to the containers' bridge network.
ip netns add imds
ip link add eth0 type veth peer name uplink netns imds
ip addr add 10.203.0.1/30 dev eth0
ip -6 addr add fd99::1/64 dev eth0 nodad
ip link set eth0 up
ip route add 169.254.169.254/32 via 10.203.0.2
ip -6 route add fd00:ec2::254/128 via fd99::2
ip netns exec imds sh -ec '
  ip link set lo up
  ip link set uplink up
  ip addr add 10.203.0.2/30 dev uplink
  ip -6 addr add fd99::2/64 dev uplink nodad
  ip addr add 169.254.169.254/32 dev lo
  ip -6 addr add fd00:ec2::254/128 dev lo nodad
  ip route add 172.17.0.0/16 via 10.203.0.1
  ip -6 route add fd98::/64 via fd99::1'

# A bridge-mode container behind docker0; the host forwards its packets.
ip netns add bridged
ip link add docker0 type veth peer name eth0 netns bridged
ip addr add 172.17.0.1/16 dev docker0
ip -6 addr add fd98::1/64 dev docker0 nodad
ip link set docker0 up
ip netns exec bridged sh -ec '
  ip link set lo up
  ip link set eth0 up
  ip addr add 172.17.0.2/16 dev eth0
  ip -6 addr add fd98::2/64 dev eth0 nodad
  ip route add default via 172.17.0.1
  ip -6 route add default via fd98::1'
sysctl -qw net.ipv4.ip_forward=1 net.ipv6.conf.all.forwarding=1

mkfifo /run/listening
ip netns exec imds "$NODE" "$FIXTURES/imds-standin.js" > /run/listening &
read -r line < /run/listening

probe() { "$NODE" "$FIXTURES/probe.js" "$1"; }
in_cgroup() { sh -c 'echo $$ > "/sys/fs/cgroup/$0/cgroup.procs" && exec "$@"' "$@"; }
probe_all() {
  for imds in 169.254.169.254 fd00:ec2::254; do
    echo "$1 host $imds: $(probe $imds)"
    echo "$1 job $imds: $(in_cgroup ${TASK_SCOPE} "$NODE" "$FIXTURES/probe.js" $imds)"
    echo "$1 ecs-agent $imds: $(in_cgroup ${AGENT_SCOPE} "$NODE" "$FIXTURES/probe.js" $imds)"
    echo "$1 bridged $imds: $(ip netns exec bridged "$NODE" "$FIXTURES/probe.js" $imds)"
  done
  echo "$1 job 10.203.0.2: $(in_cgroup ${TASK_SCOPE} "$NODE" "$FIXTURES/probe.js" 10.203.0.2)"
}

probe_all before
nft -f "$FIXTURES/rules.nft"
nft -f "$FIXTURES/rules.nft"
probe_all after
nft list table ${IMDS_TABLE} | sed 's/^/listed: /'
`;

let fixtures: string;
beforeAll(() => {
  fixtures = mkdtempSync(join(tmpdir(), 'mf-imds-rules-'));
  writeFileSync(join(fixtures, 'imds-standin.js'), IMDS_STANDIN);
  writeFileSync(join(fixtures, 'probe.js'), PROBE);
  writeFileSync(join(fixtures, 'rules.nft'), imdsRules());
});
afterAll(() => rmSync(fixtures, { recursive: true, force: true }));

test('a job container is refused IMDS and a bridge-mode container dropped; the host and the ECS agent are answered', () => {
  const r = runInPrivateHost(SCENARIO, { env: { NODE: process.execPath, FIXTURES: fixtures } });
  expect(r.stderr).toBe('');
  expect(r.status).toBe(0);
  const probes = Object.fromEntries(
    r.stdout
      .split('\n')
      .filter((l) => /^(before|after) /.test(l))
      .map((l) => l.split(': ')),
  );
  const callers = ['host', 'job', 'ecs-agent', 'bridged'];
  const both = (results: Record<string, string>) =>
    Object.fromEntries(
      ['169.254.169.254', 'fd00:ec2::254'].flatMap((imds) =>
        callers.map((who) => [`${who} ${imds}`, results[who]]),
      ),
    );
  const answered = Object.fromEntries(callers.map((who) => [who, 'answered 200']));
  expect(probes).toEqual({
    ...prefixed('before', { ...both(answered), 'job 10.203.0.2': 'answered 200' }),
    ...prefixed('after', {
      ...both({ host: 'answered 200', job: 'refused', 'ecs-agent': 'answered 200', bridged: 'no answer' }),
      // Only IMDS: the job reaches the same stand-in at another address.
      'job 10.203.0.2': 'answered 200',
    }),
  });

  // Loaded twice, listed once: each rule is there one time, and the counters show the hits.
  const listed = r.stdout
    .split('\n')
    .filter((l) => l.startsWith('listed: '))
    .map((l) => l.slice('listed: '.length).trim());
  const rules = listed.filter((l) => l.includes(' counter '));
  expect(rules.map((l) => l.replace(/ counter packets \d+ bytes \d+/, ' counter'))).toEqual(
    imdsRules()
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l.includes(' counter ')),
  );
  for (const rule of rules.filter((l) => l.includes('reject') || l.includes('iifname'))) {
    expect(rule).toMatch(/ counter packets [1-9]\d* /);
  }
}, 120_000);

function prefixed(prefix: string, results: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(results).map(([k, v]) => [`${prefix} ${k}`, v]));
}
