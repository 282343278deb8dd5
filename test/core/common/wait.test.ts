// The one poll loop (core/common/wait.ts), on a clock the test owns: no real time passes.
import type { Clock } from '../../../core/common/clock';
import { PollTimeout, pollUntil, type PollResult } from '../../../core/common/wait';

/** A clock whose sleeps pass at once, recorded; an abort during a sleep ends it at once, as systemClock's. */
function recordingClock() {
  let now = 0;
  const sleeps: number[] = [];
  const clock: Clock = {
    now: () => now,
    sleep: async (ms) => {
      sleeps.push(ms);
      now += ms;
    },
  };
  return { clock, sleeps };
}

/** A probe that is not done for `pending` polls, then answers `value`. */
function doneAfter<T>(pending: number, value: T) {
  let polls = 0;
  const probe = async (): Promise<PollResult<T>> =>
    ++polls > pending ? { value } : { state: `poll ${polls}` };
  return { probe, polls: () => polls };
}

describe('pollUntil', () => {
  test('polls until the probe answers, with doubling intervals up to the cap (full steps with random 1)', async () => {
    const { clock, sleeps } = recordingClock();
    const waiting: [string, number][] = [];
    const { probe, polls } = doneAfter(5, 'done');
    const value = await pollUntil(probe, {
      clock,
      timeoutMs: 60_000,
      initialPollMs: 100,
      maxPollMs: 500,
      random: () => 1,
      onWaiting: (state, waited) => waiting.push([state, waited]),
    });
    expect(value).toBe('done');
    expect(polls()).toBe(6);
    expect(sleeps).toEqual([100, 200, 400, 500, 500]);
    expect(waiting).toEqual([
      ['poll 1', 0],
      ['poll 2', 100],
      ['poll 3', 300],
      ['poll 4', 700],
      ['poll 5', 1200],
    ]);
  });

  test('jitter: each interval is 50-100% of its step', async () => {
    const { clock, sleeps } = recordingClock();
    await pollUntil(doneAfter(2, true).probe, {
      clock,
      timeoutMs: 60_000,
      initialPollMs: 1000,
      maxPollMs: 10_000,
      random: () => 0,
    });
    expect(sleeps).toEqual([500, 1000]);
  });

  test('the last sleep ends at the deadline, and a poll still not done there throws PollTimeout', async () => {
    const { clock, sleeps } = recordingClock();
    const wait = pollUntil(doneAfter(100, true).probe, {
      clock,
      timeoutMs: 1000,
      initialPollMs: 300,
      maxPollMs: 300,
      random: () => 1,
    });
    await expect(wait).rejects.toThrow(new PollTimeout('poll 5', 1000));
    await expect(wait).rejects.toMatchObject({
      state: 'poll 5',
      waitedMs: 1000,
      message: 'still poll 5 after 1 s',
    });
    expect(sleeps).toEqual([300, 300, 300, 100]);
  });

  test('a timeout of 0 polls once', async () => {
    const { clock, sleeps } = recordingClock();
    const { probe, polls } = doneAfter(1, true);
    await expect(
      pollUntil(probe, { clock, timeoutMs: 0, initialPollMs: 100, maxPollMs: 100 }),
    ).rejects.toBeInstanceOf(PollTimeout);
    expect(polls()).toBe(1);
    expect(sleeps).toEqual([]);
  });

  test("an abort ends the wait before the next poll with the signal's reason; the sleep is cut short", async () => {
    const controller = new AbortController();
    const stop = new Error('stopped by the test');
    let polls = 0;
    const wait = pollUntil(
      async () => {
        polls++;
        return { state: 'waiting' };
      },
      { signal: controller.signal, timeoutMs: 60_000, initialPollMs: 30_000, maxPollMs: 30_000 },
    );
    await new Promise((resolve) => setImmediate(resolve));
    const started = Date.now();
    controller.abort(stop);
    await expect(wait).rejects.toBe(stop);
    expect(Date.now() - started).toBeLessThan(5000);
    expect(polls).toBe(1);
  });

  test('an error the probe throws ends the wait with it', async () => {
    const { clock } = recordingClock();
    const failure = new Error('not worth waiting for');
    await expect(
      pollUntil(
        async () => {
          throw failure;
        },
        { clock, timeoutMs: 1000, initialPollMs: 10, maxPollMs: 10 },
      ),
    ).rejects.toBe(failure);
  });
});
