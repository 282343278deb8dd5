#!/usr/bin/env node
import { App, Stack } from 'aws-cdk-lib';

const app = new App();
new Stack(app, 'Mountfleet', {
  env: { account: process.env.CDK_DEFAULT_ACCOUNT, region: process.env.CDK_DEFAULT_REGION },
});
app.synth();
