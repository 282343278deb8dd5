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

/** Exit statuses of the `mountfleet` command, shell-style. */
export const EXIT_STATUS = {
  /** A runtime failure. */
  failure: 1,
  /** A bad command line or config (flag, value, agent.json field): nothing was done. */
  usage: 2,
  /** `status`: no agent runs (none started, or the pid its state file names is gone). */
  notRunning: 3,
  /** Another run holds what this one needs (a job id, a path, a run dir, a live run's scratch): EX_TEMPFAIL. */
  inUse: 75,
  /** Stopped by SIGINT or SIGTERM after reporting what was done (128 + SIGINT's 2). */
  interrupted: 130,
} as const;

/**
 * The one base of every error mountfleet throws: its message is one line for the user, and `exitStatus` says
 * how the command ends (a failure unless said otherwise). The CLI prints it as that line and exits with that
 * status (agent/cli.ts maps every error once, here); anything else thrown (an SDK's error, a bug) is a failure (1)
 * printed with the command's path. Subclasses exist only where something tells them apart: code that catches
 * them by class, a field they carry, or a name users see (a Lambda's error type, `Name: message` in a report).
 */
export class MountfleetError extends Error {
  override readonly name: string = 'MountfleetError';

  constructor(
    message: string,
    readonly exitStatus: number = EXIT_STATUS.failure,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

/** A bad command line or config value: the message names the flag or field and the fix (exit 2). */
export class UsageError extends MountfleetError {
  override readonly name: string = 'UsageError';

  constructor(message: string, options?: ErrorOptions) {
    super(message, EXIT_STATUS.usage, options);
  }
}

/** Another run holds what this one needs; the message names the holder (exit 75). */
export class InUseError extends MountfleetError {
  override readonly name: string = 'InUseError';

  constructor(message: string, options?: ErrorOptions) {
    super(message, EXIT_STATUS.inUse, options);
  }
}
