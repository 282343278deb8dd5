/**
 * bench/training-scenarios.ts's peers part at a test size, run as a user runs it (`--part peers --json`): the S3
 * Connector for PyTorch's client (pinned in the virtualenv), Mountpoint's defaults, mountfleet's profile and a
 * fresh instance on a warm Express cache, all on the real Mountpoint. What is checked is what does not depend on
 * the machine's speed: the requests each peer makes per epoch, and that every figure and goal is printed. The
 * figures themselves are the bench's (docs/training.md), asserting none.
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { TSX_LOADER } from '../support/mount-namespace';
import { REPO_ROOT } from '../support/moto';
import { realMountpointForTests } from '../support/real-mountpoint';
import type { PeersReport, PeerRow } from '../../bench/training-peers';

const { it, skip } = realMountpointForTests();
const FILES = 384;
/** A bound for a failure, not a measurement: the run takes about a minute on a quiet machine. */
const RUN_BOUND_MS = 8 * 60_000;

let peers: PeersReport;
let output = '';
beforeAll(async () => {
  if (skip) return;
  const { stdout, stderr } = await promisify(execFile)(
    process.execPath,
    [
      '--no-warnings',
      '--import',
      TSX_LOADER,
      join(REPO_ROOT, 'bench/training-scenarios.ts'),
      '--part',
      'peers',
      '--files',
      String(FILES),
      '--batch-size',
      '16',
      '--json',
    ],
    { cwd: REPO_ROOT, maxBuffer: 16 * 2 ** 20, timeout: RUN_BOUND_MS },
  );
  output = stderr;
  peers = (JSON.parse(stdout) as { peers: PeersReport }).peers;
}, RUN_BOUND_MS + 10_000);

const epochs = (peer: string): PeerRow[] => peers.rows.filter((r) => r.peer.startsWith(peer));

it('the connector reads each sample with one GET, every epoch: it keeps no cache', () => {
  const rows = epochs('S3 Connector');
  expect(rows.map((r) => [r.epoch, r.paced, r.s3ByOperation])).toEqual([
    [1, false, { GetObject: FILES }],
    [2, false, { GetObject: FILES }],
    [3, true, { GetObject: FILES }],
  ]);
  expect(peers.connector).toBe('1.5.0');
});

it("mountfleet's profile pays one GET per sample in epoch 1 (the listing gave the metadata), none after", () => {
  expect(epochs("mountfleet's profile").map((r) => r.s3ByOperation)).toEqual([{ GetObject: FILES }, {}, {}]);
});

it("Mountpoint's defaults look every sample up again before its GET (one epoch: they keep nothing)", () => {
  const [r, ...more] = epochs("Mountpoint's defaults");
  expect(more).toEqual([]);
  expect(r.s3ByOperation.GetObject).toBe(FILES);
  expect(r.s3ByOperation.HeadObject).toBeGreaterThanOrEqual(FILES);
});

it('a fresh instance on a warm Express cache reads each sample with one GET of a cached block, then locally', () => {
  expect(epochs('mountfleet, fresh instance').map((r) => r.s3ByOperation)).toEqual([
    { GetObject: FILES },
    {},
    {},
  ]);
  expect(output).toMatch(
    new RegExp(`mountfleet warm on instance A: ${FILES} files .*; ${FILES + 1} cache writes\\n`),
  );
});

it('prints every peer, the CPU on each side of the emulator and the four goals, each with its value', () => {
  expect(peers.cpu.map((c) => c.peer)).toHaveLength(4);
  expect(peers.goals.map((g) => g.goal)).toEqual([
    'mountfleet epoch 1 >= 1.0x the connector',
    'a fresh instance on a warm Express cache, epoch 1 >= 1.5x the connector',
    'mountfleet epoch 2 >= 15x the connector',
    "mountfleet's data wait from epoch 2 <= 2 % (at the accelerator's pace)",
  ]);
  for (const g of peers.goals) expect(g.value).toMatch(/^\d+\.\d+(x| %)$/);
  expect(output).toMatch(/^goal (met {4}|NOT met): mountfleet epoch 2 >= 15x the connector: /m);
});
