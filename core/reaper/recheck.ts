/**
 * The re-check before deleting, in batches: one DescribeFileSystems page (up to 100 file systems) read right
 * before the first irreversible call of the deletions it shows answers for every one of them. Each file system
 * whose evidence changed since its decision (changeSinceDecision: lifecycle state, the fleet, owner, job, run,
 * teardown and idle tags, the CreationToken rules, a mount target where "no mount target" was the evidence) is
 * spared for this run, exactly as a re-read of that one file system would spare it.
 *
 * Why one read per batch is as safe as one per file system. The re-check guards the decision's age — the
 * listing it rests on may be minutes old by the time deletion starts (metric and owner reads, throttling, a
 * long batch) — not a race: no read, however close to the delete, closes the gap before the delete itself.
 * What it must catch is evidence that went back on itself, and under this project's contract orphan evidence
 * is monotonic for one run's one file system (docs/scratch.md, one run, one file system): a run never adopts
 * another run's file system, so once its owner is gone or stopped, its teardown started, its lifecycle is
 * `error`, or it sat without mount target or connection past the grace period, nobody may mount it again. The
 * only legitimate changes are its own run's teardown and a concurrent reaper, both of which end in deletion
 * anyway. So a few seconds between a batch's page and one of its deletions add nothing a per-file-system read
 * would have caught that the rules do not already: the owner's teardown and a second reaper are waited for
 * either way, and what is not monotonic — a mount target being set up — is judged per file system on the
 * DescribeMountTargets the deletion reads anyway (reaper.ts), and on `FileSystemInUse` for a direct delete.
 *
 * The pages are a fresh pass over the Region's listing, started when deletion starts and read one page at a
 * time, each only when the previous page's deletions have all begun (EFS has no id-list filter, and the order
 * of a listing is unspecified across calls, so a page of the decision's listing may not show the same file
 * systems again). A file system no page showed (deleted meanwhile, or the pass broke off on an error) is
 * re-checked on its own by id, as before batching. So is every deletion when they are no more than the pages
 * the decision's listing took (the event fast path's one or two in a Region of many file systems): a pass
 * would cost more reads than it saves.
 */
import { DescribeFileSystemsCommand, type EFSClient } from '@aws-sdk/client-efs';
import { errorText } from '../common';
import { changeSinceDecision, type Decision, type FileSystemFacts } from './decide';
import { factsOf } from './evidence';

const PAGE = 100;

/** One decided deletion. */
export interface Work {
  readonly fs: FileSystemFacts;
  readonly decision: Decision;
}

type Rechecked = Work &
  (
    | /** Re-read and unchanged: delete on `now` (its mount-target count as re-read). */
      { readonly status: 'unchanged'; readonly now: FileSystemFacts }
      /** Something the decision rests on changed since: not touched this run. */
    | { readonly status: 'changed'; readonly reason: string }
    /** Gone, or `deleted`, already. */
    | { readonly status: 'gone' }
    /** Not on any page: the caller re-reads it alone, right before its own first irreversible call. */
    | { readonly status: 'unread' }
  );

/** Compares what a deletion was decided on with the file system as just read (undefined: gone). */
export function judgeRecheck(work: Work, now: FileSystemFacts | undefined): Rechecked {
  if (now === undefined) return { ...work, status: 'gone' };
  const changed = changeSinceDecision(work.fs, now, work.decision);
  return changed === undefined
    ? { ...work, status: 'unchanged', now }
    : {
        ...work,
        status: 'changed',
        reason: `re-checked before deleting: ${changed}; decided again next run`,
      };
}

/**
 * The deletions in batches, each re-checked: every `next()` reads pages of a fresh listing until one shows
 * some of the deletions still waiting and returns those, judged; once the listing is done (or a page read
 * failed, or `stopped` says the run is out of time) it returns the rest as `unread`, then undefined. Call it
 * right before a batch's first delete.
 */
export function recheckInBatches(
  efs: EFSClient,
  fleetId: string,
  deletions: readonly Work[],
  options: {
    /** Pages the decision's listing took: what one pass costs about. */
    readonly listingPages: number;
    readonly stopped: () => boolean;
    readonly onProgress?: (message: string) => void;
  },
): { next(): Promise<Rechecked[] | undefined> } {
  const waiting = new Map(deletions.map((work) => [work.fs.id, work]));
  let marker: string | undefined;
  let listed = deletions.length <= options.listingPages;
  const nextPage = async (): Promise<Rechecked[]> => {
    while (!listed && !options.stopped()) {
      let page;
      try {
        page = await efs.send(new DescribeFileSystemsCommand({ MaxItems: PAGE, Marker: marker }));
      } catch (err) {
        listed = true;
        options.onProgress?.(`re-check page failed (${errorText(err)}); re-checking the rest one by one`);
        break;
      }
      marker = page.NextMarker || undefined;
      listed = marker === undefined;
      const shown = (page.FileSystems ?? []).flatMap((description) => {
        const work = waiting.get(description.FileSystemId ?? '');
        if (work === undefined) return [];
        waiting.delete(work.fs.id); // a file system a later page shows again is not judged twice
        const now = description.LifeCycleState === 'deleted' ? undefined : factsOf(description, fleetId);
        return [judgeRecheck(work, now)];
      });
      if (shown.length > 0) return shown;
    }
    const rest = [...waiting.values()].map((work): Rechecked => ({ ...work, status: 'unread' }));
    waiting.clear();
    return rest;
  };
  return { next: async () => (waiting.size === 0 ? undefined : nextPage()) };
}
