export { abortAfter } from './abort';
export { type Clock, backoffDelay, systemClock } from './clock';
export { appendEmfLine, type EmfMetric } from './emf';
export {
  EXIT_STATUS,
  InUseError,
  MountfleetError,
  UsageError,
  errorName,
  errorText,
  undefinedIfNotFound,
} from './errors';
export { withoutTrailingSlash } from './path-text';
export {
  GIB,
  MIB,
  TIB,
  UnitError,
  formatCompactDuration,
  formatDuration,
  formatWholeMinutes,
  gibFromRate,
  parseBytes,
  parseDuration,
  parseMbps,
} from './units';
export {
  type WholeNumberBounds,
  toBoundedWholeNumber,
  wholeNumberFromText,
  wholeNumberRule,
} from './whole-number';
export { PollTimeout, pollUntil, type PollResult } from './wait';
