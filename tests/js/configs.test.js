// Hugging Face config.json files as transformers reads them: both layouts (rope_theta + rope_scaling,
// and transformers 5's rope_parameters), the configs real models publish, what transformers refuses,
// and every entry point that takes a config (ropeFrequencies, rope, ropeCache) against a float64
// transcription of transformers' modeling_rope_utils (fixtures/hf-configs.js).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ropeConfig } from 'posenc';
import { CONFIGS, FAMILIES, hfRopeParameters } from './fixtures/hf-configs.js';
import { backends, maxAbsDiff, range } from './helpers.js';

const [simd, scalar] = await backends();
const randomTensor = (n, seed = 1) => Float32Array.from(range(n), (i) => Math.sin(i * 12.9898 + seed * 78.233) * 0.9);
// The unscaled inverse frequencies of a rotary dimension `rot`, in float64: 1 / base^(2i / rot).
const invFreqRef = (rot, base) => range(rot / 2).map((i) => 1 / base ** ((2 * i) / rot));

// RoPE in float64 ('half' layout) for x [seq, heads, hd], positions[r], invFreq and factor.
function ropeRef(x, [seq, heads, hd], positions, invFreq, factor = 1, rot = hd) {
  const out = Float64Array.from(x);
  for (let r = 0; r < seq; r++)
    for (let h = 0; h < heads; h++)
      for (let i = 0; i < rot / 2; i++) {
        const o = (r * heads + h) * hd;
        const a = positions[r] * invFreq[i];
        const [c, s] = [Math.cos(a) * factor, Math.sin(a) * factor];
        out[o + i] = x[o + i] * c - x[o + i + rot / 2] * s;
        out[o + i + rot / 2] = x[o + i + rot / 2] * c + x[o + i] * s;
      }
  return out;
}

const llama = CONFIGS['Llama 3.1 8B'];
// transformers 5 writes the same settings as one rope_parameters object
const llamaV5 = (({ rope_theta, rope_scaling, ...rest }) => ({ ...rest, rope_parameters: { rope_theta, ...rope_scaling } }))(llama);
// meta-llama/Llama-4-Scout-17B-16E: low_freq_factor = high_freq_factor leaves no band to blend
const scout = {
  hidden_size: 5120,
  head_dim: 128,
  num_attention_heads: 40,
  max_position_embeddings: 10485760,
  rope_theta: 500000,
  rope_scaling: { factor: 16, high_freq_factor: 1, low_freq_factor: 1, original_max_position_embeddings: 8192, rope_type: 'llama3' },
};
// microsoft/Phi-3-small-128k-instruct's LongRoPE writes its attention scales (vLLM reads them)
const phi3small = {
  hidden_size: 4096,
  num_attention_heads: 32,
  max_position_embeddings: 131072,
  original_max_position_embeddings: 8192,
  rope_theta: 1000000,
  rope_scaling: {
    type: 'longrope',
    short_factor: range(64).map((i) => 1 + i / 64),
    long_factor: range(64).map((i) => 1 + i / 4),
    short_mscale: 1.1,
    long_mscale: 1.225,
  },
};
// EleutherAI/pythia-410m: the GPT-NeoX names for the rotary fraction and the base
const pythia = { hidden_size: 1024, num_attention_heads: 16, rotary_pct: 0.25, rotary_emb_base: 10000, max_position_embeddings: 2048 };

for (const pe of [simd, scalar]) {
  describe(`configs (${pe.backend})`, () => {
    test('a config with the RoPE fields alone: rope takes the head size from x; the others say what is missing', () => {
      const config = { rope_theta: 500000, rope_scaling: { ...llama.rope_scaling } };
      const x = { data: randomTensor(2 * 2 * 128), shape: [2, 2, 128] };
      const got = pe.rope(x, { config, offset: 9000 });
      const ref = hfRopeParameters(llama); // the same base and scaling, head 4096 / 32 = 128
      assert.ok(maxAbsDiff(got.data, ropeRef(x.data, [2, 2, 128], [9000, 9001], ref.invFreq, ref.attentionFactor)) < 1e-5);
      assert.deepEqual(got.data, pe.rope(x, { config: llama, offset: 9000 }).data);
      // without a tensor there is no head size: the error says which fields give it, and what to pass instead
      for (const call of [() => pe.ropeFrequencies({ config }), () => pe.ropeCache({ config, length: 4 })])
        assert.throws(call, (e) => {
          assert.ok(e instanceof TypeError, e.message);
          assert.match(e.message, /config gives no head size: head_dim, or hidden_size and num_attention_heads/);
          assert.match(e.message, /config\.rope_theta as base and config\.rope_scaling as scaling/);
          return true;
        });
      assert.throws(() => pe.ropeFrequencies({ config, dim: 128 }), /config gives no head size.*pass dim/);
      // with a head size, dim and config are two answers to one question
      assert.throws(() => pe.ropeFrequencies({ config: llama, dim: 128 }), /pass either config or dim: the config gives the rotary dimension/);
    });

    test("transformers 5's rope_parameters gives what rope_theta + rope_scaling give", () => {
      const ref = hfRopeParameters(llama);
      for (const config of [llama, llamaV5]) {
        const got = pe.ropeFrequencies({ config });
        assert.ok(maxAbsDiff(got.invFreq, ref.invFreq) <= 2e-7, JSON.stringify(Object.keys(config)));
      }
      // base and scaling come from rope_parameters: not 10000 and unscaled
      const v5 = pe.ropeFrequencies({ config: llamaV5 }).invFreq;
      assert.ok(Math.abs(v5.at(-1) - ref.invFreq.at(-1)) < 1e-12 && Math.abs(v5.at(-1) - 1 / 10000 ** (126 / 128)) > 1e-7);
      // a default rope_parameters with partial_rotary_factor inside it (Phi-2 in transformers 5)
      const phi2 = {
        hidden_size: 2560,
        num_attention_heads: 32,
        rope_parameters: { rope_type: 'default', rope_theta: 10000, partial_rotary_factor: 0.4 },
      };
      assert.equal(pe.ropeFrequencies({ config: phi2 }).invFreq.length, 16);
      assert.deepEqual(ropeConfig(phi2), {
        headDim: 80,
        rotaryDim: 32,
        base: 10000,
        scaling: null,
        maxPositions: undefined,
        fields: ['hidden_size', 'num_attention_heads', 'rope_parameters'],
      });
    });

    test('one set of rope_parameters per layer type is refused with the way out', () => {
      const gemma = {
        hidden_size: 2048,
        head_dim: 256,
        num_attention_heads: 8,
        layer_types: ['sliding_attention', 'full_attention'],
        rope_parameters: {
          sliding_attention: { rope_type: 'default', rope_theta: 10000 },
          full_attention: { rope_type: 'linear', factor: 8, rope_theta: 1000000 },
        },
      };
      assert.throws(
        () => pe.ropeFrequencies({ config: gemma }),
        (e) => e instanceof TypeError && /per layer type.*rope_parameters\.sliding_attention/.test(e.message),
      );
      const full = pe.ropeFrequencies({ config: { ...gemma, rope_parameters: gemma.rope_parameters.full_attention } }).invFreq;
      assert.ok(Math.abs(full[1] - 1e6 ** (-2 / 256) / 8) < 1e-9);
      assert.throws(
        () => pe.ropeFrequencies({ config: { ...llama, rope_parameters: { rope_theta: 5 } } }),
        (e) => e instanceof TypeError && /both rope_scaling and rope_parameters/.test(e.message),
      );
    });

    test("real configs transformers runs: Llama 4 Scout (no llama3 band), Phi-3-small's mscales, Pythia's rotary_pct", () => {
      const s = pe.ropeFrequencies({ config: scout });
      assert.ok(
        maxAbsDiff(
          s.invFreq,
          hfRopeParameters(scout).invFreq.map((f) => (Number.isNaN(f) ? 0 : f)),
        ) <=
          2e-7 * 1,
      );
      assert.ok(s.invFreq.every(Number.isFinite));
      // short at load and below the original length, long past it; each with its own scale
      const short = pe.ropeCache({ config: phi3small, length: 4 });
      const long = pe.ropeCache({ config: phi3small, positions: [8192, 9000] });
      assert.ok(Math.abs(short.cos.data[0] - 1.1) < 1e-6, `short cos(0) ${short.cos.data[0]}`);
      const w0 = 1 / 1; // frequency 0 divided by long_factor[0] = 1
      assert.ok(Math.abs(long.cos.data[0] - 1.225 * Math.cos(8192 * w0)) < 1e-6, `long ${long.cos.data[0]}`);
      const invLong = range(64).map((i) => 1e6 ** (-(2 * i) / 128) / (1 + i / 4));
      assert.ok(Math.abs(long.sin.data[64 + 5] - 1.225 * Math.sin(9000 * invLong[5])) < 1e-6);
      // Pythia: a quarter of each 64-channel head rotates, base from rotary_emb_base
      assert.deepEqual(ropeConfig(pythia), {
        headDim: 64,
        rotaryDim: 16,
        base: 10000,
        scaling: null,
        maxPositions: 2048,
        fields: ['hidden_size', 'num_attention_heads', 'rotary_pct', 'rotary_emb_base', 'max_position_embeddings'],
      });
      const x = randomTensor(3 * 2 * 64);
      const got = pe.rope({ data: x, shape: [3, 2, 64] }, { config: pythia, offset: 7 });
      assert.ok(
        maxAbsDiff(
          got.data,
          ropeRef(
            x,
            [3, 2, 64],
            [7, 8, 9],
            range(8).map((i) => 1e4 ** (-(2 * i) / 16)),
            1,
            16,
          ),
        ) < 1e-6,
      );
    });

    test("other families' names for the base, the head and the rotary fraction, read as their models' code reads them", () => {
      const { 'Qwen 7B': qwen, 'Phi-3 small 8k': phi3small8k } = FAMILIES;
      const cases = [
        // GPT-J: GPT-2's n_embd / n_head give the head (256), rotary_dim its rotary channels
        ['GPT-J 6B', FAMILIES['GPT-J 6B'], 64, 10000],
        // Falcon: n_head; alibi false changes nothing
        ['Falcon 7B', FAMILIES['Falcon 7B'], 64, 10000],
        // StableLM-epoch: rope_pct, int(80 * 0.25) = 20 channels
        ['StableLM 3B 4E1T', FAMILIES['StableLM 3B 4E1T'], 20, 10000],
        // nomic-bert: rotary_emb_fraction and rotary_emb_base (1000)
        ['nomic-embed-text v1', FAMILIES['nomic-embed-text v1'], 64, 1000],
        ['nomic-embed-text v1, half rotary', { ...FAMILIES['nomic-embed-text v1'], rotary_emb_fraction: 0.5 }, 32, 1000],
        // Qwen (1): kv_channels is the head, rotary_pct and rotary_emb_base as GPT-NeoX's
        ['Qwen 7B without dynamic NTK', { ...qwen, use_dynamic_ntk: false }, 128, 10000],
        ['Qwen 7B, rotary_pct 0.5', { ...qwen, use_dynamic_ntk: false, rotary_pct: 0.5 }, 64, 10000],
        // Phi-3-small: rope_embedding_base; rope_position_scale 1 changes nothing
        ['Phi-3 small 8k', phi3small8k, 128, 1e6],
      ];
      for (const [name, config, rot, base] of cases) {
        const got = pe.ropeFrequencies({ config });
        assert.equal(got.invFreq.length, rot / 2, name);
        assert.ok(maxAbsDiff(got.invFreq, invFreqRef(rot, base)) <= 2e-7, `${name}: ${maxAbsDiff(got.invFreq, invFreqRef(rot, base))}`);
        assert.equal(got.attentionFactor, 1, name);
      }
      // the rotation itself: StableLM's 20 leading channels of each 80-channel head
      const x = randomTensor(3 * 2 * 80, 6);
      const stablelm = pe.rope({ data: x, shape: [3, 2, 80] }, { config: FAMILIES['StableLM 3B 4E1T'], offset: 11 });
      assert.ok(maxAbsDiff(stablelm.data, ropeRef(x, [3, 2, 80], [11, 12, 13], invFreqRef(20, 10000), 1, 20)) < 1e-6);
      const cache = pe.ropeCache({ config: phi3small8k, positions: [5000] });
      assert.ok(
        maxAbsDiff(
          cache.sin.data,
          invFreqRef(128, 1e6).map((w) => Math.sin(5000 * w)),
        ) < 1e-6,
      );
      assert.deepEqual(ropeConfig(FAMILIES['GPT-J 6B']), {
        headDim: 256,
        rotaryDim: 64,
        base: 10000,
        scaling: null,
        maxPositions: undefined,
        layout: 'interleaved',
        fields: ['n_embd', 'n_head', 'rotary_dim', 'model_type'],
      });
    });

    test("the pairs a config's model rotates: interleaved where its code rotates (x0, x1), (x2, x3), … (GPT-J and kin)", () => {
      // RoPE in float64 over interleaved pairs, the first `rot` channels of each head (GPT-J's rotate_every_two)
      const interleavedRef = (x, [seq, heads, hd], positions, invFreq, rot) => {
        const out = Float64Array.from(x);
        for (let r = 0; r < seq; r++)
          for (let h = 0; h < heads; h++)
            for (let i = 0; i < rot / 2; i++) {
              const o = (r * heads + h) * hd + 2 * i;
              const a = positions[r] * invFreq[i];
              out[o] = x[o] * Math.cos(a) - x[o + 1] * Math.sin(a);
              out[o + 1] = x[o + 1] * Math.cos(a) + x[o] * Math.sin(a);
            }
        return out;
      };
      const gptj = FAMILIES['GPT-J 6B'];
      const x = randomTensor(2 * 2 * 256, 9);
      const input = { data: x, shape: [2, 2, 256] };
      const want = interleavedRef(x, [2, 2, 256], [7, 8], invFreqRef(64, 10000), 64);
      assert.ok(maxAbsDiff(pe.rope(input, { config: gptj, offset: 7 }).data, want) < 1e-6);
      assert.ok(maxAbsDiff(pe.rope(input, { config: gptj, offset: 7, layout: 'interleaved' }).data, want) < 1e-6);
      // the 'half' pairs would be another rotation altogether
      assert.ok(maxAbsDiff(ropeRef(x, [2, 2, 256], [7, 8], invFreqRef(64, 10000), 1, 64), want) > 0.1);
      assert.throws(() => pe.rope(input, { config: gptj, layout: 'half' }), {
        name: 'TypeError',
        message: /^posenc\.rope: layout 'half' contradicts the config, whose model rotates 'interleaved' pairs: leave layout out/,
      });
      // the families transformers rotates so, by model_type; nomic-bert and DeepSeek-V3 say it with a flag
      const llamaLike = { hidden_size: 1024, num_attention_heads: 8 };
      for (const model_type of ['gptj', 'codegen', 'cohere', 'cohere2', 'glm', 'glm4', 'helium'])
        assert.equal(ropeConfig({ ...llamaLike, model_type }).layout, 'interleaved', model_type);
      for (const model_type of ['llama', 'gpt_neox', 'qwen2', 'phi3', 'gemma3', 'falcon'])
        assert.equal(ropeConfig({ ...llamaLike, model_type }).layout, undefined, model_type);
      assert.equal(ropeConfig({ ...llamaLike, rotary_emb_interleaved: true }).layout, 'interleaved');
      assert.equal(ropeConfig({ ...llamaLike, rope_interleave: true }).layout, 'interleaved');
      assert.equal(ropeConfig(FAMILIES['nomic-embed-text v1']).layout, 'half');
      const llamaX = randomTensor(3 * 128, 4);
      assert.ok(
        maxAbsDiff(
          pe.rope({ data: llamaX, shape: [3, 1, 128] }, { config: { ...llamaLike, head_dim: 128, rope_interleave: true } }).data,
          interleavedRef(llamaX, [3, 1, 128], [0, 1, 2], invFreqRef(128, 10000), 128),
        ) < 1e-6,
      );
      assert.throws(() => ropeConfig({ ...gptj, rotary_emb_interleaved: false }), {
        name: 'TypeError',
        message: /config\.rotary_emb_interleaved \(false\) contradicts the pairs config\.model_type \('gptj'\) rotates \(interleaved\)/,
      });
      assert.throws(() => ropeConfig({ ...llamaLike, rotary_emb_interleaved: true, rope_interleave: false }), {
        name: 'TypeError',
        message: /config\.rope_interleave \(false\) contradicts config\.rotary_emb_interleaved \(true\) \(interleaved\): remove one/,
      });
      assert.throws(() => ropeConfig({ ...llamaLike, rope_interleave: 'yes' }), {
        name: 'TypeError',
        message: /rope_interleave must be true or false/,
      });
    });

    test('two names of one setting that disagree are refused, never resolved', () => {
      const { 'Qwen 7B': qwen } = FAMILIES;
      const q = { ...qwen, use_dynamic_ntk: false };
      for (const [config, pattern] of [
        [{ ...q, rope_theta: 1e6 }, /config\.rope_theta \(1000000\) and config\.rotary_emb_base \(10000\) disagree on the base/],
        [
          { ...FAMILIES['Phi-3 small 8k'], rope_theta: 1e4 },
          /config\.rope_theta \(10000\) and config\.rope_embedding_base \(1000000\) disagree on the base/,
        ],
        [{ ...q, head_dim: 64 }, /config\.head_dim \(64\) and config\.kv_channels \(128\) disagree on the head dimension/],
        [{ ...q, rope_pct: 0.25 }, /config\.rotary_pct \(1\) and config\.rope_pct \(0\.25\) disagree on the rotary fraction/],
        [{ ...q, partial_rotary_factor: 0.5 }, /config\.partial_rotary_factor \(0\.5\) and config\.rotary_pct \(1\) disagree on the rotary fraction/],
        [{ ...FAMILIES['GPT-J 6B'], hidden_size: 2048 }, /config\.hidden_size \(2048\) and config\.n_embd \(4096\) disagree on the hidden size/],
        [
          { ...FAMILIES['Falcon 7B'], num_attention_heads: 32 },
          /config\.num_attention_heads \(32\) and config\.n_head \(71\) disagree on the number of heads/,
        ],
        [{ ...FAMILIES['nomic-embed-text v1'], rotary_pct: 0.5 }, /config\.rotary_pct \(0\.5\) and config\.rotary_emb_fraction \(1\) disagree/],
        [{ ...FAMILIES['GPT-J 6B'], rotary_pct: 0.25 }, /config has both rotary_dim and rotary_pct: pass one/],
      ])
        assert.throws(
          () => pe.ropeFrequencies({ config }),
          (e) => e instanceof TypeError && e.message.startsWith('posenc.ropeFrequencies: ') && pattern.test(e.message),
          pattern.source,
        );
      // nomic-bert does not round head * rotary_emb_fraction: 64 * 0.3 = 19.2 channels has no reading
      assert.throws(
        () => pe.ropeFrequencies({ config: { ...FAMILIES['nomic-embed-text v1'], rotary_emb_fraction: 0.3 } }),
        (e) => e instanceof RangeError && /config\.rotary_emb_fraction \(0\.3\) of the head 64 is 19\.2 channels, not a whole number/.test(e.message),
      );
    });

    test('what transformers refuses is refused: a yarn factor missing or null; values in two places that disagree', () => {
      const base = { hidden_size: 4096, num_attention_heads: 32, rope_theta: 1e6, max_position_embeddings: 32768 };
      for (const rope_scaling of [
        { rope_type: 'yarn', original_max_position_embeddings: 4096 },
        { rope_type: 'yarn', factor: null, original_max_position_embeddings: 4096 },
      ])
        assert.throws(
          () => pe.ropeFrequencies({ config: { ...base, rope_scaling } }),
          (e) => e instanceof TypeError && /needs config\.rope_scaling\.factor/.test(e.message),
        );
      assert.throws(
        () => pe.ropeFrequencies({ config: { ...base, rope_theta: 1e6, rotary_emb_base: 1e4 } }),
        (e) => e instanceof TypeError && /rope_theta.*rotary_emb_base.*disagree/.test(e.message),
      );
      assert.throws(
        () =>
          pe.ropeFrequencies({
            config: {
              ...base,
              original_max_position_embeddings: 8192,
              rope_scaling: { rope_type: 'yarn', factor: 4, original_max_position_embeddings: 4096 },
            },
          }),
        (e) => e instanceof TypeError && /differ/.test(e.message),
      );
      // an unknown key inside the scaling, which would change the frequencies, is never ignored
      assert.throws(
        () => pe.ropeFrequencies({ config: { ...base, rope_scaling: { rope_type: 'yarn', factor: 4, beta_fats: 16 } } }),
        (e) => e instanceof TypeError && /did you mean beta_fast/.test(e.message),
      );
    });

    test('rope({ config }): a Llama 3.1 decode step at positions 4096..4127 against transformers in float64', () => {
      const [seq, heads, hd] = [32, 4, 128];
      const x = randomTensor(seq * heads * hd, 3);
      const positions = range(seq, 4096);
      const ref = hfRopeParameters(llama);
      const want = ropeRef(x, [seq, heads, hd], positions, ref.invFreq, ref.attentionFactor);
      for (const config of [llama, llamaV5]) {
        const got = pe.rope({ data: x, shape: [seq, heads, hd] }, { config, positions: Int32Array.from(positions) });
        assert.ok(maxAbsDiff(got.data, want) < 1e-6, `${maxAbsDiff(got.data, want)}`);
        const byOffset = pe.rope({ data: x, shape: [seq, heads, hd] }, { config, offset: 4096 });
        assert.deepEqual(byOffset.data, got.data);
      }
      // the same scaling without the config's base was the silent 10000 (max error 2.72): now refused
      assert.throws(() => pe.rope({ data: x, shape: [seq, heads, hd] }, { scaling: llama.rope_scaling, offset: 4096 }), TypeError);
      // a head size the config does not have
      assert.throws(
        () => pe.rope({ data: x, shape: [seq, heads * 2, hd / 2] }, { config: llama }),
        (e) => e instanceof RangeError && /64 channels per head.*128/.test(e.message),
      );
      assert.throws(() => pe.rope({ data: x, shape: [seq, heads, hd] }, { config: llama, base: 1e4 }), TypeError);
    });

    test('dynamic and LongRoPE follow the current length in rope, as transformers does at each forward', () => {
      const dyn = {
        hidden_size: 512,
        num_attention_heads: 8,
        rope_theta: 10000,
        max_position_embeddings: 2048,
        rope_scaling: { rope_type: 'dynamic', factor: 2 },
      };
      const x = randomTensor(2 * 64, 4);
      for (const p of [
        [10, 100],
        [5000, 5001],
      ]) {
        const ref = hfRopeParameters(dyn, Math.max(...p) + 1);
        const got = pe.rope({ data: x, shape: [2, 64] }, { config: dyn, positions: p });
        assert.ok(maxAbsDiff(got.data, ropeRef(x, [2, 1, 64], p, ref.invFreq)) < 1e-6, `${p}`);
      }
      const phi3 = CONFIGS['Phi-3 mini 128k'];
      const y = randomTensor(2 * 96, 5);
      for (const p of [
        [0, 4095],
        [4096, 4097],
      ]) {
        const ref = hfRopeParameters(phi3, Math.max(...p) + 1);
        const got = pe.rope({ data: y, shape: [2, 96] }, { config: phi3, positions: p });
        assert.ok(
          maxAbsDiff(got.data, ropeRef(y, [2, 1, 96], p, ref.invFreq, ref.attentionFactor)) < 2e-6,
          `${p}: ${maxAbsDiff(got.data, ropeRef(y, [2, 1, 96], p, ref.invFreq, ref.attentionFactor))}`,
        );
      }
    });

    test('every published config, through ropeFrequencies, rope and ropeCache', () => {
      for (const [name, config] of Object.entries(CONFIGS)) {
        // the current length is the largest position + 1 (LongRoPE takes its long factors past 4096)
        const ref = hfRopeParameters(config, 100001);
        const rot = ref.invFreq.length * 2;
        const cache = pe.ropeCache({ config, positions: [0, 1000, 100000] });
        for (const [r, p] of [0, 1000, 100000].entries())
          for (let i = 0; i < rot / 2; i++) {
            const a = p * ref.invFreq[i];
            assert.ok(Math.abs(cache.cos.data[r * (rot / 2) + i] - ref.attentionFactor * Math.cos(a)) < 1e-6, `${name} cos ${p} ${i}`);
            assert.ok(Math.abs(cache.sin.data[r * (rot / 2) + i] - ref.attentionFactor * Math.sin(a)) < 1e-6, `${name} sin ${p} ${i}`);
          }
        assert.deepEqual(cache.cos.shape, [3, rot / 2]);
      }
    });
  });
}

test('ropeConfig is what posenc reads, with the scaling in camelCase', () => {
  assert.deepEqual(ropeConfig(llama), {
    headDim: 128,
    rotaryDim: 128,
    base: 500000,
    scaling: { type: 'llama3', factor: 8, lowFreqFactor: 1, highFreqFactor: 4, originalMaxPositions: 8192 },
    maxPositions: 131072,
    fields: ['hidden_size', 'num_attention_heads', 'rope_theta', 'rope_scaling', 'max_position_embeddings'],
  });
  const nested = ropeConfig({ vocab_size: 1, text_config: { ...llama, vocab_size: 2 } });
  assert.deepEqual([nested.base, nested.fields[0]], [500000, 'text_config.hidden_size']);
  assert.deepEqual(
    ropeConfig({ hidden_size: 3584, num_attention_heads: 28, rope_theta: 1e6, rope_scaling: { type: 'mrope', mrope_section: [16, 24, 24] } })
      .mropeSection,
    [16, 24, 24],
  );
  // the core's checks of the values name the fields as the config spells them
  const short = { head_dim: 8, max_position_embeddings: 8192, original_max_position_embeddings: 4096 };
  assert.throws(
    () => simd.ropeFrequencies({ config: { ...short, rope_scaling: { type: 'longrope', short_factor: [1, 1], long_factor: [1, 1, 1, 1] } } }),
    (e) =>
      e instanceof RangeError && /^posenc\.ropeFrequencies: config\.rope_scaling\.short_factor must hold dim\/2 = 4 values, got 2$/.test(e.message),
  );
  assert.throws(
    () => simd.rope({ data: new Float32Array(8), shape: [1, 8] }, { config: { ...short, rope_parameters: { rope_type: 'linear', factor: 0.5 } } }),
    (e) => e instanceof RangeError && /^posenc\.rope: config\.rope_parameters\.factor must be a finite number >= 1 .*got 0\.5$/.test(e.message),
  );
  assert.throws(
    () => simd.ropeCache({ length: 4, rotaryDim: 8, scaling: { type: 'linear', factor: 0.5 } }),
    (e) => e instanceof RangeError && /^posenc\.ropeCache: scaling\.factor must be a finite number >= 1/.test(e.message),
  );
  assert.throws(
    () => ropeConfig(null),
    (e) => e instanceof TypeError && /^posenc\.ropeConfig: config must be an object/.test(e.message),
  );
});

test('keys that change the frequencies in a way posenc does not read are refused, with what to pass instead', () => {
  const gemma = FAMILIES['Gemma 3 4B'];
  const qwen = FAMILIES['Qwen 7B'];
  const nomic = FAMILIES['nomic-embed-text v1'];
  const phi3small8k = FAMILIES['Phi-3 small 8k'];
  // [config, the key as named, what the message must say to pass instead]
  const cases = [
    [gemma, 'config.text_config.rope_local_base_freq', /base: config\.text_config\.rope_local_base_freq and (dim|rotaryDim) instead of config/],
    [FAMILIES['ModernBERT base'], 'config.global_rope_theta', /pass base: config\.global_rope_theta \(or config\.local_rope_theta/],
    [{ ...FAMILIES['ModernBERT base'], global_rope_theta: null }, 'config.local_rope_theta', /pass base: config\.local_rope_theta/],
    [
      FAMILIES['GLM-4 9B chat'],
      'config.rope_ratio',
      /base: 10000 \* config\.rope_ratio, (dim|rotaryDim): config\.kv_channels \/ 2 and layout: 'interleaved'/,
    ],
    [
      { ...FAMILIES['GLM-4 9B chat'], rope_ratio: null },
      'config.original_rope',
      /(dim|rotaryDim): config\.kv_channels \/ 2 and layout: 'interleaved'/,
    ],
    [qwen, 'config.use_dynamic_ntk', /config: \{ \.\.\.config, use_dynamic_ntk: false \}/],
    [{ ...nomic, rotary_scaling_factor: 2 }, 'config.rotary_scaling_factor', /rotary_scaling_factor: null/],
    [{ ...nomic, rotary_emb_scale_base: 512 }, 'config.rotary_emb_scale_base', /xpos option/],
    [{ ...phi3small8k, rope_position_scale: 2 }, 'config.rope_position_scale', /positions multiplied by config\.rope_position_scale/],
    [FAMILIES['Falcon RW 1B'], 'config.alibi', /alibiSlopes \/ alibiBias/],
  ];
  const x = { data: new Float32Array(256), shape: [1, 256] };
  const calls = {
    ropeFrequencies: (config) => simd.ropeFrequencies({ config }),
    rope: (config) => simd.rope(x, { config }),
    ropeCache: (config) => simd.ropeCache({ config, length: 2 }),
    ropeConfig: (config) => ropeConfig(config),
  };
  for (const [config, key, instead] of cases)
    for (const [fn, call] of Object.entries(calls))
      assert.throws(
        () => call(config),
        (e) => e instanceof TypeError && e.message.startsWith(`posenc.${fn}: ${key} (`) && instead.test(e.message),
        `${fn} ${key}`,
      );
  // the option for the rotary dimension is the one of the function refusing
  assert.throws(() => simd.ropeFrequencies({ config: gemma }), /rope_local_base_freq and dim instead/);
  assert.throws(() => simd.ropeCache({ config: gemma, length: 1 }), /rope_local_base_freq and rotaryDim instead/);

  // the ways out give the model's frequencies. Gemma 3: sliding-window layers unscaled at base 10000,
  // full-attention layers at rope_theta divided by the linear factor
  const t = gemma.text_config;
  const local = simd.ropeFrequencies({ dim: 256, base: t.rope_local_base_freq }).invFreq;
  assert.ok(maxAbsDiff(local, invFreqRef(256, 1e4)) <= 2e-7);
  const global = simd.ropeFrequencies({ config: { ...t, rope_local_base_freq: null } }).invFreq;
  assert.ok(
    maxAbsDiff(
      global,
      invFreqRef(256, 1e6).map((w) => w / 8),
    ) <= 2e-7,
  );
  // GLM-4: base 10000 * 500 over the first 64 channels of each 128-channel head
  const glm = FAMILIES['GLM-4 9B chat'];
  const glmFreq = simd.ropeFrequencies({ dim: glm.kv_channels / 2, base: 10000 * glm.rope_ratio }).invFreq;
  assert.ok(maxAbsDiff(glmFreq, invFreqRef(64, 5e6)) <= 2e-7);
  // inert values (alibi false, rope_position_scale 1, use_dynamic_ntk false, null) are read and listed
  assert.deepEqual(ropeConfig({ ...phi3small8k, alibi: false, use_dynamic_ntk: false, rotary_emb_scale_base: null }).fields, [
    'hidden_size',
    'num_attention_heads',
    'rope_embedding_base',
    'rope_scaling',
    'max_position_embeddings',
    'use_dynamic_ntk',
    'rotary_emb_scale_base',
    'rope_position_scale',
    'alibi',
  ]);
});
