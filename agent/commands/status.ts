/** `mountfleet status [--json]`: the running agent's mounts, active paths, cache zone health and switch counts. */
import { agentStatus, mountS3Count, type AgentState, type ProcessMetrics } from '../../core/agent';
import { agentPaths } from '../../core/contract';
import { EXIT_STATUS } from '../../core/common';
import type { RegisterCommand } from '../command';
import { printJson, s3Phrase } from '../output';

export const register: RegisterCommand = (program, ctx) => {
  program
    .command('status')
    .description("the agent's mounts, which path each serves, Express cache zone health, switch counts")
    .option('--json', 'one JSON document on stdout')
    .addHelpText(
      'after',
      `\nExit status: ${EXIT_STATUS.notRunning} when no agent runs (none started, or the pid its state file names is gone).`,
    )
    .action((flags: { json?: boolean }) => {
      const status = agentStatus(agentPaths().runDir);
      const { running, state } = status;
      if (flags.json) printJson(status);
      else if (!state || !running) {
        process.stderr.write(
          state ? `agent pid ${state.pid} is gone (stale state)\n` : 'agent not running\n',
        );
      } else process.stdout.write(`${statusLines(state).join('\n')}\n`);
      if (!running) ctx.exitCode = EXIT_STATUS.notRunning;
    });
};

function statusLines(state: AgentState): string[] {
  const zone = state.expressCache;
  return [
    `agent pid ${state.pid} (${state.mode}), ${state.instanceType} in ${state.availabilityZoneId}, since ${state.startedAt}`,
    zone
      ? `express cache ${zone.bucket}: ${zone.healthy ? 'healthy' : 'DOWN'}${zone.lastProbe ? ` (${zone.lastProbe.detail})` : ''}`
      : 'express cache: not used',
    ...state.mounts.map(
      (m) =>
        `${m.path}  s3://${m.bucket}/${m.prefix}  active=${m.active}` +
        (m.failover ? `  switches to-direct=${m.switches.toDirect} to-express=${m.switches.toExpress}` : '') +
        `  ${m.processes.map((p) => `${p.role}:${p.running ? 'up' : 'down'}${p.restarts ? `(restarts ${p.restarts})` : ''}`).join(' ')}` +
        s3Line(m.processes.map((p) => p.metrics).filter((x): x is ProcessMetrics => x !== undefined)),
    ),
    ...(state.metricsRelay && 'unavailable' in state.metricsRelay
      ? [`S3 requests not counted: ${state.metricsRelay.unavailable}`]
      : []),
  ];
}

/** The mount's counts since the agent started, when it counts them. */
function s3Line(metrics: readonly ProcessMetrics[]): string {
  if (metrics.length === 0) return '';
  return `\n    since ${metrics[0].since}: ${s3Phrase(mountS3Count(metrics))}`;
}
