/** `mountfleet plan --against SUMMARY`: the plan's predictions beside what a run measured (the seed's figures). */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RunSummary } from '../../../core/credit/run-summary';
import type { AgainstRow } from '../../../core/plan/against';
import { runCliInProcess as mountfleet } from '../../support/cli';

const GIB = 1024 ** 3;
const SEED = [
  '--preset',
  'encode-ladder',
  '--input-size',
  '30.12GiB',
  '--duration',
  '30m',
  '--region',
  'ap-northeast-1',
];

/** The seed's encode as a run summary: 54:59, 150.10 GiB of credit spent, 152.18 GiB metered. */
const SEED_RUN: RunSummary = {
  fileSystemId: 'fs-0123456789abcdef0',
  jobId: 'encode-42',
  exitStatus: 0,
  seconds: 3299,
  meteredIoBytes: Math.round(152.18 * GIB),
  burstCreditUsedBytes: Math.round(150.1 * GIB),
  minBurstCreditBalanceBytes: Math.round((2150.4 - 150.1) * GIB),
  maxPercentIoLimit: 41,
  nfsMeteredBytes: null,
  creditChecks: 56,
};

describe('mountfleet plan --against', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'mf-against-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));
  const summaryFile = (content: unknown) => {
    const file = join(dir, 'run.json');
    writeFileSync(file, typeof content === 'string' ? content : JSON.stringify(content));
    return file;
  };

  it("puts the plan's metered I/O and credit beside the run's, in percent, taking the run time from the summary", async () => {
    const file = summaryFile(SEED_RUN);
    const r = await mountfleet('plan', ...SEED, '--against', file, '--json');
    expect(r.code).toBe(0);
    const plan = JSON.parse(r.stdout) as { runSeconds: number; against: AgainstRow[] };
    expect(plan.runSeconds).toBe(3299);
    const [metered, credit] = plan.against;
    expect(metered).toMatchObject({
      what: 'metered I/O (CloudWatch)',
      measuredGib: expect.closeTo(152.18, 2),
    });
    expect(metered.plannedGib).toBeCloseTo(152.9, 1);
    expect(metered.differencePercent).toBeCloseTo(((152.9 - 152.18) / 152.18) * 100, 0);
    expect(credit).toMatchObject({ what: 'burst credit used', measuredGib: expect.closeTo(150.1, 2) });
    expect(credit.differencePercent).toBeGreaterThan(-5);
    expect(credit.differencePercent).toBeLessThan(0);

    const table = await mountfleet('plan', ...SEED, '--against', file);
    expect(table.stdout).toMatch(new RegExp(`Against ${file} \\(plan − run, in % of the run\\):`));
    expect(table.stdout).toMatch(
      /metered I\/O \(CloudWatch\)\s+plan\s+152\.9\d GiB\s+run\s+152\.18 GiB\s+\+0\.\d %/,
    );
    expect(table.stdout).toMatch(/burst credit used\s+plan\s+14\d\.\d\d GiB\s+run\s+150\.10 GiB\s+-\d\.\d %/);
  });

  it('says "not measured" where the run had no datapoints, and adds the NFS client row when it had counters', async () => {
    const file = summaryFile({
      ...SEED_RUN,
      meteredIoBytes: null,
      burstCreditUsedBytes: null,
      nfsMeteredBytes: 153 * GIB,
    });
    const r = await mountfleet('plan', ...SEED, '--against', file);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/metered I\/O \(CloudWatch\)\s+plan\s+152\.9\d GiB\s+run\s+not measured\s+-/);
    expect(r.stdout).toMatch(/metered I\/O \(NFS client\)\s+plan\s+152\.9\d GiB\s+run\s+153\.00 GiB/);
  });

  it('refuses a file that is no summary with exit 2, naming the file and the field', async () => {
    const missing = await mountfleet('plan', ...SEED, '--against', join(dir, 'none.json'));
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(
      /--against .*none\.json: ENOENT.* — give the file `scratch run --summary` wrote/,
    );
    const bad = await mountfleet(
      'plan',
      ...SEED,
      '--against',
      summaryFile({ ...SEED_RUN, exitStatus: 'ok' }),
    );
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--against .*run\.json: exitStatus: .*expected number/);
  });
});
