/**
 * What `npm pack` publishes: only what a user needs (compiled library and runtime, the jsii assembly, the two
 * bundles, their third-party notices, the licence files, the bundled zod), and notices that name every
 * package a bundle inlines.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from '../support/moto';
import { ensureBundles } from '../lib/support';
import { ensureLibrary } from './support/library';

function packedFiles(): string[] {
  const out = execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], {
    cwd: REPO_ROOT,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  return (JSON.parse(out) as { files: { path: string }[] }[])[0]!.files.map((f) => f.path);
}

beforeAll(() => {
  ensureBundles();
  ensureLibrary();
});

test('the package holds the licences, the bundles with their notices, and no sources or tests', () => {
  const files = packedFiles();
  expect(files).toEqual(
    expect.arrayContaining([
      'LICENSE',
      'NOTICE',
      'README.md',
      'package.json',
      '.jsii',
      'dist/lib/index.js',
      'dist/lib/index.d.ts',
      'node_modules/zod/package.json',
      'dist/agent/mountfleet.js',
      'dist/agent/THIRD-PARTY-NOTICES.txt',
      'dist/lambda/reaper/index.js',
      'dist/lambda/reaper/THIRD-PARTY-NOTICES.txt',
    ]),
  );
  // zod is the library's one runtime dependency: jsii needs it bundled (it is no jsii module), and nothing
  // else may ride along in node_modules.
  const ours = files.filter((f) => !f.startsWith('node_modules/zod/'));
  const unexpected = ours.filter(
    (f) =>
      !['LICENSE', 'NOTICE', 'README.md', 'package.json', '.jsii'].includes(f) &&
      !/^dist\/(lib|core|agent|lambda)\//.test(f),
  );
  expect(unexpected).toEqual([]);
  // Our TypeScript sources stay out; declarations ship for library users.
  expect(ours.filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts'))).toEqual([]);
});

test.each([
  ['agent/mountfleet.js', ['@aws-sdk/client-efs', '@smithy/core', 'commander', 'zod']],
  ['lambda/reaper/index.js', ['@aws-lambda-powertools/logger', 'zod']],
])('%s: the notices name the packages the bundle inlines, each with its licence', (bundle, expected) => {
  const notices = readFileSync(
    join(REPO_ROOT, 'dist', bundle.replace(/[^/]+$/, 'THIRD-PARTY-NOTICES.txt')),
    'utf8',
  );
  const named = [...notices.matchAll(/^=== (@?[^@\s]+)@\S+ \((.+)\)$/gm)];
  expect(named.map((m) => m[1])).toEqual(expect.arrayContaining(expected));
  for (const m of named) expect(m[2]).not.toBe('see below');
  // The Lambda leaves the AWS SDK to the runtime: its notices must not claim to ship it.
  if (bundle.startsWith('lambda/')) expect(named.map((m) => m[1])).not.toContain('@aws-sdk/client-efs');
});
