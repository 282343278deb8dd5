/**
 * CloudWatch embedded metric format: one JSON line per observation in a log file that the CloudWatch agent
 * ships to a log group, where CloudWatch Logs turns it into metrics — no PutMetricData permission needed.
 * The one writer for every metric the instance side emits this way (the Express cache switch, the credit guard).
 */
import { appendFileSync, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';

/** One metric of a line: its name, CloudWatch unit and value. */
export interface EmfMetric {
  readonly name: string;
  readonly unit: 'Count' | 'Milliseconds' | 'Percent' | 'Seconds' | 'None';
  readonly value: number;
}

/** One observation: the namespace, the dimension values (all of them form the one dimension set) and metrics. */
interface EmfLine {
  readonly namespace: string;
  readonly dimensions: Readonly<Record<string, string>>;
  readonly metrics: readonly EmfMetric[];
  /** Unix epoch milliseconds. */
  readonly timestamp: number;
}

/** The line as CloudWatch reads it. */
function emfLine(line: EmfLine): string {
  return JSON.stringify({
    _aws: {
      Timestamp: line.timestamp,
      CloudWatchMetrics: [
        {
          Namespace: line.namespace,
          Dimensions: [Object.keys(line.dimensions)],
          Metrics: line.metrics.map((m) => ({ Name: m.name, Unit: m.unit })),
        },
      ],
    },
    ...line.dimensions,
    ...Object.fromEntries(line.metrics.map((m) => [m.name, m.value])),
  });
}

/**
 * Appends one line (making the file's directory when missing). One short write per line, so the lines of
 * processes writing the same file do not interleave.
 */
export function appendEmfLine(file: string, line: EmfLine): void {
  mkdirSync(dirname(file), { recursive: true });
  appendFileSync(file, `${emfLine(line)}\n`);
}
