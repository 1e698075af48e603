// What the page's default training (six toy transformers, 2000 steps each, in the Worker) learned, once it
// has finished: the curves show order being needed, with the same bits as Node (the README's table), one
// curve per encoding in its colour. Chromium checks it in longtasks.test.js, which trains it anyway to time
// the main thread meanwhile; the other engines in training.test.js.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { artifacts } from './server.js';

export async function assertDefaultTraining(page, engine) {
  // the status says "Trained" at once; the figures redraw in tasks of their own after it, so wait for the
  // curves and the lengths of the sixth model (Firefox once read the caption drawn before T5's run)
  await page.waitForFunction(() =>
    /After 2000 steps: .*T5 [\d.]+%/.test(document.querySelector('[data-figure="training-curves"] figcaption').textContent),
  );
  await page.waitForFunction(() => /At 32 tokens: .*T5 [\d.]+%/.test(document.querySelector('[data-figure="length-curves"] figcaption').textContent));
  const caption = await page.textContent('[data-figure="training-curves"] figcaption');
  assert.match(caption, /none 52\.7%, sinusoidal 100\.0%, learned 100\.0%, RoPE 100\.0%, ALiBi 100\.0%, T5 100\.0%/);
  const lengths = await page.textContent('[data-figure="length-curves"] figcaption');
  assert.ok(Number(/At 32 tokens: .*ALiBi ([\d.]+)%/.exec(lengths)[1]) >= 95, lengths);
  assert.match(lengths, /learned — \(no rows past 8\)/);
  // the legend names the encodings as the page's prose does
  const legend = await page.textContent('[data-figure="training-curves"] .panel-legend');
  assert.match(legend, /none.*sinusoidal.*learned.*RoPE.*ALiBi.*T5/s);
  const strokes = await page.$$eval('[data-figure="training-curves"] svg path[stroke]', (paths) => [
    ...new Set(paths.map((p) => p.getAttribute('stroke'))),
  ]);
  for (const c of ['#222222', '#4e79a7', '#f28e2c', '#59a14f', '#e15759', '#b07aa1']) assert.ok(strokes.includes(c), `${c} in ${strokes}`);
  await page.evaluate(() => document.querySelector('#train').scrollIntoView());
  await page.screenshot({ path: join(artifacts, `page-training-${engine}.png`), fullPage: false });
}
