/**
 * The one way long commands stop on SIGINT/SIGTERM. Signals are emitted on `process` (its listeners run as
 * for a real signal) so the test runner itself is never signalled.
 */
import { interruptible, stopOnFirstSignal, stopOnSignals } from '../../agent/stop-signals';

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

test('stopOnFirstSignal: its handlers go at the first signal, so a second one ends the process as usual', () => {
  const before = listeners();
  const told: string[] = [];
  const stops = stopOnFirstSignal((name) => told.push(name));
  expect(listeners()).toBe(before + 2);
  process.emit('SIGINT');
  expect(stops.signal.aborted).toBe(true);
  expect(told).toEqual(['SIGINT']);
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
