#!/usr/bin/env node
// The bundled CDK app: one MountfleetStack per environment of the config (see lib/app-config.ts and
// examples/mountfleet.config.json), checked by cdk-nag's AwsSolutions pack at synth.
import { App, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { AppConfigError, loadAppConfig } from '../lib/app-config';
import { MountfleetStack } from '../lib/mountfleet-stack';
import type { ResolvedStackConfig } from '../lib/stack-config';

// CloudFormation checks run where they cost nothing at synth: cfn-lint on every template in the test command
// (scripts/test.sh), and cdk-nag below. The built-in validator would add ~4 s of CPU to every synth.
// No autoSynth: after a config error the app writes nothing (it would otherwise leave an empty assembly).
const app = new App({ builtinCloudFormationValidation: false, autoSynth: false });
let configs: ResolvedStackConfig[] | undefined;
try {
  configs = loadAppConfig(app.node);
} catch (e) {
  // A config mistake is the user's to fix: one message naming the field, not a stack trace into the app.
  if (!(e instanceof AppConfigError)) throw e;
  process.stderr.write(`${e.message}\n`);
  process.exitCode = 1;
}
if (configs) {
  for (const config of configs) new MountfleetStack(app, config.stackName, { config });
  Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
  app.synth();
}
