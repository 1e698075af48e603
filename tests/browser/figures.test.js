// Figures of the sinusoidal section: the input pipeline with its √d toggle, the matshow example (n = 10^4,
// d = 512, 100 positions), the extrapolation picture (a learned table with no rows past L_max), the
// linked exploration; and the figures that the notebooks draw from the same specs.
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { loadLab } from 'posenc/lab';
import { toCSV } from '../../web/figures/spec.js';
import { codeOf, figureImports, figuresOf, notebooks } from '../notebooks/records.js';
import { download, inEachEngine, openPage } from './server.js';

const pe = await loadLab(); // every core method and the lab's, as the page loads them
const stat = (text, name) => Number(new RegExp(`${name} ([−-]?[\\d.]+)`).exec(text)[1].replace('−', '-')); // a minus sign or a hyphen
const pipelineLine = (page, label) =>
  page.$eval('[data-figure="input-pipeline"]', (f, l) => [...f.querySelectorAll('p')].find((p) => p.textContent.startsWith(l)).textContent, label);

// The notebooks' figures (below) that the page draws, each set on the page through its link: the params
// of notebook figures that set different figures share one link (a second link only when two ask the
// same control different values). Computed here, before any page is opened.
const PAIRS = [
  // [notebook, page figure, spec, the page's URL parameters for the notebook's params]
  ['01', 'attention-weights', 'attentionWeights', (p) => ({ encoding: p.encoding, perm: pe.permutationLab({}).permutation.join(',') })],
  ['02', 'sinusoidal-heatmap', 'sinusoidalHeatmap', (p) => ({ length: p.length, dModel: p.dModel })],
  ['02', 'dimension-curves', 'dimensionCurves', (p) => ({ length: p.length, dModel: p.dModel })],
  ['03', 'rope-scaling', 'ropeScaling', (p) => ({ factor: p.factor })],
  ['03', 'alibi-bias', 'alibiBias', (p) => ({ alibiHeads: p.heads, alibiLength: p.length, alibiSymmetric: 'causal' })],
].map(([prefix, id, specName, query]) => {
  const { name, nb } = notebooks().find((n) => n.name.startsWith(prefix));
  const recorded = figuresOf(nb).find((f) => f.spec === specName);
  const params = recorded && JSON.parse(recorded.params);
  return { prefix, id, specName, name, nb, recorded, params, query: params && Object.entries(query(params)).map(([k, v]) => [k, String(v)]) };
});
const LINKS = [];
for (const pair of PAIRS) {
  if (!pair.query) continue;
  const fits = (link) => pair.query.every(([k, v]) => !link.has(k) || link.get(k) === v);
  const link = LINKS.find(fits) ?? LINKS[LINKS.push(new Map()) - 1];
  for (const [k, v] of pair.query) link.set(k, v);
  pair.link = LINKS.indexOf(link);
}
// the pairs of the later links first: the page of link 0 stays open for the tests after them
PAIRS.sort((a, b) => (b.link ?? 0) - (a.link ?? 0));

inEachEngine(
  'figures',
  (suite) => {
    // The pages of the notebooks' links, each loaded once, the first one last and kept for the rest of the
    // file (the other figures' controls are at their defaults there): the notebooks' figures are read
    // first, then the tests that change controls, in this order (the matshow example changes d, the
    // linked exploration sets it again).
    // One page open at a time (Firefox runs a background tab's timers slowly).
    const urlOf = (link) => `${suite.server.url}?${new URLSearchParams([...(LINKS[link] ?? [])])}`;
    let opened = null; // { link, ready: openPage(...) }
    const pageAt = (link) => {
      if (opened?.link !== link) {
        const previous = opened?.ready;
        const ready = (async () => {
          await (await previous)?.page.close();
          return openPage(suite.browser, urlOf(link));
        })();
        opened = { link, ready };
      }
      return opened.ready;
    };
    after(async () => (await opened?.ready)?.page.close());
    // Sets a control as a reader would (the page redraws after a debounce).
    const fill = async (page, control, value) => {
      await page.fill(`[data-control="${control}"]`, value);
      await page.dispatchEvent(`[data-control="${control}"]`, 'change');
    };

    // The other half of tests/notebooks/specs.test.js: a figure of a notebook and the page's figure drawn
    // from the same spec with the same params hold the same data. For each pair, the notebook's recorded
    // params are set on the page through its URL, and the page's CSV download is compared with the
    // spec's csv computed here (to 1e-6: the page runs in the browser's JavaScript engine, this test in Node's).
    describe("the notebooks' figures are the page's", () => {
      const cells = (csv) => csv.split('\n').map((line) => line.split(','));
      const close = (a, b) => a === b || (a !== '' && b !== '' && Math.abs(Number(a) - Number(b)) <= 1e-6 * Math.max(1, Math.abs(Number(b))));

      for (const { prefix, id, specName, name, nb, recorded, params, link } of PAIRS)
        test(`${id}: the page's data equals notebook ${prefix}'s ${specName} figure`, async () => {
          assert.ok(recorded, `${name} has no ${specName} figure`);
          const file = figureImports(codeOf(nb))[specName];
          const spec = (await import(`../../web/figures/${file}`))[specName];
          const want = cells(toCSV(spec(pe, params).csv));
          const { page, problems } = await pageAt(link);
          await page.waitForSelector(`[data-figure="${id}"][data-rendered="true"] [data-download="csv"]`);
          const got = cells((await download(page, `[data-figure="${id}"] [data-download="csv"]`)).text);
          assert.deepEqual(problems.pageErrors, []);
          assert.equal(got.length, want.length, `${id}: ${got.length} CSV lines, the spec has ${want.length}`);
          got.forEach((row, r) =>
            assert.ok(row.length === want[r].length && row.every((v, c) => close(v, want[r][c])), `${id}, CSV line ${r + 1}: ${row} vs ${want[r]}`),
          );
        });
    });

    describe('input pipeline, matshow example, extrapolation', () => {
      test('input pipeline: √d multiplies the token spread by √d; without it the positions dominate', async () => {
        const { page, problems } = await pageAt(0);
        assert.equal(LINKS[0]?.has('pipeScale') ?? false, false, 'the pipeline at its defaults');
        await page.waitForSelector('[data-figure="input-pipeline"][data-rendered="true"]');
        const on = await pipelineLine(page, 'token embedding × √64');
        await page.selectOption('[data-control="pipeScale"]', 'off');
        await page.waitForFunction(() => document.querySelector('[data-figure="input-pipeline"]').textContent.includes('no √d'));
        const off = await pipelineLine(page, 'token embedding (no √d)');
        assert.ok(Math.abs(stat(on, 'std') / stat(off, 'std') - 8) < 0.011, `${on} / ${off}`); // 4 printed decimals
        assert.match(await page.textContent('[data-figure="input-pipeline"]'), /positional term dominates/);
        const pos = await pipelineLine(page, 'positional encoding');
        const sum = await pipelineLine(page, 'sum');
        assert.ok(Math.abs(stat(sum, 'mean') - stat(off, 'mean') - stat(pos, 'mean')) < 1e-4, 'means add up');
        assert.equal(await page.$$eval('[data-figure="input-pipeline"] svg[data-panel]', (s) => s.length), 3);
        assert.deepEqual(problems.pageErrors, []);
      });

      test('the matshow example sets n = 10^4, d = 512, 100 positions', async () => {
        const { page, problems } = await pageAt(0);
        await page.click('[data-action="matshow"]');
        await page.waitForFunction(() => {
          const t = document.querySelector('[data-figure="sinusoidal-heatmap"] figcaption').textContent;
          return t.includes('100 positions') && t.includes('512 dimensions') && t.includes('base 10000');
        });
        assert.match(page.url(), /dModel=512/);
        assert.deepEqual(problems.pageErrors, []);
      });

      test('extrapolation: the learned table is empty past L_max, the sinusoid is not', async () => {
        const { page, problems } = await pageAt(0);
        await fill(page, 'maxLength', '100');
        await fill(page, 'position', '150');
        await page.waitForFunction(() => {
          const f = document.querySelector('[data-figure="extrapolation"]');
          return f.querySelector('figcaption').textContent.includes('100 rows') && /150.*maxLength is 100/.test(f.textContent);
        });
        const filled = await page.$$eval('[data-figure="extrapolation"] canvas', (cs) =>
          cs.map((c) => {
            const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
            const rowFilled = (y) => d[(y * c.width + Math.floor(c.width / 2)) * 4 + 3] > 0;
            return [rowFilled(Math.floor(c.height * 0.1)), rowFilled(c.height - 1)];
          }),
        );
        assert.deepEqual(filled, [
          [true, false],
          [true, true],
        ]);
        assert.match(await page.textContent('[data-figure="extrapolation"]'), /RangeError: .*150.*maxLength is 100/);
        assert.deepEqual(problems.pageErrors, []);
      });
    });

    describe('the linked exploration', () => {
      test('the position scrubber marks its row everywhere; the clock hands are p·w_i', async () => {
        const { page, problems } = await pageAt(0);
        await fill(page, 'dModel', '8');
        await fill(page, 'scrub', '63');
        await page.waitForFunction(
          () =>
            document.querySelector('[data-figure="clock-faces"] figcaption').textContent.includes('PE(63)') &&
            document.querySelector('[data-figure="sinusoidal-heatmap"] figcaption').textContent.includes('by 8 dimensions'),
        );
        const caption = await page.textContent('[data-figure="clock-faces"] figcaption');
        // pair 0 turns once per 2π positions: 63 / 2π turns, 63 − 20π rad past its start
        assert.match(caption, new RegExp(`Pair 0 has made ${(63 / (2 * Math.PI)).toFixed(2)} turns and sits ${(63 - 20 * Math.PI).toFixed(3)} rad`));
        const marked = async (id) => page.$$eval(`[data-figure="${id}"] svg[data-panel] [stroke="#d7191c"]`, (els) => els.length);
        for (const id of ['sinusoidal-heatmap', 'dimension-curves', 'similarity']) assert.ok((await marked(id)) > 0, `${id} marks p`);
        // the similarity figure says what its red marks and its two curves are where the reader looks
        await page.waitForFunction(() => /Red: position 63/.test(document.querySelector('[data-figure="similarity"] .takeaway').textContent));
        const curves = await page.$$eval('[data-figure="similarity"] .panel:nth-child(2) .panel-legend', (ls) => ls.map((l) => l.textContent));
        assert.deepEqual(
          curves.map((t) => [/from position 0/.test(t), /from position 40/.test(t)]),
          [[true, true]],
        );
        assert.match(await page.textContent('[data-figure="row-vector"] figcaption'), /Row 63/);
        // M_k: the orange hands land on PE(p + k)
        assert.match(caption, /landing on PE\(66\) within \d\.\de-\d+ rad/);
        await page.fill('[data-control="shiftK"]', '10');
        await page.waitForFunction(() => document.querySelector('[data-figure="clock-faces"] figcaption').textContent.includes('PE(73)'));
        assert.match(await page.textContent('[data-reveal="clock"]'), /fastest hand has made 10\.03 turns/);
        assert.deepEqual(problems.pageErrors, []);
      });
    });
  },
  { concurrent: true },
);
