import { parseWholeNumber, UnitError } from '../../../core/plan/units';

describe('parseWholeNumber', () => {
  it('accepts whole numbers within the limits', () => {
    expect(parseWholeNumber('--concurrency', '16', { min: 1 })).toBe(16);
    expect(parseWholeNumber('--range-checks', '0', { min: 0 })).toBe(0);
    expect(parseWholeNumber('--runs', ' 5 ', { min: 1, max: 5 })).toBe(5);
  });

  it.each(['abc', '', '2.5', '-1', '1e3', '0x10', '99999999999999999999'])('refuses "%s"', (text) => {
    expect(() => parseWholeNumber('--concurrency', text, { min: 0 })).toThrow(UnitError);
  });

  it('refuses numbers outside the limits, naming the flag, the value and an example', () => {
    expect(() => parseWholeNumber('--concurrency', '0', { min: 1 })).toThrow(
      '--concurrency "0": must be a whole number at least 1, e.g. --concurrency 10',
    );
    expect(() => parseWholeNumber('--runs', '9', { min: 1, max: 5 })).toThrow(
      '--runs "9": must be a whole number from 1 to 5, e.g. --runs 5',
    );
  });
});
