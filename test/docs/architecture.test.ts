/** docs/architecture.md describes the tree as it is: its table of core/ folders names each folder of core/ once, and no other. */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';

const root = resolve(__dirname, '../..');
const architecture = readFileSync(join(root, 'docs/architecture.md'), 'utf8');

/** The rows of the markdown table that follows `heading`: their first cells, backticks and trailing `/` dropped. */
function firstCells(heading: string): string[] {
  const lines = architecture.split('\n');
  const start = lines.findIndex((l) => l.trim() === heading);
  if (start < 0) throw new Error(`docs/architecture.md has no heading "${heading}"`);
  const rows: string[] = [];
  for (const line of lines.slice(start + 1)) {
    if (line.startsWith('#')) break;
    const cell = /^\|\s*`([^`]+)`\s*\|/.exec(line)?.[1];
    if (cell) rows.push(cell.replace(/\/$/, ''));
  }
  return rows;
}

const dirsOf = (dir: string) =>
  readdirSync(join(root, dir)).filter((name) => statSync(join(root, dir, name)).isDirectory());

test('the core/ table names each folder of core/ once, and no other', () => {
  const documented = firstCells('### core/, by what each folder is for');
  expect([...documented].sort()).toEqual(dirsOf('core').sort());
  expect(new Set(documented).size).toBe(documented.length);
});
