/** The sandbox's report for people (`--json` prints the same object for machines). */
import { MOUNTPOINT_METRICS_NAMESPACE } from '../../core/contract/metric-names';
import type { ReapReport } from '../../core/reaper/report';
import type { StoodIn } from '../../test/support/cloudformation-gaps-standin';
import type { BatchAttemptRecord } from './batch-jobs';
import type { BatchSectionReport } from './batch-section';
import type { JobRecord } from './scratch-jobs';
import type { MetricsReport } from './metrics';
import type { MountS3Choice, ZoneResult } from './mounts';
import type { StepRecord } from './progress';
import { s3Phrase } from '../../agent/output';

export interface SandboxReport {
  standIns?: StoodIn;
  /** AZ IDs the played instances ran in. */
  zonesUsed?: string[];
  mountS3?: MountS3Choice;
  zones?: ZoneResult[];
  metrics?: MetricsReport;
  /** The file that received the reaper handler's JSON log lines. */
  reaperLog?: string;
  jobs?: JobRecord[];
  reaper?: Record<string, ReapReport>;
  leakedFileSystems?: string[];
  /** The Batch section (the second stack). */
  batch?: BatchSectionReport;
}

const s1 = (seconds: number) => `${seconds.toFixed(1)} s`;

function reaperLines(runs: Record<string, ReapReport> | undefined): string[] {
  return Object.entries(runs ?? {}).flatMap(([run, r]) => [
    `  ${run}:`,
    ...r.deleted.map((id) => `    deleted ${id}`),
    ...r.kept.map((k) => `    kept    ${k.id}: ${k.reason}`),
    ...r.failed.map((f) => `    FAILED  ${f.id}: ${f.error}`),
  ]);
}

function mountLines(r: SandboxReport): string[] {
  return [
    `  mount-s3: ${r.mountS3?.why ?? '-'}`,
    ...(r.zones ?? []).map(
      (z) =>
        `  ${z.zoneId}  ${z.instanceId}  s3://${z.bucket}/ → Express cache ${z.expressBucket}: ` +
        `${z.heldBytesRead} bytes read through the mount (${z.heldBytesSame ? 'as seeded' : 'DIFFERENT'}), ` +
        (z.s3Counted ? `agent counted ${s3Phrase(z.s3Counted)}, ` : '') +
        `agent exit ${z.agentExit}, ${z.leftMounted} mounts left`,
    ),
  ];
}

function outageLines(r: SandboxReport): string[] {
  return (r.zones ?? []).flatMap((z) => [
    `  ${z.zoneId} dark (${z.blackholedRequests} requests black-holed):`,
    `    new opens on the standby after ${s1(z.failoverSeconds)}; the handle held open ${z.heldBytesSame ? 'read on unbroken' : 'BROKE'}`,
    ...(z.otherZoneKeptCache === null
      ? []
      : [`    the other zone ${z.otherZoneKeptCache ? 'kept its Express cache' : 'LOST its Express cache'}`]),
    `    zone back: new opens on the Express cache again after ${s1(z.recoverySeconds)}`,
    `    Mountpoint process killed: restarted and serving after ${s1(z.restartSeconds)}`,
  ]);
}

function metricLines(r: SandboxReport): string[] {
  const { metrics: m, reaperLog } = r;
  if (!m) return ['  -'];
  return [
    // The stand-in serves files but is not Mountpoint: no OTLP export, so none of Mountpoint's own metrics.
    ...(r.mountS3?.kind === 'stand-in'
      ? [
          `  Mountpoint's metrics (${MOUNTPOINT_METRICS_NAMESPACE}) are ABSENT: the mounts ran on the Node stand-in, which`,
          `    exports none (${r.mountS3.why})`,
        ]
      : []),
    ...(m.otlpReceiving ? [] : [`  Mountpoint's OTLP export NOT received: ${m.otlpNotReceivingBecause}`]),
    ...Object.entries(m.datapoints).flatMap(([ns, names]) => [
      `  ${ns}:`,
      ...Object.entries(names).map(([name, n]) => `    ${name.padEnd(42)} ${n} datapoints`),
    ]),
    ...m.errors.map((e) => `  ERROR ${e}`),
    `  On AWS: CloudWatch → Dashboards → ${m.dashboards.join(', ') || '(none)'}; log groups ${m.logGroups.join(', ')}`,
    `  The reaper's log lines (its log group on AWS): ${reaperLog}`,
  ];
}

/** The teardown handler's answer, in a few words: what became of the file system, the revision, a retry. */
function teardownPhrase(t: unknown): string {
  const one = (x: unknown): string => {
    if (typeof x === 'string') return x;
    const o = (x ?? {}) as {
      status?: string;
      reason?: string;
      fileSystem?: string;
      revision?: string;
      retry?: { status?: string; reason?: string; run?: { jobId?: string }; runId?: string };
    };
    if (o.status !== 'torn-down') return `${o.status ?? '?'}${o.reason ? ` (${o.reason})` : ''}`;
    const r = o.retry;
    const retry = !r
      ? ''
      : r.status === 'submitted'
        ? `, retry submitted as job ${r.run?.jobId ?? '?'}`
        : `, retry ${r.status ?? '?'}${r.reason ? ` (${r.reason})` : ''}`;
    return `file system ${o.fileSystem ?? '?'}, revision ${o.revision ?? '?'}${retry}`;
  };
  return Array.isArray(t) ? t.map(one).join(' | ') : one(t);
}

/** One attempt of a Batch job as the report shows it. */
function attemptLines(a: BatchAttemptRecord): string {
  return (
    `      attempt ${a.attempt}  job ${a.jobId}  ${a.states.join(' → ')}` +
    (a.exitCode === undefined ? '' : `  exit ${a.exitCode}`) +
    (a.statusReason ? `  "${a.statusReason}"` : '') +
    `\n        scratch ${a.fileSystemId ?? '-'} ${a.fileSystemDeleted ? 'deleted' : 'NOT deleted'}, revision ` +
    `${a.revisionDeregistered ? 'deregistered' : 'NOT deregistered'}; teardown: ${teardownPhrase(a.teardown)}` +
    (a.output ? `\n        said: ${a.output.split('\n')[0].slice(0, 110)}` : '')
  );
}

/** The jobs whose mount failed under them on the played Batch host. */
function mountFaultLines(b: NonNullable<SandboxReport['batch']>): string[] {
  if (!b.mountFaults) return [];
  return [
    "  A mount failing under a running job (the played host runs the fleet's agent; job containers bound as Docker binds):",
    ...b.mountFaults.flatMap((f) => [
      `  ${f.ok ? '✓' : '✗'} ${f.fault}: ${f.outcome}`,
      `      the job's log got: ${f.jobLogLine ?? '(nothing)'}`,
      ...f.attempts.map(attemptLines),
    ]),
  ];
}

function batchLines(b: SandboxReport['batch']): string[] {
  if (!b) return ['  - (not reached)'];
  return [
    `  ${b.stack}: fleet ${b.fleetId}, queue ${b.queue ?? '-'} → ${b.computeEnvironment ?? '-'}, played instances ` +
      `${b.instances?.join(', ') ?? '-'}`,
    `  submitted with: mountfleet batch submit --queue ${b.queue ?? '-'} --job-definition ${b.jobDefinition?.split('/').pop() ?? '-'} --scratch [--attempts 2] --json -- CMD`,
    ...(b.jobs ?? []).flatMap((j) => [
      `  ${j.ok ? '✓' : '✗'} ${j.scenario}: ${j.outcome}`,
      ...j.attempts.map(attemptLines),
    ]),
    ...mountFaultLines(b),
    `  Left in the emulator at the end: ${b.leakedFileSystems?.length ?? '?'} scratch file systems, ` +
      `${b.activeRunRevisions?.length ?? '?'} ACTIVE mf-${b.fleetId}-* job-definition revisions`,
    `  The teardown handler's log lines (its log group on AWS): ${b.teardownLog ?? '-'}`,
  ];
}

export function renderReport(r: SandboxReport, steps: readonly StepRecord[]): string {
  return [
    '',
    'mountfleet local sandbox — report',
    '',
    'Steps:',
    ...steps.map((s) => `  ${s.ok ? '✓' : '✗'} ${s.seconds.toFixed(1).padStart(5)} s  ${s.title}`),
    `  total ${steps.reduce((t, s) => t + s.seconds, 0).toFixed(1)} s`,
    '',
    `Deployed (zones ${r.zonesUsed?.join(', ') ?? '-'}); stood in for the emulator: ` +
      `${r.standIns?.directoryBuckets.join(', ') ?? '-'}, ${r.standIns?.alarms.length ?? 0} alarms`,
    '',
    'Mounts:',
    ...mountLines(r),
    '',
    'Express cache outage:',
    ...outageLines(r),
    '',
    'Scratch jobs:',
    ...(r.jobs ?? []).map((j) => `  ${j.id.padEnd(16)} ${(j.fileSystemId ?? '-').padEnd(12)} ${j.outcome}`),
    '',
    'Reaper decisions:',
    ...reaperLines(r.reaper),
    '',
    'Batch (a second stack, fleet.scheduler "batch"; jobs through the stand-ins for Batch\'s scheduler, container and events):',
    ...batchLines(r.batch),
    '',
    'Metrics:',
    ...metricLines(r),
    '',
    `Leaked scratch file systems at the end: ${(r.leakedFileSystems ?? []).length}`,
    '',
    'What differs on real AWS:',
    '  - file systems pass through creating/deleting states (seconds to minutes); here every state is immediate;',
    '  - the EFS mount helper mounts over NFS/TLS; here a stand-in mounts a local tmpfs and records the options;',
    '  - the reaper runs as a Lambda on a 15-minute schedule and on Spot/termination events, and also weighs',
    '    CloudWatch ClientConnections (the emulator has no EFS metrics);',
    '  - instances run the agent from user data; here processes play them (the Auto Scaling group spreads them',
    '    over its zones; the emulator puts all in one), each with an IMDSv2 stand-in and a mount namespace;',
    '  - the Express cache is S3 Express One Zone directory buckets and the alarms are CloudFormation resources;',
    '    here the emulator skips both: ordinary buckets and PutMetricAlarm stand in, and a stand-in answers',
    "    CreateSession; an outage is a black hole in front of one zone's bucket;",
    "  - the CloudWatch agent receives Mountpoint's metrics and ships the log files (CloudWatch Logs extracts",
    '    the embedded metrics); here a stand-in writes both straight to CloudWatch;',
    '  - Batch runs jobs in containers on the instances it launches and sends Job State Change events to EventBridge;',
    "    here moto's Docker-less Batch keeps the records, and stand-ins keep the job states, run each command in a",
    '    namespace of its own, and deliver the events to the deployed teardown bundle;',
    '  - it costs money: see "Deploying to AWS" in the README.',
    '',
  ].join('\n');
}
