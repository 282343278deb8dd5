/**
 * Output files (`--summary`, `--chart`, `--out`): refused when opened (exit 2 through UsageError, naming the
 * flag and the path) if they cannot be written; written through the descriptor opened then; a failed write
 * throws; a file the command created and never wrote is removed again.
 */
import { execFileSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { UsageError } from '../../core/common';
import { OutputFile } from '../../agent/output';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'mf-output-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const refusal = (path: string) => {
  try {
    OutputFile.open('--summary', path).discard();
  } catch (err) {
    expect(err).toBeInstanceOf(UsageError);
    return (err as Error).message;
  }
  throw new Error(`${path} was not refused`);
};

test('a destination that cannot be written is refused when opened, naming the flag, the path and the fix', () => {
  mkdirSync(join(dir, 'a-directory'));
  expect(refusal(join(dir, 'a-directory'))).toBe(
    `--summary ${join(dir, 'a-directory')}: is a directory: give the path of a file to write`,
  );
  expect(refusal(join(dir, 'missing', 'out.json'))).toBe(
    `--summary ${join(dir, 'missing', 'out.json')}: ${join(dir, 'missing')} is not a directory: create it or give another path`,
  );
  writeFileSync(join(dir, 'target'), 'keep');
  symlinkSync(join(dir, 'target'), join(dir, 'link'));
  expect(refusal(join(dir, 'link'))).toBe(
    `--summary ${join(dir, 'link')}: is a symbolic link: give the file's own path`,
  );
  expect(readFileSync(join(dir, 'target'), 'utf8')).toBe('keep');
  execFileSync('mkfifo', [join(dir, 'fifo')]);
  expect(refusal(join(dir, 'fifo'))).toBe(
    `--summary ${join(dir, 'fifo')}: is a FIFO no process reads: give the path of a file to write`,
  );
  const readOnly = join(dir, 'ro');
  mkdirSync(readOnly);
  execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=1m,ro', 'tmpfs', readOnly]);
  try {
    expect(refusal(join(readOnly, 'out.json'))).toBe(
      `--summary ${join(readOnly, 'out.json')}: cannot be written (EROFS): give a path on a writable file system`,
    );
  } finally {
    execFileSync('umount', [readOnly]);
  }
});

test('writes through the descriptor opened first: a symlink put in place meanwhile is not followed', () => {
  const path = join(dir, 'summary.json');
  writeFileSync(path, 'an older summary, longer than the new one');
  const out = OutputFile.open('--summary', path);
  renameSync(path, join(dir, 'moved.json'));
  writeFileSync(join(dir, 'victim'), 'keep');
  symlinkSync(join(dir, 'victim'), path);
  out.write('{}\n');
  expect(readFileSync(join(dir, 'moved.json'), 'utf8')).toBe('{}\n');
  expect(readFileSync(join(dir, 'victim'), 'utf8')).toBe('keep');
});

test('a write that fails throws, naming the flag and the path', () => {
  const full = join(dir, 'full');
  mkdirSync(full);
  execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=64k', 'tmpfs', full]);
  try {
    const out = OutputFile.open('--chart', join(full, 'chart.svg'));
    try {
      writeFileSync(join(full, 'filler'), Buffer.alloc(1024 * 1024));
    } catch {
      // ENOSPC: full, as intended
    }
    expect(() => out.write('x'.repeat(256 * 1024))).toThrow(
      new RegExp(`^--chart ${join(full, 'chart.svg')} was not written: ENOSPC`),
    );
  } finally {
    execFileSync('umount', [full]);
  }
});

test('discard removes a file it created and keeps one that was there before', () => {
  const created = OutputFile.open('--summary', join(dir, 'new.json'));
  expect(existsSync(join(dir, 'new.json'))).toBe(true);
  created.discard();
  expect(existsSync(join(dir, 'new.json'))).toBe(false);

  writeFileSync(join(dir, 'old.json'), 'old');
  OutputFile.open('--summary', join(dir, 'old.json')).discard();
  expect(readFileSync(join(dir, 'old.json'), 'utf8')).toBe('old');

  const written = OutputFile.open('--summary', join(dir, 'kept.json'));
  written.write('{}\n');
  written.discard();
  expect(readFileSync(join(dir, 'kept.json'), 'utf8')).toBe('{}\n');
});

test('files in a --out DIR: the directory made when missing, all of them opened or none', () => {
  const out = join(dir, 'new', 'out');
  const [csv, svg] = OutputFile.openAllIn('--out', out, ['latency.csv', 'latency.svg']);
  csv.write('a\n');
  svg.write('<svg/>');
  expect(readFileSync(join(out, 'latency.csv'), 'utf8')).toBe('a\n');

  // A directory that cannot be made (below a file) is a usage error naming the flag.
  writeFileSync(join(dir, 'plain-file'), '');
  expect(() => OutputFile.openAllIn('--out', join(dir, 'plain-file', 'out'), ['a.csv'])).toThrow(
    `--out ${join(dir, 'plain-file', 'out')} cannot be created (ENOTDIR): give a writable directory`,
  );

  // The second file cannot be opened: the first, created by this open, is removed again.
  const partial = join(dir, 'partial');
  mkdirSync(join(partial, 'b.svg'), { recursive: true });
  expect(() => OutputFile.openAllIn('--out', partial, ['a.csv', 'b.svg'])).toThrow(UsageError);
  expect(existsSync(join(partial, 'a.csv'))).toBe(false);
});
