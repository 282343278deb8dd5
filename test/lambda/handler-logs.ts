/**
 * What a Lambda handler logs, captured: Powertools writes its JSON lines to stdout (INFO) and stderr (WARN and
 * above), which Lambda's runtime takes into the function's log group; here both are held for the test to read.
 */
export function captureHandlerLogs(): { readonly lines: () => Record<string, unknown>[]; restore(): void } {
  const written: string[] = [];
  const spies = [process.stdout, process.stderr].map((stream) =>
    jest.spyOn(stream, 'write').mockImplementation((chunk: string | Uint8Array) => {
      written.push(String(chunk));
      return true;
    }),
  );
  return {
    lines: () =>
      written
        .join('')
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as Record<string, unknown>),
    restore: () => spies.forEach((spy) => spy.mockRestore()),
  };
}
