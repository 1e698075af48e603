// The notebooks draw the demo page's figures, and only those: every figure in web/notebooks/*.ipynb is
// a figure spec of web/figures/ drawn by lib/display.js's figure().
//   - the notebooks' code cells import their figures from ../figures/ and draw nothing themselves (no
//     Plot, and none of display.js's lower-level plot/concat/toFigure/Figure);
//   - web/notebooks/lib/ is display glue only (display.js, the canvas shim png.js, the PNG rendering of
//     raster.js, the output flush of flush.js): it holds no Plot marks;
//   - every figure of every committed notebook is one PNG (no SVG copy) that names its spec, params and
//     options (tEXt chunks posenc:spec, posenc:params, posenc:options); the spec is a function that a
//     web/figures module exports and the notebook imports from there; and drawing it again with those
//     params (in Deno, as the notebooks are run: redraw.mjs) gives the very same PNG.
// tests/browser/figures.test.js checks the page's half: for the same params the page's figure holds the
// same data as the notebook's.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { NOTEBOOKS, codeOf, figureImports, figuresOf, notebooks, ownDrawing, plotMarks } from './records.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const FIGURES = join(ROOT, 'web/figures');
const DENO = join(ROOT, 'node_modules/.bin/deno');

// The figure modules and the functions they export (render.js is the page's DOM renderer, not specs).
const modules = {};
for (const file of readdirSync(FIGURES).filter((f) => f.endsWith('.js') && f !== 'render.js'))
  modules[file] = await import(pathToFileURL(join(FIGURES, file)).href);

// The figures asked for ({ file, spec, params, options }) drawn again by redraw.mjs in Deno, as PNGs.
function redraw(requests) {
  const run = spawnSync(DENO, ['run', '--allow-read', '--allow-env', join(ROOT, 'tests/notebooks/redraw.mjs')], {
    cwd: ROOT,
    input: JSON.stringify(requests),
    encoding: 'utf8',
    maxBuffer: 256 * 2 ** 20,
  });
  assert.equal(run.status, 0, `redraw.mjs failed:\n${run.stderr}`);
  return JSON.parse(run.stdout);
}

// Every notebook's figures that name a spec its notebook imports, drawn again in one Deno process (a
// process per notebook cost a Deno start-up and a wasm instantiation each): name -> [[figure, PNG]].
const noDeno = !existsSync(DENO) && 'node_modules/.bin/deno is missing (npm install)';
let redrawn;
function redrawnFor(name) {
  if (!redrawn) {
    const asked = notebooks().flatMap(({ name, nb }) => {
      const imported = figureImports(codeOf(nb));
      return figuresOf(nb)
        .filter((f) => imported[f.spec])
        .map((f) => ({ name, f, request: { file: imported[f.spec], spec: f.spec, params: JSON.parse(f.params), options: JSON.parse(f.options) } }));
    });
    const pngs = redraw(asked.map((a) => a.request));
    assert.equal(pngs.length, asked.length);
    redrawn = {};
    asked.forEach((a, n) => (redrawn[a.name] ??= []).push([a.f, pngs[n]]));
  }
  return redrawn[name] ?? [];
}

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

      test('drawing each spec again with its params gives the same PNG', { skip: noDeno }, () => {
        const again = redrawnFor(name);
        assert.equal(again.length, figures.filter((f) => imported[f.spec]).length);
        for (const [f, png] of again)
          assert.ok(png === f.png, `${name}, cell ${f.cell}: ${f.spec}(${f.params}) draws a different figure now (else: bash scripts/notebooks.sh)`);
      });
    });
  }
});
