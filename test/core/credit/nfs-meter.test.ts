/** The job's metered bytes from NFS counter samples: reads at a third, interpolation between samples. */
import { NfsMeter } from '../../../core/credit/nfs-meter';
import type { NfsByteCounters } from '../../../core/credit/mountstats';

describe('NfsMeter', () => {
  it('meters reads at a third and writes in full, and interpolates between samples', () => {
    let counters: NfsByteCounters = { serverReadBytes: 300, serverWriteBytes: 0 };
    const meter = new NfsMeter(() => counters);
    meter.sample(0); // 100 metered before the job's first check
    counters = { serverReadBytes: 300, serverWriteBytes: 1000 };
    meter.sample(10_000);
    counters = { serverReadBytes: 3300, serverWriteBytes: 1000 };
    meter.sample(20_000);
    expect(meter.since(0)).toBe(2000); // 1000 written + 3000 read / 3
    expect(meter.since(5_000)).toBe(1500); // half of the first interval's 1000 is after 5 s
    expect(meter.since(20_000)).toBe(0);
    expect(meter.since(-1)).toBe(2000); // before the first sample: from the first sample
    expect(meter.lastRate()).toBe(100); // 1000 metered in 10 s
  });

  it('has nothing while the counters cannot be read', () => {
    const meter = new NfsMeter(() => undefined);
    meter.sample(0);
    meter.sample(1000);
    expect(meter.readable).toBe(false);
    expect(meter.since(0)).toBe(0);
    expect(meter.lastRate()).toBeUndefined();
    expect(new NfsMeter(undefined).readable).toBe(false);
    const throwing = new NfsMeter(() => {
      throw new Error('EACCES');
    });
    throwing.sample(0);
    expect(throwing.readable).toBe(false);
  });
});
