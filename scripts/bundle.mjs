// Bundles the agent CLI and every Lambda entry (lambda/<name>/index.ts) with esbuild into dist/.
// The agent carries the AWS SDK (it runs on bare instances); Lambda bundles leave it external
// (the NODEJS_22_X runtime provides it), which keeps them small and quick to cold-start.
// Minifying drops the licence comments of what a bundle inlines, so each bundle gets a
// THIRD-PARTY-NOTICES.txt beside it with the name, version, licence and licence files of every package in it.
import { build } from 'esbuild';
import { chmodSync, existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';

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
  metafile: true,
};

/** Licences whose packages may ship without a licence file, and why the notice needs none. */
const NO_FILE_NEEDED = {
  'Apache-2.0': 'the Apache License 2.0 text is LICENSE at the root of mountfleet',
  'MIT-0': 'MIT No Attribution requires no notice',
};

/** The package directory (node_modules/<name> or node_modules/@scope/<name>) an input file belongs to. */
function packageDirOf(input) {
  const parts = input.split('/');
  const at = parts.lastIndexOf('node_modules');
  if (at < 0) return undefined;
  const length = parts[at + 1]?.startsWith('@') ? 3 : 2;
  return join(root, ...parts.slice(0, at + length));
}

/** Writes the notices of every third-party package whose code the bundle inlines. */
function writeNotices(result, outfile) {
  const dirs = [...new Set(Object.keys(result.metafile.inputs).map(packageDirOf).filter(Boolean))].sort();
  const firstWithText = new Map(); // licence text → the package that printed it (the SDK repeats one text 30 times)
  const sections = dirs.map((dir) => {
    const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
    const files = readdirSync(dir)
      .filter((f) => /^(licen[cs]e|copying|notice)/i.test(f))
      .sort();
    const texts = files.map((f) => {
      const text = readFileSync(join(dir, f), 'utf8').trim();
      const seen = firstWithText.get(text);
      if (seen) return `--- ${f}: the same text as ${seen} above\n`;
      firstWithText.set(text, `${pkg.name}'s ${f}`);
      return `--- ${f}\n${text}\n`;
    });
    // Some packages ship no licence file: the AWS SDK's (Apache-2.0, whose text is mountfleet's own LICENSE)
    // and Powertools' (MIT-0, which asks for no notice). Anything else without one stops the build.
    if (files.length === 0) {
      const why = NO_FILE_NEEDED[pkg.license];
      if (!why)
        throw new Error(`${relative(root, dir)}: no licence file to ship with the bundle (${pkg.license})`);
      texts.push(`(no licence file in the package: ${why})\n`);
    }
    return [`=== ${pkg.name}@${pkg.version} (${pkg.license ?? 'see below'})`, ...texts].join('\n');
  });
  const header = `Third-party software inlined in ${relative(join(root, 'dist'), outfile)} (${dirs.length} packages).\n`;
  writeFileSync(join(dirname(outfile), 'THIRD-PARTY-NOTICES.txt'), [header, ...sections].join('\n'));
}

rmSync(join(root, 'dist', 'agent'), { recursive: true, force: true });
rmSync(join(root, 'dist', 'lambda'), { recursive: true, force: true });

const agentOut = join(root, 'dist', 'agent', 'mountfleet.js');
const agent = await build({
  ...common,
  entryPoints: [join(root, 'agent', 'main.ts')],
  outfile: agentOut,
  target: 'node22',
  banner: { js: '#!/usr/bin/env node' },
});
chmodSync(agentOut, 0o755);
writeNotices(agent, agentOut);

const lambdaDir = join(root, 'lambda');
for (const name of existsSync(lambdaDir) ? readdirSync(lambdaDir) : []) {
  const entry = join(lambdaDir, name, 'index.ts');
  if (!existsSync(entry)) continue;
  const outfile = join(root, 'dist', 'lambda', name, 'index.js');
  const lambda = await build({
    ...common,
    entryPoints: [entry],
    outfile,
    target: 'node22',
    external: ['@aws-sdk/*', '@smithy/*'],
  });
  writeNotices(lambda, outfile);
}
