export { abortAfter } from './abort';
export { type Clock, backoffDelay, systemClock } from './clock';
export { errorName, errorText, undefinedIfNotFound } from './errors';
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
