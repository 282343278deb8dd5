/**
 * What user data does on a real instance: the shell fragments run for real with bash (package managers and
 * systemctl replaced by stand-in scripts on PATH, named as such), and the fleet's rendered script.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Stack } from 'aws-cdk-lib';
import type { Template } from 'aws-cdk-lib/assertions';
import { agentPaths } from '../../../core/contract/agent-paths';
import {
  AGENT_UNIT_NAME,
  CLOUDWATCH_AGENT_MIN_VERSION,
  cloudWatchLoadUnit,
  cloudWatchPathUnit,
  CLOUDWATCH_LOAD_UNIT_NAME,
  CLOUDWATCH_PATH_UNIT_NAME,
  installCloudWatchAgentCommands,
  retryFunctionCommands,
  verifyBundleCommands,
} from '../../../lib/private/user-data';
import { REPO, ensureBundles, userDataOf } from '../support';
import { buildFleet } from '../fleet-fixture';

beforeAll(ensureBundles);

/** Runs a script under the user data's own `set -euo pipefail`, with stand-in commands first on PATH. */
function runBash(lines: string[], standIns: Record<string, string> = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'mf-userdata-'));
  const bin = join(dir, 'bin');
  mkdirSync(bin);
  for (const [name, body] of Object.entries(standIns)) {
    writeFileSync(join(bin, name), `#!/bin/bash\n${body}\n`);
    chmodSync(join(bin, name), 0o755);
  }
  const script = join(dir, 'script.sh');
  writeFileSync(script, ['set -euo pipefail', ...lines].join('\n'));
  const result = spawnSync('bash', [script], {
    encoding: 'utf8',
    env: { PATH: `${bin}:${process.env.PATH}`, LOG: join(dir, 'calls.log') },
  });
  const log = join(dir, 'calls.log');
  return { ...result, dir, calls: existsSync(log) ? readFileSync(log, 'utf8') : '' };
}

/** The sleeps of the retry loop would take 50 s: the stand-in `sleep` only records them. */
const fastSleep = { sleep: 'echo "sleep $*" >> "$LOG"' };

describe('retry', () => {
  test('gives up after five failed attempts with a non-zero status, so set -e stops the boot', () => {
    const r = runBash(
      [...retryFunctionCommands(), 'retry false', 'echo "must not run" >> "$LOG"'],
      fastSleep,
    );
    expect(r.status).not.toBe(0);
    expect(r.stderr).toContain("giving up on 'false' after 5 attempts");
    expect(r.calls).not.toContain('must not run');
    expect(r.calls.match(/^sleep /gm)).toHaveLength(4);
  });

  test('returns as soon as an attempt succeeds', () => {
    const flaky = 'n=$(cat "$LOG.n" 2>/dev/null || echo 0); echo $((n + 1)) > "$LOG.n"; [ "$n" -ge 2 ]';
    const r = runBash([...retryFunctionCommands(), 'retry flaky', 'echo done >> "$LOG"'], {
      ...fastSleep,
      flaky,
    });
    expect(r.status).toBe(0);
    expect(r.calls).toBe('sleep 5\nsleep 10\ndone\n');
  });
});

describe('agent bundle sha256', () => {
  const content = 'console.log("mountfleet");\n';
  const digest = createHash('sha256').update(content).digest('hex');

  test('the bundle with the baked-in digest passes and the boot goes on', () => {
    const dir = mkdtempSync(join(tmpdir(), 'mf-bundle-'));
    const file = join(dir, 'mountfleet.js');
    writeFileSync(file, content);
    const r = runBash([...verifyBundleCommands(new Stack(), file, digest), 'echo ran >> "$LOG"']);
    expect(r.status).toBe(0);
    expect(r.calls).toBe('ran\n');
  });

  test('a tampered bundle stops the boot with a clear line, is removed, and nothing after it runs', () => {
    const dir = mkdtempSync(join(tmpdir(), 'mf-bundle-'));
    const file = join(dir, 'mountfleet.js');
    writeFileSync(file, content.replace('mountfleet', 'evil'));
    const r = runBash([...verifyBundleCommands(new Stack(), file, digest), 'echo ran >> "$LOG"']);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain(`${file} does not have the sha256 baked into the launch template`);
    expect(r.calls).toBe('');
    expect(existsSync(file)).toBe(false);
  });

  test('a digest that is not one fails at synth, naming the construct and the prop (it would be shell text)', () => {
    const stack = new Stack(undefined, 'Test');
    expect(() => verifyBundleCommands(stack, '/opt/mountfleet/mountfleet.js', "x'; reboot; '")).toThrow(
      /^Test: agent: "x'; reboot; '" is not a sha256 digest of \/opt\/mountfleet\/mountfleet\.js — rebuild the bundle/,
    );
  });

  test('a missing bundle is refused too', () => {
    const r = runBash([
      ...verifyBundleCommands(new Stack(), '/nonexistent/mountfleet.js', digest),
      'echo ran >> "$LOG"',
    ]);
    expect(r.status).toBe(1);
    expect(r.calls).toBe('');
  });
});

describe('CloudWatch agent', () => {
  const configPath = agentPaths({}).cloudWatchAgentConfigFile;
  /** dnf, rpm and systemctl stand-ins: record the call, rpm answers with a given version. */
  const standIns = (version: string) => ({
    dnf: 'echo "dnf $*" >> "$LOG"',
    rpm: `echo "rpm $*" >> "$LOG"; printf '%s' '${version}'`,
    systemctl: 'echo "systemctl $*" >> "$LOG"',
  });
  /** The fragment with the unit written under a temporary root instead of /etc. */
  const fragment = (root: string) =>
    installCloudWatchAgentCommands(new Stack(), configPath).map((l) =>
      l.replaceAll('/etc/systemd/system/', `${root}/`),
    );

  test.each([
    ['the minimum release', CLOUDWATCH_AGENT_MIN_VERSION],
    ['a later build with a build suffix', '1.300061.1b1234'],
    ['a later major', '2.0.0'],
  ])('%s is installed and started through the path unit', (_name, version) => {
    const root = mkdtempSync(join(tmpdir(), 'mf-cwa-'));
    const r = runBash([...retryFunctionCommands(), ...fragment(root)], standIns(version));
    expect(r.status).toBe(0);
    expect(r.calls).toContain('dnf install -y amazon-cloudwatch-agent');
    expect(r.calls).toContain('systemctl enable --now mountfleet-cloudwatch-agent.path');
    expect(readFileSync(join(root, CLOUDWATCH_PATH_UNIT_NAME), 'utf8')).toBe(cloudWatchPathUnit(configPath));
    expect(readFileSync(join(root, CLOUDWATCH_LOAD_UNIT_NAME), 'utf8')).toBe(cloudWatchLoadUnit(configPath));
  });

  test.each([
    ['an older release', '1.300059.9'],
    ['an older release with a build suffix', '1.300049.1b1109'],
  ])('%s is refused with a clear line, and the boot goes on', (_name, version) => {
    const root = mkdtempSync(join(tmpdir(), 'mf-cwa-'));
    const r = runBash(
      [...retryFunctionCommands(), ...fragment(root), 'echo "boot goes on" >> "$LOG"'],
      standIns(version),
    );
    expect(r.status).toBe(0);
    expect(r.stderr).toContain(
      `amazon-cloudwatch-agent ${version.replace(/b.*/, '')} is older than 1.300060.0`,
    );
    expect(r.calls).not.toContain('systemctl enable');
    expect(r.calls).toContain('boot goes on');
    expect(existsSync(join(root, 'mountfleet-cloudwatch-agent.path'))).toBe(false);
  });

  test('a failing install stops the boot after the retries', () => {
    const root = mkdtempSync(join(tmpdir(), 'mf-cwa-'));
    const r = runBash([...retryFunctionCommands(), ...fragment(root), 'echo ran >> "$LOG"'], {
      ...standIns('1.300060.0'),
      ...fastSleep,
      dnf: 'exit 1',
    });
    expect(r.status).not.toBe(0);
    expect(r.calls).not.toContain('ran');
  });

  test('the units pass systemd-analyze verify and load the config mountfleet up writes with fetch-config', () => {
    const dir = mkdtempSync(join(tmpdir(), 'mf-unit-'));
    // The CloudWatch agent's ctl exists only where its package is installed: a stand-in executable here.
    const ctl = '/opt/aws/amazon-cloudwatch-agent/bin/amazon-cloudwatch-agent-ctl';
    const ctlStandIn = join(dir, 'amazon-cloudwatch-agent-ctl');
    writeFileSync(ctlStandIn, '#!/bin/sh\n', { mode: 0o755 });
    const pathUnit = join(dir, CLOUDWATCH_PATH_UNIT_NAME);
    const loadUnit = join(dir, CLOUDWATCH_LOAD_UNIT_NAME);
    writeFileSync(pathUnit, cloudWatchPathUnit(configPath));
    writeFileSync(loadUnit, cloudWatchLoadUnit(configPath).replace(ctl, ctlStandIn));
    const result = spawnSync('systemd-analyze', ['verify', pathUnit, loadUnit], { encoding: 'utf8' });
    const complaints = result.stderr
      .split('\n')
      .filter((l) => l.includes('mountfleet-cloudwatch') && !l.includes('sysinit.target'));
    expect(complaints).toEqual([]);
    expect(cloudWatchPathUnit(configPath)).toContain(`PathExists=${configPath}`);
    expect(cloudWatchPathUnit(configPath)).toContain(`Unit=${CLOUDWATCH_LOAD_UNIT_NAME}`);
    expect(cloudWatchPathUnit(configPath)).toContain(`Before=${AGENT_UNIT_NAME}`);
    // The config lives outside amazon-cloudwatch-agent.d, which fetch-config empties of files it did not write.
    expect(configPath).toBe('/etc/mountfleet/cloudwatch-agent.json');
    expect(cloudWatchLoadUnit(configPath)).toContain(
      `ExecStart=${ctl} -a fetch-config -m ec2 -c file:${configPath} -s`,
    );
    expect(cloudWatchLoadUnit(configPath)).toContain('RemainAfterExit=yes');
  });
});

describe('the fleet user data', () => {
  const script = (t: Template) => userDataOf(t);

  test('checks the downloaded bundle against the sha256 of dist/agent/mountfleet.js before anything runs it', () => {
    const s = script(buildFleet().template());
    const digest = createHash('sha256')
      .update(readFileSync(join(REPO, 'dist', 'agent', 'mountfleet.js')))
      .digest('hex');
    expect(s).toContain(`echo '${digest}  /opt/mountfleet/mountfleet.js' | sha256sum --check --status`);
    const download = s.indexOf("'/opt/mountfleet/mountfleet.js'");
    const check = s.indexOf('sha256sum --check');
    const launcher = s.indexOf('/usr/local/bin/mountfleet');
    expect(download).toBeGreaterThan(0);
    expect(check).toBeGreaterThan(download);
    expect(launcher).toBeGreaterThan(check);
  });

  test('installs Node 22, efs-utils with scratch, the CloudWatch agent, every install through retry', () => {
    const s = script(buildFleet().template());
    expect(s).toContain('retry dnf install -y nodejs22');
    expect(s).toContain('retry dnf install -y amazon-efs-utils');
    expect(s).toContain('retry dnf install -y amazon-cloudwatch-agent');
    expect(s.match(/dnf install/g)).toHaveLength(s.match(/retry dnf install/g)!.length);
    expect(s.indexOf('systemctl enable --now mountfleet-cloudwatch-agent.path')).toBeLessThan(
      s.indexOf('systemctl enable --now mountfleet-agent.service'),
    );
  });

  test('no efs-utils without scratch', () => {
    expect(script(buildFleet({ scratch: false }).template())).not.toContain('amazon-efs-utils');
  });

  test('the whole rendered script is valid bash', () => {
    const dir = mkdtempSync(join(tmpdir(), 'mf-script-'));
    const file = join(dir, 'user-data.sh');
    writeFileSync(file, script(buildFleet().template()));
    const r = spawnSync('bash', ['-n', file], { encoding: 'utf8' });
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
  });
});
