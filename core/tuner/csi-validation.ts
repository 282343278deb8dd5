/**
 * What the Mountpoint S3 CSI driver v2 accepts in a static PersistentVolume, checked before anything is
 * rendered: `volumeAttributes` is a string map no Kubernetes schema can check, and the driver fails the
 * mount (on the node, after scheduling) for an unknown key, a bad cache setting or a refused option.
 * Shared by the construct (synth-time errors) and `mountfleet tune --csi` (usage errors).
 */

/** A problem with one field: the field, what is wrong, and how to fix it. */
export interface CsiProblem {
  readonly field: string;
  readonly problem: string;
  readonly fix: string;
}

/** Keys the driver reads from `volumeAttributes` that a user may set (bucketName comes from the bucket). */
const CSI_USER_VOLUME_ATTRIBUTES = [
  'authenticationSource',
  'stsRegion',
  'cache',
  'cacheEmptyDirSizeLimit',
  'cacheEmptyDirMedium',
  'cacheEphemeralStorageClassName',
  'cacheEphemeralStorageResourceRequest',
  'mountpointContainerResourcesRequestsCpu',
  'mountpointContainerResourcesRequestsMemory',
  'mountpointContainerResourcesLimitsCpu',
  'mountpointContainerResourcesLimitsMemory',
  'mountpointPodServiceAccountName',
  'mountpointEnv.HTTPS_PROXY',
  'mountpointEnv.NO_PROXY',
] as const;

const QUANTITY_ATTRIBUTES = new Set([
  'cacheEmptyDirSizeLimit',
  'cacheEphemeralStorageResourceRequest',
  'mountpointContainerResourcesRequestsCpu',
  'mountpointContainerResourcesRequestsMemory',
  'mountpointContainerResourcesLimitsCpu',
  'mountpointContainerResourcesLimitsMemory',
]);

const ENUM_ATTRIBUTES: Readonly<Record<string, readonly string[]>> = {
  cache: ['emptyDir', 'ephemeral'],
  cacheEmptyDirMedium: ['', 'Memory'],
  authenticationSource: ['', 'driver', 'pod'],
};

/**
 * Mount options the construct sets itself or the driver refuses or drops; the reason says what to do
 * instead. Options the tuning sets (region, prefix, …) may be given: the user's value replaces the tuned one.
 */
const REFUSED_OPTIONS: Readonly<Record<string, string>> = {
  'ca-bundle':
    'the driver refuses it; put the CA into the Mountpoint Pod image or use mountpointEnv.HTTPS_PROXY',
  o: 'the driver refuses -o; give each Mountpoint flag as its own option',
  cache: 'a cache directory is the cache volume attribute on the CSI driver: set volumeAttributes.cache',
  'max-cache-size':
    'the driver derives it from cacheEmptyDirSizeLimit (95%); set that attribute instead (cacheSizeLimit)',
  foreground: 'the driver drops it: it runs Mountpoint itself',
  f: 'the driver drops it: it runs Mountpoint itself',
  help: 'the driver drops it',
  h: 'the driver drops it',
  version: 'the driver drops it',
  v: 'the driver drops it',
  'user-agent-prefix': 'the driver overwrites it',
};

/**
 * Kubernetes resource quantity (apimachinery resource.Quantity): a non-negative decimal number with an
 * optional binary (Ki…Ei), decimal SI (n u m k M G T P E) or exponent suffix, e.g. 10Gi, 500M, 1.5, 2e3.
 */
const QUANTITY = /^(?:\d+(?:\.\d*)?|\.\d+)(?:[KMGTPE]i|[numkMGTPE]|[eE][+-]?\d+)?$/;

/** True for a well-formed Kubernetes quantity such as `10Gi` or `500m`. */
export function isKubernetesQuantity(text: string): boolean {
  return QUANTITY.test(text);
}

/** DNS-1123 subdomain, the rule for PersistentVolume and PersistentVolumeClaim names. */
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
/** DNS-1123 label, the rule for namespace names. */
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

export function kubernetesNameProblem(name: string, what: 'subdomain' | 'label'): string | undefined {
  const max = what === 'label' ? 63 : 253;
  if (name.length > max || !(what === 'label' ? DNS_LABEL : DNS_SUBDOMAIN).test(name))
    return `"${name}" is not a DNS-1123 ${what}: lowercase letters, digits and "-", starting and ending alphanumeric, at most ${max} characters`;
  return undefined;
}

/** Problems with the extra volume attributes of one volume (`field` prefixes each field name). */
export function volumeAttributeProblems(
  field: string,
  attributes: Readonly<Record<string, string>>,
): CsiProblem[] {
  const problems: CsiProblem[] = [];
  const at = (key: string) => `${field}.${key}`;
  for (const [key, value] of Object.entries(attributes)) {
    if (!(CSI_USER_VOLUME_ATTRIBUTES as readonly string[]).includes(key)) {
      problems.push({
        field: at(key),
        problem: key === 'bucketName' ? 'is set from the bucket' : 'is not a key the CSI driver reads',
        fix:
          key === 'bucketName'
            ? 'set the volume bucket instead'
            : `use one of ${CSI_USER_VOLUME_ATTRIBUTES.join(', ')} (an unknown key fails the mount)`,
      });
      continue;
    }
    if (typeof value !== 'string') {
      problems.push({
        field: at(key),
        problem: 'must be a string',
        fix: `write it quoted, e.g. "${String(value)}"`,
      });
      continue;
    }
    const allowed = ENUM_ATTRIBUTES[key];
    if (allowed && !allowed.includes(value))
      problems.push({
        field: at(key),
        problem: `"${value}" is not accepted by the driver`,
        fix: `use ${allowed.map((a) => `"${a}"`).join(' or ')}`,
      });
    if (QUANTITY_ATTRIBUTES.has(key) && !isKubernetesQuantity(value))
      problems.push({
        field: at(key),
        problem: `"${value}" is not a Kubernetes quantity`,
        fix: 'write a number with an optional unit, e.g. "100Gi", "512Mi" or "500m"',
      });
  }
  const ephemeralKeys = ['cacheEphemeralStorageClassName', 'cacheEphemeralStorageResourceRequest'];
  if (attributes.cache === 'ephemeral') {
    for (const key of ephemeralKeys.filter((k) => !attributes[k]))
      problems.push({
        field: at(key),
        problem: 'is required with cache "ephemeral"',
        fix: `set both ${ephemeralKeys.join(' and ')}, e.g. "gp3" and "100Gi"`,
      });
  } else {
    for (const key of ephemeralKeys.filter((k) => k in attributes))
      problems.push({
        field: at(key),
        problem: 'applies only with cache "ephemeral"',
        fix: 'set cache "ephemeral" or remove it',
      });
  }
  for (const key of ['cacheEmptyDirSizeLimit', 'cacheEmptyDirMedium'].filter((k) => k in attributes)) {
    if (attributes.cache !== 'emptyDir')
      problems.push({
        field: at(key),
        problem: 'applies only with cache "emptyDir"',
        fix: 'set cache "emptyDir" or remove it',
      });
  }
  return problems;
}

/** The key of a driver mount option: `metadata-ttl 60` and `metadata-ttl=60` both have `metadata-ttl`. */
export function mountOptionKey(option: string): string {
  return option.trim().split(/[\s=]/, 1)[0];
}

/** Problems with the extra mount options of one volume. */
export function mountOptionProblems(field: string, options: readonly string[]): CsiProblem[] {
  const problems: CsiProblem[] = [];
  options.forEach((option, i) => {
    const at = `${field}[${i}]`;
    const key = mountOptionKey(option);
    if (!key) {
      problems.push({ field: at, problem: 'is empty', fix: 'remove it' });
    } else if (key === '-o' || REFUSED_OPTIONS[key.replace(/^-+/, '')] !== undefined) {
      problems.push({
        field: at,
        problem: `"${option}" is not accepted`,
        fix: REFUSED_OPTIONS[key.replace(/^-+/, '')],
      });
    } else if (key.startsWith('-')) {
      problems.push({
        field: at,
        problem: `"${option}" starts with "-"`,
        fix: `write Mountpoint flags without dashes, e.g. "${option.replace(/^-+/, '')}" (the driver adds them)`,
      });
    }
  });
  return problems;
}

/** Volume handles must be unique across PVs, or a pod mounting two of them hangs in ContainerCreating. */
export function duplicateProblems(field: string, names: readonly string[]): CsiProblem[] {
  const seen = new Set<string>();
  return names.flatMap((name) => {
    if (!seen.has(name)) {
      seen.add(name);
      return [];
    }
    return [
      {
        field,
        problem: `"${name}" is rendered twice (volume handles and PV names must be unique)`,
        fix: 'give each volume its own name',
      },
    ];
  });
}
