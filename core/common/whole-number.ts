/**
 * The one strict reading of a whole number a person typed (a CLI flag, a Lambda environment variable):
 * decimal digits only. `Number()` would take blank as 0, `0x10` as 16, `1e1` as 10 and ` 7 ` as 7;
 * a setting that arrives in any of those spellings is a mistake worth reporting, not a value.
 */

/** Inclusive bounds of a whole-number setting. */
export interface WholeNumberBounds {
  readonly min: number;
  readonly max: number;
}

/** The number a string of decimal digits spells, or undefined for anything else (or past 2^53). */
export function wholeNumberFromText(text: string): number | undefined {
  if (text.length === 0 || text.length > 16) return undefined;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x30 || c > 0x39) return undefined;
  }
  const n = Number(text);
  return Number.isSafeInteger(n) ? n : undefined;
}

/** `must be a whole number from 1 to 5`: the rule, for messages that name the setting first. */
export function wholeNumberRule(bounds: WholeNumberBounds): string {
  return `must be a whole number from ${bounds.min} to ${bounds.max}`;
}

/** The value as a whole number within the bounds (digits only when given as text), or undefined. */
export function toBoundedWholeNumber(value: unknown, bounds: WholeNumberBounds): number | undefined {
  const n = typeof value === 'string' ? wholeNumberFromText(value) : value;
  return typeof n === 'number' && Number.isSafeInteger(n) && n >= bounds.min && n <= bounds.max
    ? n
    : undefined;
}
