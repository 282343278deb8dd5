import { formatCompactDuration, formatWholeMinutes } from '../../../core/common/units';

describe('formatWholeMinutes', () => {
  it('says a duration to the nearest minute, never below 0', () => {
    expect(formatWholeMinutes(29)).toBe('0 min');
    expect(formatWholeMinutes(31)).toBe('1 min');
    expect(formatWholeMinutes(59 * 60)).toBe('59 min');
    expect(formatWholeMinutes(73 * 60)).toBe('1 h 13 min');
    expect(formatWholeMinutes(6 * 3600)).toBe('6 h 0 min');
    expect(formatWholeMinutes(-90)).toBe('0 min');
  });
});

describe('formatCompactDuration', () => {
  it('fits an age into a table column', () => {
    expect(formatCompactDuration(45)).toBe('45s');
    expect(formatCompactDuration(119)).toBe('119s');
    expect(formatCompactDuration(120)).toBe('2m');
    expect(formatCompactDuration(7199)).toBe('120m');
    expect(formatCompactDuration(7200)).toBe('2.0h');
    expect(formatCompactDuration(3.5 * 3600)).toBe('3.5h');
  });
});
