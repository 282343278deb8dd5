import { abortAfter } from '../../../core/common/abort';

test('aborts with a TimeoutError after its time, though nothing else holds a reference to it', async () => {
  const signal = abortAfter(50);
  await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
  expect((signal.reason as DOMException).name).toBe('TimeoutError');
});

test('aborts at once with the parent, and is born aborted when the parent already is', () => {
  const parent = new AbortController();
  const signal = abortAfter(60_000, parent.signal);
  expect(signal.aborted).toBe(false);
  parent.abort('stop');
  expect(signal.aborted).toBe(true);
  expect(signal.reason).toBe('stop');
  expect(abortAfter(60_000, parent.signal).reason).toBe('stop');
});
