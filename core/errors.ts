/** The SDK error's name (`FileSystemNotFound`, `ThrottlingException`, …), or '' for anything else. */
export function errorName(err: unknown): string {
  return (err as { name?: string } | undefined)?.name ?? '';
}

/** `Name: message` of an error, for reports and logs. */
export function errorText(err: unknown): string {
  const e = err as { name?: string; message?: string } | undefined;
  return [e?.name, e?.message].filter(Boolean).join(': ') || String(err);
}
