/**
 * Express cache failover timings, end to end (needs root: a private mount namespace):
 *
 *   npx tsx bench/failover.ts [--runs 3] [--interval-ms 2000] [--timeout-ms 1500]
 *
 * Each run starts moto, the IMDS stand-in, the fault proxy and the agent (`up --supervise` with the
 * Mountpoint stand-in), holds a file open, black-holes S3 and prints: when new opens reached the
 * standby (from the black hole), the agent's own detection time (first failed probe → decision), the
 * mount switch itself, and the switch back after the fault is cleared. Defaults are the agent's.
 */
import { parseArgs } from 'node:util';
import { MotoServer } from '../test/support/moto';
import { runFailover } from '../test/agent/commands/up/failover-harness';

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      runs: { type: 'string', default: '3' },
      'interval-ms': { type: 'string', default: '2000' },
      'timeout-ms': { type: 'string', default: '1500' },
    },
  });
  process.env.AWS_REGION ??= 'us-east-1';
  process.env.AWS_ACCESS_KEY_ID ??= 'testing';
  process.env.AWS_SECRET_ACCESS_KEY ??= 'testing';
  const moto = await MotoServer.start();
  const rows: string[] = [];
  try {
    for (let run = 1; run <= Number(values.runs); run++) {
      await moto.reset();
      const r = await runFailover({
        motoEndpoint: moto.endpoint,
        probeIntervalMs: Number(values['interval-ms']),
        probeTimeoutMs: Number(values['timeout-ms']),
      });
      const switches = r.done.agentLog
        .split('\n')
        .filter((l) => l.includes('"event":"switch"'))
        .map((l) => JSON.parse(l) as { to: string; detectionMs: number; switchMs: number });
      const down = switches.find((s) => s.to === 'direct');
      const up = switches.find((s) => s.to === 'xz');
      rows.push(
        [
          run,
          r.switchedMs,
          down?.detectionMs,
          down?.switchMs,
          r.heldOk.same ? 'yes' : 'NO',
          r.backMs,
          up?.detectionMs,
          up?.switchMs,
        ]
          .map(String)
          .join('\t'),
      );
      process.stderr.write(`run ${run} done\n`);
    }
  } finally {
    await moto.stop();
  }
  process.stdout.write(
    `probe interval ${values['interval-ms']} ms, probe timeout ${values['timeout-ms']} ms (times in ms)\n` +
      'run\tdark→standby\tdetection\tswitch\theld handle ok\tlight→express\trecovery detection\tswitch back\n' +
      `${rows.join('\n')}\n`,
  );
}

void main();
