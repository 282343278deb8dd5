/** The sandbox report (scripts/sandbox/report.ts) says which Mountpoint served the mounts and what that costs. */
import type { MetricsReport } from '../../scripts/sandbox/metrics';
import { renderReport, type SandboxReport } from '../../scripts/sandbox/report';

const metrics: MetricsReport = {
  otlpReceiving: true,
  datapoints: { mountfleet: { ExpressCacheSwitches: 2 } },
  listed: {},
  dashboards: ['mountfleet-sandbox-storage'],
  logGroups: ['/mountfleet/sandbox/agent-metrics'],
  errors: [],
};

test("on the stand-in, the Metrics section says Mountpoint's metrics are absent and why", () => {
  const report: SandboxReport = {
    metrics,
    mountS3: {
      kind: 'stand-in',
      binary: 'mount-s3-standin',
      why: 'the Node stand-in: no real Mountpoint (MOUNTFLEET_MOUNT_S3 is not set): the harness is not built: rustc 1.80.0 is older than 1.95',
    },
  };
  const text = renderReport(report, []);
  const section = text.slice(text.indexOf('Metrics:'), text.indexOf('Leaked'));
  expect(section).toMatch(
    /Mountpoint's metrics \(Mountfleet\/Mountpoint\) are ABSENT: the mounts ran on the Node stand-in/,
  );
  expect(section).toContain('rustc 1.80.0 is older than 1.95');
});

test('on the real Mountpoint (the harness or mount-s3) no such line', () => {
  const report: SandboxReport = {
    metrics,
    mountS3: { kind: 'harness', binary: 'mount-s3-harness', why: "the project's harness" },
  };
  expect(renderReport(report, [])).not.toContain('ABSENT');
});
