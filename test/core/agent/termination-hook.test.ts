/**
 * The agent's side of the Auto Scaling termination hook, against a real Auto Scaling group in the emulator
 * and the IMDS stand-in: it waits for the scratch runs on the instance, stops the mounts, then completes the
 * hook. moto implements lifecycle hooks but not CompleteLifecycleAction, so the fault proxy in front of it
 * answers that one call as AWS does (an empty CompleteLifecycleActionResult) and the test checks what
 * reached the service.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  AutoScalingClient,
  CreateAutoScalingGroupCommand,
  DescribeAutoScalingInstancesCommand,
  PutLifecycleHookCommand,
} from '@aws-sdk/client-auto-scaling';
import { CreateLaunchTemplateCommand } from '@aws-sdk/client-ec2';
import { clientConfig, ec2Client } from '../../../core/aws/clients';
import { systemClock } from '../../../core/common/clock';
import { metadataService, type InstanceMetadataClient } from '../../../core/instance/imds';
import { handleAutoScalingTermination } from '../../../core/agent/termination-hook';
import { activeScratchRuns } from '../../../core/scratch/registry';
import { useEmulator } from '../../support/emulator';
import { FaultProxy, type RequestInfo } from '../../support/fault-proxy';
import { createNetwork } from '../../support/fixtures';
import { ImdsStandIn } from '../../support/imds';

const HOOK = 'mountfleet-train-teardown';
const GROUP = 'mountfleet-train-group';

describe('handleAutoScalingTermination', () => {
  const emu = useEmulator();
  let proxy: FaultProxy;
  let imds: ImdsStandIn;
  let client: InstanceMetadataClient;
  let runDir: string;
  let autoScaling: AutoScalingClient;
  let instanceId: string;
  let completions: URLSearchParams[];
  let scratchRun: ChildProcess | undefined;

  beforeAll(async () => {
    proxy = await FaultProxy.start({ target: emu.endpoint });
  });
  afterAll(() => proxy.stop());
  beforeEach(async () => {
    proxy.clear();
    completions = [];
    // moto has no CompleteLifecycleAction: answer it as AWS does, keeping what was asked.
    proxy.addRule({
      service: 'autoscaling',
      operation: 'CompleteLifecycleAction',
      match: (request: RequestInfo) => (completions.push(new URLSearchParams(request.body)), true),
      fault: {
        kind: 'respond',
        status: 200,
        contentType: 'text/xml',
        body: '<CompleteLifecycleActionResponse xmlns="http://autoscaling.amazonaws.com/doc/2011-01-01/"><CompleteLifecycleActionResult/><ResponseMetadata><RequestId>r-1</RequestId></ResponseMetadata></CompleteLifecycleActionResponse>',
      },
    });
    autoScaling = new AutoScalingClient({ ...clientConfig({ maxAttempts: 1 }), endpoint: proxy.endpoint });
    const ec2 = ec2Client({ maxAttempts: 1 });
    const net = await createNetwork(ec2, 1);
    await ec2.send(
      new CreateLaunchTemplateCommand({
        LaunchTemplateName: 'train',
        LaunchTemplateData: { ImageId: 'ami-12c6146b', InstanceType: 'm6i.large' },
      }),
    );
    await autoScaling.send(
      new CreateAutoScalingGroupCommand({
        AutoScalingGroupName: GROUP,
        LaunchTemplate: { LaunchTemplateName: 'train' },
        MinSize: 1,
        MaxSize: 1,
        DesiredCapacity: 1,
        VPCZoneIdentifier: net.subnets[0].subnetId,
      }),
    );
    await autoScaling.send(
      new PutLifecycleHookCommand({
        AutoScalingGroupName: GROUP,
        LifecycleHookName: HOOK,
        LifecycleTransition: 'autoscaling:EC2_INSTANCE_TERMINATING',
        HeartbeatTimeout: 600,
        DefaultResult: 'CONTINUE',
      }),
    );
    const members = await autoScaling.send(new DescribeAutoScalingInstancesCommand({}));
    instanceId = members.AutoScalingInstances![0].InstanceId!;
    imds = await ImdsStandIn.start({ instanceId });
    client = metadataService({ endpoint: imds.endpoint });
    runDir = mkdtempSync(join(tmpdir(), 'mf-hook-'));
  });
  afterEach(async () => {
    scratchRun?.kill('SIGKILL');
    scratchRun = undefined;
    client.close();
    await imds.stop();
    rmSync(runDir, { recursive: true, force: true });
  });

  /** A stand-in `scratch run`: a process recorded in the run directory that exits when told to. */
  function startScratchRun(jobId: string): ChildProcess {
    const child = spawn('sleep', ['30'], { stdio: 'ignore' });
    mkdirSync(join(runDir, 'scratch-runs'), { recursive: true });
    writeFileSync(
      join(runDir, 'scratch-runs', `${child.pid}.json`),
      JSON.stringify({ pid: child.pid, jobId, startedAt: new Date().toISOString() }),
    );
    return child;
  }

  const options = (
    events: Array<Record<string, unknown>>,
    signal: AbortSignal,
    stopMounts: () => Promise<void>,
  ) => ({
    imds: client,
    autoScaling,
    hookName: HOOK,
    instanceId,
    runDir,
    stopMounts,
    signal,
    clock: systemClock,
    log: (e: Record<string, unknown>) => events.push(e),
    pollMs: 100,
    scratchWaitMs: 10_000,
  });

  it('on Terminated waits for scratch runs, then stops the mounts, then completes the hook', async () => {
    const events: Array<Record<string, unknown>> = [];
    const order: string[] = [];
    scratchRun = startScratchRun('render-7');
    const exited = new Promise((resolve) => scratchRun!.once('exit', resolve));
    imds.setTargetLifecycleState('InService');
    const handling = handleAutoScalingTermination(
      options(events, new AbortController().signal, async () => {
        order.push(
          `mounts stopped, scratch runs left: ${activeScratchRuns(runDir).length}, hooks completed: ${completions.length}`,
        );
      }),
    );
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect(events).toEqual([]); // InService: nothing to do

    imds.setTargetLifecycleState('Terminated');
    await new Promise((resolve) => setTimeout(resolve, 600));
    expect(events.map((e) => e.event)).toEqual(['terminating']); // still waiting for the scratch run
    expect(events[0].scratchRuns).toEqual(['render-7']);
    expect(completions).toEqual([]);

    scratchRun.kill('SIGTERM'); // its teardown is done
    await exited;
    expect(await handling).toBe('completed');
    expect(order).toEqual(['mounts stopped, scratch runs left: 0, hooks completed: 0']);
    expect(completions.map((c) => Object.fromEntries(c))).toEqual([
      expect.objectContaining({
        Action: 'CompleteLifecycleAction',
        AutoScalingGroupName: GROUP,
        LifecycleHookName: HOOK,
        InstanceId: instanceId,
        LifecycleActionResult: 'CONTINUE',
      }),
    ]);
    expect(events.at(-1)).toEqual({
      event: 'lifecycle-action-completed',
      autoScalingGroup: GROUP,
      hook: HOOK,
    });
  });

  it('outside a group (404) it keeps watching, and stopping the agent ends the watch without acting', async () => {
    const events: Array<Record<string, unknown>> = [];
    const stop = new AbortController();
    let stopped = 0;
    const handling = handleAutoScalingTermination(options(events, stop.signal, async () => void stopped++));
    await new Promise((resolve) => setTimeout(resolve, 400));
    stop.abort();
    expect(await handling).toBe('not-terminating');
    expect(imds.requests().filter((r) => r.status === 404).length).toBeGreaterThan(1);
    expect({ stopped, completions, events }).toEqual({ stopped: 0, completions: [], events: [] });
  });

  it('gives up waiting for a scratch run after its bound, and still completes the hook', async () => {
    const events: Array<Record<string, unknown>> = [];
    scratchRun = startScratchRun('stuck');
    imds.setTargetLifecycleState('Terminated');
    const started = Date.now();
    const outcome = await handleAutoScalingTermination({
      ...options(events, new AbortController().signal, async () => undefined),
      scratchWaitMs: 700,
    });
    expect(outcome).toBe('completed');
    expect(Date.now() - started).toBeLessThan(3000);
    expect(events.map((e) => e.event)).toEqual([
      'terminating',
      'scratch-runs-still-running',
      'lifecycle-action-completed',
    ]);
    expect(completions).toHaveLength(1);
  });

  it('reports a hook it could not complete (the hook times out with CONTINUE instead)', async () => {
    proxy.clear();
    proxy.addRule({
      service: 'autoscaling',
      operation: 'CompleteLifecycleAction',
      fault: {
        kind: 'error',
        status: 400,
        code: 'ValidationError',
        message: 'No active Lifecycle Action found',
      },
    });
    const events: Array<Record<string, unknown>> = [];
    imds.setTargetLifecycleState('Terminated');
    const outcome = await handleAutoScalingTermination(
      options(events, new AbortController().signal, async () => undefined),
    );
    expect(outcome).toBe('not-completed');
    expect(events.at(-1)).toMatchObject({
      event: 'lifecycle-action-failed',
      error: expect.stringMatching(/No active Lifecycle Action/),
    });
  });
});
