// The RoPE config inspector: each preset's key numbers against the formulas of transformers'
// modeling_rope_utils.py recomputed here in float64, and bad input reported in place.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { load } from 'posenc';
import { CONFIGS } from '../../web/figures/hf-configs.js';
import { PRESETS, inspectConfig } from '../../web/figures/inspector.js';
import { inEachEngine, pageAtDefaults } from './server.js';

const invFreq = (dim, base) => Array.from({ length: dim / 2 }, (_, i) => 1 / base ** ((2 * i) / dim));
// YaRN's band mask (1 = keep the frequency, 0 = divide it by the factor), as _compute_yarn_parameters.
function yarnKeep(dim, base, { original, betaFast = 32, betaSlow = 1, truncate = true }) {
  const at = (rot) => (dim * Math.log(original / (rot * 2 * Math.PI))) / (2 * Math.log(base));
  let [lo, hi] = [at(betaFast), at(betaSlow)];
  if (truncate) [lo, hi] = [Math.floor(lo), Math.ceil(hi)];
  [lo, hi] = [Math.max(lo, 0), Math.min(hi, dim - 1)];
  if (lo === hi) hi += 0.001;
  return invFreq(dim, base).map((_, i) => 1 - Math.min(1, Math.max(0, (i - lo) / (hi - lo))));
}
// Llama 3.1's rule: wavelengths below original/high kept, above original/low divided, smooth between.
function llama3Keep(dim, base, { original, low = 1, high = 4 }) {
  return invFreq(dim, base).map((w) => {
    const wl = (2 * Math.PI) / w;
    if (wl < original / high) return 1;
    if (wl > original / low) return 0;
    return 0.5; // a smooth mix of the two
  });
}
const counts = (keep) => ({
  extrapolated: keep.filter((k) => k === 1).length,
  interpolated: keep.filter((k) => k === 0).length,
  blended: keep.filter((k) => k > 0 && k < 1).length,
});
const yarnFactor = (s) => 0.1 * Math.log(s) + 1;

const EXPECT = {
  'Llama 3.1 8B': { af: 1, bands: counts(llama3Keep(128, 500000, { original: 8192 })) },
  'Qwen2.5 7B (with the model card’s YaRN block)': { af: yarnFactor(4), bands: counts(yarnKeep(128, 1e6, { factor: 4, original: 32768 })) },
  'DeepSeek-V3': { af: 1, bands: counts(yarnKeep(64, 10000, { factor: 40, original: 4096 })) }, // mscale = mscale_all_dim: the factors cancel
  'Phi-3 mini 128k': { af: Math.sqrt(1 + Math.log(32) / Math.log(4096)) },
  'gpt-oss 20b': { af: yarnFactor(32), bands: counts(yarnKeep(64, 150000, { factor: 32, original: 4096, truncate: false })) },
};

async function line(page, label) {
  return page.$eval(
    '[data-figure="rope-inspector"]',
    (f, l) => [...f.querySelectorAll('p')].find((p) => p.textContent.startsWith(l))?.textContent ?? '',
    label,
  );
}

inEachEngine(
  'RoPE config inspector',
  (suite) => {
    // one page for the two tests that use one: the presets first, then bad input in the config editor
    let page;
    let problems;
    pageAtDefaults(suite, (p) => ({ page, problems } = p));

    test("each preset's attention factor and bands match transformers' formulas", async () => {
      for (const [name, want] of Object.entries(EXPECT)) {
        const before = await page.textContent('[data-figure="rope-inspector"]');
        if ((await page.inputValue('[data-control="ropePreset"]')) !== name) {
          await page.selectOption('[data-control="ropePreset"]', name);
          await page.waitForFunction((b) => document.querySelector('[data-figure="rope-inspector"]').textContent !== b, before);
        }
        const af = Number(/Attention factor: ([\d.]+)/.exec(await line(page, 'Attention factor'))[1]);
        assert.ok(Math.abs(af - want.af) < 1e-4, `${name}: attention factor ${af}, expected ${want.af}`);
        if (want.bands) {
          const bands = await line(page, 'Bands');
          const got = {
            extrapolated: Number(/(\d+) extrapolated/.exec(bands)[1]),
            interpolated: Number(/(\d+) interpolated/.exec(bands)[1]),
            blended: Number(/(\d+) blended/.exec(bands)[1]),
          };
          assert.deepEqual(got, want.bands, `${name}: ${bands}`);
        }
      }
      assert.deepEqual(problems.pageErrors, []);
    });

    test("the presets are the published config.json files; 'after' is the extended context (LongRoPE: its long factors)", async () => {
      const pe = await load();
      // each preset is its model's published config.json (web/figures/hf-configs.js), by name
      const fixture = {
        'Llama 3.1 8B': 'Llama 3.1 8B',
        'Qwen2.5 7B (with the model card’s YaRN block)': 'Qwen2.5 7B Instruct, YaRN (model card)',
        'DeepSeek-V3': 'DeepSeek-V3',
        'Phi-3 mini 128k': 'Phi-3 mini 128k',
        'gpt-oss 20b': 'gpt-oss 20b',
      };
      assert.deepEqual(Object.keys(PRESETS), Object.keys(fixture));
      for (const [preset, name] of Object.entries(fixture)) assert.deepEqual(PRESETS[preset], CONFIGS[name], preset);
      const phi = inspectConfig(pe, PRESETS['Phi-3 mini 128k']);
      const long = CONFIGS['Phi-3 mini 128k'].rope_scaling.long_factor;
      assert.equal(phi.numbers.extended, 131072);
      // each pair's wavelength is stretched by its long factor (float32 frequencies)
      for (const b of phi.csv) assert.ok(Math.abs(b.ratio / long[b.i] - 1) < 1e-6, `pair ${b.i}: ${b.ratio} vs ${long[b.i]}`);
      // Qwen2.5's config keeps max_position_embeddings 32768; its YaRN x4 block reaches 131072
      const qwen = inspectConfig(pe, PRESETS['Qwen2.5 7B (with the model card’s YaRN block)']);
      assert.deepEqual([qwen.numbers.original, qwen.numbers.extended], [32768, 131072]);
      // the pairs rotated, as the config says: GPT-J's interleaved, Llama's rotate_half
      const pairs = (config) => inspectConfig(pe, config).lines.find(([k]) => k === 'Pairs rotated:')[1];
      assert.match(pairs({ model_type: 'gptj', n_embd: 4096, n_head: 16, rotary_dim: 64 }), /^interleaved, \(x0, x1\)/);
      assert.match(pairs(PRESETS['Llama 3.1 8B']), /rotate_half/);
    });

    test('bad JSON and unknown rope_scaling fields get a clear message in place', async () => {
      await page.fill('[data-config-json]', '{ "rope_theta": 10000, ');
      await page.waitForSelector('[data-inspector-error]:not([hidden])');
      assert.match(await page.textContent('[data-inspector-error]'), /not valid JSON/);
      await page.fill('[data-config-json]', JSON.stringify({ head_dim: 64, rope_theta: 10000, rope_scaling: { rope_type: 'yarn', factr: 4 } }));
      await page.waitForFunction(() => /factr/.test(document.querySelector('[data-inspector-error]').textContent));
      assert.match(await page.textContent('[data-inspector-error]'), /factor/); // the did-you-mean
      // four pairs: the frequency index reads 0, 1, 2, 3, not 0.0, 0.2, … (each step below waits for a change
      // from the one before: an error, then a figure, then an error, then the last config's figure)
      await page.fill('[data-config-json]', JSON.stringify({ head_dim: 8, rope_theta: 2, max_position_embeddings: 2048 }));
      await page.waitForFunction(() => /Rotary dimension: 8\b/.test(document.querySelector('[data-figure="rope-inspector"]').textContent));
      const indices = await page.$$eval('[data-figure="rope-inspector"] svg[data-panel]', (svgs) =>
        [...svgs[0].querySelectorAll('g[data-axis*="x-axis tick label"] text')].map((t) => t.textContent),
      );
      assert.deepEqual(indices, ['0', '1', '2', '3']);
      // a head the package reads but the figure does not draw (it took tasks of 650 ms): said in place
      await page.fill('[data-config-json]', JSON.stringify({ head_dim: 100000, max_position_embeddings: 4096 }));
      await page.waitForFunction(() => /100000/.test(document.querySelector('[data-inspector-error]').textContent));
      assert.match(await page.textContent('[data-inspector-error]'), /^Not drawn: the inspector draws rotary heads of up to 4096 dimensions/);
      // the emptied figure is drawn in a task of its own after the message
      await page.waitForFunction(() => /No figure/.test(document.querySelector('[data-figure="rope-inspector"] figcaption').textContent));
      await page.fill('[data-config-json]', JSON.stringify({ head_dim: 64, rope_theta: 10000, max_position_embeddings: 2048 }));
      await page.waitForSelector('[data-inspector-error]', { state: 'hidden' });
      // the figure redraws in tasks of its own after the message hides: wait for it (Firefox read the old caption)
      await page.waitForFunction(() => !/No figure/.test(document.querySelector('[data-figure="rope-inspector"] figcaption').textContent));
      assert.match(await page.textContent('[data-figure="rope-inspector"] figcaption'), /No rope_scaling/);
      assert.deepEqual(problems.pageErrors, []);
    });

    test('the attention factor multiplies cos and sin, the logits by its square, wherever the page gives it', async () => {
      const qwen = 'Qwen2.5 7B (with the model card’s YaRN block)';
      const before = await page.textContent('[data-figure="rope-inspector"]');
      await page.selectOption('[data-control="ropePreset"]', qwen);
      await page.waitForFunction((b) => document.querySelector('[data-figure="rope-inspector"]').textContent !== b, before);
      const af = yarnFactor(4);
      const said = await line(page, 'Attention factor');
      assert.match(said, new RegExp(`${af.toFixed(4)} on cos and sin.*logits × ${(af * af).toFixed(4)}`), said);
      const takeaway = await page.textContent('[data-figure="rope-inspector"] figcaption .takeaway');
      assert.match(takeaway, new RegExp(`cos and sin × ${af.toFixed(4)}, so the logits × ${(af * af).toFixed(4)}`), takeaway);
      // the scaling figure at its default factor 8
      const scaling = await page.textContent('[data-figure="rope-scaling"] figcaption');
      const af8 = yarnFactor(8);
      assert.match(scaling, new RegExp(`cos and sin.*${af8.toFixed(4)}, so the logits by its square, ${(af8 * af8).toFixed(4)}`), scaling);
      // the prose: a paragraph naming the attention factor says what it multiplies
      const prose = await page.$$eval('main p:not(figure p)', (ps) =>
        ps.map((p) => p.textContent.replace(/\s+/g, ' ')).filter((t) => /attention factor/.test(t)),
      );
      for (const t of prose) assert.doesNotMatch(t, /multiplies the logits by (a|the)[^.]*attention factor/, t);
      assert.ok(
        prose.some((t) => /cos and sin/.test(t)),
        prose.join('\n'),
      );
      assert.deepEqual(problems.pageErrors, []);
    });

    test('LongRoPE (Phi-3): the sentences name the bands it has, no count of zero', async () => {
      await page.selectOption('[data-control="ropePreset"]', 'Phi-3 mini 128k');
      await page.waitForFunction(() => /longrope/.test(document.querySelector('[data-figure="rope-inspector"] figcaption').textContent));
      const said = await page.textContent('[data-figure="rope-inspector"] figcaption');
      assert.doesNotMatch(said, /(^|[^\d.])0 (fast )?bands|(^|[^\d.])0 are/, said);
      // each band of Phi-3 mini's head has a long factor of its own: those neither 1 nor the full factor
      const phi = CONFIGS['Phi-3 mini 128k'];
      const [long, factor] = [phi.rope_scaling.long_factor, phi.max_position_embeddings / phi.original_max_position_embeddings];
      const own = long.filter((f) => Math.abs(f - 1) >= 1e-3 && Math.abs(f / factor - 1) >= 1e-3).length;
      assert.match(said, new RegExp(`${own} bands are each stretched by a factor of their own`), said);
    });

    test('max_position_embeddings is the context the config allows; original_max_position_embeddings the pre-scaling one', async () => {
      // Qwen2-7B's config: 131072 positions allowed, no rope_scaling (the model was trained at 32k)
      await page.fill('[data-config-json]', JSON.stringify({ head_dim: 128, rope_theta: 1000000, max_position_embeddings: 131072 }));
      await page.waitForFunction(() => /No rope_scaling/.test(document.querySelector('[data-figure="rope-inspector"] figcaption').textContent));
      const text = await page.textContent('[data-figure="rope-inspector"]');
      assert.doesNotMatch(text, /Trained context|trained (for|on|at) 131072|\bas trained|original context/i, text);
      assert.match(await line(page, 'Context in the config (max_position_embeddings)'), /131072 positions/);
      await page.selectOption('[data-control="ropePreset"]', 'Qwen2.5 7B (with the model card’s YaRN block)');
      await page.waitForFunction(() => /yarn/.test(document.querySelector('[data-figure="rope-inspector"] figcaption').textContent));
      assert.match(await line(page, 'Scaling'), /training\) context 32768 \(original_max_position_embeddings\), extended to 131072/);
      assert.deepEqual(problems.pageErrors, []);
    });
  },
  { concurrent: true },
);
