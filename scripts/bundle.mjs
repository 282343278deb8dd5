// Bundles the agent CLI and every Lambda entry (lambda/<name>/index.ts) with esbuild into dist/.
// The agent carries the AWS SDK (it runs on bare instances); Lambda bundles leave it external
// (the NODEJS_22_X runtime provides it), which keeps them small and quick to cold-start.
import { build } from 'esbuild';
import { chmodSync, existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';

const root = new URL('..', import.meta.url).pathname;
const { version } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const common = {
  bundle: true,
  platform: 'node',
  format: 'cjs',
  minify: true,
  sourcemap: false,
  legalComments: 'none',
  logLevel: 'warning',
  define: { 'process.env.MOUNTFLEET_VERSION': JSON.stringify(version) },
};

rmSync(join(root, 'dist', 'agent'), { recursive: true, force: true });
rmSync(join(root, 'dist', 'lambda'), { recursive: true, force: true });

await build({
  ...common,
  entryPoints: [join(root, 'agent', 'main.ts')],
  outfile: join(root, 'dist', 'agent', 'mountfleet.js'),
  target: 'node20',
  banner: { js: '#!/usr/bin/env node' },
});
chmodSync(join(root, 'dist', 'agent', 'mountfleet.js'), 0o755);

const lambdaDir = join(root, 'lambda');
for (const name of existsSync(lambdaDir) ? readdirSync(lambdaDir) : []) {
  const entry = join(lambdaDir, name, 'index.ts');
  if (!existsSync(entry)) continue;
  await build({
    ...common,
    entryPoints: [entry],
    outfile: join(root, 'dist', 'lambda', name, 'index.js'),
    target: 'node22',
    external: ['@aws-sdk/*', '@smithy/*'],
  });
}
