/** How commands write their results: `--json` as one JSON document on stdout. */

/** Prints `value` as the one pretty-printed JSON document a `--json` run writes on stdout. */
export function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}
