/** `mountfleet scratch list` and `scratch delete`: the real CLI bundle (built by scripts/test.sh) against the emulator. */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DescribeFileSystemsCommand, DescribeMountTargetsCommand } from '@aws-sdk/client-efs';
import { ec2Client, efsClient } from '../../../core/aws';
import type { ScratchFileSystemSummary } from '../../../core/scratch/inventory';
import { runCli } from '../../support/cli';
import { useEmulator } from '../../support/emulator';
import { createNetwork, createScratchFileSystem, type TestNetwork } from '../../support/fixtures';

const FLEET = 'ops';

describe('mountfleet scratch list / delete', () => {
  const emu = useEmulator();
  let net: TestNetwork;
  let ours: string;
  let theirs: string;
  let untagged: string;
  let configDir: string;
  const cli = (args: string[], env: NodeJS.ProcessEnv = {}) =>
    runCli(['scratch', ...args], { env: { AWS_ENDPOINT_URL: emu.endpoint, MOUNTFLEET_CONFIG: '', ...env } });

  beforeAll(() => {
    configDir = mkdtempSync(join(tmpdir(), 'mf-scratch-ops-'));
  });
  afterAll(() => rmSync(configDir, { recursive: true, force: true }));
  beforeEach(async () => {
    const efs = efsClient({ maxAttempts: 1 });
    net = await createNetwork(ec2Client({ maxAttempts: 1 }), 1);
    ours = await createScratchFileSystem(
      efs,
      { fleet: FLEET, owner: 'i-0123456789abcdef0', job: 'render-7', mountTargetSubnet: net.subnets[0] },
      `mf/${FLEET}/render-7`,
    );
    theirs = await createScratchFileSystem(efs, { fleet: 'other', job: 'x' }, 'mf/other/x');
    untagged = await createScratchFileSystem(efs, {}, 'hand-made');
  });

  it("lists this fleet's scratch file systems with job, owner, age, state and mount targets", async () => {
    const json = await cli(['list', '--fleet', FLEET, '--json']);
    expect(json.code).toBe(0);
    const out = JSON.parse(json.stdout) as { fleetId: string; fileSystems: ScratchFileSystemSummary[] };
    expect(out.fleetId).toBe(FLEET);
    expect(out.fileSystems).toEqual([
      expect.objectContaining({
        fileSystemId: ours,
        job: 'render-7',
        ownerInstance: 'i-0123456789abcdef0',
        state: 'available',
        availabilityZone: net.subnets[0].availabilityZone,
        mountTargets: 1,
        ageSeconds: expect.any(Number),
      }),
    ]);

    const human = await cli(['list', '--fleet', FLEET]);
    expect(human.code).toBe(0);
    expect(human.stderr).toBe('');
    expect(human.stdout).toMatch(/FILE SYSTEM\s+JOB\s+OWNER\s+AGE\s+STATE\s+ZONE\s+MOUNT TARGETS/);
    expect(human.stdout).toMatch(
      new RegExp(`${ours}\\s+render-7\\s+i-0123456789abcdef0\\s+\\d+s\\s+available\\s+us-east-1a\\s+1`),
    );
  });

  it('takes the fleet from agent.json, and says what is missing without one', async () => {
    const config = join(configDir, 'agent.json');
    writeFileSync(config, JSON.stringify({ version: 1, fleetId: FLEET, region: 'us-east-1' }));
    const listed = await cli(['list', '--json'], { MOUNTFLEET_CONFIG: config });
    expect(
      JSON.parse(listed.stdout).fileSystems.map((f: ScratchFileSystemSummary) => f.fileSystemId),
    ).toEqual([ours]);

    const unconfigured = await cli(['list']);
    expect(unconfigured.code).toBe(2);
    expect(unconfigured.stderr).toContain('no fleet: pass --fleet ID');
  });

  it("refuses to delete a file system not tagged with this fleet, and deletes this fleet's with its mount target", async () => {
    const efs = efsClient({ maxAttempts: 1 });
    const foreign = await cli(['delete', theirs, '--fleet', FLEET]);
    expect(foreign.code).toBe(2);
    expect(foreign.stderr).toContain(`${theirs} belongs to fleet other, not ${FLEET}: refusing to delete it`);
    const handMade = await cli(['delete', untagged, '--fleet', FLEET]);
    expect(handMade.code).toBe(2);
    expect(handMade.stderr).toContain('is not a mountfleet scratch file system');

    const deleted = await cli(['delete', ours, '--fleet', FLEET, '--json']);
    expect(deleted.code).toBe(0);
    expect(JSON.parse(deleted.stdout)).toEqual({
      fileSystemId: ours,
      status: 'deleted',
      mountTargetsDeleted: 1,
    });
    const left = (await efs.send(new DescribeFileSystemsCommand({}))).FileSystems!.map((f) => f.FileSystemId);
    expect(left.sort()).toEqual([theirs, untagged].sort());
    await expect(efs.send(new DescribeMountTargetsCommand({ FileSystemId: ours }))).rejects.toThrow();

    // Nothing left to delete is a failure (exit 1), so a typo in the id does not pass for success.
    const again = await cli(['delete', ours, '--fleet', FLEET]);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain(`${ours} does not exist`);
  });

  it('lists a file system with the fleet tag that the fleet did not make as foreign, and deletes it only with --force', async () => {
    const efs = efsClient({ maxAttempts: 1 });
    const copied = await createScratchFileSystem(efs, { fleet: FLEET, job: 'precious' }, 'a-team-data-set');

    const listed = await cli(['list', '--fleet', FLEET, '--json']);
    const summaries = JSON.parse(listed.stdout).fileSystems as ScratchFileSystemSummary[];
    expect(summaries.find((f) => f.fileSystemId === copied)?.foreign).toBe(
      `CreationToken "a-team-data-set" does not start with "mf/${FLEET}/"`,
    );
    expect(summaries.find((f) => f.fileSystemId === ours)?.foreign).toBeUndefined();
    const human = await cli(['list', '--fleet', FLEET]);
    expect(human.stdout).toMatch(
      new RegExp(`${copied}\\s+precious\\s+-\\s+\\d+s\\s+available \\(foreign: never reaped\\)`),
    );

    const refused = await cli(['delete', copied, '--fleet', FLEET]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain(
      `${copied} carries mountfleet:fleet=${FLEET} but was not made by the fleet (CreationToken "a-team-data-set" ` +
        `does not start with "mf/${FLEET}/"): the reaper never deletes such a file system; pass --force to delete it anyway`,
    );
    expect(
      (await efs.send(new DescribeFileSystemsCommand({ FileSystemId: copied }))).FileSystems,
    ).toHaveLength(1);

    const forced = await cli(['delete', copied, '--fleet', FLEET, '--force']);
    expect(forced.code).toBe(0);
    expect(forced.stderr).toContain(
      `--force: deleting ${copied} although it was not made by the fleet (CreationToken`,
    );
    await expect(efs.send(new DescribeFileSystemsCommand({ FileSystemId: copied }))).rejects.toThrow();
  });
});
