// What the notebooks' cells and outputs say about their figures: read by tests/notebooks/specs.test.js
// (every figure is a page spec) and tests/browser/figures.test.js (the page draws the same data).
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const NOTEBOOKS = fileURLToPath(new URL('../../web/notebooks', import.meta.url));
export const text = (x) => (Array.isArray(x) ? x.join('') : (x ?? ''));
const unescape = (s) =>
  s
    .replace(/&quot;/g, '"')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');

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

// Every figure output: { cell, svg, spec, params, options } (spec etc. undefined when not recorded).
export function figuresOf(nb) {
  const out = [];
  nb.cells.forEach((cell, i) => {
    for (const o of cell.outputs ?? []) {
      const svg = text(o.data?.['image/svg+xml']);
      if (!svg) continue;
      const root = /^<svg\b[^>]*>/.exec(svg)?.[0] ?? '';
      const attr = (name) => {
        const m = new RegExp(` data-${name}="([^"]*)"`).exec(root);
        return m ? unescape(m[1]) : undefined;
      };
      out.push({ cell: i, svg, spec: attr('spec'), params: attr('params'), options: attr('options') });
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
