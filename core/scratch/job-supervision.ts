/**
 * Supervising a scratch run's CMD: pass a stop on to it (SIGTERM for a termination notice), give it its
 * grace period — shorter when the instance is going away — then kill what is left of the job, so nothing
 * it started writes into the path once it is unmounted.
 */
import { type Clock } from '../common';
import { type TerminationNotice } from '../instance';
import { signalNumber, type JobExit, type RunningJob } from './job';

/** The job's grace period once the instance is going away, whatever the configured one. */
const SPOT_GRACE_SECONDS = 10;

/**
 * Why a run stopped early: a signal, a Spot notice, Auto Scaling terminating the instance, or the burst-credit
 * guard (`--on-credit-low stop`).
 */
export type StopReason = 'SIGINT' | 'SIGTERM' | TerminationNotice['source'] | 'credit-low';

const instanceGoingAway = (reason: StopReason) => reason === 'spot' || reason === 'auto-scaling';

/** How long to wait for a SIGKILLed job to go before tearing down anyway. */
const KILL_WAIT_MS = 5000;

/**
 * Waits for CMD; on a stop request passes the signal on (SIGTERM for a termination notice), gives CMD its grace
 * period, then kills what is left of the job.
 */
export async function superviseJob(
  running: RunningJob,
  stop: AbortSignal,
  graceSeconds: number,
  clock: Clock,
  log: (line: string) => void,
): Promise<JobExit> {
  const stopped = new Promise<void>((resolve) => {
    if (stop.aborted) resolve();
    stop.addEventListener('abort', () => resolve(), { once: true });
  });
  const first = await Promise.race([running.exited, stopped.then(() => undefined)]);
  if (first !== undefined) return first;

  const reason = stop.reason as StopReason;
  const signal: NodeJS.Signals = reason === 'SIGINT' || reason === 'SIGTERM' ? reason : 'SIGTERM';
  const grace = instanceGoingAway(reason) ? Math.min(graceSeconds, SPOT_GRACE_SECONDS) : graceSeconds;
  log(`passing ${signal} to the job; it has ${grace} s to exit`);
  running.kill(signal);
  const graceOver = new AbortController();
  const exitedInTime = await Promise.race([
    running.exited,
    clock.sleep(grace * 1000, graceOver.signal).then(() => undefined),
  ]);
  graceOver.abort();
  if (exitedInTime !== undefined) return exitedInTime;
  log(`the job did not exit within ${grace} s: killing it`);
  running.kill('SIGKILL');
  // A process blocked in the kernel on a dead NFS server does not die until its I/O fails; deleting the
  // mount target (teardown) is what makes it fail, so teardown must not wait for the job for ever.
  const killWait = new AbortController();
  const died = await Promise.race([
    running.exited,
    clock.sleep(KILL_WAIT_MS, killWait.signal).then(() => undefined),
  ]);
  killWait.abort();
  if (died !== undefined) return died;
  log(
    `the job is still alive ${KILL_WAIT_MS / 1000} s after SIGKILL (blocked on I/O?): tearing down regardless`,
  );
  return { status: 128 + signalNumber('SIGKILL'), signal: 'SIGKILL' };
}

/**
 * The job's leader has exited; what it started in the background (same process group, or the same systemd scope) must not outlive the
 * run and write into the path once it is unmounted (onto the root disk): SIGTERM to the group, its grace
 * period, then SIGKILL. Processes that left the group (setsid) are out of reach here.
 */
export async function stopProcessGroup(
  running: RunningJob,
  stop: AbortSignal,
  graceSeconds: number,
  clock: Clock,
  log: (line: string) => void,
): Promise<void> {
  const gone = async (waitMs: number) => {
    const until = clock.now() + waitMs;
    while (running.remaining().length > 0) {
      if (clock.now() >= until) return false;
      await clock.sleep(100);
    }
    return true;
  };
  if (running.remaining().length === 0) return;
  const grace =
    stop.aborted && instanceGoingAway(stop.reason as StopReason)
      ? Math.min(graceSeconds, SPOT_GRACE_SECONDS)
      : graceSeconds;
  log(
    `the job left ${running.remaining().length} process(es) behind: SIGTERM to all of them, ${grace} s to exit`,
  );
  running.kill('SIGTERM');
  if (await gone(grace * 1000)) return;
  log(`processes of the job are still alive after ${grace} s: killing them`);
  running.kill('SIGKILL');
  if (!(await gone(KILL_WAIT_MS))) {
    log(
      `processes ${running.remaining().join(', ')} of the job survive SIGKILL (blocked on I/O?): tearing down regardless`,
    );
  }
}
