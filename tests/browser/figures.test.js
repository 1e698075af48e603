// Figures of the sinusoidal section: the input pipeline with its √d toggle, the matshow example (n = 10^4,
// d = 512, 100 positions), the extrapolation picture (a learned table with no rows past L_max), the
// linked exploration; and the figures that the notebooks draw from the same specs.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { loadLab } from 'posenc/lab';
import { toCSV } from '../../web/figures/spec.js';
import { codeOf, figureImports, figuresOf, notebooks } from '../notebooks/records.js';
import { download, inEachEngine, openPage } from './server.js';

const pe = await loadLab(); // every core method and the lab's, as the page loads them
const stat = (text, name) => Number(new RegExp(`${name} (-?[\\d.]+)`).exec(text)[1]);
const pipelineLine = (page, label) =>
  page.$eval('[data-figure="input-pipeline"]', (f, l) => [...f.querySelectorAll('p')].find((p) => p.textContent.startsWith(l)).textContent, label);

inEachEngine(
  'figures',
  (suite) => {
    describe('input pipeline, matshow example, extrapolation', () => {
      // one page at the defaults for the first two tests, in this order (the matshow example changes d)
      let page;
      let problems;
      before(async () => {
        ({ page, problems } = await openPage(suite.browser, suite.server.url));
      });
      after(() => page?.close());

      test('input pipeline: √d multiplies the token spread by √d; without it the positions dominate', async () => {
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
        await page.click('[data-action="matshow"]');
        await page.waitForFunction(() => {
          const t = document.querySelector('[data-figure="sinusoidal-heatmap"] figcaption').textContent;
          return t.includes('100 positions') && t.includes('512 dimensions') && t.includes('base 10000');
        });
        assert.match(page.url(), /dModel=512/);
        assert.deepEqual(problems.pageErrors, []);
      });

      test('extrapolation: the learned table is empty past L_max, the sinusoid is not', async () => {
        const { page } = await openPage(suite.browser, `${suite.server.url}?maxLength=100&position=150`);
        await page.waitForFunction(() => document.querySelector('[data-figure="extrapolation"] figcaption').textContent.includes('100 rows'));
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
        await page.close();
      });
    });

    describe('the linked exploration', () => {
      test('the position scrubber marks its row everywhere; the clock hands are p·w_i', async () => {
        const { page, problems } = await openPage(suite.browser, `${suite.server.url}?dModel=8&scrub=63`);
        await page.waitForFunction(() => document.querySelector('[data-figure="clock-faces"] figcaption').textContent.includes('PE(63)'));
        const caption = await page.textContent('[data-figure="clock-faces"] figcaption');
        // pair 0 turns once per 2π positions: 63 / 2π turns, 63 − 20π rad past its start
        assert.match(caption, new RegExp(`Pair 0 has made ${(63 / (2 * Math.PI)).toFixed(2)} turns and sits ${(63 - 20 * Math.PI).toFixed(3)} rad`));
        const marked = async (id) => page.$$eval(`[data-figure="${id}"] svg[data-panel] [stroke="#d7191c"]`, (els) => els.length);
        for (const id of ['sinusoidal-heatmap', 'dimension-curves', 'similarity']) assert.ok((await marked(id)) > 0, `${id} marks p`);
        assert.match(await page.textContent('[data-figure="row-vector"] figcaption'), /Row 63/);
        // M_k: the orange hands land on PE(p + k)
        assert.match(caption, /landing on PE\(66\) within \d\.\de-\d+ rad/);
        await page.fill('[data-control="shiftK"]', '10');
        await page.waitForFunction(() => document.querySelector('[data-figure="clock-faces"] figcaption').textContent.includes('PE(73)'));
        assert.match(await page.textContent('[data-reveal="clock"]'), /fastest hand has made 10\.03 turns/);
        assert.deepEqual(problems.pageErrors, []);
        await page.close();
      });
    });

    // The other half of tests/notebooks/specs.test.js: a figure of a notebook and the page's figure drawn
    // from the same spec with the same params hold the same data. For each pair below, the notebook's
    // recorded params are set on the page through its URL, and the page's CSV download is compared
    // with the spec's csv computed here (to 1e-6: the page runs in Chromium's V8, this test in Node's).
    describe("the notebooks' figures are the page's", () => {
      const PAIRS = [
        // [notebook, page figure, spec, the page's URL for the notebook's params]
        ['01', 'attention-weights', 'attentionWeights', (p) => `encoding=${p.encoding}&perm=${pe.permutationLab({}).permutation.join(',')}`],
        ['02', 'sinusoidal-heatmap', 'sinusoidalHeatmap', (p) => `length=${p.length}&dModel=${p.dModel}`],
        ['02', 'dimension-curves', 'dimensionCurves', (p) => `length=${p.length}&dModel=${p.dModel}`],
        ['03', 'rope-scaling', 'ropeScaling', (p) => `factor=${p.factor}`],
        ['03', 'alibi-bias', 'alibiBias', (p) => `alibiHeads=${p.heads}&alibiLength=${p.length}&alibiSymmetric=causal`],
      ];
      const cells = (csv) => csv.split('\n').map((line) => line.split(','));
      const close = (a, b) => a === b || (a !== '' && b !== '' && Math.abs(Number(a) - Number(b)) <= 1e-6 * Math.max(1, Math.abs(Number(b))));
      // one page per URL (two figures of a notebook can share one), each loaded once
      const pages = new Map();
      const pageAt = (url) => {
        if (!pages.has(url)) pages.set(url, openPage(suite.browser, url));
        return pages.get(url);
      };
      after(async () => {
        for (const opened of pages.values()) await (await opened).page.close();
      });

      for (const [prefix, id, specName, query] of PAIRS)
        test(`${id}: the page's data equals notebook ${prefix}'s ${specName} figure`, async () => {
          const { name, nb } = notebooks().find((n) => n.name.startsWith(prefix));
          const recorded = figuresOf(nb).find((f) => f.spec === specName);
          assert.ok(recorded, `${name} has no ${specName} figure`);
          const params = JSON.parse(recorded.params);
          const file = figureImports(codeOf(nb))[specName];
          const spec = (await import(`../../web/figures/${file}`))[specName];
          const want = cells(toCSV(spec(pe, params).csv));
          const { page, problems } = await pageAt(`${suite.server.url}?${query(params)}`);
          await page.waitForSelector(`[data-figure="${id}"][data-rendered="true"] [data-download="csv"]`);
          const got = cells((await download(page, `[data-figure="${id}"] [data-download="csv"]`)).text);
          assert.deepEqual(problems.pageErrors, []);
          assert.equal(got.length, want.length, `${id}: ${got.length} CSV lines, the spec has ${want.length}`);
          got.forEach((row, r) =>
            assert.ok(row.length === want[r].length && row.every((v, c) => close(v, want[r][c])), `${id}, CSV line ${r + 1}: ${row} vs ${want[r]}`),
          );
        });
    });
  },
  { concurrent: true },
);
