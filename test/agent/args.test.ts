import { parsePositive, parseWholeNumber } from '../../agent/args';
import { UsageError } from '../../core/common';
import { parseDuration } from '../../core/common/units';

describe('parseWholeNumber', () => {
  it('accepts whole numbers within the bounds', () => {
    expect(parseWholeNumber('--concurrency', '16', { min: 1, max: 1024 })).toBe(16);
    expect(parseWholeNumber('--range-checks', '0', { min: 0, max: 10 })).toBe(0);
    expect(parseWholeNumber('--runs', '5', { min: 1, max: 5 })).toBe(5);
  });

  it.each(['', ' ', ' 5 ', 'abc', '2.5', '-1', '+1', '1e3', '0x10', '0b1', '99999999999999999999'])(
    'refuses %j, naming the flag',
    (text) => {
      expect(() => parseWholeNumber('--concurrency', text, { min: 0, max: 1e6 })).toThrow(UsageError);
      expect(() => parseWholeNumber('--concurrency', text, { min: 0, max: 1e6 })).toThrow(/^--concurrency "/);
    },
  );

  it('refuses numbers outside the bounds, naming the flag, the value, the range and an example', () => {
    expect(() => parseWholeNumber('--concurrency', '0', { min: 1, max: 1024 })).toThrow(
      '--concurrency "0": must be a whole number from 1 to 1024, e.g. --concurrency 10',
    );
    expect(() => parseWholeNumber('--spot-poll-ms', '0', { min: 100, max: 5000 })).toThrow(
      '--spot-poll-ms "0": must be a whole number from 100 to 5000, e.g. --spot-poll-ms 100',
    );
  });
});

describe('parsePositive', () => {
  it('reads the quantity with its parser', () => {
    expect(parsePositive('--run-time', '1h30m', parseDuration)).toBe(5400);
  });

  it.each(['0', '0s', '0:00'])('refuses the zero %j (it only divides into Infinity)', (text) => {
    expect(() => parsePositive('--run-time', text, parseDuration)).toThrow(
      `--run-time "${text}": must be more than 0`,
    );
  });

  it("names the flag in the parser's own error", () => {
    expect(() => parsePositive('--run-time', 'soon', parseDuration)).toThrow(
      /^--run-time: "soon" is not a duration/,
    );
  });
});
