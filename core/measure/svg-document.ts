/** The frame every chart of the measurements shares: a white page with its title, and text made safe for XML. */

export const escapeXml = (s: string) =>
  s.replace(/[<>&"]/g, (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', '"': '&quot;' })[c]!);

/** A self-contained SVG of `width` × `height` with `title` on top (at `titleSize` px) and then `body`. */
export function svgDocument(
  width: number,
  height: number,
  titleSize: number,
  title: string,
  body: readonly string[],
): string {
  return (
    [
      `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="12">`,
      `<rect width="${width}" height="${height}" fill="white"/>`,
      `<text x="${width / 2}" y="28" text-anchor="middle" font-size="${titleSize}">${escapeXml(title)}</text>`,
      ...body,
      '</svg>',
    ].join('\n') + '\n'
  );
}
