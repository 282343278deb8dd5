/**
 * docs/cli.md against the program `mountfleet --help` describes: every command and subcommand has a heading
 * `mountfleet <command path>` there, every long flag it shows in --help appears under that heading, and no
 * section names a flag its command does not have. After adding a command or flag, document it in docs/cli.md.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Command, Option } from 'commander';
import { buildProgram } from '../../agent/cli';
import { headings } from './markdown';

const DOC = 'docs/cli.md';
const doc = readFileSync(join(__dirname, '../..', DOC), 'utf8');
const lines = doc.split('\n');
const program = buildProgram({ exitCode: 0 });

/** Commander's own help flag, present on every command without being one of its options. */
const HELP = '--help';

/** `--flag` tokens, not the `--` separator and not the `--x-s3` inside a directory bucket name. */
function flagsIn(text: string): Set<string> {
  return new Set([...text.matchAll(/(?<![\w>-])--[a-z][a-z0-9-]*(?![\w-])/g)].map((m) => m[0]));
}

function longFlags(command: Command, includeHidden: boolean): string[] {
  return command.options
    .filter((o: Option) => includeHidden || !o.hidden)
    .map((o) => o.long)
    .filter((f): f is string => f !== undefined);
}

interface CommandEntry {
  readonly path: string;
  readonly command: Command;
  readonly ancestors: Command[];
}

function walk(command: Command, path: string, ancestors: Command[]): CommandEntry[] {
  const entry = { path, command, ancestors };
  return [entry, ...command.commands.flatMap((c) => walk(c, `${path} ${c.name()}`, [...ancestors, command]))];
}

const [root, ...commands] = walk(program, program.name(), []);
const byPath = new Map(commands.map((c) => [c.path, c]));

const docHeadings = headings(doc);
/** Lines of the section under heading `i`: up to the next heading of the same or a higher level. */
function section(i: number): string {
  const h = docHeadings[i];
  const next = docHeadings.slice(i + 1).find((n) => n.level <= h.level);
  return lines.slice(h.line, next ? next.line : lines.length).join('\n');
}
const headingIndex = (path: string): number => docHeadings.findIndex((h) => h.text.trim() === path);

test('every command and subcommand has its heading in docs/cli.md', () => {
  const missing = commands
    .filter((c) => headingIndex(c.path) < 0)
    .map(
      (c) =>
        `${c.path}: no heading "${c.path}" in ${DOC} (flags: ${longFlags(c.command, false).join(', ') || 'none'})`,
    );
  expect(missing).toEqual([]);
});

test('every flag --help shows is documented under its command', () => {
  const missing: string[] = [];
  for (const c of commands) {
    const i = headingIndex(c.path);
    if (i < 0) continue; // reported above
    const documented = flagsIn(section(i));
    for (const flag of longFlags(c.command, false)) {
      if (!documented.has(flag))
        missing.push(`${c.path}: ${flag} is missing under "${docHeadings[i].text}" in ${DOC}`);
    }
  }
  const intro = lines.slice(0, docHeadings.find((h) => byPath.has(h.text.trim()))?.line).join('\n');
  for (const flag of longFlags(root.command, false)) {
    if (!flagsIn(intro).has(flag))
      missing.push(`${root.path}: global ${flag} is missing before the first command heading in ${DOC}`);
  }
  expect(missing).toEqual([]);
});

test('docs/cli.md names no flag its command lacks', () => {
  const everyFlag = new Set([HELP, ...[root, ...commands].flatMap((c) => longFlags(c.command, true))]);
  const unknown: string[] = [];
  // Each stretch of lines between two headings belongs to the innermost command heading above it.
  const stack: { level: number; entry?: CommandEntry }[] = [];
  const chunks = [
    { start: 0, end: docHeadings[0]?.line ?? lines.length, entry: undefined as CommandEntry | undefined },
  ];
  docHeadings.forEach((h, i) => {
    while (stack.length > 0 && stack[stack.length - 1].level >= h.level) stack.pop();
    stack.push({ level: h.level, entry: byPath.get(h.text.trim()) });
    const owner = [...stack].reverse().find((s) => s.entry)?.entry;
    chunks.push({ start: h.line, end: docHeadings[i + 1]?.line ?? lines.length, entry: owner });
  });
  for (const { start, end, entry } of chunks) {
    const text = lines.slice(start, end).join('\n');
    const allowed = entry
      ? new Set([
          HELP,
          ...[entry.command, ...entry.ancestors].flatMap((c) => longFlags(c, true)),
          ...walk(entry.command, entry.path, []).flatMap((d) => longFlags(d.command, true)),
        ])
      : everyFlag;
    for (const flag of flagsIn(text)) {
      if (!allowed.has(flag)) {
        unknown.push(
          entry
            ? `${DOC} line ${start + 1}, under "${entry.path}": ${flag} is not a flag of ${entry.path}`
            : `${DOC} line ${start + 1}: ${flag} is not a flag of any mountfleet command`,
        );
      }
    }
  }
  expect(unknown).toEqual([]);
});
