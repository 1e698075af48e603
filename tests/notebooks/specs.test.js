// The notebooks draw the demo page's figures, and only those: every figure in web/notebooks/*.ipynb is
// a figure spec of web/figures/ drawn by lib/display.js's figure().
//   - the notebooks' code cells import their figures from ../figures/ and draw nothing themselves (no
//     Plot, and none of display.js's lower-level plot/concat/toFigure/Figure);
//   - web/notebooks/lib/ is display glue only (display.js, the canvas shim png.js, the PNG rendering of
//     raster.js, the output flush of flush.js): it holds no Plot marks;
//   - every figure of every committed notebook is one PNG (no SVG copy) that names its spec, params and
//     options (tEXt chunks posenc:spec, posenc:params, posenc:options); the spec is a function that a
//     web/figures module exports and the notebook imports from there. That drawing it again with those
//     params (in Deno, as the notebooks are run: redraw.mjs) gives the very same PNG is checked by
//     tests/notebooks/notebooks.test.js, in each notebook's fresh kernel before its cells run, so that
//     the models it trains serve the notebook's cells too.
// tests/browser/figures.test.js checks the page's half: for the same params the page's figure holds the
// same data as the notebook's.
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { NOTEBOOKS, codeOf, figureImports, figuresOf, notebooks, ownDrawing, plotMarks } from './records.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const FIGURES = join(ROOT, 'web/figures');

// The figure modules and the functions they export (render.js is the page's DOM renderer, not specs).
const modules = {};
for (const file of readdirSync(FIGURES).filter((f) => f.endsWith('.js') && f !== 'render.js'))
  modules[file] = await import(pathToFileURL(join(FIGURES, file)).href);

describe('the notebooks draw their figures from the page specs (web/figures/)', () => {
  test('the checks catch a figure drawn in a notebook or in lib/', () => {
    assert.deepEqual(ownDrawing("await show(plot({ marks: [Plot.lineY([1, 2])] }, 'a line'));"), [
      'calls Observable Plot',
      'draws with display.js building blocks (plot/concat/toFigure)',
    ]);
    assert.deepEqual(ownDrawing("import * as Plot from 'npm:@observablehq/plot';"), ['imports Observable Plot']);
    assert.deepEqual(ownDrawing("await show(figure(wavelengths, pe, { dModel: 512 })); // a spec's plot"), []);
    assert.deepEqual(plotMarks('Plot.plot({ marks: [Plot.cell(rows, {}), Plot.raster(d)] })'), ['cell', 'raster']);
    assert.deepEqual(figureImports("import { a, b as c } from '../figures/lab.js';\nimport { d } from './lib/display.js';"), {
      a: 'lab.js',
      b: 'lab.js',
    });
    const unrecorded = { cells: [{ outputs: [{ data: { 'image/svg+xml': '<svg xmlns="http://www.w3.org/2000/svg"></svg>' } }] }] };
    assert.equal(figuresOf(unrecorded)[0].spec, undefined);
    assert.ok(figuresOf(unrecorded)[0].svg, 'an SVG output is listed, to be refused');
  });

  test('web/notebooks/lib/ is display glue: no Plot marks', () => {
    const lib = join(NOTEBOOKS, 'lib');
    const files = readdirSync(lib).filter((f) => f.endsWith('.js'));
    assert.deepEqual(
      files.sort(),
      ['display.js', 'flush.js', 'png.js', 'raster.js'],
      'lib/ should hold only the display glue (figures and numbers live in web/figures/)',
    );
    for (const f of files) assert.deepEqual(plotMarks(readFileSync(join(lib, f), 'utf8')), [], `${f} draws Plot marks`);
  });

  for (const { name, nb } of notebooks()) {
    describe(name, () => {
      const code = codeOf(nb);
      const imported = figureImports(code);

      test('its code draws nothing itself and imports its figures from ../figures/', () => {
        assert.deepEqual(ownDrawing(code), []);
        assert.ok(Object.keys(imported).length > 0, 'no import from ../figures/');
        assert.doesNotMatch(code, /from '\.\/lib\/(?!display\.js')/, 'only lib/display.js is imported from lib/');
      });

      const figures = figuresOf(nb);
      test('every figure is one PNG drawn by a spec that web/figures/ exports and the notebook imports from there', () => {
        assert.ok(figures.length >= 5, `${figures.length} figures`);
        for (const f of figures) {
          const where = `${name}, cell ${f.cell}`;
          assert.ok(f.png && !f.svg, `${where}: a figure must be stored once, as PNG (${f.svg ? 'it has an SVG' : 'no PNG'})`);
          assert.ok(f.spec, `${where}: a figure that names no spec (not drawn by lib/display.js's figure())`);
          const file = imported[f.spec];
          assert.ok(file, `${where}: ${f.spec} is not imported from ../figures/`);
          assert.equal(typeof modules[file]?.[f.spec], 'function', `${where}: web/figures/${file} exports no function ${f.spec}`);
        }
      });
    });
  }
});
