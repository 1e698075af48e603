// Typed usage of the public API: `tsc -p tests/types` must accept it (and reject misuse below).
import { load, simdSupported, version, type HFRopeScaling, type RopeScaling, type Tensor, type Posenc } from 'posenc';

async function main(): Promise<void> {
  const pe: Posenc = await load();
  const backend: 'wasm-simd' | 'wasm-scalar' = pe.backend;
  const simd: boolean = simdSupported();
  const v: string = version;

  const table: Tensor = pe.sinusoidal({ length: 100, dModel: 128 });
  const split = pe.sinusoidal({ dModel: 8, positions: [0, 0.5, 1e6], layout: 'split', base: 100 });
  const wl: Float64Array = pe.wavelengths({ dModel: 64 });

  const learned = pe.learned({ maxLength: 512, dModel: 768, init: 'xavier', seed: 1 });
  const rows: Tensor = learned.lookup([0, 1, 2]);
  const longer = learned.resize(4096, 'tile');
  longer.dispose();
  learned[Symbol.dispose]();

  const tokens = pe.tokenEmbedding({ vocabSize: 1000, dModel: 128 });
  const x = tokens.lookup({ data: [1, 2, 3, 4], shape: [2, 2] });
  const y = pe.addPositional(x, table);
  const { mean, std } = pe.stats(y);

  // @ts-expect-error: dModel is required
  pe.sinusoidal({ length: 4 });
  // @ts-expect-error: unknown layout
  pe.sinusoidal({ length: 4, dModel: 4, layout: 'columns' });
  void [backend, simd, v, split, wl, rows, mean, std, tokens];
}
void main;

async function relative(pe: Posenc): Promise<void> {
  const q = pe.sinusoidal({ length: 16, dModel: 64 });
  const llama3 = { type: 'llama3', factor: 8, lowFreqFactor: 1, highFreqFactor: 4, originalMaxPositions: 8192 } as const;
  const { invFreq, attentionFactor } = pe.ropeFrequencies({ dim: 64, base: 500000, scaling: llama3 });
  const rq: Tensor = pe.rope(q, { base: 500000, scaling: llama3, offset: 4096, layout: 'interleaved' });
  const slopes: Float32Array = pe.alibiSlopes(12);
  const bias = pe.alibiBias({ numHeads: 4, queryLength: 16 });
  const buckets: Tensor<Int32Array> = pe.t5Buckets({ queryLength: 16, bidirectional: false });
  const shaw: Int32Array = pe.relativePositions({ length: 8, maxRelative: 2 }).data;
  const { output, weights } = pe.attention({ q, k: q, v: q, causal: true });
  const lab = pe.permutationLab({ encoding: 'rope', permutation: [5, 4, 3, 2, 1, 0] });
  const err: number = lab.equivarianceError;
  const baselines: number[] = (['nope', 'xpos'] as const).map((encoding) => pe.permutationLab({ encoding }).equivarianceError);
  // @ts-expect-error: scoreTerms takes the additive encodings only
  pe.scoreTerms({ encoding: 'xpos' });
  const terms = pe.scoreTerms({ encoding: 'learned' });
  const sim = pe.similarity(q, { metric: 'cosine' });
  const m = pe.shiftMatrix({ dModel: 64, k: 3 });
  const nd: Float32Array = pe.nearestDistances(q);
  // @ts-expect-error: unknown scaling type (posenc's camelCase form; a config.json string is checked at run time)
  const unknownType: RopeScaling = { type: 'ntk-by-parts' };
  // @ts-expect-error: the lab has no 'shaw' encoding
  pe.permutationLab({ encoding: 'shaw' });
  // out: write into an existing array; rope in place; Hugging Face configs as written
  const table = new Float32Array(16 * 64);
  const written: Float32Array = pe.sinusoidal({ length: 16, dModel: 64, out: table }).data;
  pe.rope(q, { offset: 3, out: q.data });
  const ids = pe.t5Buckets({ queryLength: 4, out: new Int32Array(16) });
  const config = {
    hidden_size: 4096,
    num_attention_heads: 32,
    rope_theta: 500000,
    rope_scaling: { rope_type: 'llama3', factor: 8, low_freq_factor: 1, high_freq_factor: 4, original_max_position_embeddings: 8192 },
    vocab_size: 128256,
  };
  const fromConfig = pe.ropeFrequencies({ config });
  const snake = pe.ropeFrequencies({ dim: 128, scaling: config.rope_scaling satisfies HFRopeScaling });
  const batched = pe.rope({ data: new Float32Array(2 * 4 * 2 * 8), shape: [2, 4, 2, 8] });
  const gqa = pe.attention({
    q: { data: new Float32Array(2 * 8 * 4 * 16), shape: [2, 8, 4, 16] },
    k: { data: new Float32Array(2 * 8 * 16), shape: [2, 8, 1, 16] },
    v: { data: new Float32Array(2 * 8 * 16), shape: [2, 8, 1, 16] },
    causal: true,
  });
  const gqaWeights: Tensor = gqa.weights;
  const streamed: null = pe.attention({ q, k: q, v: q, weights: false }).weights;
  // @ts-expect-error: out of the wrong type for integer results
  pe.t5Buckets({ queryLength: 4, out: new Float32Array(16) });
  // @ts-expect-error: config replaces dim
  pe.ropeFrequencies({ config, dim: 128 });
  void [
    invFreq,
    attentionFactor,
    rq,
    slopes,
    bias,
    buckets,
    shaw,
    output,
    weights,
    err,
    terms,
    sim,
    m,
    nd,
    written,
    ids,
    fromConfig,
    snake,
    batched,
    unknownType,
  ];
}
void relative;
