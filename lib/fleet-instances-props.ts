/**
 * The props of a fleet's instances, whoever launches them: {@link ComputeFleetProps} (an Auto Scaling group) and
 * {@link BatchComputeFleetProps} (AWS Batch compute environments) extend it with their launcher's own. It lives below
 * the construct files and lib/private/, like interfaces.ts, so the private helpers that build the instances take it
 * without importing a construct.
 */
import type { Size } from 'aws-cdk-lib';
import type * as ec2 from 'aws-cdk-lib/aws-ec2';
import type * as logs from 'aws-cdk-lib/aws-logs';
import type { FleetMount, IExpressCache, IFleetNetwork, IScratchFileSystems } from './interfaces';

/** Props every fleet's instances take: what they mount, where they run, how they are launched and reached. */
export interface FleetInstancesProps {
  /** The fleet id (tags, IAM conditions, names): 1-32 lower-case letters, digits and hyphens. */
  readonly fleetId: string;
  /** The VPC and subnet per AZ ID. */
  readonly network: IFleetNetwork;
  /**
   * AZ IDs to run instances in (a BatchComputeFleet makes a job queue in each).
   * @default - the network's AZ IDs that have an Express cache bucket (with an expressCache), else all of them
   */
  readonly azIds?: string[];
  /** Instance types to launch (one architecture). @default ['m6i.large', 'm6a.large', 'm5.large', 'm7i.large'] */
  readonly instanceTypes?: string[];
  /**
   * The AMI (a BatchComputeFleet's: ECS-optimized Amazon Linux 2023 or like it, named by every compute environment).
   * @default - latest Amazon Linux 2023 of the instance types' architecture (SSM parameter, no lookup); on a
   * BatchComputeFleet its ECS-optimized variant (arm64, GPU or standard)
   */
  readonly machineImage?: ec2.IMachineImage;
  /** Buckets every instance mounts with Mountpoint (a BatchComputeFleet's jobs bind them read-only). @default [] */
  readonly mounts?: FleetMount[];
  /**
   * The Express cache: instances run in its zones only, with a session on its buckets and their zone's in agent.json.
   * @default - no shared cache
   */
  readonly expressCache?: IExpressCache;
  /**
   * Per-job EFS scratch of the same fleetId: TCP 2049 from the instances, IAM for whoever makes a job's file system.
   * @default - no scratch
   */
  readonly scratch?: IScratchFileSystems;
  /** Root volume size (encrypted gp3; a Batch host's also holds the images). @default Size.gibibytes(30) */
  readonly rootVolumeSize?: Size;
  /**
   * Whether operators reach the instances with SSM Session Manager (`AmazonSSMManagedInstanceCore` on the role);
   * an `isolated` network also needs `ssm`, `ssmmessages` and `ec2messages` interface endpoints for it.
   * @default true
   */
  readonly sessionManager?: boolean;
  /** The Mountpoint release the agent installs. @default MOUNTPOINT_DEFAULT_VERSION */
  readonly mountpointVersion?: string;
  /** The instances' security group. @default - a new one with no ingress and all outbound */
  readonly securityGroup?: ec2.ISecurityGroup;
  /** Retention of the log group that receives the agent's metric lines. @default logs.RetentionDays.ONE_MONTH */
  readonly metricsLogRetention?: logs.RetentionDays;
}
