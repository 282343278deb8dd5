/**
 * Durations as short text, where units.ts's formatDuration (`54 min 59 s`, to the second) says too much: to
 * the minute in a running job's warnings, and in a few characters in a table column.
 */

/** `0 min`, `42 min`, `1 h 13 min`: to the nearest minute, never negative (how long until the credit runs out). */
export function formatWholeMinutes(seconds: number): string {
  const minutes = Math.max(0, Math.round(seconds / 60));
  return minutes < 60 ? `${minutes} min` : `${Math.floor(minutes / 60)} h ${minutes % 60} min`;
}

/** `45s` (under 2 min), `17m` (under 2 h), `3.5h`: a few characters for a table column (an age). */
export function formatCompactDuration(seconds: number): string {
  if (seconds < 120) return `${seconds}s`;
  if (seconds < 7200) return `${Math.round(seconds / 60)}m`;
  return `${(seconds / 3600).toFixed(1)}h`;
}
