/**
 * The bundled app with `fleet.scheduler: "batch"`: the config accepts it (and refuses a wrong value or a field of
 * the other scheduler, naming the field), the stack composes BatchComputeFleet instead of the Auto Scaling group,
 * cdk-nag finds nothing unacknowledged; then the real CDK CLI synthesizes examples/batch.config.json and
 * examples/sandbox-batch.config.json offline and cfn-lint reports nothing on either template.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Validations } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks } from 'cdk-nag';
import { resolveAppConfig } from '../../lib/app-config';
import { MountfleetStack } from '../../lib/mountfleet-stack';
import { credentialFreeEnv, expectSuccess, runCdk } from '../support/cdk-cli';
import { REPO_ROOT } from '../support/moto';
import { ensureBundles, fastApp } from './support';

beforeAll(ensureBundles);

describe('config', () => {
  test('scheduler defaults to asg; "batch" is taken', () => {
    expect(resolveAppConfig({}, '(test)')[0].fleet.scheduler).toBe('asg');
    expect(resolveAppConfig({ fleet: { scheduler: 'batch' } }, '(test)')[0].fleet.scheduler).toBe('batch');
  });

  test('a scheduler value it does not know, naming the field', () => {
    expect(() => resolveAppConfig({ fleet: { scheduler: 'slurm' } }, '(test)')).toThrow(
      /fleet\.scheduler: .*"asg".*"batch"/s,
    );
  });

  test('a field of the other scheduler, naming it and the fix', () => {
    expect(() => resolveAppConfig({ fleet: { scheduler: 'batch', maxCapacity: 4 } }, '(test)')).toThrow(
      /fleet\.maxCapacity: is not used with fleet\.scheduler "batch" — remove it, or set fleet\.scheduler to "asg"/,
    );
    expect(() => resolveAppConfig({ fleet: { spotMaxvCpus: 4 } }, '(test)')).toThrow(
      /fleet\.spotMaxvCpus: is not used with fleet\.scheduler "asg"/,
    );
  });
});

describe('stack', () => {
  const app = fastApp();
  const [config] = resolveAppConfig({ fleet: { scheduler: 'batch', onDemandMaxvCpus: 8 } }, '(test)');
  const stack = new MountfleetStack(app, config.stackName, { config });
  const t = Template.fromStack(stack);

  test('Batch compute environments and a queue per zone, no Auto Scaling group, a queue output per zone', () => {
    expect(stack.fleet).toBeUndefined();
    expect(Object.keys(t.findResources('AWS::AutoScaling::AutoScalingGroup'))).toEqual([]);
    expect(Object.keys(t.findResources('AWS::Batch::ComputeEnvironment'))).toHaveLength(4);
    expect(Object.keys(t.findResources('AWS::Batch::JobQueue'))).toHaveLength(2);
    expect(
      Object.keys(t.toJSON().Outputs)
        .filter((o) => o.startsWith('JobQueue'))
        .sort(),
    ).toEqual(['JobQueueuse1az4', 'JobQueueuse1az6']);
  });

  test('cdk-nag AwsSolutions: no unacknowledged finding', () => {
    const pack = new AwsSolutionsChecks(app);
    Validations.of(app).addPlugins(pack);
    const { violations } = pack.validateScope(app);
    expect(
      violations.map((v) => `${v.ruleName} ${v.violatingResources.map((r) => r.constructPath).join(',')}`),
    ).toEqual([]);
  });
});

describe('cdk synth --no-lookups and cfn-lint', () => {
  const out = mkdtempSync(join(tmpdir(), 'mf-batch-synth-'));
  const templates: string[] = [];

  beforeAll(async () => {
    for (const [name, file] of [
      ['batch', 'examples/batch.config.json'],
      ['sandbox-batch', 'examples/sandbox-batch.config.json'],
    ]) {
      const dir = join(out, name);
      expectSuccess(
        await runCdk(['synth', '--no-lookups', '--quiet', '-o', dir, '-c', `mountfleetConfig=${file}`], {
          env: credentialFreeEnv(),
        }),
        `cdk synth (${name})`,
      );
      templates.push(
        ...readdirSync(dir)
          .filter((f) => f.endsWith('.template.json'))
          .map((f) => join(dir, f)),
      );
    }
  }, 180000);

  test('each template has Batch queues and no Auto Scaling group', () => {
    expect(templates).toHaveLength(2);
    for (const file of templates) {
      const types = Object.values(
        (JSON.parse(readFileSync(file, 'utf8')) as { Resources: Record<string, { Type: string }> }).Resources,
      ).map((r) => r.Type);
      expect(types).toContain('AWS::Batch::JobQueue');
      expect(types).not.toContain('AWS::AutoScaling::AutoScalingGroup');
    }
  });

  test('the compute environments name a service role only in the sandbox (the emulator requires one)', () => {
    const serviceRoles = (file: string) =>
      Object.values(
        (
          JSON.parse(readFileSync(file, 'utf8')) as {
            Resources: Record<string, { Type: string; Properties: { ServiceRole?: unknown } }>;
          }
        ).Resources,
      )
        .filter((r) => r.Type === 'AWS::Batch::ComputeEnvironment')
        .map((r) => r.Properties.ServiceRole);
    const [aws, sandbox] = templates;
    expect(serviceRoles(aws).length).toBeGreaterThan(0);
    expect(serviceRoles(aws).every((role) => role === undefined)).toBe(true);
    expect(serviceRoles(sandbox).length).toBeGreaterThan(0);
    for (const role of serviceRoles(sandbox)) {
      expect(role).toEqual({ 'Fn::GetAtt': [expect.stringMatching(/^BatchServiceRole/), 'Arn'] });
    }
  });

  test('cfn-lint reports no error and no warning', () => {
    let output = '';
    try {
      execFileSync(join(REPO_ROOT, '.venv', 'bin', 'cfn-lint'), ['--format', 'parseable', ...templates], {
        encoding: 'utf8',
        stdio: 'pipe',
      });
    } catch (e) {
      const err = e as { stdout?: string; stderr?: string; status?: number };
      output = `exit ${err.status}\n${err.stdout ?? ''}${err.stderr ?? ''}`;
    }
    expect(output).toBe('');
  }, 60000);
});
