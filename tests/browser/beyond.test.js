// Positions beyond text on the page: the patch grid (picked by its controls or by a click),
// M-RoPE's id streams and channel bands, xPos's decay. The key numbers each caption states are checked
// against posenc computed here in Node, or against the formulas themselves.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { after, before, test } from 'node:test';
import { load } from 'posenc';
import { inEachEngine, inject, openPage } from './server.js';

const require = createRequire(import.meta.url);
const pe = await load();
const caption = (page, id) => page.textContent(`[data-figure="${id}"] figcaption`);
const waitCaption = (page, id, text) =>
  page.waitForFunction(([f, t]) => document.querySelector(`[data-figure="${f}"] figcaption`)?.textContent.includes(t), [id, text], {
    timeout: 20000,
  });
// A number printed with n significant digits: within half a unit of its last digit.
const close = (printed, want) => {
  const digits = printed.replace(/^-?0?\.?0*/, '').replace('.', '').length;
  return Math.abs(Number(printed) - want) <= 0.5 * 10 ** (Math.floor(Math.log10(Math.abs(want))) - digits + 1) + 1e-6;
};

// The cosine of two rows of a [rows, d] table, in double.
function cosine(t, a, b) {
  const d = t.shape[1];
  let ab = 0;
  let aa = 0;
  let bb = 0;
  for (let c = 0; c < d; c++) {
    const [x, y] = [t.data[a * d + c], t.data[b * d + c]];
    ab += x * y;
    aa += x * x;
    bb += y * y;
  }
  return ab / Math.sqrt(aa * bb);
}

const [d, sb, D, W] = [32, 256, 1000, 64]; // xPos: head dim, scale base, distance; the envelope's window

inEachEngine(
  'positions beyond text',
  (suite) => {
    // One page, loaded once with each figure's settings in its link (each figure reads only its own).
    let page;
    let problems;
    before(async () => {
      ({ page, problems } = await openPage(
        suite.browser,
        `${suite.server.url}?patchRow=2&patchCol=13&mropeTextBefore=2&mropeT=2&mropeH=3&mropeW=2&mropeTextAfter=4` +
          `&xposHeadDim=${d}&xposScaleBase=${sb}&xposDistance=${D}`,
      ));
    });
    after(() => page?.close());

    test('patch grid: the neighbours’ scores are those of sinusoidal2d and of M-RoPE-rotated vectors; a click picks a patch', async () => {
      await waitCaption(page, 'patch-grid', 'patch (2, 13)');
      const text = await caption(page, 'patch-grid');
      const m =
        /Neighbour \(2, 12\) in the same row: ([\d.]+) \(sin-cos\), ([\d.]+) \(M-RoPE\); \(3, 13\) in the same column: ([\d.]+) \(sin-cos\), ([\d.]+) \(M-RoPE\)/.exec(
          text,
        );
      assert.ok(m, text);
      const at = 2 * 14 + 13;
      const table = pe.sinusoidal2d({ height: 14, width: 14, dModel: 768 });
      const ids = pe.mropePositions([{ image: [1, 14, 14] }]);
      const rotated = pe.rope(
        { data: new Float32Array(196 * 128).fill(1), shape: [196, 128] },
        { positions: ids, mropeSection: [16, 24, 24], base: 1e6 },
      );
      const want = [cosine(table, at, at - 1), cosine(rotated, at, at - 1), cosine(table, at, at + 14), cosine(rotated, at, at + 14)];
      want.forEach((w, k) => assert.ok(close(m[k + 1], w), `${m[k + 1]} vs ${w}`));
      // 2-D sin-cos treats rows and columns alike; M-RoPE gives the width stream its slowest frequencies
      assert.equal(m[1], m[3]);
      assert.ok(1 - Number(m[2]) < (1 - Number(m[4])) / 10, text);
      const alt = await page.getAttribute('[data-figure="patch-grid"] [role="img"]', 'aria-label');
      assert.match(alt, new RegExp(`scores ${m[1]} under 2-D sin-cos and ${m[2]} under M-RoPE`));
      // a click on the cell (row 7, column 3) of the right panel picks that patch
      const svg = page.locator('[data-figure="patch-grid"] svg[data-panel]').nth(1);
      const position = await svg.evaluate((s) => {
        const [x, y] = [s.scale('x'), s.scale('y')];
        return { x: x.apply(3) + x.bandwidth / 2, y: y.apply(7) + y.bandwidth / 2 };
      });
      await svg.click({ position });
      await waitCaption(page, 'patch-grid', 'patch (7, 3)');
      assert.equal(await page.inputValue('[data-control="patchRow"]'), '7');
      assert.equal(await page.inputValue('[data-control="patchCol"]'), '3');
      assert.match(page.url(), /patchRow=7&patchCol=3/);
      assert.deepEqual(problems.pageErrors, []);
    });

    test('M-RoPE: text + video + text ids as pe.mropePositions gives them; each stream drives its section of channels', async () => {
      await waitCaption(page, 'mrope-streams', '2 × 3 × 2 video');
      const text = await caption(page, 'mrope-streams');
      const ids = pe.mropePositions([{ text: 2 }, { video: [2, 3, 2] }, { text: 4 }]);
      const seq = ids.shape[1];
      assert.match(text, new RegExp(`${seq} tokens`));
      assert.match(text, new RegExp(`text resumes at ${ids.data[2 + 12]},`));
      // the section rule: frequency j takes t if j < 16, h if j < 40, else w; channel j + 64 mirrors j
      assert.match(text, /temporal 0–15, 64–79 \(32 channels\); height 16–39, 80–103 \(48 channels\); width 40–63, 104–127 \(48 channels\)/);
      assert.ok(Number(/within ([\d.e-]+)\./.exec(text)[1]) < 1e-6, text);
      const alt = await page.getAttribute('[data-figure="mrope-streams"] [role="img"]', 'aria-label');
      assert.match(alt, new RegExp(`the last token has id ${ids.data[seq - 1]} on every stream`));
      assert.equal(await page.$$eval('[data-figure="mrope-streams"] canvas[data-painted="true"]', (c) => c.length), 1);
      assert.deepEqual(problems.pageErrors, []);
    });

    test('xPos: the envelopes at the largest distance follow torchscale’s formula; axe finds nothing serious in its section', async () => {
      await waitCaption(page, 'xpos-decay', `At distance ${D}`);
      const text = await caption(page, 'xpos-decay');
      const [, xpos, rope] = /envelope is ([\d.e-]+) with xPos and ([\d.e-]+) with RoPE/.exec(text);
      // q = k = (1, …, 1): q·k/d = (2/d) Σ_i ζ_i^(Δ/sb) cos(Δ θ_i), θ_i = 10000^(-2i/d), ζ_i = (2i + 0.4d)/(1.4d)
      const score = (delta, decay) => {
        let s = 0;
        for (let i = 0; i < d / 2; i++)
          s += 2 * (decay ? ((2 * i + 0.4 * d) / (1.4 * d)) ** (delta / sb) : 1) * Math.cos(delta * 10000 ** ((-2 * i) / d));
        return s / d;
      };
      const envelope = (decay) => Math.max(...Array.from({ length: W }, (_, k) => Math.abs(score(D + k, decay))));
      assert.ok(Math.abs(Number(xpos) - envelope(true)) < 6e-5, `${xpos} vs ${envelope(true)}`);
      assert.ok(Math.abs(Number(rope) - envelope(false)) < 6e-5, `${rope} vs ${envelope(false)}`);
      assert.ok(Number(xpos) < Number(rope));
      const fastest = /scale per pair: ([\d.e-]+) for pair 0/.exec(text)[1];
      assert.ok(close(fastest, (0.4 / 1.4) ** (D / sb)), fastest);
      await inject(page, readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8'));
      const result = await page.evaluate(() => window.axe.run(document.querySelector('#rope'), { resultTypes: ['violations'] }));
      const bad = result.violations.filter((v) => ['serious', 'critical'].includes(v.impact)).map((v) => `${v.id} (${v.nodes.length})`);
      assert.deepEqual(bad, []);
      assert.deepEqual(problems.pageErrors, []);
    });
  },
  { concurrent: true },
);
