// "Train it yourself" (issue 16): six toy transformers train in a Web Worker, and the curves show what
// the README's table says: without positions 'before' stays at chance, every encoding learns it, ALiBi
// extrapolates. (The main thread's long tasks while training, and the 3 s a run, are measured with
// the page's other interactions in longtasks.test.js, which runs alone.)
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { artifacts, inEachEngine, openPage } from './server.js';

const trained = (page) =>
  page.waitForFunction(() => /^Trained six models/.test(document.querySelector('[data-train-status]').textContent), null, { timeout: 90000 });

inEachEngine('train it yourself', (suite) => {
  test('trains six models in a Worker; the curves show order being needed', async () => {
    const { page, problems } = await openPage(suite.browser, suite.server.url);
    await page.waitForSelector('[data-figure="training-curves"][data-rendered="true"]', { timeout: 60000 });
    assert.match(await page.textContent('[data-figure="training-curves"] figcaption'), /Press Train/);
    await page.waitForSelector('[data-figure="distinguishability"][data-rendered="true"]', { timeout: 60000 });
    await page.click('[data-action="train"]');
    // the curves grow while training
    await page.waitForFunction(() => /Training/.test(document.querySelector('[data-figure="training-curves"] figcaption').textContent), null, {
      timeout: 30000,
    });
    await trained(page);
    await page.waitForFunction(() => /After 2000 steps/.test(document.querySelector('[data-figure="training-curves"] figcaption').textContent));
    const caption = await page.textContent('[data-figure="training-curves"] figcaption');
    // the same bits as Node: the README's table
    assert.match(caption, /none 52\.7%, sinusoidal 100\.0%, learned 100\.0%, rope 100\.0%, alibi 100\.0%, t5 100\.0%/);
    const lengths = await page.textContent('[data-figure="length-curves"] figcaption');
    assert.ok(Number(/At 32 tokens: .*alibi ([\d.]+)%/.exec(lengths)[1]) >= 95, lengths);
    assert.match(lengths, /learned — \(no rows past 8\)/);
    // one curve per encoding, in its colour
    const strokes = await page.$$eval('[data-figure="training-curves"] svg path[stroke]', (paths) => [
      ...new Set(paths.map((p) => p.getAttribute('stroke'))),
    ]);
    for (const c of ['#222222', '#4e79a7', '#f28e2c', '#59a14f', '#e15759', '#b07aa1']) assert.ok(strokes.includes(c), `${c} in ${strokes}`);
    await page.screenshot({ path: join(artifacts, `page-training-${suite.engine}.png`), fullPage: false });
    assert.deepEqual(problems, { console: [], pageErrors: [], foreign: [] });
    await page.close();
  });

  test('the settings travel in the URL; causal attention learns order without an encoding', async () => {
    const { page, problems } = await openPage(suite.browser, `${suite.server.url}?toyMask=causal&toySteps=600#train`);
    await page.waitForSelector('[data-figure="training-curves"][data-rendered="true"]', { timeout: 60000 });
    assert.equal(await page.inputValue('[data-control="toyMask"]'), 'causal');
    await page.click('[data-action="train"]');
    await trained(page);
    await page.waitForFunction(() => /After 600 steps/.test(document.querySelector('[data-figure="training-curves"] figcaption').textContent));
    const caption = await page.textContent('[data-figure="training-curves"] figcaption');
    assert.match(caption, /causal, 2 layers/);
    const none = Number(/none ([\d.]+)%/.exec(caption)[1]);
    assert.ok(none >= 95, caption);
    assert.deepEqual(problems.pageErrors, []);
    await page.close();
  });

  test('one encoding alone', async () => {
    const { page, problems } = await openPage(suite.browser, `${suite.server.url}?toyEncoding=alibi&toySteps=300`);
    await page.waitForSelector('[data-figure="training-curves"][data-rendered="true"]', { timeout: 60000 });
    await page.click('[data-action="train"]');
    await page.waitForFunction(() => /^Trained one model of 300 steps/.test(document.querySelector('[data-train-status]').textContent), null, {
      timeout: 60000,
    });
    await page.waitForFunction(() =>
      /After 300 steps: alibi [\d.]+%\./.test(document.querySelector('[data-figure="training-curves"] figcaption').textContent),
    );
    assert.deepEqual(problems.pageErrors, []);
    await page.close();
  });

  test('Stop ends training; changing a setting stops it too', async () => {
    const { page, problems } = await openPage(suite.browser, `${suite.server.url}?toySteps=20000`);
    await page.waitForSelector('[data-figure="training-curves"][data-rendered="true"]', { timeout: 60000 });
    await page.click('[data-action="train"]');
    await page.waitForFunction(() => /step \d+ of 20000/.test(document.querySelector('[data-train-status]').textContent), null, { timeout: 30000 });
    assert.equal(await page.textContent('[data-action="train"]'), 'Stop');
    await page.click('[data-action="train"]');
    assert.equal(await page.textContent('[data-train-status]'), 'Stopped.');
    await page.click('[data-action="train"]');
    await page.waitForFunction(() => /step \d+ of 20000/.test(document.querySelector('[data-train-status]').textContent), null, { timeout: 30000 });
    await page.selectOption('[data-control="toyTask"]', 'count');
    await page.waitForFunction(() => document.querySelector('[data-train-status]').textContent === 'Stopped: the settings changed.');
    await page.waitForFunction(() =>
      /how many 0s.*Press Train/.test(document.querySelector('[data-figure="training-curves"] figcaption').textContent),
    );
    assert.deepEqual(problems.pageErrors, []);
    await page.close();
  });
});
