/**
 * `warm` from request to report on a local directory: bad input refused before anything is read (exit 2,
 * naming the flag), the notes on the caches, the files read. Through a real Mountpoint mount and its caches:
 * test/agent/commands/warm.test.ts.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { UsageError } from '../../../core/common/errors';
import { warmPath, type WarmRequest } from '../../../core/measure/warm-run';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'mf-warm-run-'));
  mkdirSync(join(dir, 'data'));
  for (const name of ['a', 'b', 'c']) writeFileSync(join(dir, 'data', name), Buffer.alloc(1000));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

function hooks() {
  const said: string[] = [];
  return {
    said,
    hooks: {
      onS3NotCounted: (reason: string) => said.push(`not counted: ${reason}`),
      onNotes: (notes: readonly string[]) => said.push(...notes.map((n) => `note: ${n}`)),
      onProgress: () => {},
      onFailed: (f: { path: string }) => said.push(`failed: ${f.path}`),
      stoppable: <T>(read: (signal: AbortSignal) => Promise<T>) => read(new AbortController().signal),
    },
  };
}

const request = (fields: Partial<WarmRequest> = {}): WarmRequest => ({
  path: join(dir, 'data'),
  parallel: 2,
  runDir: join(dir, 'run'),
  ...fields,
});

test('reads every file, says it fills no Mountpoint cache here and why S3 requests are not counted', async () => {
  const { said, hooks: h } = hooks();
  const report = await warmPath(request(), h);
  expect(report).toMatchObject({
    path: join(dir, 'data'),
    files: 3,
    bytes: 3000,
    totalFiles: 3,
    complete: true,
    failed: [],
    s3Counts: { unavailable: `no mountfleet agent is running (run dir ${join(dir, 'run')})` },
  });
  expect(report.mount).toBeUndefined();
  expect(said).toEqual([
    `not counted: no mountfleet agent is running (run dir ${join(dir, 'run')})`,
    `note: ${join(dir, 'data')} is not on a FUSE mount: reading it fills no Mountpoint cache`,
  ]);
});

test.each([
  {
    name: 'a missing path',
    fields: { path: join(tmpdir(), 'mf-warm-run-none') },
    message: /^--path: .* does not exist$/,
  },
  {
    name: 'an unreadable manifest',
    fields: { manifest: '/nonexistent.txt' },
    message: /^--manifest: cannot read \/nonexistent\.txt/,
  },
])('$name is a usage error naming the flag', async ({ fields, message }) => {
  const err = await warmPath(request(fields), hooks().hooks).catch((e: unknown) => e);
  expect(err).toBeInstanceOf(UsageError);
  expect((err as Error).message).toMatch(message);
});

test('a manifest with no files, a path outside the data set, or a file that is not there is refused', async () => {
  const manifest = join(dir, 'list.txt');
  const refusal = async (text: string) => {
    writeFileSync(manifest, text);
    return warmPath(request({ manifest }), hooks().hooks).catch((e: Error) => e.message);
  };
  expect(await refusal('# nothing\n')).toBe(`--manifest: ${manifest} lists no files`);
  expect(await refusal('a\n../elsewhere\n')).toBe(
    `--manifest: ${manifest} line 2: "../elsewhere" is not a file under ${join(dir, 'data')}`,
  );
  expect(await refusal('a\nmissing\n')).toBe(`--manifest: ${join(dir, 'data', 'missing')} does not exist`);
});
