import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCliInProcess } from '../../support/cli';

const mountfleet = runCliInProcess;

describe('mountfleet bench read', () => {
  it('reports each scenario per epoch as JSON', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'bench-read-cli-'));
    for (let i = 0; i < 20; i++) writeFileSync(join(dir, `s${i}`), Buffer.alloc(1000));
    writeFileSync(join(dir, 'big'), Buffer.alloc(2 * 1024 * 1024));
    const r = await mountfleet(
      'bench',
      'read',
      '--path',
      dir,
      '--epochs',
      '3',
      '--large-min-size',
      '1MiB',
      '--json',
    );
    expect(r.code).toBe(0);
    const doc = JSON.parse(r.stdout) as { results: { epoch: number; scenario: string; files: number }[] };
    expect(doc.results.map((x) => `${x.epoch}:${x.scenario}:${x.files}`)).toEqual([
      '1:small-parallel:20',
      '1:large-sequential:1',
      '2:small-parallel:20',
      '2:large-sequential:1',
      '3:small-parallel:20',
      '3:large-sequential:1',
    ]);
    expect(r.stderr).toMatch(/epoch 3 large-sequential +1 files, 2\.0 MiB/);
  });
});
