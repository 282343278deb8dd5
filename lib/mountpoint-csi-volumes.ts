import { Stack, Token } from 'aws-cdk-lib';
import * as eks from 'aws-cdk-lib/aws-eks-v2';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as s3 from 'aws-cdk-lib/aws-s3';
import { Construct } from 'constructs';
import { type CachePolicy } from '../core/contract';
import {
  CSI_ADDON_NAME,
  CSI_SERVICE_ACCOUNT,
  csiInputProblems,
  planCsiClaims,
  renderCsiManifests,
  type CsiClaim,
  type CsiPlanInput,
  closestInstanceTypes,
  FALLBACK_INSTANCE_TYPES,
} from '../core/tuner';
import type { IExpressCache } from './interfaces';
import { grantBucketMount } from './private/mount-grants';
import { invalidProp, validateMountPrefix } from './private/validation';

/** One bucket prefix, mounted by the Mountpoint S3 CSI driver through a static PersistentVolume. */
export interface MountpointCsiVolume {
  /** Name of the PersistentVolume and claim; a per-zone claim is `<name>-<azId>` (see claimNameFor). */
  readonly name: string;
  /** The bucket to mount (a directory bucket `…--x-s3` is granted by session). */
  readonly bucket: s3.IBucket;
  /** Key prefix to mount, ending in `/`, without `*` or `?`. @default '' (the whole bucket; read-only volumes only) */
  readonly prefix?: string;
  /** `read-only` (ReadOnlyMany) or `read-write` (ReadWriteMany; needs a prefix). @default 'read-only' */
  readonly access?: 'read-only' | 'read-write';
  /** `immutable` datasets get an indefinite metadata TTL (no HeadObject per open). @default 'mutable' */
  readonly dataset?: 'immutable' | 'mutable';
  /** How the volume caches. @default 'local+express' with an expressCache, else 'local' */
  readonly cache?: CachePolicy;
  /** Extra `volumeAttributes` (only keys the driver reads, e.g. `mountpointEnv.HTTPS_PROXY`). @default - none */
  readonly volumeAttributes?: Record<string, string>;
  /** Extra mount options in the driver's syntax (`uid 1000`); one with a tuned option's key replaces it. @default - none */
  readonly mountOptions?: string[];
}

/** Props of {@link MountpointCsiVolumes}. */
export interface MountpointCsiVolumesProps {
  /** The EKS cluster (it needs a kubectl provider for the manifests, imported or its own). */
  readonly cluster: eks.ICluster;
  /** Instance type of the nodes that run the workloads: Mountpoint is tuned for it, as the agent would. */
  readonly instanceType: string;
  /** The volumes, each mounted once per node by its own Mountpoint Pod. */
  readonly volumes: MountpointCsiVolume[];
  /** The Express cache: volumes that use it get one PV and claim per zone ID, pinned to that zone's nodes. @default - none */
  readonly expressCache?: IExpressCache;
  /** Namespace of the claims (the workloads' namespace). @default 'default' */
  readonly namespace?: string;
  /** `cacheEmptyDirSizeLimit` of each locally cached volume, a quantity such as `100Gi`. @default - its share of the type's instance store, else of 20 GiB of root volume */
  readonly cacheSizeLimit?: string;
  /** Add-on version, e.g. `v2.9.2-eksbuild.1`; v2.9.0 or later runs Mountpoint 1.24 (--memory-target). @default - the cluster's default version */
  readonly addonVersion?: string;
  /** The Mountpoint release inside the driver; flags newer than it are left out. @default '1.24.0' (driver v2.9.0+) */
  readonly mountpointVersion?: string;
  /** Also render a cache-less `<name>-direct` claim per Express-cached volume, a fallback while a zone is down. @default false */
  readonly fallbackClaims?: boolean;
  /** Install the `eks-pod-identity-agent` add-on the driver's Pod Identity needs; false when the cluster has it. @default true */
  readonly installPodIdentityAgent?: boolean;
}

/**
 * The Mountpoint S3 CSI driver v2 add-on with an EKS Pod Identity role scoped to the volumes' prefixes and
 * the Express cache, and a static PersistentVolume + PersistentVolumeClaim per volume (per zone ID for an
 * Express-cached volume), tuned for the node instance type by the agent's own rules.
 */
export class MountpointCsiVolumes extends Construct {
  /** The role the driver's Mountpoint Pods use (Pod Identity on kube-system/s3-csi-driver-sa). */
  readonly role: iam.Role;
  /** The `aws-mountpoint-s3-csi-driver` add-on. */
  readonly addon: eks.CfnAddon;
  /** The rendered PVs and claims. */
  readonly manifest: eks.KubernetesManifest;
  private readonly claims: readonly CsiClaim[];

  constructor(scope: Construct, id: string, props: MountpointCsiVolumesProps) {
    super(scope, id);
    const instance = FALLBACK_INSTANCE_TYPES.get(props.instanceType);
    if (!instance) {
      invalidProp(
        this,
        'instanceType',
        `unknown instance type "${props.instanceType}"`,
        `use one of the built-in table, e.g. ${closestInstanceTypes(props.instanceType).join(', ') || 'm7i.4xlarge'}`,
      );
    }
    if (props.volumes.length === 0) invalidProp(this, 'volumes', 'is empty', 'give at least one volume');
    props.volumes.forEach((v, i) => validateMountPrefix(this, `volumes[${i}].prefix`, v.prefix ?? ''));
    const namespace = props.namespace ?? 'default';
    const input: CsiPlanInput = {
      instance,
      region: Stack.of(this).region,
      namespace,
      volumes: props.volumes.map((v) => ({
        name: v.name,
        bucket: v.bucket.bucketName,
        ...(v.prefix ? { prefix: v.prefix } : {}),
        ...(v.access ? { access: v.access } : {}),
        ...(v.dataset ? { dataset: v.dataset } : {}),
        ...(v.cache ? { cache: v.cache } : {}),
        ...(v.volumeAttributes ? { volumeAttributes: v.volumeAttributes } : {}),
        ...(v.mountOptions ? { mountOptions: v.mountOptions } : {}),
      })),
      ...(props.expressCache ? { expressBuckets: props.expressCache.bucketNames } : {}),
      ...(props.cacheSizeLimit !== undefined ? { cacheSizeLimit: props.cacheSizeLimit } : {}),
      ...(props.mountpointVersion ? { mountpointVersion: props.mountpointVersion } : {}),
      ...(props.fallbackClaims ? { fallbackClaims: true } : {}),
    };
    checkAddonVersion(this, props);
    const [problem] = csiInputProblems(input);
    if (problem) invalidProp(this, problem.field, problem.problem, problem.fix);
    this.claims = planCsiClaims(input);

    this.role = this.driverRole(props.cluster);
    props.volumes.forEach((v) => {
      grantBucketMount(this, this.role, {
        bucket: v.bucket,
        prefix: v.prefix ?? '',
        access: v.access ?? 'read-only',
        dataset: v.dataset ?? 'mutable',
        description: `CSI volume ${v.name}`,
      });
    });
    if (this.claims.some((c) => c.azId)) props.expressCache!.grantMountpointCache(this.role);

    this.addon = new eks.CfnAddon(this, 'Addon', {
      addonName: CSI_ADDON_NAME,
      clusterName: props.cluster.clusterName,
      ...(props.addonVersion ? { addonVersion: props.addonVersion } : {}),
      podIdentityAssociations: [{ serviceAccount: CSI_SERVICE_ACCOUNT, roleArn: this.role.roleArn }],
    });
    const agent = this.podIdentityAgent(props);
    if (agent) this.addon.node.addDependency(agent);

    this.manifest = props.cluster.addManifest(
      `${this.node.addr}-volumes`,
      ...renderCsiManifests(this.claims, namespace),
    );
    // The PVs name the driver: apply them once it is installed, so no workload starts against a missing driver.
    this.manifest.node.addDependency(this.addon);
  }

  /**
   * The claim a workload in `azId` mounts for `volume`: the zone's Express-cached claim, or the volume's only
   * claim when it has no per-zone cache. Run one workload (Job, Deployment) per zone with `nodeSelector`
   * `topology.k8s.aws/zone-id: <azId>` and this claim.
   */
  claimNameFor(volume: string, azId: string): string {
    const mine = this.claims.filter((c) => c.volume === volume && !c.fallback);
    if (mine.length === 0)
      invalidProp(
        this,
        `claimNameFor(${volume})`,
        'no such volume',
        `the volumes are ${this.volumeNames().join(', ')}`,
      );
    const claim = mine.find((c) => c.azId === undefined || c.azId === azId);
    if (!claim)
      invalidProp(
        this,
        `claimNameFor(${volume}, ${azId})`,
        `no claim in ${azId}`,
        `the Express cache has ${mine.map((c) => c.azId).join(', ')}`,
      );
    return claim.claimName;
  }

  /** The cache-less claim of an Express-cached `volume` (needs fallbackClaims), for any zone whose cache is down. */
  fallbackClaimNameFor(volume: string): string {
    const claim = this.claims.find((c) => c.volume === volume && c.fallback);
    if (!claim)
      invalidProp(
        this,
        `fallbackClaimNameFor(${volume})`,
        'no fallback claim',
        'set fallbackClaims: true; volumes without the Express cache have one claim for every zone',
      );
    return claim.claimName;
  }

  /** The claim per zone ID for `volume` (`{}` for a volume without a per-zone cache: use claimNameFor). */
  claimNamesByZone(volume: string): Record<string, string> {
    return Object.fromEntries(
      this.claims.filter((c) => c.volume === volume && c.azId).map((c) => [c.azId!, c.claimName]),
    );
  }

  private volumeNames(): string[] {
    return [...new Set(this.claims.map((c) => c.volume))];
  }

  /**
   * Trusted by EKS Pod Identity only for the driver's service account in this cluster: the conditions are
   * the session tags Pod Identity sets (EKS User Guide, "Create IAM role with trust policy required by EKS
   * Pod Identity"), so no other association in the account can assume it.
   */
  private driverRole(cluster: eks.ICluster): iam.Role {
    return new iam.Role(this, 'DriverRole', {
      description: 'Mountpoint S3 CSI driver (kube-system/s3-csi-driver-sa) through EKS Pod Identity',
      assumedBy: new iam.PrincipalWithConditions(
        new iam.ServicePrincipal('pods.eks.amazonaws.com').withSessionTags(),
        {
          StringEquals: {
            'aws:RequestTag/eks-cluster-name': cluster.clusterName,
            'aws:RequestTag/kubernetes-namespace': 'kube-system',
            'aws:RequestTag/kubernetes-service-account': CSI_SERVICE_ACCOUNT,
          },
        },
      ),
    });
  }

  /** The cluster's own agent add-on (aws-eks-v2 Cluster), else one of ours unless the cluster has it. */
  private podIdentityAgent(props: MountpointCsiVolumesProps): Construct | undefined {
    if (props.installPodIdentityAgent === false) return undefined;
    if (props.cluster.eksPodIdentityAgent) return props.cluster.eksPodIdentityAgent;
    return new eks.Addon(this, 'PodIdentityAgent', {
      cluster: props.cluster,
      addonName: 'eks-pod-identity-agent',
    });
  }
}

/**
 * The options are rendered for one Mountpoint release: a v1 driver reads caches differently, and a v2 driver
 * before v2.9.0 runs a Mountpoint without --memory-target, which would refuse the flag and fail every mount.
 */
function checkAddonVersion(scope: Construct, props: MountpointCsiVolumesProps): void {
  const version = props.addonVersion;
  if (version === undefined || Token.isUnresolved(version)) return;
  const m = /^v(\d+)\.(\d+)\.\d+(-eksbuild\.\d+)?$/.exec(version);
  if (!m)
    invalidProp(
      scope,
      'addonVersion',
      `"${version}" is not an add-on version`,
      'for example "v2.9.2-eksbuild.1"',
    );
  const [major, minor] = [Number(m[1]), Number(m[2])];
  if (major !== 2)
    invalidProp(
      scope,
      'addonVersion',
      `${version} is not a v2 driver`,
      'use v2.9.0 or later (Mountpoint Pods, per-PV caches)',
    );
  if (minor < 9 && props.mountpointVersion === undefined)
    invalidProp(
      scope,
      'addonVersion',
      `${version} runs a Mountpoint older than 1.24.0, which has no --memory-target`,
      'set mountpointVersion to the release it runs (e.g. "1.23.0" for v2.8) or use v2.9.0 or later',
    );
}
