import { parseBytes } from '../../../core/common/units';
import { burstCreditPreflight } from '../../../core/credit/preflight';

const TIB = 1024 ** 4;

describe('burstCreditPreflight', () => {
  it('is quiet about I/O within the 2.1 TiB initial credit', () => {
    const verdict = burstCreditPreflight(parseBytes('2TiB'), true);
    expect(verdict.status).toBe('ok');
    expect(verdict.message).toMatch(
      /fits in the 2\.1 TiB initial burst credit \(about 5\.8 h at 100 MiB\/s\)/,
    );
    expect(burstCreditPreflight(2.1 * TIB, true).status).toBe('ok');
  });

  it('warns above the credit and says what to do instead; refuses when strict', () => {
    const warn = burstCreditPreflight(parseBytes('3TiB'), false);
    expect(warn.status).toBe('warn');
    expect(warn.message).toContain('expected I/O 3.00 TiB exceeds the 2.1 TiB initial burst credit');
    expect(warn.message).toContain('EBS gp3');
    expect(warn.message).toContain('elastic throughput');
    expect(warn.message).toContain('split the work into 2 jobs');
    expect(burstCreditPreflight(parseBytes('3TiB'), true).status).toBe('refuse');
    expect(burstCreditPreflight(10 * TIB, false).message).toContain('split the work into 5 jobs');
  });
});
