/** `mountfleet scratch list` and `scratch delete`: the real CLI bundle (built by scripts/test.sh) against the emulator. */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { StartInstancesCommand } from '@aws-sdk/client-ec2';
import {
  DescribeFileSystemsCommand,
  DescribeMountTargetsCommand,
  TagResourceCommand,
} from '@aws-sdk/client-efs';
import { ec2Client, efsClient } from '../../../../core/aws/clients';
import type { ScratchFileSystemSummary } from '../../../../core/scratch/inventory';
import { TAG_RUN, TAG_TEARDOWN_STARTED_AT } from '../../../../core/contract/tags';
import { runCli } from '../../../support/cli';
import { useEmulator } from '../../../support/emulator';
import { FaultProxy } from '../../../support/fault-proxy';
import { createNetwork, createScratchFileSystem, type TestNetwork } from '../../../support/fixtures';
import { launchOwners, type OwnerState } from '../../../core/reaper/scenario';

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

  /** Marks the file system as its run marks it when its teardown starts. */
  const markTeardownStarted = (fileSystemId: string) =>
    efsClient({ maxAttempts: 1 }).send(
      new TagResourceCommand({
        ResourceId: fileSystemId,
        Tags: [{ Key: TAG_TEARDOWN_STARTED_AT, Value: new Date().toISOString() }],
      }),
    );

  it("refuses to delete a file system not tagged with this fleet, and deletes this fleet's with its mount target", async () => {
    const efs = efsClient({ maxAttempts: 1 });
    await markTeardownStarted(ours); // its run has ended (see the live-run tests below)
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
      run: 'over',
      evidence: expect.stringMatching(
        /^its run started its teardown at .* \(mountfleet:teardown-started-at\)$/,
      ),
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

  describe("a file system whose run may still be using it (the reaper's evidence, re-checked right before deleting)", () => {
    const RUN = 'r20260101t000000-00000000000000aa';
    /** A file system of fleet `ops` with its mount target, made by run RUN of job `encode-9` on an owner in `state`. */
    const runFileSystem = async (state: OwnerState) => {
      const [owner] = await launchOwners(ec2Client({ maxAttempts: 1 }), FLEET, state);
      const id = await createScratchFileSystem(
        efsClient({ maxAttempts: 1 }),
        {
          fleet: FLEET,
          owner,
          job: 'encode-9',
          mountTargetSubnet: net.subnets[0],
          extraTags: [{ Key: TAG_RUN, Value: RUN }],
        },
        `mf/${FLEET}/${RUN}`,
      );
      return { id, owner };
    };
    const exists = async (id: string) =>
      (await efsClient({ maxAttempts: 1 }).send(new DescribeFileSystemsCommand({}))).FileSystems!.some(
        (f) => f.FileSystemId === id && (f.NumberOfMountTargets ?? 0) > 0,
      );

    it("refuses a live run's file system (exit 75, naming the job, the run, the owner and the evidence); --force deletes it", async () => {
      const { id, owner } = await runFileSystem('running');
      const refused = await cli(['delete', id, '--fleet', FLEET]);
      expect(refused.code).toBe(75);
      expect(refused.stderr).toContain(
        `refusing to delete ${id}: its run may still be using it — job encode-9, run ${RUN}, owner instance ${owner}; ` +
          `re-checked just now: owner ${owner} is running; the reaper keeps it: young: created 0 min ago, grace period 30 min. ` +
          'A run deletes its own file system when it ends',
      );
      expect(refused.stderr).toContain('--force deletes it now, and the job loses its scratch');
      expect(await exists(id)).toBe(true);

      const json = await cli(['delete', id, '--fleet', FLEET, '--json']);
      expect(json.code).toBe(75);
      expect(JSON.parse(json.stdout)).toEqual({
        fileSystemId: id,
        status: 'refused',
        run: 'alive',
        evidence: expect.stringMatching(`^owner ${owner} is running; `),
        jobId: 'encode-9',
        runId: RUN,
        ownerInstanceId: owner,
      });
      expect(await exists(id)).toBe(true);

      const forced = await cli(['delete', id, '--fleet', FLEET, '--force', '--json']);
      expect(forced.code).toBe(0);
      expect(forced.stderr).toContain(
        `--force: deleting ${id} although its run may still be using it (job encode-9, run ${RUN}, owner instance ${owner}; ` +
          `owner ${owner} is running;`,
      );
      expect(JSON.parse(forced.stdout)).toMatchObject({
        status: 'deleted',
        mountTargetsDeleted: 1,
        run: 'alive',
      });
      await expect(
        efsClient({ maxAttempts: 1 }).send(new DescribeFileSystemsCommand({ FileSystemId: id })),
      ).rejects.toThrow();
    });

    it.each([
      ['its owner is terminated', 'terminated' as const, false, /^owner i-\w+ is terminated$/],
      [
        'its owner is stopped',
        'stopped' as const,
        false,
        /^owner i-\w+ is stopped: a stopped instance keeps no NFS mount/,
      ],
      ['its run started its teardown', 'running' as const, true, /^its run started its teardown at /],
    ])('deletes without --force when %s', async (_, state, teardownStarted, evidence) => {
      const { id } = await runFileSystem(state);
      if (teardownStarted) await markTeardownStarted(id);
      const deleted = await cli(['delete', id, '--fleet', FLEET, '--json']);
      expect(deleted.code).toBe(0);
      expect(JSON.parse(deleted.stdout)).toEqual({
        fileSystemId: id,
        status: 'deleted',
        mountTargetsDeleted: 1,
        run: 'over',
        evidence: expect.stringMatching(evidence),
      });
      expect(deleted.stderr).toContain(`${id}: its run is over (`);
    });

    describe('judges the run on what it is right before the first delete call, not at the start of the command', () => {
      let proxy: FaultProxy;
      beforeAll(async () => {
        proxy = await FaultProxy.start({ target: emu.endpoint });
      });
      afterAll(() => proxy.stop());

      /**
       * Runs `scratch delete` through the proxy, holding its DescribeMountTargets (after the command's first
       * look, before the re-check) while `meanwhile` changes the world.
       */
      async function deleteWhile(id: string, meanwhile: () => Promise<unknown>) {
        proxy.clear();
        proxy.resetStats();
        let arrived!: () => void;
        const held = new Promise<void>((resolve) => (arrived = resolve));
        let release!: () => void;
        const released = new Promise<void>((resolve) => (release = resolve));
        proxy.addRule({
          service: 'efs',
          operation: 'DescribeMountTargets',
          match: () => (arrived(), true),
          fault: { kind: 'hold', until: released },
        });
        const result = runCli(['scratch', 'delete', id, '--fleet', FLEET, '--json'], {
          env: { AWS_ENDPOINT_URL: proxy.endpoint, MOUNTFLEET_CONFIG: '' },
        });
        await held;
        await meanwhile();
        release();
        return result;
      }

      it('a run that ends meanwhile (its teardown starts): deleted, on that evidence', async () => {
        const { id } = await runFileSystem('running'); // alive when the command starts
        const deleted = await deleteWhile(id, () => markTeardownStarted(id));
        expect(deleted.code).toBe(0);
        expect(JSON.parse(deleted.stdout)).toMatchObject({
          status: 'deleted',
          run: 'over',
          evidence: expect.stringMatching(/^its run started its teardown at /),
        });
      });

      it('an owner started again meanwhile (stopped when the command started): refused, nothing deleted', async () => {
        const { id, owner } = await runFileSystem('stopped'); // over when the command starts
        const refused = await deleteWhile(id, () =>
          ec2Client({ maxAttempts: 1 }).send(new StartInstancesCommand({ InstanceIds: [owner] })),
        );
        expect(refused.code).toBe(75);
        expect(JSON.parse(refused.stdout)).toMatchObject({
          status: 'refused',
          run: 'alive',
          evidence: expect.stringMatching(`^owner ${owner} is (pending|running); `),
        });
        expect(proxy.count('efs', 'DeleteMountTarget') + proxy.count('efs', 'DeleteFileSystem')).toBe(0);
        expect(await exists(id)).toBe(true);
      });
    });
  });
});
