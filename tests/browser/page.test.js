// The demo page in real headless browsers (Chromium and Firefox).
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { artifacts, inEachEngine, openPage } from './server.js';

inEachEngine('demo page', (suite) => {
  test('loads the SIMD build, renders every figure, no console errors, no foreign requests', async () => {
    const { page, problems } = await openPage(suite.browser, suite.server.url);
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
    await page.screenshot({ path: join(artifacts, `page-default-${suite.engine}.png`), fullPage: true });
    assert.deepEqual(problems, { console: [], pageErrors: [], foreign: [] });
    await page.close();
  });

  test('the lab: < 1e-4 without an encoding, > 1e-3 with sinusoidal after shuffling; reversal blind spot', async () => {
    const { page, problems } = await openPage(suite.browser, suite.server.url);
    const metric = async () => Number(await page.getAttribute('[data-metric="equivariance-error"]', 'data-value'));
    const waitMetric = (pred) => page.waitForFunction(pred, null, { timeout: 10000 });
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
    assert.match(page.url(), /perm=/);
    const labels = await page.$$eval('[data-figure="attention-weights"] svg', (svgs) => svgs.length);
    assert.equal(labels >= 2, true);
    await page.selectOption('[data-control="encoding"]', 'alibi');
    await page.click('[data-action="reverse"]');
    await waitMetric(() => Number(document.querySelector('[data-metric="equivariance-error"]').dataset.value) < 1e-4);
    const table = await page.$$eval('[data-figure="reversal"] tbody tr', (rows) => rows.map((r) => [...r.cells].map((c) => c.textContent)));
    assert.deepEqual(table.find((r) => r[0] === 'alibi')[2], 'no');
    assert.deepEqual(table.find((r) => r[0] === 'rope')[2], 'yes');
    assert.deepEqual(table.find((r) => r[0] === 'xpos')[2], 'yes');
    assert.deepEqual(table.find((r) => r[0] === 'none')[2], 'no');
    await page.screenshot({ path: join(artifacts, `page-lab-${suite.engine}.png`) });
    assert.deepEqual(problems, { console: [], pageErrors: [], foreign: [] });
    await page.close();
  });

  test('typed HTML is shown as text, never parsed', async () => {
    const { page, problems } = await openPage(suite.browser, suite.server.url);
    await page.fill('[data-control="sentence"]', '<img src=x onerror="window.pwned=1"> <b>bold</b>');
    await page.waitForFunction(() => document.querySelector('[data-figure="permutation-lab"]').textContent.includes('onerror'));
    assert.equal(await page.evaluate(() => window.pwned), undefined);
    assert.equal(await page.$$eval('main img:not(svg image), main b', (els) => els.length), 0);
    assert.match(await page.textContent('[data-figure="permutation-lab"]'), /< img src = x onerror/);
    assert.deepEqual(problems.pageErrors, []);
    await page.close();
  });

  test('the API reference generated from index.d.ts is served next to the page', async () => {
    const { page } = await openPage(suite.browser, suite.server.url);
    const href = await page.getAttribute('footer a[href="./api/index.html"]', 'href');
    await page.goto(new URL(href, page.url()).href);
    assert.match(await page.title(), /posenc API reference/);
    assert.match(await page.content(), /Posenc/);
    await page.close();
  });

  test("the robot table shows the seed's numbers", async () => {
    const { page } = await openPage(suite.browser, suite.server.url);
    const cells = await page.$$eval('[data-figure="robot-table"] tbody tr', (rows) => rows.map((r) => [...r.cells].map((c) => c.textContent)));
    const seed = [
      [0, 1, 0, 1],
      [0.84147098, 0.54030231, 0.09983342, 0.99500417],
      [0.90929743, -0.41614684, 0.19866933, 0.98006658],
      [0.14112001, -0.9899925, 0.29552023, 0.95533649],
    ];
    assert.deepEqual(
      cells.map((r) => r[0]),
      ['I', 'am', 'a', 'robot'],
    );
    cells.forEach((r, k) => r.slice(2).forEach((v, j) => assert.ok(Math.abs(Number(v) - seed[k][j]) <= 1e-6, `${v} vs ${seed[k][j]}`)));
    await page.close();
  });

  test('controls re-render the heatmap, land in the URL, and a shared link restores them', async () => {
    const { page } = await openPage(suite.browser, suite.server.url);
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
    await page.close();
    await again.close();
  });

  test('a learned table refuses positions past its length; the sinusoid continues', async () => {
    const { page } = await openPage(suite.browser, suite.server.url);
    const text = await page.textContent('[data-figure="extrapolation"]');
    assert.match(text, /RangeError: .*positions\[0\] is 600, but maxLength is 512/);
    assert.match(text, /Sinusoidal row 600/);
    await page.fill('[data-control="position"]', '100');
    await page.waitForFunction(() => document.querySelector('[data-figure="extrapolation"]').textContent.includes('inside the table'));
    await page.screenshot({ path: join(artifacts, `page-extrapolation-${suite.engine}.png`) });
    await page.close();
  });
});
