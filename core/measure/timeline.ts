/**
 * The consumer's busy share per second of a training run, as a person reads it: a text sparkline (one
 * character a second) and a self-contained SVG with one panel per series (an epoch, a scenario).
 */
import { escapeXml, svgDocument } from './svg-document';

/** Milliseconds from the start of the epoch. */
export interface Interval {
  readonly start: number;
  readonly end: number;
}

/** The busy share (0–100) of each second of `elapsedMs`, the last second counted over its own length. */
export function busyPercentBySecond(busy: readonly Interval[], elapsedMs: number): number[] {
  const seconds = Math.ceil(elapsedMs / 1000);
  const out: number[] = [];
  for (let s = 0; s < seconds; s++) {
    const from = s * 1000;
    const to = Math.min(elapsedMs, from + 1000);
    let covered = 0;
    for (const i of busy) covered += Math.max(0, Math.min(i.end, to) - Math.max(i.start, from));
    out.push(Math.round((Math.min(covered, to - from) / (to - from)) * 100));
  }
  return out;
}

const BARS = '▁▂▃▄▅▆▇█';

/** One character per second: ▁ idle … █ busy all second. */
export function sparkline(percent: readonly number[]): string {
  return percent.map((p) => BARS[Math.min(BARS.length - 1, Math.floor((p / 100) * BARS.length))]).join('');
}

interface TimelineSeries {
  readonly label: string;
  readonly busyPercentBySecond: readonly number[];
}

const WIDTH = 1000;
const LEFT = 70;
const RIGHT = 20;
const PANEL_HEIGHT = 90;
const PANEL_GAP = 46;
const TOP = 60;

/** A round step (1, 2, 5, 10, 20, …) that puts at most ten labels on an axis of `span` seconds. */
function axisStep(span: number): number {
  for (let step = 1; ; step *= 10) for (const m of [1, 2, 5]) if (span / (step * m) <= 10) return step * m;
}

/**
 * Busy % over time, one panel per series on a shared time axis (seconds), filled so idle time shows as
 * white: what "GPU utilisation" looks like for each scenario.
 */
export function timelineSvg(series: readonly TimelineSeries[], title: string): string {
  const longest = Math.max(1, ...series.map((s) => s.busyPercentBySecond.length));
  const plotWidth = WIDTH - LEFT - RIGHT;
  const height = TOP + series.length * (PANEL_HEIGHT + PANEL_GAP) + 10;
  const x = (second: number) => LEFT + (second / longest) * plotWidth;
  const tick = axisStep(longest);
  const out: string[] = [];
  series.forEach((s, i) => {
    const top = TOP + i * (PANEL_HEIGHT + PANEL_GAP);
    const bottom = top + PANEL_HEIGHT;
    const y = (percent: number) => bottom - (percent / 100) * PANEL_HEIGHT;
    const values = s.busyPercentBySecond;
    const mean = values.length ? values.reduce((a, b) => a + b, 0) / values.length : 0;
    out.push(
      `<text x="${LEFT}" y="${top - 8}" font-weight="bold">${escapeXml(s.label)}</text>`,
      `<text x="${WIDTH - RIGHT}" y="${top - 8}" text-anchor="end">busy ${mean.toFixed(0)} % over ${values.length} s</text>`,
    );
    for (const p of [0, 50, 100]) {
      out.push(
        `<line x1="${LEFT}" y1="${y(p)}" x2="${LEFT + plotWidth}" y2="${y(p)}" stroke="#ddd"/>`,
        `<text x="${LEFT - 6}" y="${y(p) + 4}" text-anchor="end">${p} %</text>`,
      );
    }
    // A step line: second n holds its value from n to n+1.
    const points = values.flatMap((v, n) => [
      `${x(n).toFixed(1)},${y(v).toFixed(1)}`,
      `${x(n + 1).toFixed(1)},${y(v).toFixed(1)}`,
    ]);
    if (points.length > 0) {
      out.push(
        `<polygon fill="#9ecae1" stroke="#1f77b4" stroke-width="1.5" points="${x(0)},${bottom} ${points.join(' ')} ${x(values.length).toFixed(1)},${bottom}"/>`,
      );
    }
    out.push(
      `<rect x="${LEFT}" y="${top}" width="${plotWidth}" height="${PANEL_HEIGHT}" fill="none" stroke="#333"/>`,
    );
    for (let t = 0; t <= longest; t += tick) {
      out.push(`<text x="${x(t)}" y="${bottom + 15}" text-anchor="middle">${t} s</text>`);
    }
  });
  return svgDocument(WIDTH, height, 17, title, out);
}
