#!/usr/bin/env node
// The bundled CDK app: one MountfleetStack per environment of the config (see lib/app-config.ts and
// examples/mountfleet.config.json), checked by cdk-nag's AwsSolutions pack at synth.
import { App, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { loadAppConfig } from '../lib/app-config';
import { MountfleetStack } from '../lib/mountfleet-stack';

const app = new App();
for (const config of loadAppConfig(app.node)) new MountfleetStack(app, config.stackName, { config });
Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
app.synth();
