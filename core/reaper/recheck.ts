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
 * re-checked on its own by id, as before batching.
 *
 * How far the pass goes is planned on where the decision's listing showed each deletion (passPages): the pass
 * reads the first K pages, and the deletions listed further down are re-read by id, for the K that makes the
 * fewest reads. The event fast path's one or two deletions in a Region of many file systems are re-read by id
 * (K = 0: a pass would cost more reads than it saves); a backlog's first 100 orphans, listed on the first pages
 * of 100,000 file systems, cost those few pages, not a pass over 1,000 nor 100 reads by id.
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
  /** The page of the decision's listing that showed it (0: the first): where a fresh pass should find it again. */
  readonly listingPage: number;
}

export type Rechecked = Work &
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
 * How many pages of a fresh pass to read before re-reading the rest by id: the K for which K pages plus one read
 * for each deletion listed on page K or later is least (0: every deletion by id).
 */
export function passPages(deletions: readonly Pick<Work, 'listingPage'>[]): number {
  const pages = deletions.map((work) => work.listingPage).sort((a, b) => a - b);
  let best = { pages: 0, reads: pages.length };
  pages.forEach((page, i) => {
    if (pages[i + 1] === page) return; // the last deletion of this page: all up to here covered
    const reads = page + 1 + (pages.length - i - 1);
    if (reads < best.reads) best = { pages: page + 1, reads };
  });
  return best.pages;
}

/**
 * The deletions in batches, each re-checked: every `next()` reads pages of a fresh listing until one shows
 * some of the deletions still waiting and returns those, judged; once passPages pages are read (or the listing
 * is done, a page read failed, or `stopped` says the run is out of time) it returns the rest as `unread`, then
 * undefined. Call it right before a batch's first delete.
 */
export function recheckInBatches(
  efs: EFSClient,
  fleetId: string,
  deletions: readonly Work[],
  options: {
    readonly stopped: () => boolean;
    readonly onProgress?: (message: string) => void;
  },
): { next(): Promise<Rechecked[] | undefined> } {
  const waiting = new Map(deletions.map((work) => [work.fs.id, work]));
  let marker: string | undefined;
  let pagesLeft = passPages(deletions);
  const nextPage = async (): Promise<Rechecked[]> => {
    while (pagesLeft > 0 && !options.stopped()) {
      let page;
      try {
        page = await efs.send(new DescribeFileSystemsCommand({ MaxItems: PAGE, Marker: marker }));
      } catch (err) {
        pagesLeft = 0;
        options.onProgress?.(`re-check page failed (${errorText(err)}); re-checking the rest one by one`);
        break;
      }
      marker = page.NextMarker || undefined;
      pagesLeft = marker === undefined ? 0 : pagesLeft - 1;
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
