/**
 * A scratch workload as a user describes it: an input (size, or duration and bit rate) and the steps
 * that read and write the scratch file system. Each step's read and write volume is a quantity:
 *
 *   2          a multiple of the input (two passes over it); `2x` works too
 *   5Mbps      a stream at that bit rate over the input's duration (an encoded output, an audio track)
 *   1.5GiB     an absolute size
 *
 * On the command line a step is `NAME:read=Q,write=Q[,time=DURATION]`; in a JSON workload file it is
 * `{ "name": "...", "read": "2", "write": "5Mbps", "time": "17m17s" }`.
 */
import { readJsonFile } from '../contract';
import { z } from 'zod';
import { GIB, gibFromRate, parseBytes, parseDuration, parseMbps, UnitError, UsageError } from '../common';

export type Quantity =
  | { readonly kind: 'input'; readonly multiple: number }
  | { readonly kind: 'rate'; readonly mbps: number }
  | { readonly kind: 'size'; readonly gib: number };

export interface Step {
  readonly name: string;
  readonly read: Quantity;
  readonly write: Quantity;
  /** Wall time of the step when known (it shapes the storage-cost curve); otherwise estimated. */
  readonly seconds?: number;
}

export interface InputSpec {
  readonly gib?: number;
  readonly durationSeconds?: number;
  readonly bitrateMbps?: number;
}

export interface Workload {
  readonly input: InputSpec;
  readonly steps: readonly Step[];
  /** Wall time of the whole run. */
  readonly runSeconds: number;
}

const NONE: Quantity = { kind: 'size', gib: 0 };

function parseQuantity(text: string): Quantity {
  const t = text.trim();
  const multiple = /^(\d+(?:\.\d+)?)x?$/i.exec(t);
  if (multiple) return { kind: 'input', multiple: Number(multiple[1]) };
  if (/bps$/i.test(t)) return { kind: 'rate', mbps: parseMbps(t) };
  try {
    return { kind: 'size', gib: parseBytes(t) / GIB };
  } catch (err) {
    if (err instanceof UnitError) {
      throw new UsageError(
        `"${text}": use a multiple of the input (2), a bit rate (5Mbps) or a size (1.5GiB)`,
      );
    }
    throw err;
  }
}

/** `NAME:read=Q,write=Q[,time=DURATION]`; an omitted read or write is zero. */
export function parseStep(spec: string): Step {
  const colon = spec.indexOf(':');
  const name = colon > 0 ? spec.slice(0, colon) : '';
  if (!name) throw new UsageError(`--step ${spec}: use NAME:read=Q,write=Q[,time=DURATION]`);
  let read = NONE;
  let write = NONE;
  let seconds: number | undefined;
  for (const field of spec
    .slice(colon + 1)
    .split(',')
    .filter(Boolean)) {
    const [key, value] = field.split('=', 2);
    if (value === undefined) throw new UsageError(`--step ${spec}: "${field}" is not KEY=VALUE`);
    if (key === 'read') read = parseQuantity(value);
    else if (key === 'write') write = parseQuantity(value);
    else if (key === 'time') seconds = parseDuration(value);
    else throw new UsageError(`--step ${spec}: unknown key "${key}" (read, write, time)`);
  }
  return seconds === undefined ? { name, read, write } : { name, read, write, seconds };
}

const workloadFileSchema = z
  .object({
    input: z
      .object({
        size: z.string().optional(),
        duration: z.string().optional(),
        bitrate: z.string().optional(),
      })
      .strict()
      .default({}),
    steps: z
      .array(
        z
          .object({
            name: z.string().min(1),
            read: z.string().default('0'),
            write: z.string().default('0'),
            time: z.string().optional(),
          })
          .strict(),
      )
      .min(1),
    runTime: z.string().optional(),
  })
  .strict();

/** A JSON workload file: `{ "input": {...}, "steps": [...], "runTime": "55m" }` (all strings with units). */
export function readWorkloadFile(path: string): { input: InputSpec; steps: Step[]; runSeconds?: number } {
  const json = readJsonFile(path, 'workload file', (m) => new UsageError(m));
  const parsed = workloadFileSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new UsageError(`${path}: ${issue.path.join('.') || '(root)'}: ${issue.message}`);
  }
  const f = parsed.data;
  // A zero size, duration, bit rate or run time only divides into Infinity.
  const positive = (field: string, value: number) => {
    if (!(value > 0) || !Number.isFinite(value))
      throw new UsageError(`${path}: ${field}: must be more than 0`);
    return value;
  };
  return {
    input: {
      ...(f.input.size ? { gib: positive('input.size', parseBytes(f.input.size)) / GIB } : {}),
      ...(f.input.duration
        ? { durationSeconds: positive('input.duration', parseDuration(f.input.duration)) }
        : {}),
      ...(f.input.bitrate ? { bitrateMbps: positive('input.bitrate', parseMbps(f.input.bitrate)) } : {}),
    },
    steps: f.steps.map((s) =>
      parseStep(`${s.name}:read=${s.read},write=${s.write}${s.time ? `,time=${s.time}` : ''}`),
    ),
    ...(f.runTime ? { runSeconds: positive('runTime', parseDuration(f.runTime)) } : {}),
  };
}

export interface ResolvedInput {
  readonly gib: number;
  /** Undefined when only a size was given: then rate quantities cannot be resolved. */
  readonly durationSeconds?: number;
  readonly bitrateMbps?: number;
}

/** Fills in the third of size, duration and bit rate from the other two. */
export function resolveInput(input: InputSpec): ResolvedInput {
  const { gib, durationSeconds: d, bitrateMbps: r } = input;
  if (gib !== undefined && d !== undefined)
    return { gib, durationSeconds: d, bitrateMbps: r ?? (gib * GIB * 8) / d / 1e6 };
  if (gib !== undefined && r !== undefined)
    return { gib, durationSeconds: (gib * GIB * 8) / (r * 1e6), bitrateMbps: r };
  if (gib !== undefined) return { gib };
  if (d !== undefined && r !== undefined)
    return { gib: gibFromRate(r, d), durationSeconds: d, bitrateMbps: r };
  throw new UsageError('give the input as --input-size, or --duration with --bitrate');
}

/** GiB a quantity stands for, for a given input. */
export function quantityGib(q: Quantity, input: ResolvedInput, stepName: string): number {
  switch (q.kind) {
    case 'input':
      return q.multiple * input.gib;
    case 'size':
      return q.gib;
    case 'rate':
      if (input.durationSeconds === undefined) {
        throw new UsageError(
          `step ${stepName} uses a bit rate: give the input's --duration or --bitrate too`,
        );
      }
      return gibFromRate(q.mbps, input.durationSeconds);
  }
}
