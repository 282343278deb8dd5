/**
 * Reading command-line arguments: the one place where flag values become numbers. A bad one is a UsageError
 * (core/common: exit 2, printed as one line by agent/cli.ts).
 */
import {
  UnitError,
  UsageError,
  toBoundedWholeNumber,
  wholeNumberRule,
  type WholeNumberBounds,
} from '../core/common';

/**
 * A whole number typed for `flag` (`--concurrency 16`) within the bounds. Anything else — blank, `abc`,
 * `2.5`, `-1`, `1e3`, `0x10` — is refused rather than read as a number the user never typed.
 */
export function parseWholeNumber(flag: string, text: string, bounds: WholeNumberBounds): number {
  const n = toBoundedWholeNumber(text, bounds);
  if (n !== undefined) return n;
  const example = Math.min(Math.max(10, bounds.min), bounds.max);
  throw new UsageError(`${flag} "${text}": ${wholeNumberRule(bounds)}, e.g. ${flag} ${example}`);
}

/**
 * A quantity with units (`30m`, `1GiB`, `147Mbps`) read by `parse`, which must come out greater than
 * zero: a zero duration, size or bit rate only divides into Infinity.
 */
export function parsePositive(flag: string, text: string, parse: (text: string) => number): number {
  let value: number;
  try {
    value = parse(text);
  } catch (err) {
    if (err instanceof UnitError) throw new UsageError(`${flag}: ${err.message}`);
    throw err;
  }
  if (!(value > 0) || !Number.isFinite(value)) throw new UsageError(`${flag} "${text}": must be more than 0`);
  return value;
}
