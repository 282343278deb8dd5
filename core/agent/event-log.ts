/** The agent's log: one JSON line per event on stderr, with its time. */
export type EventLog = (event: Record<string, unknown>) => void;

export const jsonLines: EventLog = (event) =>
  process.stderr.write(`${JSON.stringify({ time: new Date().toISOString(), ...event })}\n`);
