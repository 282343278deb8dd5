/** The owner-state rule the agent and the reaper share (core/contract/owner-state.ts), and the agent's use of it. */
import {
  endsScratchJob,
  ownerReleasedScratch,
  ownerStateOfInstance,
  ownerStateOfNotice,
} from '../../../core/contract/owner-state';
import { watchForTermination, type TerminationNotice } from '../../../core/instance/termination-notice';

describe('owner state', () => {
  it.each([
    ['pending', 'alive'],
    ['running', 'alive'],
    ['stopping', 'stopped'],
    ['stopped', 'stopped'],
    ['shutting-down', 'gone'],
    ['terminated', 'gone'],
    [undefined, 'gone'],
    ['some-future-state', 'alive'],
  ] as const)('EC2 state %s is %s', (ec2State, expected) => {
    expect(ownerStateOfInstance(ec2State)).toBe(expected);
  });

  it.each([
    ['spot', 'terminate', 'going'],
    ['auto-scaling', 'terminate', 'going'],
    ['spot', 'stop', 'stopped'],
    ['spot', 'hibernate', 'stopped'],
    ['spot', 'reboot', 'alive'],
  ] as const)('a %s notice to %s means %s', (source, action, expected) => {
    expect(ownerStateOfNotice(source, action)).toBe(expected);
  });

  it('the agent ends its job in every state but alive; the reaper deletes without metrics on gone and stopped', () => {
    const states = ['gone', 'going', 'stopped', 'alive'] as const;
    expect(states.filter(endsScratchJob)).toEqual(['gone', 'going', 'stopped']);
    expect(states.filter(ownerReleasedScratch)).toEqual(['gone', 'stopped']);
  });

  it('the termination watch ends the job on a Spot stop notice, and ignores a notice that ends nothing', async () => {
    const watch = async (notices: TerminationNotice[]) => {
      const stop = new AbortController();
      let polls = 0;
      const seen = await watchForTermination(
        async () => {
          if (polls++ >= notices.length) stop.abort();
          return notices[polls - 1];
        },
        { clock: { now: () => 0, sleep: async () => undefined }, signal: stop.signal, log: () => undefined },
      );
      return seen;
    };
    const stopNotice: TerminationNotice = { source: 'spot', action: 'stop' };
    expect(await watch([stopNotice])).toEqual(stopNotice);
    expect(await watch([{ source: 'spot', action: 'reboot' }])).toBeUndefined();
  });
});
