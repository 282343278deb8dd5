/** Human-readable rendering of a plan (the `--json` output is the PlanResult itself). */
import type { PlanResult } from './model';
import { formatDuration } from '../common';

/**
 * A plain-text table, columns two spaces apart. `align` has one letter per column, `l` or `r`
 * (default: first column left, the others right, as for numbers).
 */
function renderTable(
  header: readonly string[],
  rows: readonly (readonly string[])[],
  align = 'l' + 'r'.repeat(header.length - 1),
): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (cells: readonly string[]) =>
    cells
      .map((c, i) => (align[i] === 'l' ? c.padEnd(widths[i]) : c.padStart(widths[i])))
      .join('  ')
      .trimEnd();
  return [line(header), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)].join('\n');
}

const gib = (n: number) => n.toFixed(2);
const usd = (n: number) => (n < 1 ? `$${n.toFixed(5)}` : `$${n.toFixed(2)}`);

export function renderPlan(plan: PlanResult): string {
  const chosen = plan.costs.find((c) => c.option === plan.recommendation.option);
  return [
    inputLine(plan),
    '',
    stepsTable(plan),
    '',
    creditLines(plan),
    exhaustionTable(plan),
    `costs (${plan.prices.region}, prices as of ${plan.prices.asOf}):`,
    costsTable(plan),
    ...boundLines(plan),
    ...s3FilesLines(plan),
    '',
    `use: ${chosen?.label} — ${plan.recommendation.reason}`,
    ...plan.notes.map((n) => `note: ${n}`),
    '',
  ].join('\n');
}

/** `input 30.12 GiB, 30m at 140.2 Mbps; run 54m59s`. */
function inputLine({ input, runSeconds }: PlanResult): string {
  return (
    `input ${gib(input.gib)} GiB` +
    (input.durationSeconds !== undefined ? `, ${formatDuration(input.durationSeconds)}` : '') +
    (input.bitrateMbps !== undefined ? ` at ${input.bitrateMbps.toFixed(1)} Mbps` : '') +
    `; run ${formatDuration(runSeconds)}`
  );
}

/** Each step's bytes, metered credit and time, and their totals. */
function stepsTable(plan: PlanResult): string {
  return renderTable(
    ['step', 'read GiB', 'write GiB', 'metered GiB', 'time'],
    [
      ...plan.steps.map((s) => [
        s.name,
        gib(s.readGib),
        gib(s.writeGib),
        gib(s.meteredGib),
        formatDuration(s.seconds) + (s.timeGiven ? '' : ' (est.)'),
      ]),
      ['total', gib(plan.totals.readGib), gib(plan.totals.writeGib), gib(plan.totals.meteredGib), ''],
    ],
  );
}

/** What the run does to a fresh file system's credit, and whether it lasts. */
function creditLines({ bursting: b, totals }: PlanResult): string {
  return [
    `burst credit: ${gib(b.initialCreditGib)} GiB at start; metered ${gib(totals.meteredGib)} GiB, ` +
      `baseline earns ${gib(b.baselineEarnedGib)} GiB (${b.baselineMibPerS.toFixed(2)} MiB/s) -> ` +
      `net ${gib(b.netCreditUsedGib)} GiB used, ${gib(b.creditLeftGib)} GiB left`,
    b.creditSurvives
      ? `the 2.1 TiB credit survives (average ${b.averageMeteredMibPerS.toFixed(1)} MiB/s metered, burst ${b.burstMibPerS.toFixed(0)} MiB/s)`
      : `the credit runs out after ${formatDuration(b.runsOutAfterSeconds ?? Infinity)}; throughput then falls to ${b.baselineMibPerS.toFixed(2)} MiB/s`,
  ].join('\n');
}

/** When the credit runs out at each bit rate asked for; empty without any. */
function exhaustionTable({ exhaustion }: PlanResult): string {
  if (exhaustion.length === 0) return '';
  return (
    '\ncredit runs out after (one fresh file system, this pipeline):\n' +
    renderTable(
      ['input rate', 'metered GiB per content-hour', 'content', 'wall clock at this pace'],
      exhaustion.map((e) => [
        `${e.inputMbps} Mbps`,
        gib(e.meteredGibPerContentHour),
        formatDuration(e.contentHours * 3600),
        formatDuration(e.wallHours * 3600),
      ]),
    ) +
    '\n'
  );
}

function costsTable({ costs }: PlanResult): string {
  return renderTable(
    ['storage', 'cost', 'fits', 'compared', 'how'],
    costs.map((c) => [
      c.label,
      usd(c.usd),
      c.feasible ? 'yes' : 'no',
      c.compared ? 'yes' : 'no, bound',
      c.detail,
    ]),
    'lrlll',
  );
}

/** Why a row shown is not compared (gp3 at the used size). */
function boundLines({ costs }: PlanResult): string[] {
  return costs
    .filter((c) => !c.compared)
    .map(
      (c) =>
        `${c.label} (${usd(c.usd)}) is the lower bound, not compared: a volume is sized before the run and needs headroom, so gp3 is compared at 2x the used size`,
    );
}

/** S3 Files' limits against the run, or why it is left out of the comparison. */
function s3FilesLines({ s3Files: s3 }: PlanResult): string[] {
  if (s3.unknown.length > 0)
    return s3.unknown.map((u) => `S3 Files: left out of the comparison — unknown: ${u}`);
  return [
    'S3 Files limits: ' +
      s3.checks.map((c) => `${c.detail}, ${c.fits ? 'within' : 'above'} ${c.limit}`).join('; '),
  ];
}
