/** Reading the project's Markdown the way GitHub renders it: headings outside code fences, their anchors. */

export interface Heading {
  readonly level: number;
  /** The heading's text with inline-code backticks removed. */
  readonly text: string;
  /** Index of the heading's line in the document. */
  readonly line: number;
}

/** The document's lines, with every line inside a ``` fence blanked (fences hold shell comments, not headings). */
export function proseLines(markdown: string): string[] {
  let inFence = false;
  return markdown.split('\n').map((line) => {
    if (line.trimStart().startsWith('```')) {
      inFence = !inFence;
      return '';
    }
    return inFence ? '' : line;
  });
}

export function headings(markdown: string): Heading[] {
  const found: Heading[] = [];
  proseLines(markdown).forEach((line, i) => {
    const m = /^(#{1,6})\s+(.+?)\s*#*\s*$/.exec(line);
    if (m) found.push({ level: m[1].length, text: m[2].replace(/`/g, ''), line: i });
  });
  return found;
}

/**
 * GitHub's anchors: lower case, punctuation other than `-` and `_` dropped, each space a hyphen; a repeated
 * slug gets `-1`, `-2`, … in order.
 */
export function anchors(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const result = new Set<string>();
  for (const h of headings(markdown)) {
    const base = h.text
      .trim()
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    result.add(n === 0 ? base : `${base}-${n}`);
  }
  return result;
}
