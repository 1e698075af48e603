// What the notebooks' cells and outputs say about their figures: read by tests/notebooks/specs.test.js
// (every figure is a page spec) and tests/browser/figures.test.js (the page draws the same data).
import { Buffer } from 'node:buffer';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const NOTEBOOKS = fileURLToPath(new URL('../../web/notebooks', import.meta.url));
export const text = (x) => (Array.isArray(x) ? x.join('') : (x ?? ''));

// The committed notebooks: [{ name, nb }], by name.
export const notebooks = () =>
  readdirSync(NOTEBOOKS)
    .filter((f) => f.endsWith('.ipynb') && !f.startsWith('.')) // (notebooks.test.js's runs are hidden files)
    .sort()
    .map((name) => ({ name, nb: JSON.parse(readFileSync(join(NOTEBOOKS, name), 'utf8')) }));

// All code of a notebook, one string.
export const codeOf = (nb) =>
  nb.cells
    .filter((c) => c.cell_type === 'code')
    .map((c) => text(c.source))
    .join('\n');

// The figures a notebook's code imports from ../figures/: name -> module file.
export function figureImports(code) {
  const names = {};
  for (const m of code.matchAll(/import\s*\{([^}]*)\}\s*from\s*'\.\.\/figures\/([\w-]+\.js)'/g))
    for (const name of m[1]
      .split(',')
      .map((s) => s.trim().split(/\s+as\s+/)[0])
      .filter(Boolean))
      names[name] = m[2];
  return names;
}

// The tEXt chunks of a PNG (base64), as { keyword: text }: a reader written here, independent of lib/png.js.
export function pngText(base64) {
  const png = Buffer.from(base64, 'base64');
  const out = {};
  for (let at = 8; at + 8 <= png.length;) {
    const length = png.readUInt32BE(at);
    if (png.toString('latin1', at + 4, at + 8) === 'tEXt') {
      const [keyword, ...rest] = png.toString('latin1', at + 8, at + 8 + length).split('\0');
      out[keyword] = rest.join('\0');
    }
    at += 12 + length;
  }
  return out;
}

// Every figure output: { cell, png, svg, spec, params, options }. A figure is a PNG whose tEXt chunks
// name the spec that drew it (posenc:spec, posenc:params, posenc:options; undefined when not recorded);
// an SVG output is listed too (svg set), so that a test can refuse it.
export function figuresOf(nb) {
  const out = [];
  nb.cells.forEach((cell, i) => {
    for (const o of cell.outputs ?? []) {
      const png = text(o.data?.['image/png']);
      const svg = text(o.data?.['image/svg+xml']);
      if (!png && !svg) continue;
      const t = png ? pngText(png) : {};
      out.push({ cell: i, png, svg, spec: t['posenc:spec'], params: t['posenc:params'], options: t['posenc:options'] });
    }
  });
  return out;
}

// Code that draws a figure of its own instead of a spec: Plot, or display.js's building blocks.
const OWN_DRAWING = [
  [/\bPlot\s*\./, 'calls Observable Plot'],
  [/from\s*'(npm:)?@observablehq\/plot/, 'imports Observable Plot'],
  [/(?<![\w.])(plot|concat|toFigure)\s*\(/, 'draws with display.js building blocks (plot/concat/toFigure)'],
  [/\bnew\s+Figure\s*\(/, 'builds a Figure by hand'],
];
export function ownDrawing(code) {
  return OWN_DRAWING.filter(([re]) => re.test(code)).map(([, why]) => why);
}

// A Plot mark (Plot.line(...), Plot.cell(...), ...): anything of Plot's but Plot.plot, the renderer.
export const plotMarks = (source) => [...source.matchAll(/\bPlot\.(?!plot\b)(\w+)\s*\(/g)].map((m) => m[1]);
