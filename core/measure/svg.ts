/**
 * A self-contained SVG chart of latency by object size: one panel per operation (PUT, GET), a
 * logarithmic size axis (1 B to 100 MB), a logarithmic latency axis, and for each target its p50
 * (solid), p90 (dashed) and p99 (dotted) lines. Hand-rolled so it needs no plotting dependency.
 */
import type { LatencyRow } from './latency';
import { escapeXml, svgDocument } from './svg-document';

const WIDTH = 1100;
const HEIGHT = 520;
const PANEL = { top: 70, bottom: 70, left: 80, gap: 90 };
const COLORS = ['#1f77b4', '#e6550d', '#2ca02c', '#9467bd'];
const PERCENTILES = [
  { key: 'p50', dash: '' },
  { key: 'p90', dash: '8 5' },
  { key: 'p99', dash: '2 4' },
] as const;

export function formatSize(bytes: number): string {
  const units = ['B', 'KB', 'MB', 'GB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1000 && unit < units.length - 1) {
    value /= 1000;
    unit++;
  }
  return `${Number(value.toPrecision(3))} ${units[unit]}`;
}

function formatMs(ms: number): string {
  return ms >= 1000 ? `${ms / 1000} s` : `${ms} ms`;
}

/** Log-log axes shared by both panels: decades of object size and of milliseconds. */
interface Scale {
  readonly xMin: number;
  readonly xMax: number;
  readonly yMin: number;
  readonly yMax: number;
  readonly panelWidth: number;
  readonly panelHeight: number;
}

export function latencySvg(rows: readonly LatencyRow[], title: string): string {
  const targets = [...new Set(rows.map((r) => r.target))];
  const sizes = rows.map((r) => r.sizeBytes);
  const values = rows.flatMap((r) => [r.p50, r.p90, r.p99]).filter((v) => v > 0);
  const xMin = Math.floor(Math.log10(Math.min(...sizes, 1)));
  const yMin = Math.floor(Math.log10(Math.min(...values, 1)));
  const scale: Scale = {
    xMin,
    xMax: Math.max(xMin + 1, Math.ceil(Math.log10(Math.max(...sizes, 10)))),
    yMin,
    yMax: Math.max(yMin + 1, Math.ceil(Math.log10(Math.max(...values, 10)))),
    panelWidth: (WIDTH - PANEL.left - PANEL.gap - 40) / 2,
    panelHeight: HEIGHT - PANEL.top - PANEL.bottom,
  };
  return svgDocument(WIDTH, HEIGHT, 18, title, [
    ...(['PUT', 'GET'] as const).flatMap((op, p) => panel(rows, targets, op, p, scale)),
    ...legend(targets),
  ]);
}

/** One operation's panel: grid, frame, axis titles, and each target's percentile lines. */
function panel(
  rows: readonly LatencyRow[],
  targets: readonly string[],
  op: 'PUT' | 'GET',
  p: number,
  { xMin, xMax, yMin, yMax, panelWidth, panelHeight }: Scale,
): string[] {
  const left = PANEL.left + p * (panelWidth + PANEL.gap);
  const x = (size: number) => left + ((Math.log10(size) - xMin) / (xMax - xMin)) * panelWidth;
  const y = (ms: number) => PANEL.top + panelHeight - ((Math.log10(ms) - yMin) / (yMax - yMin)) * panelHeight;
  const out = [
    `<text x="${left + panelWidth / 2}" y="${PANEL.top - 12}" text-anchor="middle" font-size="15" font-weight="bold">${op}</text>`,
  ];
  for (let e = xMin; e <= xMax; e++) {
    const px = x(10 ** e);
    out.push(
      `<line x1="${px}" y1="${PANEL.top}" x2="${px}" y2="${PANEL.top + panelHeight}" stroke="#ddd"/>`,
      `<text x="${px}" y="${PANEL.top + panelHeight + 18}" text-anchor="middle">${formatSize(10 ** e)}</text>`,
    );
  }
  for (let e = yMin; e <= yMax; e++) {
    const py = y(10 ** e);
    out.push(
      `<line x1="${left}" y1="${py}" x2="${left + panelWidth}" y2="${py}" stroke="#ddd"/>`,
      `<text x="${left - 8}" y="${py + 4}" text-anchor="end">${formatMs(10 ** e)}</text>`,
    );
  }
  out.push(
    `<rect x="${left}" y="${PANEL.top}" width="${panelWidth}" height="${panelHeight}" fill="none" stroke="#333"/>`,
    `<text x="${left + panelWidth / 2}" y="${PANEL.top + panelHeight + 40}" text-anchor="middle">object size (log)</text>`,
    `<text transform="translate(${left - 58} ${PANEL.top + panelHeight / 2}) rotate(-90)" text-anchor="middle">latency (log)</text>`,
  );
  targets.forEach((target, t) => {
    const series = rows
      .filter((r) => r.target === target && r.op === op)
      .sort((a, b) => a.sizeBytes - b.sizeBytes);
    for (const { key, dash } of PERCENTILES) {
      const points = series
        .filter((r) => r[key] > 0)
        .map((r) => `${x(r.sizeBytes).toFixed(1)},${y(r[key]).toFixed(1)}`);
      if (points.length === 0) continue;
      out.push(
        `<polyline fill="none" stroke="${COLORS[t % COLORS.length]}" stroke-width="2" ${dash ? `stroke-dasharray="${dash}" ` : ''}points="${points.join(' ')}"/>`,
      );
      if (key !== 'p50') continue;
      for (const point of points) {
        const [cx, cy] = point.split(',');
        out.push(`<circle cx="${cx}" cy="${cy}" r="3" fill="${COLORS[t % COLORS.length]}"/>`);
      }
    }
  });
  return out;
}

/** Targets by colour, percentiles by dash. */
function legend(targets: readonly string[]): string[] {
  const out: string[] = [];
  let lx = PANEL.left;
  const ly = HEIGHT - 16;
  targets.forEach((target, t) => {
    out.push(
      `<line x1="${lx}" y1="${ly - 4}" x2="${lx + 24}" y2="${ly - 4}" stroke="${COLORS[t % COLORS.length]}" stroke-width="3"/>`,
      `<text x="${lx + 30}" y="${ly}">${escapeXml(target)}</text>`,
    );
    lx += 40 + target.length * 8;
  });
  lx += 30;
  for (const { key, dash } of PERCENTILES) {
    out.push(
      `<line x1="${lx}" y1="${ly - 4}" x2="${lx + 30}" y2="${ly - 4}" stroke="#333" stroke-width="2" ${dash ? `stroke-dasharray="${dash}"` : ''}/>`,
      `<text x="${lx + 36}" y="${ly}">${key}</text>`,
    );
    lx += 80;
  }
  return out;
}
