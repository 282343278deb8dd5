/**
 * The README and docs/ as a user navigates them: the README stays short and starts with the two commands
 * (.ci/run and a hook look for ./scripts/test.sh), its example is the consumer app a test synthesizes, and
 * every relative link in README.md, CONTRIBUTING.md, CHANGELOG.md and docs/*.md reaches a file and, with
 * `#anchor`, a heading.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { anchors, proseLines } from './markdown';

const root = resolve(__dirname, '../..');
const read = (path: string): string => readFileSync(join(root, path), 'utf8');

const README_MAX_BYTES = 40_960;

const pages = [
  'README.md',
  'CONTRIBUTING.md',
  'CHANGELOG.md',
  ...readdirSync(join(root, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
];

describe('README.md', () => {
  const readme = read('README.md');

  test(`is at most ${README_MAX_BYTES} bytes`, () => {
    expect(Buffer.byteLength(readme)).toBeLessThanOrEqual(README_MAX_BYTES);
  });

  test('starts with the demo and test commands', () => {
    const lines = readme.split('\n');
    const fence = lines.indexOf('```bash');
    expect(fence).toBeGreaterThan(0);
    expect(lines[fence + 1]).toMatch(/^\.\/scripts\/demo\.sh\s/);
    expect(lines[fence + 2]).toMatch(/^\.\/scripts\/test\.sh\s/);
    // Nothing but the title comes before them.
    expect(lines.slice(0, fence).filter((l) => l.trim() !== '')).toEqual(['# mountfleet']);
  });

  test('shows examples/consumer-app/app.ts as it is', () => {
    const app = read('examples/consumer-app/app.ts');
    expect(readme).toContain('```ts\n' + app + '```');
  });

  test('links every page under docs/', () => {
    const linked = pages.filter((p) => p.startsWith('docs/') && !readme.includes(`](${p}`));
    expect(linked).toEqual([]);
  });
});

describe.each(pages)('links in %s', (page) => {
  test('resolve to a file and a heading', () => {
    const text = read(page);
    const broken: string[] = [];
    const prose = proseLines(text)
      .join('\n')
      .replace(/`[^`\n]*`/g, '');
    for (const [, target] of prose.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
      if (/^[a-z]+:/i.test(target)) continue; // https:, mailto:
      const [file, anchor] = target.split('#', 2);
      const path = file === '' ? join(root, page) : resolve(dirname(join(root, page)), file);
      if (!existsSync(path)) {
        broken.push(`${target}: no file ${relative(root, path)}`);
        continue;
      }
      if (anchor === undefined) continue;
      if (!path.endsWith('.md') || statSync(path).isDirectory()) {
        broken.push(`${target}: an anchor into a file that is not Markdown`);
      } else if (!anchors(readFileSync(path, 'utf8')).has(anchor)) {
        broken.push(`${target}: no heading with anchor #${anchor} in ${relative(root, path)}`);
      }
    }
    expect(broken).toEqual([]);
  });
});
