/**
 * The one way long commands stop on SIGINT/SIGTERM. Signals are emitted on `process` (its listeners run as
 * for a real signal) so the test runner itself is never signalled.
 */
import { interruptible, stopOnSignals, stopOnSignalsOnce } from '../../agent/stop-signals';

const listeners = () => process.listenerCount('SIGINT') + process.listenerCount('SIGTERM');

test('stopOnSignals: the first signal aborts with its name; every one is told, until dispose()', () => {
  const before = listeners();
  const told: string[] = [];
  const stops = stopOnSignals((name, first) => told.push(`${name} ${first ? 'first' : 'again'}`));
  process.emit('SIGTERM');
  process.emit('SIGINT');
  expect(stops.signal.aborted).toBe(true);
  expect(stops.signal.reason).toBe('SIGTERM');
  expect(told).toEqual(['SIGTERM first', 'SIGINT again']);
  stops.dispose();
  expect(listeners()).toBe(before);
});

test('stopOnSignalsOnce: each signal is handled once, so the same one again ends the process as usual', () => {
  const before = listeners();
  const told: string[] = [];
  const stops = stopOnSignalsOnce((name) => told.push(name));
  expect(listeners()).toBe(before + 2);
  process.emit('SIGINT');
  expect(stops.signal.aborted).toBe(true);
  expect(stops.signal.reason).toBe('SIGINT');
  // SIGINT's handler is gone; SIGTERM's is still there and is told too, without stopping anything anew.
  expect(listeners()).toBe(before + 1);
  process.emit('SIGTERM');
  expect(told).toEqual(['SIGINT', 'SIGTERM']);
  expect(stops.signal.reason).toBe('SIGINT');
  expect(listeners()).toBe(before);
  stops.dispose();
  expect(listeners()).toBe(before);
});

test('interruptible: says its message at the first signal and gives the body a stopped signal', async () => {
  const write = jest.spyOn(process.stderr, 'write').mockImplementation(() => true);
  try {
    const before = listeners();
    const result = await interruptible('stopping; printing what was measured', async (signal) => {
      process.emit('SIGTERM');
      return signal.aborted;
    });
    expect(result).toBe(true);
    expect(write).toHaveBeenCalledWith('stopping; printing what was measured\n');
    expect(listeners()).toBe(before);
  } finally {
    write.mockRestore();
  }
});
