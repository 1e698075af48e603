// The page as a learner reads it: each figure shows what its caption says, and the story runs in order.
// Each test here was written against a defect measured on the page (a figure contradicting its own text,
// a control that did nothing or lied, a term used before it was defined) and failed before its fix.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { load } from 'posenc';
import { download, inEachEngine, pageAtDefaults } from './server.js';

const pe = await load();
const caption = (page, id) => page.textContent(`[data-figure="${id}"] figcaption`);
const takeaway = (page, id) => page.textContent(`[data-figure="${id}"] figcaption .takeaway`);
const waitCaption = (page, id, text) =>
  page.waitForFunction(([f, t]) => document.querySelector(`[data-figure="${f}"] figcaption`)?.textContent.includes(t), [id, text], {
    timeout: 30000,
  });
const waitFor = (page, fn, arg) => page.waitForFunction(fn, arg, { timeout: 30000 });
// Sets a control as a reader would and waits for the page to have taken it (debounced redraws).
async function set(page, control, value) {
  const sel = `[data-control="${control}"]`;
  if ((await page.$eval(sel, (e) => e.tagName)) === 'SELECT') await page.selectOption(sel, value);
  else {
    await page.fill(sel, value);
    await page.dispatchEvent(sel, 'change');
  }
}
// The text of the tick labels of a figure's axes (`which`: a substring of Plot's axis label, 'y-axis tick label').
const ticks = (page, id, which, n = 0) =>
  page.$$eval(
    `[data-figure="${id}"] svg[data-panel]`,
    (svgs, [w, k]) => [...svgs[k].querySelectorAll(`g[data-axis*="${w}"] text`)].map((t) => t.textContent),
    [which, n],
  );
// Pairs of overlapping boxes among the tick labels of one axis.
const overlaps = (page, selector) =>
  page.$$eval(selector, (texts) => {
    const boxes = texts.map((t) => [t.textContent, t.getBoundingClientRect()]);
    const out = [];
    for (let a = 0; a < boxes.length; a++)
      for (let b = a + 1; b < boxes.length; b++) {
        const [p, q] = [boxes[a][1], boxes[b][1]];
        if (p.left < q.right - 0.5 && q.left < p.right - 0.5 && p.top < q.bottom - 0.5 && q.top < p.bottom - 0.5)
          out.push(`${boxes[a][0]} / ${boxes[b][0]}`);
      }
    return out;
  });

// The best accuracy of a model blind to order on the copy task (8 tokens uniform over 8): the mean over
// all count vectors of the most frequent token's count, divided by 8, summed exactly in BigInt over the
// 6435 compositions of 8 into 8 parts (not the figure's generating-function computation).
function copyOrderBlind(n = 8, v = 8) {
  const fact = (k) => (k <= 1 ? 1n : BigInt(k) * fact(k - 1));
  let total = 0n;
  const walk = (left, parts, counts) => {
    if (parts === 1) {
      const c = [...counts, left];
      total += (fact(n) / c.reduce((p, k) => p * fact(k), 1n)) * BigInt(Math.max(...c));
      return;
    }
    for (let k = 0; k <= left; k++) walk(left - k, parts - 1, [...counts, k]);
  };
  walk(n, v, []);
  return Number(total) / v ** n / n;
}

inEachEngine(
  'teaching',
  (suite) => {
    // one page for the checks that only read it as it loads
    let page;
    let problems;
    pageAtDefaults(suite, (p) => ({ page, problems } = p));

    test('the story: attention recap, shuffle lab, three ways, each family, then training last', async () => {
      const order = await page.$$eval('main > section', (s) => s.map((x) => x.id));
      assert.deepEqual(order, [
        'attention',
        'lab',
        'three-ways',
        'sinusoidal',
        'relative-structure',
        'extrapolation',
        'rope',
        'biases',
        'beyond',
        'train',
        'performance-section',
      ]);
      assert.match(await page.textContent('#performance-section h2'), /Appendix/);
      // the recap computes q·k and softmax: the query's weights sum to 1
      assert.match(await page.textContent('#attention'), /softmax/i);
      const weights = await page.$$eval('[data-figure="attention-recap"] svg[data-panel]', (s) => s.length);
      assert.equal(weights, 3);
      assert.equal(await page.$$eval('[data-figure="injection-overview"] svg[data-panel]', (s) => s.length), 3);
      assert.ok((await page.$$eval('details.predict', (d) => d.length)) >= 7);
      assert.deepEqual(problems.pageErrors, []);
    });

    test('every term is defined (<dfn>) where it first appears in the text', async () => {
      const terms = ['softmax', 'RoPE', 'ALiBi', 'T5', 'rotate_half', 'interpolated', 'extrapolated', 'NTK', 'YaRN', 'xPos', 'M-RoPE'];
      const found = await page.evaluate((list) => {
        const main = document.querySelector('main');
        const walker = document.createTreeWalker(main, NodeFilter.SHOW_TEXT, {
          acceptNode: (n) =>
            n.parentElement.closest('select, option, figure, svg, .controls, h2, h3, nav') ? NodeFilter.FILTER_REJECT : NodeFilter.FILTER_ACCEPT,
        });
        const out = {};
        for (let n = walker.nextNode(); n; n = walker.nextNode())
          for (const term of list) {
            if (term in out) continue;
            const re = new RegExp(`(^|[^\\w-])${term.replace('-', '\\-')}(?![\\w-])`, 'i');
            if (re.test(n.textContent)) out[term] = n.parentElement.closest('dfn') ? 'dfn' : n.textContent.trim().slice(0, 60);
          }
        return out;
      }, terms);
      for (const t of terms) assert.equal(found[t], 'dfn', `${t} first appears outside its definition: "${found[t]}"`);
    });

    test('captions are one-line takeaways; the numbers and method sit in a disclosure', async () => {
      const caps = await page.$$eval('[data-figure]', (figs) =>
        figs
          .filter((f) => f.dataset.figure !== 'performance')
          .map((f) => ({
            id: f.dataset.figure,
            takeaway: f.querySelector('figcaption .takeaway')?.textContent ?? '',
            details: f.querySelector('figcaption details p')?.textContent ?? '',
          })),
      );
      for (const c of caps) {
        assert.ok(c.takeaway.length > 20 && c.takeaway.length <= 200, `${c.id}: ${c.takeaway.length} characters: ${c.takeaway}`);
        assert.doesNotMatch(c.takeaway, /\bpe\.\w|within \d|torchscale|e-\d|checksum/, c.id);
      }
      // the verification numbers are still there, one click away
      const rope = caps.find((c) => c.id === 'rope-relative');
      assert.match(rope.details, /largest spread along a diagonal: \d\.\de-\d/);
    });

    test('xPos draws at every scale base and distance the controls allow', async () => {
      for (const [sb, dist] of [
        [16, 4096],
        [32, 4096],
        [40, 4096],
        [64, 8192],
      ]) {
        await set(page, 'xposDistance', String(dist));
        await set(page, 'xposScaleBase', String(sb));
        await waitCaption(page, 'xpos-decay', `(scale base ${sb})`);
        await waitCaption(page, 'xpos-decay', `At distance ${dist}`);
        const text = await page.textContent('[data-figure="xpos-decay"]');
        assert.doesNotMatch(text, /Error/);
        assert.equal(await page.$$eval('[data-figure="xpos-decay"] svg[data-panel]', (s) => s.length), 2);
        const y = await ticks(page, 'xpos-decay', 'y-axis tick label', 1);
        assert.ok(y.length >= 2, `scale base ${sb}: y ticks ${y}`);
        assert.equal(y.at(-1), '1e+0', `scale base ${sb}: the axis runs up to 1, the scale's ceiling (y ticks ${y})`);
        // pair 0's scale ζ₀^(Δ/scaleBase), ζ₀ = 0.4/1.4, in double
        const printed = /scale per pair: ([\d.e+-]+) for pair 0/.exec(await caption(page, 'xpos-decay'))[1];
        const want = Math.exp((dist / sb) * Math.log(0.4 / 1.4));
        assert.ok(Math.abs(Number(printed) / want - 1) < 0.01, `scale base ${sb}: ${printed} vs ${want}`);
        // the takeaway writes a tiny envelope for a reader (8.3 × 10⁻⁵), not as 8.28e-5
        assert.doesNotMatch(await page.textContent('[data-figure="xpos-decay"] figcaption .takeaway'), /e[+-]\d/);
      }
      // a large scale base keeps every pair near 1: the ticks still tell their values apart
      for (const sb of [1024, 8192]) {
        await set(page, 'xposDistance', '64');
        await set(page, 'xposScaleBase', String(sb));
        await waitCaption(page, 'xpos-decay', `(scale base ${sb})`);
        await waitCaption(page, 'xpos-decay', 'At distance 64');
        const y = await ticks(page, 'xpos-decay', 'y-axis tick label', 1);
        assert.ok(y.length >= 2 && new Set(y).size === y.length, `scale base ${sb}: y ticks ${y}`);
      }
      assert.deepEqual(problems.pageErrors, []);
    });

    test('the inspector: round distance ticks; a bad config empties the figure and the preset menu', async () => {
      await waitFor(page, () => /Rotary dimension/.test(document.querySelector('[data-figure="rope-inspector"]').textContent));
      assert.deepEqual(await ticks(page, 'rope-inspector', 'x-axis tick label', 1), ['0', '10', '100', '1k', '10k', '100k']);
      const bad = [
        ['{ "rope_theta": 10000, ', /not valid JSON/],
        [JSON.stringify({ head_dim: 64, rope_scaling: { rope_type: 'warp', factor: 2 } }), /warp/],
        [
          JSON.stringify({
            head_dim: 8,
            max_position_embeddings: 8192,
            original_max_position_embeddings: 4096,
            rope_scaling: { type: 'longrope', short_factor: [1, 1], long_factor: [1, 1] },
          }),
          /config\.rope_scaling\.(short|long)_factor must hold dim\/2 = 4 values, got 2/,
        ],
        [JSON.stringify({ head_dim: 64, rope_scaling: { rope_type: 'linear', factor: -2 } }), /factor/],
        [
          JSON.stringify({ head_dim: 64, rope_scaling: { rope_type: 'linear', factor: 0.5 } }),
          /config\.rope_scaling\.factor must be a finite number >= 1 .*got 0\.5/,
        ],
        ['{}', /hidden_size|head_dim/],
      ];
      for (const [text, message] of bad) {
        await page.fill('[data-config-json]', text);
        await waitFor(page, (m) => new RegExp(m).test(document.querySelector('[data-inspector-error]').textContent), message.source);
        await waitFor(page, () => !document.querySelector('[data-figure="rope-inspector"] svg[data-panel]'));
        assert.ok(await page.isVisible('[data-inspector-error]'));
        assert.doesNotMatch(await page.textContent('[data-figure="rope-inspector"]'), /Rotary dimension|Bands:/, text);
        assert.equal(await page.inputValue('[data-control="ropePreset"]'), '');
        assert.match(await page.$eval('[data-control="ropePreset"]', (s) => s.selectedOptions[0].textContent), /edited/);
      }
      await page.selectOption('[data-control="ropePreset"]', 'DeepSeek-V3');
      await waitFor(page, () => /Rotary dimension: 64/.test(document.querySelector('[data-figure="rope-inspector"]').textContent));
      assert.equal(await page.isVisible('[data-inspector-error]'), false);
    });

    test('the inspector: dynamic NTK at its extended length, no trained length, type "mrope"', async () => {
      const line = (label) =>
        page.$eval(
          '[data-figure="rope-inspector"]',
          (f, l) => [...f.querySelectorAll('p')].find((p) => p.textContent.startsWith(l))?.textContent ?? '',
          label,
        );
      // dynamic NTK at 8192 = 2 × 4096: base · (2·8192/4096 − 1)^(d/(d−2)), so pair i's wavelength grows by 3^(2i/(d−2))
      await page.fill(
        '[data-config-json]',
        JSON.stringify({ head_dim: 128, rope_theta: 10000, max_position_embeddings: 4096, rope_scaling: { rope_type: 'dynamic', factor: 2 } }),
      );
      await waitFor(page, () => /extended to 8192/.test(document.querySelector('[data-figure="rope-inspector"]').textContent));
      assert.match(await line('Bands'), /^Bands: 1 extrapolated/);
      const csv = (await download(page, '[data-figure="rope-inspector"] [data-download="csv"]')).text.split('\n');
      const last = csv.at(-1).split(',');
      assert.equal(last[0], '63');
      assert.ok(Math.abs(Number(last[3]) / 3 - 1) < 1e-5, `pair 63 stretched ${last[3]}, expected 3`);
      // no max_position_embeddings: no "undefined", and the q·k curve is drawn
      await page.fill('[data-config-json]', JSON.stringify({ head_dim: 64, rope_theta: 10000 }));
      await waitFor(page, () => /no max_position_embeddings/.test(document.querySelector('[data-figure="rope-inspector"]').textContent));
      const text = await page.textContent('[data-figure="rope-inspector"]');
      assert.doesNotMatch(text, /undefined|⚠/);
      const path = await page.$$eval('[data-figure="rope-inspector"] svg[data-panel]', (s) =>
        Math.max(0, ...[...s[1].querySelectorAll('path')].map((p) => (p.getAttribute('d') ?? '').length)),
      );
      assert.ok(path > 500, `the q·k panel draws a curve (${path} characters of path)`);
      // Qwen2-VL's "mrope" is no scaling of the frequencies
      await page.fill(
        '[data-config-json]',
        JSON.stringify({
          head_dim: 128,
          rope_theta: 1000000,
          max_position_embeddings: 32768,
          rope_scaling: { type: 'mrope', mrope_section: [16, 24, 24] },
        }),
      );
      await waitFor(page, () => /M-RoPE/.test(document.querySelector('[data-figure="rope-inspector"]').textContent));
      assert.match(await line('Scaling'), /^Scaling: none/);
      assert.doesNotMatch(await page.textContent('[data-figure="rope-inspector"]'), /mrope scaling|factor 1\b/);
    });

    test('T5: the legend spans the buckets the map shows', async () => {
      const buckets = pe.t5Buckets({ queryLength: 48 }).data;
      const [lo, hi] = [Math.min(...buckets), Math.max(...buckets)];
      const labels = await page.$$eval('[data-figure="t5-buckets"] .panel-legend svg text', (ts) =>
        ts.map((t) => t.textContent).filter((s) => /\d/.test(s)),
      );
      const numbers = labels.map(Number);
      assert.ok(numbers.length >= 2, labels.join(' '));
      assert.ok(numbers.every(Number.isInteger), `bucket labels ${labels}`);
      assert.ok(Math.min(...numbers) >= lo && Math.max(...numbers) <= hi && Math.max(...numbers) >= hi / 2, `${labels} for buckets ${lo}..${hi}`);
    });

    test('ALiBi: one colour scale with a legend, so steep and shallow heads differ; the steepest head is named', async () => {
      const legends = await page.$$eval('[data-figure="alibi-bias"] .panel-legend svg', (s) => s.length);
      assert.ok(legends >= 1, 'a legend');
      // the farthest key (row 15, column 0): head 1's bias −7.5 against head 8's −0.06
      const corner = await page.$$eval('[data-figure="alibi-bias"] canvas', (cs) =>
        cs.map((c) => [...c.getContext('2d').getImageData(0, c.height - 1, 1, 1).data].slice(0, 3)),
      );
      assert.equal(corner.length, 8);
      const distance = (a, b) => Math.hypot(...a.map((v, i) => v - b[i]));
      assert.ok(distance(corner[0], corner[7]) > 120, `head 1 ${corner[0]} vs head 8 ${corner[7]}`);
      await set(page, 'alibiHeads', '6');
      await waitCaption(page, 'alibi-bias', '6 heads');
      // 6 heads: slopes 1/4, 1/16, 1/64, 1/256, then 1/2, 1/8: head 5 is the steepest
      const slopes = Array.from(pe.alibiSlopes(6));
      const steepest = slopes.indexOf(Math.max(...slopes)) + 1;
      assert.equal(steepest, 5);
      assert.match(await takeaway(page, 'alibi-bias'), new RegExp(`from head ${steepest},`));
      assert.doesNotMatch(await caption(page, 'alibi-bias'), /geometric slopes/);
      await set(page, 'alibiHeads', '8');
    });

    test('the copy task: the dashed reference is what a model blind to order can reach, not a blind guess', async () => {
      const want = copyOrderBlind();
      await set(page, 'toyTask', 'copy');
      await waitCaption(page, 'training-curves', 'which token is at position k');
      assert.match(await caption(page, 'training-curves'), new RegExp(`${(100 * want).toFixed(1)}%`));
      const [ruleY, expectY] = await page.$eval(
        '[data-figure="training-curves"] svg[data-panel]',
        (s, w) => [Number(s.querySelector('g.order-blind line')?.getAttribute('y1')), s.scale('y').apply(w)],
        want,
      );
      assert.ok(Math.abs(ruleY - expectY) < 0.5, `rule at ${ruleY}, ${(100 * want).toFixed(1)}% is at ${expectY}`);
      await set(page, 'toyTask', 'before');
    });

    test('the position slider: named, spans the positions shown', async () => {
      const slider = await page.$eval('[data-control="scrub"]', (el) => ({
        labels: el.labels.length,
        name: el.labels[0]?.textContent.trim(),
        max: el.max,
      }));
      assert.ok(slider.labels >= 1 && /Position/.test(slider.name), JSON.stringify(slider));
      assert.equal(slider.max, '499');
      await set(page, 'length', '100');
      await waitFor(page, () => document.querySelector('[data-control="scrub"]').max === '99');
      await set(page, 'length', '500');
      // (a bad value in the link is reported: checked with the other bad link values, in bad-input.test.js)
    });

    test('heatmaps: crisp cells, fast columns still oscillate at 4096 × 1024, an honest similarity scale', async () => {
      const canvas = () =>
        page.$eval('[data-figure="sinusoidal-heatmap"] canvas', (c) => {
          const d = c.getContext('2d').getImageData(0, 0, 1, c.height).data;
          const lum = [];
          for (let i = 0; i < d.length; i += 4) lum.push(0.3 * d[i] + 0.59 * d[i + 1] + 0.11 * d[i + 2]);
          const mean = lum.reduce((a, b) => a + b, 0) / lum.length;
          return { width: c.width, rendering: c.style.imageRendering, std: Math.sqrt(lum.reduce((a, b) => a + (b - mean) ** 2, 0) / lum.length) };
        });
      const small = await canvas();
      assert.equal(small.width, 64);
      assert.equal(small.rendering, 'pixelated');
      // the similarity of d = 64 rows lies in 11 … 32: a sequential scale over that range
      const sim = pe.similarity(pe.sinusoidal({ length: 100, dModel: 64 })).data;
      const labels = (await page.$$eval('[data-figure="similarity"] .panel:first-child .panel-legend svg text', (ts) => ts.map((t) => t.textContent)))
        .filter((s) => /\d/.test(s))
        .map(Number);
      assert.ok(Math.min(...labels) >= Math.floor(Math.min(...sim)) - 1e-9, `similarity legend ${labels}`);
      await set(page, 'length', '4096');
      await set(page, 'dModel', '1024');
      await waitCaption(page, 'sinusoidal-heatmap', '1024 dimensions');
      await waitFor(page, () => document.querySelector('[data-figure="sinusoidal-heatmap"] canvas')?.dataset.painted === 'true');
      const big = await canvas();
      assert.ok(big.std > 40, `column 0 at 4096 × 1024: luminance std ${big.std.toFixed(1)} (flat grey is 0)`);
      const shown = await page.$eval('[data-figure="sinusoidal-heatmap"] canvas', (c) => c.height);
      assert.match(await page.textContent('[data-figure="sinusoidal-heatmap"] .raster-note'), new RegExp(`^${shown} of 4096 rows shown`));
      await set(page, 'length', '500');
      await set(page, 'dModel', '64');
      await waitCaption(page, 'sinusoidal-heatmap', '64 dimensions');
    });

    test('heatmap ticks are round numbers; dimension-curves rows do not collide', async () => {
      const y = (await ticks(page, 'sinusoidal-heatmap', 'y-axis tick label')).map(Number);
      const step = y[1] - y[0];
      assert.ok(
        [1, 2, 5].some((m) => Number.isInteger(Math.log10(step / m))),
        `ticks ${y}`,
      );
      assert.ok(
        y.every((v) => v % step === 0),
        `ticks ${y}`,
      );
      assert.deepEqual(await overlaps(page, '[data-figure="dimension-curves"] svg[data-panel] g[data-axis*="y-axis tick label"] text'), []);
    });

    test('SVG and PNG downloads: labels keep their anchors and stay inside; titles do not overlap', async () => {
      for (const id of ['extrapolation', 'alibi-bias']) {
        const { text } = await download(page, `[data-figure="${id}"] [data-download="svg"]`);
        const check = await page.evaluate((svgText) => {
          const host = document.body.appendChild(document.createElement('div'));
          host.innerHTML = svgText;
          const root = host.querySelector('svg');
          const box = root.getBoundingClientRect();
          const outside = [...root.querySelectorAll('text')]
            .filter((t) => t.textContent.trim())
            .filter((t) => {
              const r = t.getBoundingClientRect();
              return r.left < box.left - 1 || r.right > box.right + 1 || r.top < box.top - 1 || r.bottom > box.bottom + 1;
            })
            .map((t) => t.textContent);
          const titles = [...root.querySelectorAll(':scope > text')].map((t) => t.getBoundingClientRect());
          let overlap = 0;
          for (let a = 0; a < titles.length; a++)
            for (let b = a + 1; b < titles.length; b++) {
              const [p, q] = [titles[a], titles[b]];
              if (p.left < q.right && q.left < p.right && p.top < q.bottom && q.top < p.bottom) overlap++;
            }
          const anchors = [...root.querySelectorAll(':scope > svg')].map((s) => s.getAttribute('text-anchor'));
          const label = [...root.querySelectorAll('text')].find((t) => t.textContent.startsWith('no rows past'));
          host.remove();
          return { outside, overlap, anchors, label: label?.textContent };
        }, text);
        assert.deepEqual(check.outside, [], id);
        assert.equal(check.overlap, 0, `${id}: overlapping titles`);
        assert.ok(check.anchors.includes('middle'), `${id}: ${check.anchors}`);
        if (id === 'extrapolation') assert.equal(check.label, 'no rows past L_max = 512');
      }
      const png = await download(page, '[data-figure="extrapolation"] [data-download="png"]');
      assert.match(png.name, /\.png$/);
      const size = await page.evaluate(async (url) => {
        const img = new Image();
        img.src = url;
        await img.decode();
        return [img.naturalWidth, img.naturalHeight];
      }, png.dataURL);
      const width = await page.$eval('[data-figure="extrapolation"] .panels', (b) => b.scrollWidth);
      assert.equal(size[0], 2 * (width + 4)); // the SVG's width (the panels and 4 px of room), at twice the size
    });

    test('controls follow each other: one sentence everywhere, one shift k, a long sentence is cut with a note', async () => {
      await set(page, 'sentence', 'dogs chase cats');
      await waitCaption(page, 'score-terms', '"dogs chase cats"');
      await waitCaption(page, 'attention-recap', '"dogs chase cats"');
      const shift = await page.$$eval('.controls label', (ls) => ls.filter((l) => /Shift k/.test(l.textContent)).length);
      assert.equal(shift, 1);
      await set(page, 'shiftK', '5');
      await waitCaption(page, 'shift-matrix', 'M_5');
      await waitCaption(page, 'clock-faces', 'M_5');
      const long = Array.from({ length: 184 }, (_, i) => ['the', 'cat', 'sat'][i % 3]).join(' ') + ' end';
      assert.ok(long.length > 700);
      await set(page, 'sentence', long);
      await waitFor(page, () => /first 400 of \d+ characters/.test(document.querySelector('[data-note-for="sentence"]')?.textContent ?? ''));
      // 200 one-letter words: the attention maps' labels do not overlap
      await set(page, 'sentence', Array.from({ length: 200 }, (_, i) => String.fromCharCode(97 + (i % 26))).join(' '));
      await waitCaption(page, 'permutation-lab', '"a b c d');
      await waitFor(page, () => document.querySelectorAll('[data-figure="attention-weights"] canvas').length === 2);
      for (const axis of ['x-axis tick label', 'y-axis tick label'])
        for (let k = 0; k < 2; k++) {
          const sel = `[data-figure="attention-weights"] .panel:nth-of-type(${k + 1}) svg[data-panel] g[data-axis*="${axis}"] text`;
          assert.deepEqual(await overlaps(page, sel), [], `${axis}, map ${k + 1}`);
        }
      await set(page, 'sentence', 'The cat sat on the mat');
      await set(page, 'shiftK', '3');
    });

    test('words agree with their numbers: one hand, one head, no "up to 0", no side names, no checksum', async () => {
      await set(page, 'dModel', '2');
      await waitCaption(page, 'clock-faces', 'd = 2,');
      assert.match(await caption(page, 'clock-faces'), /as 1 clock hand \(/);
      await set(page, 'dModel', '64');
      await set(page, 'alibiHeads', '1');
      await waitCaption(page, 'alibi-bias', '1 head)');
      assert.doesNotMatch(await caption(page, 'alibi-bias'), /\b1 heads/);
      await set(page, 't5Buckets', '4');
      await waitCaption(page, 't5-buckets', 'to 4 buckets');
      assert.doesNotMatch(await caption(page, 't5-buckets'), /up to 0\b/);
      await set(page, 'alibiHeads', '8');
      await set(page, 't5Buckets', '32');
      // a position where exactly one of the 8 hands (d = 64) is within 0.2 rad of its start
      const near = (p) =>
        Array.from({ length: 8 }, (_, i) => p * 10000 ** (-(2 * i) / 64)).filter((a) => Math.abs(Math.atan2(Math.sin(a), Math.cos(a))) < 0.2).length;
      let p = 1;
      while (near(p) !== 1) p++;
      await set(page, 'scrub', String(p));
      await waitFor(page, (q) => document.querySelector('[data-reveal="clock"]').textContent.includes(`At p = ${q} `), p);
      assert.match(await page.textContent('[data-reveal="clock"]'), /; 1 of 8 hands is within/);
      await page.click('[data-action="benchmark"]');
      await waitCaption(page, 'performance', 'median of');
      assert.doesNotMatch(await caption(page, 'performance'), /checksum/);
    });
    // (390 px: no caption names a panel by its side: checked on layout.test.js's 390 px page)

    test('clock faces: round clocks; the takeaway names the pairs drawn, their turns and the dashed hands', async () => {
      const [p, k, d] = await Promise.all(['scrub', 'shiftK', 'dModel'].map(async (c) => Number(await page.inputValue(`[data-control="${c}"]`))));
      const shown = Math.min(8, d / 2);
      const turns = (i) => ((p * 10000 ** (-(2 * i) / d)) / (2 * Math.PI)).toFixed(2); // float64, hand i at position p
      const said = await takeaway(page, 'clock-faces');
      assert.match(said, new RegExp(`pairs 0–${shown - 1} of ${d / 2}\\b`), said);
      assert.match(said, new RegExp(`fastest hand drawn has made ${turns(0)} turns, the slowest ${turns(shown - 1)}\\b`), said);
      assert.match(said, new RegExp(`[Dd]ashed orange: M_${k}·PE\\(${p}\\)`), said);
      // every outline is a circle on screen (x and y in the same units), at the page's width and at 390 px
      const outlines = () =>
        page.$$eval('[data-figure="clock-faces"] svg[data-panel] g[stroke="#bbb"] path', (ps) =>
          ps.map((path) => {
            const b = path.getBBox();
            return [b.width, b.height];
          }),
        );
      const round = (boxes, at) => {
        assert.equal(boxes.length, shown, `${at}: ${boxes.length} outlines`);
        for (const [w, h] of boxes) assert.ok(Math.abs(w - h) <= 1, `${at}: outline ${w.toFixed(1)} × ${h.toFixed(1)}`);
      };
      const wide = await outlines();
      round(wide, 'page width');
      const size = { width: 1200, height: 900 }; // openPage's viewport
      await page.setViewportSize({ width: 390, height: 900 });
      try {
        await waitFor(
          page,
          (w) => {
            const path = document.querySelector('[data-figure="clock-faces"] svg[data-panel] g[stroke="#bbb"] path');
            return path && path.getBBox().width < w - 1;
          },
          wide[0][0],
        );
        round(await outlines(), '390 px');
      } finally {
        await page.setViewportSize(size);
      }
    });

    test('position sinusoids: each row is a chirp whose phase slows along i, at the d the figure draws', async () => {
      const axis = await page.$eval('[data-figure="position-sinusoids"] svg[data-panel]', (s) => s.textContent);
      const [, base, d] = /sin\(k \/ (\d+)\^\(2i\/(\d+)\)\)/.exec(axis).map(Number);
      const said = await takeaway(page, 'position-sinusoids');
      assert.doesNotMatch(said, /sinusoid of its own/, said);
      assert.match(said, new RegExp(`d = ${d}\\b`), said);
      const text = await caption(page, 'position-sinusoids');
      assert.doesNotMatch(text, /its own sinusoid/, text);
      // the argument k / base^(2i/d) in float64: how far it moves per step of i, at the start and at the end
      const m = /for k = (\d+) the argument moves ([\d.]+) rad from i = 0 to 1 and ([\d.]+) rad from i = (\d+) to/.exec(text);
      assert.ok(m, text);
      const [kk, first, last, i] = [Number(m[1]), m[2], m[3], Number(m[4])];
      const step = (j) => kk / base ** ((2 * j) / d) - kk / base ** ((2 * (j + 1)) / d);
      assert.equal(first, step(0).toFixed(3));
      assert.equal(last, step(i).toFixed(3));
      assert.ok(step(i) < step(0) / 10);
    });

    test('distinguishability: the legend runs by d as numbers; each d has one hue for both tables', async () => {
      const swatches = await page.$$eval('[data-figure="distinguishability"] .panel-legend svg[fill]', (ss) =>
        ss.map((s) => [s.parentElement.textContent.trim(), s.getAttribute('fill')]),
      );
      assert.equal(swatches.length, 6, JSON.stringify(swatches));
      const ds = swatches.map(([label]) => Number(/d=(\d+)/.exec(label)[1]));
      assert.deepEqual(
        ds,
        [...ds].sort((a, b) => a - b),
        `legend order ${swatches.map((s) => s[0])}`,
      );
      const hue = (hex) => {
        const [r, g, b] = [1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16) / 255);
        const [max, min] = [Math.max(r, g, b), Math.min(r, g, b)];
        const c = max - min;
        const h = max === r ? ((g - b) / c) % 6 : max === g ? (b - r) / c + 2 : (r - g) / c + 4;
        return (h * 60 + 360) % 360;
      };
      for (const d of new Set(ds)) {
        const fills = swatches.filter((_, j) => ds[j] === d).map(([, f]) => f);
        assert.equal(fills.length, 2, `d = ${d}: ${fills}`);
        const gap = Math.abs(hue(fills[0]) - hue(fills[1]));
        assert.ok(Math.min(gap, 360 - gap) < 5, `d = ${d}: ${fills} are different hues`);
      }
      assert.match(await takeaway(page, 'distinguishability'), /dashed/);
    });

    test('numbers read with a minus sign (U+2212), the downloads keep the hyphen', async () => {
      for (const id of ['input-pipeline', 'extrapolation', 'sinusoidal-heatmap']) {
        const text = await page.textContent(`[data-figure="${id}"]`);
        assert.doesNotMatch(text, /(^|[^\w])-\d/, `${id}: ${/(^|[^\w])-\d.{0,20}/.exec(text)?.[0]}`);
      }
      assert.match(await page.textContent('[data-figure="input-pipeline"]'), /\[−\d/);
      const csv = (await download(page, '[data-figure="robot-table"] [data-download="csv"]')).text;
      assert.match(csv, /,-\d/);
      assert.doesNotMatch(csv, /−/);
    });

    test('wavelengths: one pair (d = 2) is one wavelength, not a range', async () => {
      await set(page, 'dModel', '2');
      try {
        await waitFor(page, () => document.querySelectorAll('[data-figure="wavelengths"] svg[data-panel] circle').length === 1);
        const said = await takeaway(page, 'wavelengths');
        assert.doesNotMatch(said, /from .* to/, said);
        assert.match(said, new RegExp(`${(2 * Math.PI).toFixed(2)} positions`), said);
        assert.doesNotMatch(await caption(page, 'wavelengths'), /from 2π .* to/);
      } finally {
        await set(page, 'dModel', '64');
      }
      await waitFor(page, () => document.querySelectorAll('[data-figure="wavelengths"] svg[data-panel] circle').length === 32);
    });
  },
  { concurrent: true },
);
