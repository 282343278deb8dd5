/** Helpers for the construct tests: a fast app, a stack in us-east-1, bundles present, user-data reading. */
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { App, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';

export const REPO = join(__dirname, '..', '..');

/** The two zones the construct tests place networks, caches and fleets in. */
export const AZS = ['use1-az4', 'use1-az6'];

/** Builds dist/agent and dist/lambda with the real bundler when either is missing. */
export function ensureBundles(): void {
  const bundles = [
    join(REPO, 'dist', 'agent', 'mountfleet.js'),
    ...readdirSync(join(REPO, 'lambda')).map((name) => join(REPO, 'dist', 'lambda', name, 'index.js')),
  ];
  if (!bundles.every((bundle) => existsSync(bundle))) {
    execFileSync(process.execPath, [join(REPO, 'scripts', 'bundle.mjs')], { cwd: REPO, stdio: 'inherit' });
  }
}

/** An app that skips asset bundling (keeps each synth well under a second). */
export function fastApp(context: Record<string, unknown> = {}): App {
  return new App({ context: { 'aws:cdk:bundling-stacks': [], ...context } });
}

export function testStack(app: App = fastApp(), id = 'Test'): Stack {
  return new Stack(app, id, { env: { region: 'us-east-1' } });
}

/** Renders a resolved `Fn::Join` (user data) as text, with intrinsics shown as `<Ref:Id>` / `<GetAtt:Id.Attr>`. */
export function renderJoin(value: unknown): string {
  if (typeof value === 'string') return value;
  const v = value as Record<string, unknown>;
  if (v['Fn::Base64']) return renderJoin(v['Fn::Base64']);
  if (v['Fn::Join']) {
    const [sep, parts] = v['Fn::Join'] as [string, unknown[]];
    return parts.map(renderJoin).join(sep);
  }
  if (v.Ref) return `<Ref:${String(v.Ref)}>`;
  if (v['Fn::GetAtt']) return `<GetAtt:${(v['Fn::GetAtt'] as string[]).join('.')}>`;
  if (v['Fn::Sub']) return String(v['Fn::Sub']);
  return JSON.stringify(value);
}

/** The user data script of the only launch template in a template. */
export function userDataOf(template: Template): string {
  const lts = template.findResources('AWS::EC2::LaunchTemplate');
  const [lt] = Object.values(lts) as Array<{ Properties: { LaunchTemplateData: { UserData: unknown } } }>;
  return renderJoin(lt.Properties.LaunchTemplateData.UserData);
}

/** agent.json as the user data writes it (intrinsics rendered as `<Ref:…>` strings). */
export function agentJsonOf(template: Template): Record<string, unknown> {
  const m = /cat > \/etc\/mountfleet\/agent\.json <<'MOUNTFLEET_EOF'\n(.*)\nMOUNTFLEET_EOF/.exec(
    userDataOf(template),
  );
  if (!m) throw new Error('no agent.json in user data');
  return JSON.parse(m[1]) as Record<string, unknown>;
}

/** One statement of a synthesized policy. */
export interface Statement {
  readonly Action: string | string[];
  readonly Resource: unknown;
  readonly Condition?: unknown;
  readonly Effect: string;
  readonly [key: string]: unknown;
}

/** All policy statements attached to roles in a template. */
export function statements(template: Template): Statement[] {
  return Object.values(template.findResources('AWS::IAM::Policy')).flatMap(
    (p) =>
      (p as { Properties: { PolicyDocument: { Statement: Statement[] } } }).Properties.PolicyDocument
        .Statement,
  );
}
