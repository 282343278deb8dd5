/**
 * The idle mark (`mountfleet:marked-idle-at`) set and cleared in batches: the Resource Groups Tagging API
 * takes up to 20 ARNs a call, where EFS TagResource takes one file system. The EFS request rate is the
 * reaper's bottleneck (shared with deletions and the console), and the tagging API has its own.
 */
import {
  TagResourcesCommand,
  UntagResourcesCommand,
  type FailureInfo,
  type ResourceGroupsTaggingAPIClient,
} from '@aws-sdk/client-resource-groups-tagging-api';
import { errorText } from '../common';
import { TAG_MARKED_IDLE_AT } from '../contract';

/** TagResources and UntagResources take at most this many ARNs. */
const TAGGING_ARNS_PER_CALL = 20;

interface Markable {
  readonly id: string;
  /** The file system's ARN (DescribeFileSystems `FileSystemArn`). */
  readonly arn?: string;
}

/** Per file system: undefined when done, else the error; none for those not tried (the run was out of time). */
export type MarkResults = Map<string, string | undefined>;

/** True once the run must start no more calls. */
type Stopped = () => boolean;

async function inBatches(
  fileSystems: readonly Markable[],
  stopped: Stopped,
  send: (arns: string[]) => Promise<Record<string, FailureInfo> | undefined>,
): Promise<MarkResults> {
  const results: MarkResults = new Map();
  const withArn = fileSystems.filter((fs) => {
    if (!fs.arn) results.set(fs.id, 'DescribeFileSystems gave no FileSystemArn');
    return Boolean(fs.arn);
  });
  // Checked before each call: 100,000 file systems of a fleet can mean thousands of marks, minutes of calls.
  for (let i = 0; i < withArn.length && !stopped(); i += TAGGING_ARNS_PER_CALL) {
    const batch = withArn.slice(i, i + TAGGING_ARNS_PER_CALL);
    try {
      const failed = (await send(batch.map((fs) => fs.arn!))) ?? {};
      for (const fs of batch) {
        const failure = failed[fs.arn!];
        results.set(
          fs.id,
          failure
            ? `${failure.ErrorCode ?? 'error'}: ${failure.ErrorMessage ?? 'tagging failed'}`
            : undefined,
        );
      }
    } catch (err) {
      for (const fs of batch) results.set(fs.id, errorText(err));
    }
  }
  return results;
}

/** Marks each file system idle as of `at`, while `stopped` allows. */
export function markIdle(
  tagging: ResourceGroupsTaggingAPIClient,
  fileSystems: readonly Markable[],
  at: Date,
  stopped: Stopped,
): Promise<MarkResults> {
  return inBatches(fileSystems, stopped, async (arns) => {
    const out = await tagging.send(
      new TagResourcesCommand({ ResourceARNList: arns, Tags: { [TAG_MARKED_IDLE_AT]: at.toISOString() } }),
    );
    return out.FailedResourcesMap;
  });
}

/** Removes the idle mark from each file system, while `stopped` allows. */
export function unmarkIdle(
  tagging: ResourceGroupsTaggingAPIClient,
  fileSystems: readonly Markable[],
  stopped: Stopped,
): Promise<MarkResults> {
  return inBatches(fileSystems, stopped, async (arns) => {
    const out = await tagging.send(
      new UntagResourcesCommand({ ResourceARNList: arns, TagKeys: [TAG_MARKED_IDLE_AT] }),
    );
    return out.FailedResourcesMap;
  });
}
