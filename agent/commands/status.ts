/** `mountfleet status [--json]`: the running agent's mounts, active paths, cache zone health and switch counts. */
import type { RegisterCommand } from '../command';
import { printJson, s3Phrase } from '../output';
import {
  mountS3Count,
  type ProcessMetrics,
  agentProcessStatus,
  readState,
  StateFileError,
} from '../../core/agent';
import { agentPaths } from '../../core/contract';

export const register: RegisterCommand = (program, ctx) => {
  program
    .command('status')
    .description("the agent's mounts, which path each serves, Express cache zone health, switch counts")
    .option('--json', 'one JSON document on stdout')
    .action((opts: { json?: boolean }) => {
      let state;
      try {
        state = readState(agentPaths().runDir);
      } catch (err) {
        if (!(err instanceof StateFileError)) throw err;
        process.stderr.write(`mountfleet status: ${err.message}\n`);
        ctx.exitCode = 1;
        return;
      }
      // A state file without a start time (older agent) cannot be checked for pid reuse: trust the pid.
      const running = state !== undefined && ['running', 'unverified'].includes(agentProcessStatus(state));
      if (opts.json) {
        printJson({ running, ...(state ? { state } : {}) });
      } else if (!state || !running) {
        process.stderr.write(
          state ? `agent pid ${state.pid} is gone (stale state)\n` : 'agent not running\n',
        );
      } else {
        const zone = state.expressCache;
        const lines = [
          `agent pid ${state.pid} (${state.mode}), ${state.instanceType} in ${state.availabilityZoneId}, since ${state.startedAt}`,
          zone
            ? `express cache ${zone.bucket}: ${zone.healthy ? 'healthy' : 'DOWN'}${zone.lastProbe ? ` (${zone.lastProbe.detail})` : ''}`
            : 'express cache: not used',
          ...state.mounts.map(
            (m) =>
              `${m.path}  s3://${m.bucket}/${m.prefix}  active=${m.active}` +
              (m.failover
                ? `  switches to-direct=${m.switches.toDirect} to-express=${m.switches.toExpress}`
                : '') +
              `  ${m.processes.map((p) => `${p.role}:${p.running ? 'up' : 'down'}${p.restarts ? `(restarts ${p.restarts})` : ''}`).join(' ')}` +
              s3Line(m.processes.map((p) => p.metrics).filter((x): x is ProcessMetrics => x !== undefined)),
          ),
          ...(state.metricsRelay && 'unavailable' in state.metricsRelay
            ? [`S3 requests not counted: ${state.metricsRelay.unavailable}`]
            : []),
        ];
        process.stdout.write(`${lines.join('\n')}\n`);
      }
      if (!running) ctx.exitCode = 3;
    });
};

/** The mount's counts since the agent started, when it counts them. */
function s3Line(metrics: readonly ProcessMetrics[]): string {
  if (metrics.length === 0) return '';
  return `\n    since ${metrics[0].since}: ${s3Phrase(mountS3Count(metrics))}`;
}
