/** The SDK error's name (`FileSystemNotFound`, `ThrottlingException`, …), or '' for anything else. */
export function errorName(err: unknown): string {
  return (err as { name?: string } | undefined)?.name ?? '';
}

/** `Name: message` of an error, for reports and logs. */
export function errorText(err: unknown): string {
  const e = err as { name?: string; message?: string } | undefined;
  return [e?.name, e?.message].filter(Boolean).join(': ') || String(err);
}

/** The call's answer, or undefined when it fails with the error `notFoundName` (e.g. `FileSystemNotFound`). */
export async function undefinedIfNotFound<T>(
  notFoundName: string,
  call: () => Promise<T | undefined>,
): Promise<T | undefined> {
  try {
    return await call();
  } catch (err) {
    if (errorName(err) === notFoundName) return undefined;
    throw err;
  }
}
