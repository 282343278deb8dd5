import { Duration } from 'aws-cdk-lib';
import * as batch from 'aws-cdk-lib/aws-batch';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as ecs from 'aws-cdk-lib/aws-ecs';
import * as iam from 'aws-cdk-lib/aws-iam';
import { Construct } from 'constructs';
import {
  BATCH_FUNCTION_ENV,
  TAG_BATCH_AZ_ID,
  TAG_BATCH_MOUNT_PATHS,
  TAG_BATCH_SCRATCH_SECURITY_GROUP,
  TAG_BATCH_SCRATCH_SUBNET,
  TAG_BATCH_SUBMIT_FUNCTION,
  TAG_FLEET,
  submitFunctionName,
} from '../core/contract';
import { BatchScratchTeardown } from './batch-scratch-teardown';
import { BatchSubmitFunction } from './batch-submit-function';
import type { FleetInstancesProps } from './fleet-instances-props';
import type { IBatchComputeFleet, IScratchFileSystems } from './interfaces';
import { grantBatchRunner, grantBatchSubmitter } from './private/batch-grants';
import { batchHardwareType, validateQueueTags, validateVcpus } from './private/batch-validation';
import { ecsGateCommands, installNftablesCommands, multipartUserData } from './private/batch-user-data';
import {
  checkFleetProps,
  DEFAULT_INSTANCE_TYPES,
  fleetAgentConfigJson,
  fleetLaunchTemplate,
  fleetRole,
  fleetSecurityGroup,
  grantFleetInstances,
} from './private/fleet-instances';
import { agentBundle, fleetUserData } from './private/fleet-user-data';
import { acknowledge, acknowledgeWildcardResource } from './private/nag';
import { invalidProp } from './private/validation';
import { anyFileSystemArn, taggedWithFleet } from './private/scratch-iam';

/** Props of {@link BatchComputeFleet}: the instances' ({@link FleetInstancesProps}) and Batch's. */
export interface BatchComputeFleetProps extends FleetInstancesProps {
  /** Most vCPUs of Spot instances per zone (0: no Spot compute environment). @default 256 */
  readonly spotMaxvCpus?: number;
  /** Most vCPUs of On-Demand instances per zone; their environment follows Spot in the queue. @default 0 */
  readonly onDemandMaxvCpus?: number;
  /** vCPUs each zone's first compute environment keeps running when idle. @default 0 */
  readonly minvCpus?: number;
  /**
   * How long jobs on an instance that an infrastructure update replaces (a new launch-template version, AMI or
   * instance types) may run before Batch stops them (1 minute to 5 days). @default Duration.minutes(30)
   */
  readonly updateTimeout?: Duration;
  /** Whether an infrastructure update terminates running jobs at once instead. @default false */
  readonly terminateJobsOnUpdate?: boolean;
  /**
   * The role the fleet's jobs run with (its trust must allow `ecs-tasks.amazonaws.com`); `grantSubmit` may pass
   * this role only. @default - a new role that may mount the fleet's scratch file systems (IAM-authorized EFS)
   */
  readonly jobRole?: iam.IRole;
  /** Whether the EventBridge rule and Lambda that delete a job's scratch when it ends are created. @default true */
  readonly teardown?: boolean;
}

/** One zone of the fleet: its compute environments (Spot first) and its queue. */
export interface BatchFleetZone {
  /** The AZ ID. */
  readonly azId: string;
  /** The compute environments, in the queue's order (Spot, then On-Demand). */
  readonly computeEnvironments: batch.CfnComputeEnvironment[];
  /** The zone's job queue, tagged with the zone, its scratch subnet and security group and the mount paths. */
  readonly jobQueue: batch.CfnJobQueue;
}

/**
 * The fleet's instances as AWS Batch managed EC2 (ECS) compute environments: one Spot (and optionally one
 * On-Demand) compute environment and one job queue per AZ ID — a job runs in the zone of its queue, where a
 * One Zone scratch file system can serve it. The instances are ComputeFleet's (same role, grants, agent.json and
 * launch template), with what Batch needs: MIME multipart user data; IMDSv2 hop limit 1 and nftables rules that
 * keep job containers (host networking) from IMDS; a start gate that holds the ECS agent until those rules are
 * loaded and the mounts are live, and otherwise shuts the instance down (terminated, replaced by Batch); the
 * ECS-optimized AMI named explicitly; and an explicit launch-template version, so that a changed template or AMI
 * reaches the compute environments as an infrastructure update on the next deploy. Batch manages the compute
 * environments with its service-linked role, which infrastructure updates require.
 */
export class BatchComputeFleet
  extends Construct
  implements IBatchComputeFleet, ec2.IConnectable, iam.IGrantable
{
  /** The fleet id its instances, queues, job definitions and scratch carry. */
  readonly fleetId: string;
  /** The AZ IDs with a queue. */
  readonly azIds: string[];
  /** The instances' role: mounts, Express cache sessions, metrics and the ECS agent; no scratch create or delete. */
  readonly role: iam.Role;
  /** The instances' role, for `grant*` methods of other constructs. */
  readonly grantPrincipal: iam.IPrincipal;
  /** The instance profile the compute environments launch with. */
  readonly instanceProfile: iam.InstanceProfile;
  /** The instances' security group. */
  readonly securityGroup: ec2.ISecurityGroup;
  /** Network access to and from the instances. */
  readonly connections: ec2.Connections;
  /** The launch template: IMDSv2 (hop limit 1), shutdown terminates, encrypted gp3 root, MIME multipart user data. */
  readonly launchTemplate: ec2.LaunchTemplate;
  /** agent.json as a deploy-time JSON string. */
  readonly agentConfigJson: string;
  /** The role the fleet's jobs run with. */
  readonly jobRole: iam.IRole;
  /** The Mountpoint paths every instance mounts (what a job definition of the fleet binds read-only). */
  readonly mountPaths: string[];
  /** The zones, in the order of azIds. */
  readonly zones: BatchFleetZone[];
  /** The job-queue ARNs, in the order of azIds. */
  readonly jobQueueArns: string[];
  /** The function that checks and submits the fleet's jobs: the only way a submitter gets a job onto the hosts. */
  readonly submitFunction: BatchSubmitFunction;
  /** The teardown of Batch runs' scratch (when there is scratch and `teardown` is not false). */
  readonly teardown?: BatchScratchTeardown;
  private readonly scratch?: IScratchFileSystems;

  constructor(scope: Construct, id: string, props: BatchComputeFleetProps) {
    super(scope, id);
    const checked = checkFleetProps(this, props);
    this.fleetId = props.fleetId;
    this.azIds = checked.azIds;
    this.scratch = props.scratch;
    this.mountPaths = checked.mounts.map((m) => m.path);
    const vcpus = validateVcpus(this, {
      spot: props.spotMaxvCpus ?? 256,
      onDemand: props.onDemandMaxvCpus ?? 0,
      min: props.minvCpus ?? 0,
    });
    const updateMinutes = (props.updateTimeout ?? Duration.minutes(30)).toMinutes();
    if (!Number.isInteger(updateMinutes) || updateMinutes < 1 || updateMinutes > 7200) {
      invalidProp(
        this,
        'updateTimeout',
        `${updateMinutes} minutes is not a whole number of minutes from 1 to 7200`,
        'for example Duration.minutes(30)',
      );
    }

    this.securityGroup = fleetSecurityGroup(this, props);
    this.connections = new ec2.Connections({ securityGroups: [this.securityGroup] });
    this.role = fleetRole(this, props);
    this.grantPrincipal = this.role;
    this.role.addManagedPolicy(
      iam.ManagedPolicy.fromAwsManagedPolicyName('service-role/AmazonEC2ContainerServiceforEC2Role'),
    );
    acknowledge(
      this.role,
      'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AmazonEC2ContainerServiceforEC2Role]',
      "The ECS agent on Batch's instances registers them and fetches work with this AWS-maintained policy (AWS Batch User Guide, 'Amazon ECS instance role'); a copy would miss the calls AWS adds to the agent.",
    );
    this.instanceProfile = new iam.InstanceProfile(this, 'InstanceProfile', { role: this.role });
    grantFleetInstances(this, this.role, props, {
      mounts: checked.mounts,
      terminationHook: false,
      batchHost: true,
    });
    this.jobRole = props.jobRole ?? this.newJobRole(props);

    this.agentConfigJson = fleetAgentConfigJson(this, props, { ...checked, batchHost: true });
    const userData = fleetUserData(this, {
      bundle: agentBundle(this, this.role),
      agentConfigJson: this.agentConfigJson,
      // efs-utils on the host: ECS mounts a job's EFS scratch volume with it (TLS, IAM authorization).
      scratch: props.scratch !== undefined,
      firstCommands: ecsGateCommands(this, this.mountPaths),
      installCommands: installNftablesCommands(),
    });
    const instanceTypes = props.instanceTypes ?? DEFAULT_INSTANCE_TYPES;
    const hardwareType = batchHardwareType(checked.architecture, instanceTypes);
    const machineImage = props.machineImage ?? ecs.EcsOptimizedImage.amazonLinux2023(hardwareType);
    this.launchTemplate = fleetLaunchTemplate(
      this,
      { ...props, machineImage },
      {
        architecture: checked.architecture,
        userData: multipartUserData(userData),
        identity: { instanceProfile: this.instanceProfile },
        securityGroup: this.securityGroup,
        // Jobs run with host networking, where the hop limit does not reach (the gate's nftables rules do); 1
        // keeps bridge-mode containers off IMDS too.
        hopLimit: 1,
        // The gate's give-up (poweroff) ends the instance; Batch's Auto Scaling group launches another.
        shutdownBehavior: ec2.InstanceInitiatedShutdownBehavior.TERMINATE,
      },
    );
    // Batch changes the AMI of a running compute environment only when the environment names a new one: an AMI
    // that comes from the launch template is kept across updates (LaunchTemplateSpecification).
    const ec2Configuration = [
      {
        imageType:
          hardwareType === ecs.AmiHardwareType.GPU
            ? batch.EcsMachineImageType.ECS_AL2023_NVIDIA
            : batch.EcsMachineImageType.ECS_AL2023,
        imageIdOverride: machineImage.getImage(this).imageId,
      },
    ];

    const mountPathsTag = this.mountPaths.join(':');
    validateQueueTags(this, mountPathsTag);
    this.zones = this.azIds.map((azId) =>
      this.addZone(azId, props, {
        instanceTypes,
        vcpus,
        updateMinutes,
        mountPathsTag,
        ec2Configuration,
      }),
    );
    // Ref is the queue's ARN (AWS::Batch::JobQueue), and the emulator answers it where it has no GetAtt.
    this.jobQueueArns = this.zones.map((z) => z.jobQueue.ref);

    this.submitFunction = new BatchSubmitFunction(this, 'Submit', { fleet: this });
    if (props.scratch && (props.teardown ?? true)) {
      this.teardown = new BatchScratchTeardown(this, 'Teardown', { fleet: this });
    }
  }

  /** The zone's job queue. Throws naming the zone when the fleet has no queue there. */
  jobQueueFor(azId: string): batch.CfnJobQueue {
    const zone = this.zones.find((z) => z.azId === azId);
    if (!zone) {
      invalidProp(
        this,
        `jobQueueFor(${azId})`,
        `no job queue in ${azId}`,
        `the fleet has queues in ${this.azIds.join(', ')}`,
      );
    }
    return zone.jobQueue;
  }

  /**
   * Grants what `mountfleet batch submit` and `batch status` need, and nothing that reaches the hosts: invoke the
   * fleet's submit function (which checks every job definition against the fleet before anything is created) and
   * read job state (Batch, the runs' file systems and their burst credit). For a plain `aws batch submit-job` of a
   * job definition the stack defines, see FleetJobDefinition.grantSubmitJob.
   */
  grantSubmit(grantee: iam.IGrantable): iam.Grant {
    return grantBatchSubmitter(grantee, this.submitFunction.function);
  }

  /**
   * Grants what the fleet's own functions (submit, teardown) need to make, submit and end runs: SubmitJob of any job
   * definition to the fleet's queues (the function checks each first), RegisterJobDefinition/DeregisterJobDefinition
   * of the per-run ones only (never privileged), PassRole of the job role only, the Batch reads, and with scratch the
   * fleet-tagged EFS create, tag, mount-target and delete, with the scratch key. Never give it to a submitter.
   */
  grantRunJobs(grantee: iam.IGrantable): iam.Grant {
    return grantBatchRunner(this, grantee, {
      fleetId: this.fleetId,
      queueArns: this.jobQueueArns,
      jobRole: this.jobRole,
      scratch: this.scratch,
    });
  }

  /** The environment of the fleet's Batch functions: the fleet, its queues and paths, the job role, the scratch key. */
  functionEnvironment(): Record<string, string> {
    const kmsKeyId = this.scratch?.agentSettings().kmsKeyId;
    return {
      [BATCH_FUNCTION_ENV.fleetId]: this.fleetId,
      [BATCH_FUNCTION_ENV.queueArns]: this.jobQueueArns.join(','),
      [BATCH_FUNCTION_ENV.mountPaths]: this.mountPaths.join(':'),
      [BATCH_FUNCTION_ENV.jobRoleArn]: this.jobRole.roleArn,
      ...(kmsKeyId ? { [BATCH_FUNCTION_ENV.kmsKeyId]: kmsKeyId } : {}),
    };
  }

  private newJobRole(props: BatchComputeFleetProps): iam.Role {
    const role = new iam.Role(this, 'JobRole', {
      assumedBy: new iam.ServicePrincipal('ecs-tasks.amazonaws.com'),
      description: `mountfleet fleet ${props.fleetId} Batch jobs`,
    });
    if (props.scratch) {
      // An EFS volume with IAM authorization mounts as the job's role: this fleet's file systems only.
      const fileSystems = anyFileSystemArn(this);
      role.addToPolicy(
        new iam.PolicyStatement({
          sid: 'MountOwnScratch',
          actions: ['elasticfilesystem:ClientMount', 'elasticfilesystem:ClientWrite'],
          resources: [fileSystems],
          conditions: taggedWithFleet(props.fleetId),
        }),
      );
      acknowledgeWildcardResource(
        role,
        fileSystems,
        'Run file systems are created per job at run time (unknown ids); the statement requires the fleet tag on the file system.',
      );
    }
    return role;
  }

  private addZone(
    azId: string,
    props: BatchComputeFleetProps,
    o: {
      instanceTypes: string[];
      vcpus: { spot: number; onDemand: number; min: number };
      updateMinutes: number;
      mountPathsTag: string;
      ec2Configuration: batch.CfnComputeEnvironment.Ec2ConfigurationObjectProperty[];
    },
  ): BatchFleetZone {
    const zone = new Construct(this, `Zone-${azId}`);
    const subnet = props.network.subnets[azId];
    const environment = (id: string, type: 'SPOT' | 'EC2', maxvCpus: number, minvCpus: number) =>
      new batch.CfnComputeEnvironment(zone, id, {
        type: 'MANAGED',
        state: 'ENABLED',
        // No serviceRole: Batch then uses its service-linked role, which infrastructure updates require.
        // Changes go through Batch's infrastructure update (instances replaced, jobs given updateTimeout),
        // never a new compute environment that would drop the queue's jobs.
        replaceComputeEnvironment: false,
        updatePolicy: {
          jobExecutionTimeoutMinutes: o.updateMinutes,
          terminateJobsOnUpdate: props.terminateJobsOnUpdate ?? false,
        },
        computeResources: {
          type,
          allocationStrategy: type === 'SPOT' ? 'SPOT_PRICE_CAPACITY_OPTIMIZED' : 'BEST_FIT_PROGRESSIVE',
          minvCpus,
          maxvCpus,
          instanceTypes: o.instanceTypes,
          subnets: [subnet.subnetId],
          securityGroupIds: [this.securityGroup.securityGroupId],
          instanceRole: this.instanceProfile.instanceProfileArn,
          ec2Configuration: o.ec2Configuration,
          // An explicit version: Batch resolves $Default/$Latest once, at creation, and never again by itself.
          launchTemplate: {
            launchTemplateId: this.launchTemplate.launchTemplateId,
            version: this.launchTemplate.latestVersionNumber,
          },
          tags: { [TAG_FLEET]: this.fleetId, [TAG_BATCH_AZ_ID]: azId },
        },
        tags: { [TAG_FLEET]: this.fleetId },
      });
    const environments: batch.CfnComputeEnvironment[] = [];
    if (o.vcpus.spot > 0) environments.push(environment('Spot', 'SPOT', o.vcpus.spot, o.vcpus.min));
    if (o.vcpus.onDemand > 0) {
      environments.push(
        environment('OnDemand', 'EC2', o.vcpus.onDemand, environments.length === 0 ? o.vcpus.min : 0),
      );
    }
    const tags: Record<string, string> = {
      [TAG_FLEET]: this.fleetId,
      [TAG_BATCH_AZ_ID]: azId,
      [TAG_BATCH_MOUNT_PATHS]: o.mountPathsTag,
      // A literal, not a reference: the function's policy names this queue.
      [TAG_BATCH_SUBMIT_FUNCTION]: submitFunctionName(this.fleetId),
    };
    if (props.scratch) {
      tags[TAG_BATCH_SCRATCH_SUBNET] = props.scratch.subnets[azId].subnetId;
      tags[TAG_BATCH_SCRATCH_SECURITY_GROUP] = props.scratch.securityGroup.securityGroupId;
    }
    const jobQueue = new batch.CfnJobQueue(zone, 'Queue', {
      priority: 1,
      state: 'ENABLED',
      computeEnvironmentOrder: environments.map((ce, i) => ({ order: i + 1, computeEnvironment: ce.ref })),
      tags,
    });
    return { azId, computeEnvironments: environments, jobQueue };
  }
}
