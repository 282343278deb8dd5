import { escapeXml, svgDocument } from '../../../core/measure/svg-document';

test('a white page of the given size, its title escaped, then the body', () => {
  const svg = svgDocument(300, 200, 17, 'a < b & "c"', ['<line/>']);
  expect(svg.split('\n')).toEqual([
    '<svg xmlns="http://www.w3.org/2000/svg" width="300" height="200" viewBox="0 0 300 200" font-family="sans-serif" font-size="12">',
    '<rect width="300" height="200" fill="white"/>',
    '<text x="150" y="28" text-anchor="middle" font-size="17">a &lt; b &amp; &quot;c&quot;</text>',
    '<line/>',
    '</svg>',
    '',
  ]);
  expect(escapeXml('<x>&')).toBe('&lt;x&gt;&amp;');
});
