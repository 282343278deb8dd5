export { abortAfter } from './abort';
export { type Clock, backoffDelay, systemClock } from './clock';
export { appendEmfLine, emfLine, type EmfLine, type EmfMetric } from './emf';
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
  formatDuration,
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
export { PollTimeout, pollUntil, type PollOptions, type PollResult } from './wait';
