/**
 * Time bounds for abortable calls. Not `AbortSignal.any([parent, AbortSignal.timeout(ms)])`: a composite
 * signal holds its sources weakly, so a timeout signal that nothing else references can be garbage-collected
 * before it fires, and the composite then never aborts (in Node 20 this made a black-holed teardown call hang
 * until the test's timeout, depending on when the collector ran). Here the timer holds the controller.
 */

/** A signal that aborts when `parent` does, or after `ms` with a TimeoutError, whichever comes first. */
export function abortAfter(ms: number, parent?: AbortSignal): AbortSignal {
  const controller = new AbortController();
  if (parent?.aborted) {
    controller.abort(parent.reason);
    return controller.signal;
  }
  const timer = setTimeout(
    () => controller.abort(new DOMException(`no answer within ${ms} ms`, 'TimeoutError')),
    ms,
  );
  timer.unref(); // an active timer keeps its callback (and the controller) alive, ref'd or not
  parent?.addEventListener(
    'abort',
    () => {
      clearTimeout(timer);
      controller.abort(parent.reason);
    },
    { once: true },
  );
  return controller.signal;
}
