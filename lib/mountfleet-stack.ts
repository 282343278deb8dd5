import { CfnOutput, Duration, Size, Stack, type StackProps } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as s3 from 'aws-cdk-lib/aws-s3';
import * as sns from 'aws-cdk-lib/aws-sns';
import type { Construct } from 'constructs';
import { BatchComputeFleet } from './batch-compute-fleet';
import { ComputeFleet } from './compute-fleet';
import { ExpressCache } from './express-cache';
import { FleetNetwork } from './fleet-network';
import type { FleetMount, IFleetNetwork } from './interfaces';
import { acknowledge } from './private/nag';
import { OrphanReaper } from './orphan-reaper';
import { ScratchFileSystems } from './scratch-file-systems';
import type { ResolvedStackConfig } from './stack-config';
import { StorageDashboard } from './storage-dashboard';

/** Props of {@link MountfleetStack}. */
export interface MountfleetStackProps extends StackProps {
  /** The resolved config of this stack (see `loadAppConfig`). */
  readonly config: ResolvedStackConfig;
}

/**
 * The bundled app's stack: network (new, subnets by AZ ID — or an existing VPC), Express cache, scratch
 * file systems, compute fleet (an Auto Scaling group, or Batch queues with `fleet.scheduler: "batch"`), orphan
 * reaper and storage dashboard, composed from the config.
 */
export class MountfleetStack extends Stack {
  /** The fleet's network: a new VPC by AZ IDs, or the config's existing one. */
  readonly network: IFleetNetwork;
  /** The Express cache, unless the config turns it off. */
  readonly expressCache?: ExpressCache;
  /** The scratch file systems' security group and IAM, unless the config turns scratch off. */
  readonly scratch?: ScratchFileSystems;
  /** The compute fleet (an Auto Scaling group), when the config's scheduler is `asg` (the default). */
  readonly fleet?: ComputeFleet;
  /** The Batch fleet (compute environments and a job queue per zone), when the config's scheduler is `batch`. */
  readonly batchFleet?: BatchComputeFleet;
  /** The orphan reaper. */
  readonly reaper: OrphanReaper;

  constructor(scope: Construct, id: string, props: MountfleetStackProps) {
    const { config } = props;
    super(scope, id, {
      description: `mountfleet ${config.fleetId}: Mountpoint fleet, S3 Express cache, EFS scratch and orphan reaper`,
      ...props,
      env: props.env ?? { account: config.account, region: config.region },
    });
    const { fleetId } = config;

    this.network =
      'vpcId' in config.network
        ? FleetNetwork.fromNetworkAttributes(this, 'Network', config.network)
        : new FleetNetwork(this, 'Network', {
            azIds: config.network.azIds,
            cidr: config.network.cidr,
            isolated: config.network.isolated,
            s3ExpressEndpoint: config.expressCache !== undefined,
          });

    if (config.expressCache) {
      this.expressCache = new ExpressCache(this, 'ExpressCache', {
        azIds: config.expressCache.azIds,
        bucketBaseName: config.expressCache.bucketBaseName,
        expiration: Duration.days(config.expressCache.expirationDays),
      });
    }
    if (config.scratch) {
      this.scratch = new ScratchFileSystems(this, 'Scratch', {
        fleetId,
        network: this.network,
        mountPath: config.scratch.mountPath,
        teardownGrace:
          config.scratch.teardownGraceSeconds === undefined
            ? undefined
            : Duration.seconds(config.scratch.teardownGraceSeconds),
      });
    }

    const f = config.fleet;
    const shared = {
      fleetId,
      network: this.network,
      expressCache: this.expressCache,
      scratch: this.scratch,
      instanceTypes: f.instanceTypes,
      rootVolumeSize: f.rootVolumeGiB === undefined ? undefined : Size.gibibytes(f.rootVolumeGiB),
      mounts: (f.mounts ?? []).map(({ bucketOwner, ...m }, i): FleetMount => ({
        ...m,
        bucket: s3.Bucket.fromBucketAttributes(this, `MountBucket${i}`, {
          bucketName: m.bucket,
          account: bucketOwner,
        }),
      })),
    };
    if (f.scheduler === 'batch') {
      this.batchFleet = new BatchComputeFleet(this, 'BatchFleet', {
        ...shared,
        spotMaxvCpus: f.spotMaxvCpus,
        onDemandMaxvCpus: f.onDemandMaxvCpus,
      });
      if (config.profile === 'sandbox') this.giveSandboxBatchServiceRole(this.batchFleet);
    } else {
      this.fleet = new ComputeFleet(this, 'Fleet', {
        ...shared,
        minCapacity: f.minCapacity,
        maxCapacity: f.maxCapacity,
        desiredCapacity: f.desiredCapacity,
        onDemandBaseCapacity: f.onDemandBaseCapacity,
        onDemandPercentageAboveBaseCapacity: f.onDemandPercentageAboveBaseCapacity,
      });
    }

    const r = config.reaper;
    this.reaper = new OrphanReaper(this, 'Reaper', {
      fleetId,
      network: this.network,
      dryRun: r.dryRun,
      scheduleInterval: r.scheduleMinutes === undefined ? undefined : Duration.minutes(r.scheduleMinutes),
      gracePeriod: r.graceMinutes === undefined ? undefined : Duration.minutes(r.graceMinutes),
      idleWindow: r.idleWindowMinutes === undefined ? undefined : Duration.minutes(r.idleWindowMinutes),
      maxDeletionsPerRun: r.maxDeletionsPerRun,
      deletionAlarmThreshold: r.deletionAlarmThreshold,
      alarms: config.monitoring.alarms,
      alarmTopic: config.monitoring.alarmTopicArn
        ? sns.Topic.fromTopicArn(this, 'AlarmTopic', config.monitoring.alarmTopicArn)
        : undefined,
    });

    if (config.monitoring.dashboard) {
      new StorageDashboard(this, 'Dashboard', {
        fleetId,
        expressCache: this.expressCache,
        reaper: this.reaper,
        fleet: this.fleet,
      });
    }

    if (this.fleet) {
      new CfnOutput(this, 'AutoScalingGroupName', {
        value: this.fleet.autoScalingGroup.autoScalingGroupName,
      });
    }
    this.batchFleet?.zones.forEach((z) => {
      new CfnOutput(this, `JobQueue${z.azId.replace(/[^A-Za-z0-9]/g, '')}`, {
        description: `Batch job queue of ${z.azId}`,
        value: z.jobQueue.ref,
      });
    });
    new CfnOutput(this, 'ReaperFunctionName', { value: this.reaper.function.functionName });
    if (this.scratch) new CfnOutput(this, 'ScratchSecurityGroupId', { value: this.scratch.securityGroupId });
  }

  /**
   * An emulator gap, for the sandbox profile only: moto's CloudFormation requires ServiceRole on a compute
   * environment and looks it up in IAM, where AWS makes it optional and uses Batch's service-linked role — which
   * infrastructure updates require, so BatchComputeFleet has no such prop and the role goes in as a raw property
   * override here. On AWS the stack names no service role (docs/batch.md, "In the emulator").
   */
  private giveSandboxBatchServiceRole(fleet: BatchComputeFleet): void {
    const role = new iam.Role(this, 'BatchServiceRole', {
      assumedBy: new iam.ServicePrincipal('batch.amazonaws.com'),
      description: 'mountfleet sandbox: the Batch service role the emulator requires',
      managedPolicies: [iam.ManagedPolicy.fromAwsManagedPolicyName('service-role/AWSBatchServiceRole')],
    });
    acknowledge(
      role,
      'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSBatchServiceRole]',
      "Sandbox profile only (the local emulator requires a compute environment's ServiceRole): AWS's own Batch service policy; on AWS the stack uses Batch's service-linked role and creates no such role.",
    );
    for (const ce of fleet.zones.flatMap((z) => z.computeEnvironments)) {
      ce.addPropertyOverride('ServiceRole', role.roleArn);
    }
  }
}
