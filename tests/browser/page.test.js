// The demo page in real headless browsers (Chromium and Firefox).
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { artifacts, fullPage, inEachEngine, openPage } from './server.js';

inEachEngine(
  'demo page',
  (suite) => {
    // One page, loaded once, for the tests in this order: the first reads it as it loads; each later one
    // changes only what it reads (the API reference, last, leaves it for another document).
    let page;
    let problems;
    before(async () => {
      ({ page, problems } = await openPage(suite.browser, suite.server.url));
    });
    after(() => page?.close());

    test('loads the SIMD build, renders every figure, no console errors, no foreign requests', async () => {
      assert.match(await page.textContent('[data-backend]'), /wasm-simd/);
      await page.click('[data-action="benchmark"]');
      await page.waitForSelector('[data-figure="performance"][data-rendered="true"]', { timeout: 60000 });
      await page.waitForSelector('[data-figure="distinguishability"][data-rendered="true"]', { timeout: 60000 });
      const figures = await page.$$eval('[data-figure]', (els) =>
        els.map((el) => ({
          id: el.dataset.figure,
          rendered: el.dataset.rendered,
          content: el.querySelectorAll('svg, canvas, img, table, p').length,
          caption: el.querySelector('figcaption')?.textContent ?? '',
        })),
      );
      assert.ok(figures.length >= 19, `${figures.length} figures`);
      for (const f of figures) {
        assert.equal(f.rendered, 'true', `${f.id} did not render`);
        assert.ok(f.content > 0, `${f.id} is empty`);
        assert.ok(f.caption.length > 20, `${f.id} has no text alternative`);
      }
      await page.screenshot({ path: join(artifacts, `page-default-${suite.engine}.png`), fullPage });
      assert.deepEqual(problems, { console: [], pageErrors: [], foreign: [] });
    });

    test('the robot table shows sin and cos of its positions', async () => {
      const cells = await page.$$eval('[data-figure="robot-table"] tbody tr', (rows) => rows.map((r) => [...r.cells].map((c) => c.textContent)));
      // n = 100, d = 4: the pairs turn at frequencies 1 and 100^(-2/4) = 1/10
      const want = [0, 1, 2, 3].map((p) => [Math.sin(p), Math.cos(p), Math.sin(p / 10), Math.cos(p / 10)]);
      assert.deepEqual(
        cells.map((r) => r[0]),
        ['I', 'am', 'a', 'robot'],
      );
      // (negative numbers read with the minus sign U+2212)
      const number = (v) => Number(v.replace('−', '-'));
      cells.forEach((r, k) => r.slice(2).forEach((v, j) => assert.ok(Math.abs(number(v) - want[k][j]) <= 1e-6, `${v} vs ${want[k][j]}`)));
    });

    test('a learned table refuses positions past its length; the sinusoid continues', async () => {
      const text = await page.textContent('[data-figure="extrapolation"]');
      assert.match(text, /RangeError: .*positions\[0\] is 600, but maxLength is 512/);
      assert.match(text, /Sinusoidal row 600/);
      await page.fill('[data-control="position"]', '100');
      await page.waitForFunction(() => document.querySelector('[data-figure="extrapolation"]').textContent.includes('inside the table'));
      await page.screenshot({ path: join(artifacts, `page-extrapolation-${suite.engine}.png`) });
    });

    test('the lab: < 1e-4 without an encoding, > 1e-3 with sinusoidal after shuffling; reversal blind spot', async () => {
      const metric = async () => Number(await page.getAttribute('[data-metric="equivariance-error"]', 'data-value'));
      const waitMetric = (pred) => page.waitForFunction(pred, null, { timeout: 30000 });
      assert.equal(await page.inputValue('[data-control="encoding"]'), 'none');
      await page.click('[data-action="shuffle"]');
      await waitMetric(() => document.querySelector('[data-metric="equivariance-error"]').dataset.value !== undefined);
      assert.ok((await metric()) < 1e-4, `none: ${await metric()}`);
      const shuffled = await page.textContent('[data-figure="permutation-lab"]');
      assert.match(shuffled, /Shuffled:/);
      await page.selectOption('[data-control="encoding"]', 'sinusoidal');
      await waitMetric(() => Number(document.querySelector('[data-metric="equivariance-error"]').dataset.value) > 1e-3);
      assert.ok((await metric()) > 1e-3);
      assert.match(page.url(), /encoding=sinusoidal/);
      await page.selectOption('[data-control="encoding"]', 'xpos');
      await waitMetric(() => Number(document.querySelector('[data-metric="equivariance-error"]').dataset.value) > 1e-3);
      // the verdict names the encoding as the page does elsewhere, not by its internal value
      await page.waitForFunction(() => /with xPos positions/.test(document.querySelector('[data-figure="permutation-lab"]').textContent));
      assert.doesNotMatch(await page.textContent('[data-figure="permutation-lab"]'), /\bxpos\b/);
      assert.match(page.url(), /perm=/);
      const labels = await page.$$eval('[data-figure="attention-weights"] svg', (svgs) => svgs.length);
      assert.equal(labels >= 2, true);
      await page.selectOption('[data-control="encoding"]', 'alibi');
      await page.click('[data-action="reverse"]');
      await waitMetric(() => Number(document.querySelector('[data-metric="equivariance-error"]').dataset.value) < 1e-4);
      await page.waitForFunction(() => /ALiBi \(causal\)/.test(document.querySelector('[data-figure="reversal"]').textContent));
      const table = await page.$$eval('[data-figure="reversal"] tbody tr', (rows) => rows.map((r) => [...r.cells].map((c) => c.textContent)));
      // the page's names: the lab's ALiBi is the symmetric form; the causal form has a row of its own
      assert.deepEqual(
        table.map((r) => r[0]),
        ['none', 'sinusoidal', 'learned', 'RoPE', 'xPos', 'ALiBi (symmetric)', 'T5', 'ALiBi (causal)', 'none, causal mask'],
      );
      const row = (name) => table.find((r) => r[0] === name);
      assert.deepEqual(row('ALiBi (symmetric)')[2], 'no');
      assert.deepEqual(row('RoPE')[2], 'yes');
      assert.deepEqual(row('xPos')[2], 'yes');
      assert.deepEqual(row('none')[2], 'no');
      // the takeaway says what the table's numbers say (the errors themselves are in the caption's details)
      const said = await page.textContent('[data-figure="reversal"] figcaption .takeaway');
      assert.match(said, row('ALiBi (symmetric)')[2] === 'yes' ? /ALiBi \(symmetric\).*still tells/ : /ALiBi \(symmetric\).*cannot tell/, said);
      assert.match(said, row('ALiBi (causal)')[2] === 'yes' ? /Causal ALiBi can\b/ : /Causal ALiBi cannot either/, said);
      assert.match(
        said,
        row('none, causal mask')[2] === 'yes' ? /so can a causal mask with no positions/ : /a causal mask with no positions cannot/,
        said,
      );
      const details = await page.textContent('[data-figure="reversal"] figcaption details');
      assert.ok(details.includes(`error ${Number(row('ALiBi (causal)')[1]).toExponential(1)}`), details);
      await page.screenshot({ path: join(artifacts, `page-lab-${suite.engine}.png`) });
      assert.deepEqual(problems, { console: [], pageErrors: [], foreign: [] });
    });

    test('T5: the takeaway says why the last bucket starts before maxDistance, at the distance the buckets give', async () => {
      // T5's bidirectional bucket of a distance n (transformers' _relative_position_bucket), in float64:
      // half the buckets per side, the first half of those exact, the rest log-spaced up to maxDistance, floored
      const bucket = (n, numBuckets, maxDistance) => {
        const half = numBuckets / 2;
        const exact = half / 2;
        if (n < exact) return n;
        return Math.min(half - 1, exact + Math.floor((Math.log(n / exact) / Math.log(maxDistance / exact)) * (half - exact)));
      };
      const firstInLast = (numBuckets, maxDistance) => {
        let n = 1;
        while (bucket(n, numBuckets, maxDistance) < numBuckets / 2 - 1) n++;
        return n;
      };
      const takeaway = () => page.textContent('[data-figure="t5-buckets"] figcaption .takeaway');
      const first = firstInLast(32, 128);
      let said = await takeaway();
      assert.match(said, new RegExp(`from ${first} on all share the last`), said);
      assert.match(said, new RegExp(`maxDistance 128: the log-spaced index rounds down, reaching the last bucket at ${first}`), said);
      // past the plotted ±150 distances too (547 for maxDistance 1000, which the plot does not reach)
      const setT5 = async (control, value, text) => {
        await page.fill(`[data-control="${control}"]`, value);
        await page.waitForFunction((t) => document.querySelector('[data-figure="t5-buckets"] figcaption').textContent.includes(t), text);
      };
      await setT5('t5MaxDistance', '1000', 'maxDistance 1000)');
      said = await takeaway();
      assert.ok(firstInLast(32, 1000) > 150);
      assert.match(said, new RegExp(`from ${firstInLast(32, 1000)} on all share the last`), said);
      // with 4 buckets each side has two: distance 0, and the last one for every other distance
      await setT5('t5Buckets', '4', 'to 4 buckets');
      said = await takeaway();
      assert.equal(firstInLast(4, 1000), 1);
      assert.match(
        said,
        /With 4 buckets there is no room for wider ones: only distance 0 has a bucket of its own, and every distance from 1 on shares the last\./,
      );
      await setT5('t5Buckets', '32', 'to 32 buckets');
      await setT5('t5MaxDistance', '128', 'maxDistance 128)');
      assert.match(await takeaway(), new RegExp(`ever wider ones; from ${first} on all share the last`));
    });

    test('a heatmap with more cells than pixels says how many of its rows and columns are shown', async () => {
      const notes = await page.$$eval('.panel:has(.raster-note)', (panels) =>
        panels.map((p) => {
          const c = p.querySelector('canvas');
          return { note: p.querySelector('.raster-note').textContent, height: c.height, width: c.width };
        }),
      );
      assert.ok(notes.length > 0, 'the 500 × 64 sinusoidal table is drawn on fewer pixel rows than it has rows');
      for (const { note, height, width } of notes) {
        // the canvas has one pixel per cell shown: its height is the number of rows shown, its width of columns
        const rows = /^(\d+) of (\d+) rows shown/.exec(note);
        const cols = /(\d+) of (\d+) columns shown/.exec(note);
        assert.ok(rows || cols, note);
        if (rows) assert.ok(Number(rows[1]) === height && height < Number(rows[2]), `${note} (canvas ${height} pixel rows)`);
        if (cols) assert.ok(Number(cols[1]) === width && width < Number(cols[2]), `${note} (canvas ${width} pixel columns)`);
        assert.doesNotMatch(note, /pixels|one (row|column) in/, note);
      }
    });

    test('the README is a link wherever the page sends a reader to it; the training text lists "none" apart from the added encodings', async () => {
      const mentions = await page.$$eval('main p, footer p', (ps) =>
        ps
          .filter((p) => /README/.test(p.textContent))
          .map((p) => [p.textContent.replace(/\s+/g, ' ').trim().slice(0, 80), [...p.querySelectorAll('a')].map((a) => a.href)]),
      );
      assert.ok(mentions.length >= 2, JSON.stringify(mentions));
      for (const [text, links] of mentions) assert.ok(links.includes('https://www.npmjs.com/package/posenc'), `${text}: ${links}`);
      const train = await page.$eval('#train p', (p) => p.textContent.replace(/\s+/g, ' '));
      assert.doesNotMatch(train, /none, sinusoidal and learned: added/, train);
      assert.match(train, /none: no positions/, train);
    });

    test('typed HTML is shown as text, never parsed', async () => {
      await page.fill('[data-control="sentence"]', '<img src=x onerror="window.pwned=1"> <b>bold</b>');
      await page.waitForFunction(() => document.querySelector('[data-figure="permutation-lab"]').textContent.includes('onerror'));
      assert.equal(await page.evaluate(() => window.pwned), undefined);
      assert.equal(await page.$$eval('main img:not(svg image), main b', (els) => els.length), 0);
      assert.match(await page.textContent('[data-figure="permutation-lab"]'), /< img src = x onerror/);
      assert.deepEqual(problems.pageErrors, []);
    });

    test('controls re-render the heatmap, land in the URL, and a shared link restores them', async () => {
      await page.fill('[data-control="dModel"]', '32');
      await page.selectOption('[data-control="layout"]', 'split');
      await page.waitForFunction(() => {
        const text = document.querySelector('[data-figure="sinusoidal-heatmap"] figcaption').textContent;
        return text.includes('by 32 dimensions') && text.includes('split');
      });
      assert.match(await page.textContent('[data-figure="sinusoidal-heatmap"] figcaption'), /split sinusoidal encoding/);
      const shared = page.url();
      assert.match(shared, /dModel=32/);
      const { page: again } = await openPage(suite.browser, shared);
      assert.equal(await again.inputValue('[data-control="dModel"]'), '32');
      assert.match(await again.textContent('[data-figure="sinusoidal-heatmap"] figcaption'), /by 32 dimensions/);
      await again.close();
    });

    test('the API reference generated from index.d.ts is served next to the page', async () => {
      const href = await page.getAttribute('footer a[href="./api/index.html"]', 'href');
      await page.goto(new URL(href, page.url()).href);
      assert.match(await page.title(), /posenc API reference/);
      assert.match(await page.content(), /Posenc/);
    });
  },
  { concurrent: true },
);
