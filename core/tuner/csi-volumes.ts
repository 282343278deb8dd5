/**
 * Static PersistentVolume + PersistentVolumeClaim pairs for the Mountpoint S3 CSI driver v2, tuned by the
 * agent's own rules (tuneMounts) for the node group's instance type, as plain objects: the construct hands
 * them to `cluster.addManifest`, `mountfleet tune --csi` prints them. One pair per volume, or one per zone
 * ID for a volume with the Express cache, pinned to that zone's nodes.
 */
import {
  cacheUsesExpress,
  cacheUsesLocal,
  checkMountPrefix,
  defaultCachePolicy,
  type CachePolicy,
} from '../contract';
import { planCacheVolumeForType } from './cache-volume';
import { renderCommandLine, type MountpointOptions } from './command-line';
import {
  duplicateProblems,
  kubernetesNameProblem,
  mountOptionKey,
  mountOptionProblems,
  volumeAttributeProblems,
  type CsiProblem,
} from './csi-validation';
import type { InstanceTypeFacts } from './instance-facts';
import { tuneMounts } from './plan-mounts';
import type { MountPlan, MountSettings } from './plan-types';

const CSI_DRIVER = 's3.csi.aws.com';
export const CSI_ADDON_NAME = 'aws-mountpoint-s3-csi-driver';
/** The driver's service account in kube-system, the one its credentials (Pod Identity) attach to. */
export const CSI_SERVICE_ACCOUNT = 's3-csi-driver-sa';
/** Node label with the zone ID (`use1-az4`); `topology.kubernetes.io/zone` holds the zone name instead. */
export const ZONE_ID_LABEL = 'topology.k8s.aws/zone-id';
/** Mountpoint in driver v2.9.0 and later (the first with --memory-target). */
const CSI_DEFAULT_MOUNTPOINT_VERSION = '1.24.0';
/** `capacity.storage` is required by Kubernetes and ignored by the driver. */
const NOMINAL_CAPACITY = '1Gi';

export interface CsiVolumeSpec {
  /** Base name of the PV and PVC (`<name>`, or `<name>-<azId>` per zone). */
  readonly name: string;
  readonly bucket: string;
  readonly prefix?: string;
  readonly access?: 'read-only' | 'read-write';
  readonly dataset?: 'immutable' | 'mutable';
  readonly cache?: CachePolicy;
  /** Extra `volumeAttributes` (checked against the keys the driver reads). */
  readonly volumeAttributes?: Readonly<Record<string, string>>;
  /** Extra mount options in the driver's syntax; one with the key of a tuned option replaces it. */
  readonly mountOptions?: readonly string[];
}

export interface CsiPlanInput {
  readonly instance: InstanceTypeFacts;
  readonly region: string;
  /** Namespace of the claims. */
  readonly namespace: string;
  readonly volumes: readonly CsiVolumeSpec[];
  /** Express directory bucket per zone ID, for volumes whose cache policy includes `express`. */
  readonly expressBuckets?: Readonly<Record<string, string>>;
  /** `cacheEmptyDirSizeLimit` for every locally cached volume; default: its share of the instance store. */
  readonly cacheSizeLimit?: string;
  /** Free root-volume space assumed when the type has no instance store (as `tune --root-free-gib`). */
  readonly rootFreeGiB?: number;
  /** Mountpoint release inside the driver: flags it lacks are left out. */
  readonly mountpointVersion?: string;
  /** Also a cache-less `<name>-direct` claim per Express-cached volume, usable in every zone while one is down. */
  readonly fallbackClaims?: boolean;
}

export interface CsiClaim {
  readonly volume: string;
  /** Undefined for a volume without a per-zone cache, and for a fallback claim (usable in every zone). */
  readonly azId?: string;
  /** The cache-less claim of an Express-cached volume (fallbackClaims). */
  readonly fallback?: boolean;
  readonly persistentVolumeName: string;
  readonly claimName: string;
  readonly mountOptions: readonly string[];
  readonly volumeAttributes: Readonly<Record<string, string>>;
  readonly readOnly: boolean;
}

/** Every problem with the input, each naming the field (`volumes[0].mountOptions[1]`) and the fix. */
export function csiInputProblems(input: CsiPlanInput): CsiProblem[] {
  const problems: CsiProblem[] = [];
  if (input.mountpointVersion !== undefined && !/^\d+\.\d+\.\d+$/.test(input.mountpointVersion))
    problems.push({
      field: 'mountpointVersion',
      problem: `"${input.mountpointVersion}" is not a Mountpoint release`,
      fix: 'for example "1.24.0" (driver v2.9.0 and later)',
    });
  const ns = kubernetesNameProblem(input.namespace, 'label');
  if (ns) problems.push({ field: 'namespace', problem: ns, fix: 'for example "training"' });
  input.volumes.forEach((v, i) => {
    const at = `volumes[${i}]`;
    const name = kubernetesNameProblem(v.name, 'subdomain');
    if (name) problems.push({ field: `${at}.name`, problem: name, fix: 'for example "imagenet"' });
    const prefix = checkMountPrefix(v.prefix ?? '');
    if (prefix)
      problems.push({ field: `${at}.prefix`, problem: prefix, fix: 'for example "datasets/imagenet/"' });
    if (v.access === 'read-write' && !v.prefix)
      problems.push({
        field: `${at}.prefix`,
        problem: 'a read-write volume needs a prefix',
        fix: 'for example "outputs/", so it cannot overwrite the whole bucket',
      });
    problems.push(...volumeAttributeProblems(`${at}.volumeAttributes`, v.volumeAttributes ?? {}));
    problems.push(...mountOptionProblems(`${at}.mountOptions`, v.mountOptions ?? []));
    if (
      cacheUsesExpress(csiCachePolicy(v, input.expressBuckets)) &&
      Object.keys(input.expressBuckets ?? {}).length === 0
    )
      problems.push({
        field: `${at}.cache`,
        problem: `cache "${v.cache}" needs an Express cache bucket per zone`,
        fix: 'give the Express cache, or use cache "local"',
      });
  });
  if (input.cacheSizeLimit !== undefined)
    problems.push(
      ...volumeAttributeProblems('cacheSizeLimit', {
        cache: 'emptyDir',
        cacheEmptyDirSizeLimit: input.cacheSizeLimit,
      }).map((p) => ({ ...p, field: 'cacheSizeLimit' })),
    );
  if (problems.length === 0) {
    const pvs = planCsiClaims(input).map((c) => c.persistentVolumeName);
    problems.push(...duplicateProblems('volumes[].name', pvs));
  }
  return problems;
}

/** The agent's default, `local+express`, where there is an Express cache; `local` where there is none. */
function csiCachePolicy(v: CsiVolumeSpec, expressBuckets?: Readonly<Record<string, string>>): CachePolicy {
  return v.cache ?? defaultCachePolicy(Object.keys(expressBuckets ?? {}).length > 0);
}

/**
 * The claims for `input` (call csiInputProblems first). The tuned flags come from the tuner with one
 * single-process mount per volume (every volume mounted on each node; no Express bucket on the host, since
 * the driver runs one process, so no failover pair: a zone's bucket is added to its claim here), then go
 * into the driver's syntax: no `--`, `key value`, sorted, so every render of a volume is the same option
 * set (MP Pod sharing).
 */
export function planCsiClaims(input: CsiPlanInput): CsiClaim[] {
  const version = input.mountpointVersion ?? CSI_DEFAULT_MOUNTPOINT_VERSION;
  const caches = input.volumes.map((v) => csiCachePolicy(v, input.expressBuckets));
  const plan = tuneMounts(
    {
      instance: input.instance,
      memory: { totalMiB: input.instance.memoryMiB, source: `${input.instance.source} MemoryInfo` },
      cacheVolume: planCacheVolumeForType(input.instance, input.rootFreeGiB),
      region: input.region,
      mountpointVersion: version,
    },
    input.volumes.map((v, i) => csiMountSettings(v, caches[i])),
  );
  return input.volumes.flatMap((v, i) => volumeClaims(input, v, caches[i], plan.mounts[i], version));
}

/**
 * A volume as the tuner reads a mount. The driver decides where the volume is mounted: the path only
 * names the mount in the plan (nothing of it reaches the mount options).
 */
function csiMountSettings(v: CsiVolumeSpec, cache: CachePolicy): MountSettings {
  return {
    bucket: v.bucket,
    prefix: v.prefix ?? '',
    path: `/${v.name}`,
    access: v.access ?? 'read-only',
    dataset: v.dataset ?? 'mutable',
    cache,
  };
}

/** One volume's claims: one, one per zone with an Express bucket, and the fallback claim when asked for. */
function volumeClaims(
  input: CsiPlanInput,
  v: CsiVolumeSpec,
  cache: CachePolicy,
  planned: MountPlan,
  version: string,
): CsiClaim[] {
  const [main] = planned.processes;
  const localMiB = main.options.maxCacheSizeMiB;
  const attributes: Record<string, string> = {
    bucketName: v.bucket,
    ...(cacheUsesLocal(cache) && (input.cacheSizeLimit ?? localMiB)
      ? { cache: 'emptyDir', cacheEmptyDirSizeLimit: input.cacheSizeLimit ?? `${localMiB}Mi` }
      : {}),
    ...v.volumeAttributes,
  };
  const optionsFor = (cacheXzBucket?: string) =>
    driverOptions(
      {
        ...main.options,
        // Set by the driver (cache volume attributes) or meaningless in the Mountpoint Pod.
        cacheDirectory: undefined,
        maxCacheSizeMiB: undefined,
        bind: [],
        otlpEndpoint: undefined,
        ...(cacheXzBucket ? { cacheXzBucket } : {}),
      },
      version,
      v.mountOptions ?? [],
    );
  const claim = (azId?: string, cacheXzBucket?: string, fallback = false): CsiClaim => {
    const name = azId ? `${v.name}-${azId}` : fallback ? `${v.name}-direct` : v.name;
    return {
      volume: v.name,
      ...(azId ? { azId } : {}),
      ...(fallback ? { fallback } : {}),
      persistentVolumeName: name,
      claimName: name,
      mountOptions: optionsFor(cacheXzBucket),
      volumeAttributes: attributes,
      readOnly: main.options.readOnly === true,
    };
  };
  if (!cacheUsesExpress(cache)) return [claim()];
  const zones = Object.entries(input.expressBuckets ?? {})
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([azId, bucket]) => claim(azId, bucket));
  return input.fallbackClaims ? [...zones, claim(undefined, undefined, true)] : zones;
}

/** Tuned flags in the driver's syntax, the user's options replacing tuned ones of the same key; sorted. */
function driverOptions(options: MountpointOptions, version: string, extra: readonly string[]): string[] {
  const tuned = renderCommandLine(options, version)
    .flags.filter((f) => f.flag !== '--read-only') // the driver adds it for ReadOnlyMany
    .map((f) => (f.value === undefined ? f.flag.slice(2) : `${f.flag.slice(2)} ${f.value}`));
  const replaced = new Set(extra.map(mountOptionKey));
  return [...tuned.filter((o) => !replaced.has(mountOptionKey(o))), ...extra.map((o) => o.trim())].sort();
}

/** The PV and PVC of each claim, as plain Kubernetes objects (every volume attribute a string). */
export function renderCsiManifests(
  claims: readonly CsiClaim[],
  namespace: string,
): Record<string, unknown>[] {
  return claims.flatMap((c) => {
    const accessModes = [c.readOnly ? 'ReadOnlyMany' : 'ReadWriteMany'];
    const labels = {
      'app.kubernetes.io/managed-by': 'mountfleet',
      'mountfleet/volume': c.volume,
      ...(c.azId ? { [ZONE_ID_LABEL]: c.azId } : {}),
    };
    const pv = {
      apiVersion: 'v1',
      kind: 'PersistentVolume',
      metadata: { name: c.persistentVolumeName, labels },
      spec: {
        capacity: { storage: NOMINAL_CAPACITY },
        accessModes,
        persistentVolumeReclaimPolicy: 'Retain',
        storageClassName: '',
        claimRef: { namespace, name: c.claimName },
        mountOptions: [...c.mountOptions],
        csi: {
          driver: CSI_DRIVER,
          volumeHandle: c.persistentVolumeName,
          volumeAttributes: { ...c.volumeAttributes },
        },
        ...(c.azId
          ? {
              nodeAffinity: {
                required: {
                  nodeSelectorTerms: [
                    { matchExpressions: [{ key: ZONE_ID_LABEL, operator: 'In', values: [c.azId] }] },
                  ],
                },
              },
            }
          : {}),
      },
    };
    const pvc = {
      apiVersion: 'v1',
      kind: 'PersistentVolumeClaim',
      metadata: { name: c.claimName, namespace, labels },
      spec: {
        accessModes,
        storageClassName: '',
        resources: { requests: { storage: NOMINAL_CAPACITY } },
        volumeName: c.persistentVolumeName,
      },
    };
    return [pv, pvc];
  });
}

/** Manifests as a YAML stream: each document is JSON (YAML 1.2 reads JSON, every string quoted). */
export function toYamlStream(documents: readonly unknown[]): string {
  return `${documents.map((d) => `---\n${JSON.stringify(d, null, 2)}\n`).join('')}`;
}
