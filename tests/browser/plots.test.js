// What the plots draw, read from one page as it loads: each SVG download holds its whole plot, line
// styles, tick labels, panel order and colours say what the captions say, and the captions' numbers are
// computed (checked against posenc run here in Node).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { load } from 'posenc';
import { download, inEachEngine, pageAtDefaults } from './server.js';

const noErrors = (problems) => assert.deepEqual({ console: problems.console, pageErrors: problems.pageErrors }, { console: [], pageErrors: [] });
const caption = (page, id) => page.textContent(`[data-figure="${id}"] figcaption`);
// Plot's own SVGs inside a figure: not legend ramps, not the little swatch squares.
const PLOTS = 'svg[data-panel]';

inEachEngine(
  'plots',
  (suite) => {
    // one page, loaded once: these tests only read it (or download from it)
    let page;
    let problems;
    pageAtDefaults(suite, (p) => ({ page, problems } = p));

    test('every SVG download holds the whole plot, not its legend', async () => {
      const ids = await page.$$eval('[data-figure]', (els) => els.filter((e) => e.querySelector('svg')).map((e) => e.dataset.figure));
      assert.ok(ids.length >= 14, `${ids.length} figures with an SVG`);
      for (const id of ids) {
        // every line of text (a multi-line label is one <tspan> per line)
        const texts = await page.$$eval(`[data-figure="${id}"] ${PLOTS} text`, (ts) => [
          ...new Set(
            ts.flatMap((t) => (t.querySelector('tspan') ? [...t.querySelectorAll('tspan')] : [t]).map((x) => x.textContent.trim())).filter(Boolean),
          ),
        ]);
        const svg = (await download(page, `[data-figure="${id}"] [data-download="svg"]`)).text;
        assert.match(svg, /^<svg[^>]*xmlns="http:\/\/www.w3.org\/2000\/svg"/, id);
        const [, w, h] = /width="([\d.]+)" height="([\d.]+)"/.exec(svg);
        assert.ok(+w >= 250 && +h >= 150, `${id}: ${w} x ${h}`);
        assert.ok(texts.length > 0, `${id} has no plot text`);
        const escape = (s) => s.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;');
        for (const t of texts.slice(0, 30)) assert.ok(svg.includes(escape(t)), `${id}.svg lacks "${t}"`);
      }
      noErrors(problems);
    });

    test('dimension-curves: cosines are dashed, sines solid', async () => {
      const dashes = await page.$$eval(`[data-figure="dimension-curves"] ${PLOTS} g[class*="curve-"] path`, (ps) =>
        ps.map((p) => p.closest('[stroke-dasharray]')?.getAttribute('stroke-dasharray') ?? ''),
      );
      assert.equal(dashes.length, 8, `${dashes.length} curves`);
      assert.equal(dashes.filter((d) => /^\d+(\.\d+)?[ ,]+\d+(\.\d+)?$/.test(d)).length, 4, dashes.join(' | '));
      assert.equal(dashes.filter((d) => d === '').length, 4);
    });

    test("distinguishability: the caption's closest pair is computed, ticks are plain numbers", async () => {
      const pe = await load();
      const t = pe.sinusoidal({ length: 2048, dModel: 8 });
      const near = pe.nearestDistances(t);
      const closest = Math.min(...near);
      const dist = (i, j) => Math.hypot(...t.data.subarray(i * 8, i * 8 + 8).map((v, c) => v - t.data[j * 8 + c]));
      const neighbours = dist(0, 1);
      const text = await caption(page, 'distinguishability');
      assert.ok(closest < neighbours - 0.1, 'the premise: at d = 8 the closest pair is not two neighbours');
      assert.doesNotMatch(text, /always two neighbours/);
      assert.match(text, new RegExp(closest.toFixed(3).replace('.', '\\.')));
      assert.match(text, new RegExp(neighbours.toFixed(3).replace('.', '\\.')));
      const ticks = await page.$$eval(`[data-figure="distinguishability"] ${PLOTS} g[data-axis] text`, (ts) => ts.map((t) => t.textContent));
      for (const L of [32, 64, 128, 256, 512, 1024, 2048]) assert.ok(ticks.includes(String(L)), `x tick ${L} missing: ${ticks}`);
      assert.equal(ticks.filter((s) => /m$/.test(s)).length, 0, ticks.join(' '));
    });

    test('position-sinusoids: panels in numeric order', async () => {
      const labels = await page.$$eval(`[data-figure="position-sinusoids"] ${PLOTS} text`, (ts) =>
        ts
          .filter((t) => /^k = \d+$/.test(t.textContent))
          .map((t) => ({ k: t.textContent, x: t.getBoundingClientRect().x, y: t.getBoundingClientRect().y }))
          .sort((a, b) => a.y - b.y || a.x - b.x)
          .map((t) => t.k),
      );
      assert.deepEqual(labels, ['k = 0', 'k = 4', 'k = 8', 'k = 12']);
    });

    test('rope-scaling: the "none" baseline is neutral, not a method colour', async () => {
      // one line per scaling, each drawn as its own mark with class series-<name>
      const strokes = await page.$$eval(`[data-figure="rope-scaling"] ${PLOTS} g[class*="series-"]`, (gs) =>
        Object.fromEntries(gs.map((g) => [/series-(\w+)/.exec(g.getAttribute('class'))[1], getComputedStyle(g.querySelector('path')).stroke])),
      );
      const grey = (c) => {
        const [r, g, b] = c.match(/\d+/g).map(Number);
        return r === g && g === b;
      };
      assert.ok(strokes.none && grey(strokes.none), JSON.stringify(strokes));
      for (const m of ['linear', 'ntk', 'yarn', 'llama3']) assert.ok(strokes[m] && !grey(strokes[m]), `${m}: ${strokes[m]}`);
    });

    test('wording: no internal labels, the invariance/equivariance box', async () => {
      const text = await page.evaluate(() => document.querySelector('main').innerText);
      assert.doesNotMatch(text, /\bseed \d{3}/i);
      const box = await page.textContent('[data-box="invariance"]');
      assert.match(box, /invarian/i);
      assert.match(box, /equivarian/i);
    });
  },
  { concurrent: true },
);
