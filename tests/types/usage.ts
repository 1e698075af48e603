// Typed usage of the public API: `tsc -p tests/types` must accept it (and reject misuse below).
import {
  load,
  ropeConfig,
  simdSupported,
  version,
  type HalfArray,
  type HFConfig,
  type HFRopeScaling,
  type RopeConfig,
  type RopeScaling,
  type Tensor,
  type TensorInput,
  type Posenc,
} from 'posenc';
import { loadLab, type Lab, type ToyTrainer } from 'posenc/lab';

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
  const sim = pe.similarity(q, { metric: 'cosine' });
  const m = pe.shiftMatrix({ dModel: 64, k: 3 });
  const nd: Float32Array = pe.nearestDistances(q);
  // @ts-expect-error: unknown scaling type (posenc's camelCase form; a config.json string is checked at run time)
  const unknownType: RopeScaling = { type: 'ntk-by-parts' };
  // @ts-expect-error: the core has no teaching models (posenc/lab has)
  pe.permutationLab({ encoding: 'rope' });
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
  } satisfies HFConfig;
  const fromConfig = pe.ropeFrequencies({ config });
  const snake = pe.ropeFrequencies({ dim: 128, base: config.rope_theta, scaling: config.rope_scaling satisfies HFRopeScaling });
  // a parsed config.json is untyped: it goes in as it is
  const parsed: unknown = JSON.parse('{"hidden_size": 64, "num_attention_heads": 4, "rope_theta": 10000}');
  const fromJson = pe.rope(q, { config: parsed as HFConfig, positions: BigInt64Array.from([0n, 1n]) as BigInt64Array });
  // a config.json imported as JSON (or an object literal not marked `satisfies`) types its strings as
  // string: it goes in as it is (an unknown type name is a RangeError at run time)
  const imported = {
    hidden_size: 4096,
    num_attention_heads: 32,
    rope_theta: 500000,
    rope_scaling: { rope_type: 'llama3' as string, factor: 8, low_freq_factor: 1, high_freq_factor: 4, original_max_position_embeddings: 8192 },
    eos_token_id: [128001, 128008, 128009],
  };
  const fromImported = pe.ropeCache({ config: imported, length: 16 });
  const olderName: HFRopeScaling = { type: 'dynamic' as string, factor: 2 };
  const read: RopeConfig = ropeConfig(config);
  // the seams with other runtimes: axes, per-row positions, caches, half floats, int64 ids
  const ortLayout = pe.rope(
    { data: new Float32Array(2 * 4 * 3 * 8), dims: [2, 4, 3, 8] },
    {
      axes: 'bhsd',
      positions: [
        [0, 1, 2],
        [1, 2, 3],
      ],
    },
  );
  const { cos, sin } = pe.ropeCache({ config, length: 4096 });
  const cacheAt = pe.ropeCache({ rotaryDim: 64, base: 1e6, positions: [0, 4100] });
  // @ts-expect-error: a cache needs its rows (length, or positions)
  pe.ropeCache({ rotaryDim: 8 });
  // @ts-expect-error: and its rotary dimension (rotaryDim, or a config)
  pe.ropeCache({ length: 8 });
  // @ts-expect-error: a config gives the base, which is then not passed again
  pe.ropeCache({ config, base: 10000, length: 8 });
  const padded = pe.alibiBias({ numHeads: 4, attentionMask: [[0, 1, 1]] });
  // @ts-expect-error: ALiBi needs queryLength (or a mask to take it from)
  pe.alibiBias({ numHeads: 4 });
  const cacheRows: Float32Array = cos.data;
  // half inputs give half results unless dtype says otherwise (ONNX Runtime's float16 tensors)
  const ortHalf = { data: new Uint16Array(8), dims: [2, 4], type: 'float16' };
  const fromHalf: HalfArray = pe.rope(ortHalf).data;
  // @ts-expect-error: rope of a half tensor is half floats
  const notFromHalf: Float32Array = pe.rope(ortHalf).data;
  const asked: Float32Array = pe.rope(ortHalf, { dtype: 'float32' }).data;
  const halfSum: HalfArray = pe.addPositional(ortHalf, pe.sinusoidal({ length: 2, dModel: 4 })).data;
  // @ts-expect-error: so is x + p of a half x
  const notHalfSum: Float32Array = pe.addPositional(ortHalf, pe.sinusoidal({ length: 2, dModel: 4 })).data;
  const halfAttention = pe.attention({ q: ortHalf, k: ortHalf, v: ortHalf });
  const halfOutput: HalfArray = halfAttention.output.data;
  // @ts-expect-error: and attention of half q, k, v
  const notHalfOutput: Float32Array = pe.attention({ q: ortHalf, k: ortHalf, v: ortHalf, weights: false }).output.data;
  const wide: TensorInput = { data: new Float32Array(8), shape: [2, 4] };
  const fromWide: Float32Array = pe.rope(wide).data; // an input typed as any tensor counts as float32
  const halfInPlace = pe.rope(ortHalf, { out: ortHalf.data });
  const half = pe.rope({ data: new Uint16Array(16), shape: [2, 8] }, { dtype: 'float16' });
  const halfBits: HalfArray = half.data;
  // @ts-expect-error: half results are not Float32Arrays
  const notFloat32: Float32Array = pe.sinusoidal({ length: 2, dModel: 4, dtype: 'bfloat16' }).data;
  const tokenIds = pe.tokenEmbedding({ vocabSize: 10, dModel: 4 }).lookup({ data: BigInt64Array.from([1n, 2n]), dims: [1, 2] });
  const bloom = pe.alibiBias({ numHeads: 4, attentionMask: [[0, 1, 1]] });
  const rel = pe.t5Buckets({ relativePositions: { data: [-1, 0, 1], shape: [1, 3] } });
  // @ts-expect-error: relativePositions replaces the lengths
  pe.t5Buckets({ relativePositions: [1], queryLength: 1 });
  const rowsOfIds = pe.mropePositions({ inputIds: [[1, 2, 3]], config: {} });
  const deltas: Int32Array = rowsOfIds.deltas.data;
  const whisper = pe.sinusoidal({ length: 1500, dModel: 384, layout: 'split', spacing: 'tensor2tensor' });
  const keep = Math.random() > 0.5;
  const maybe: Tensor | null = pe.attention({ q, k: q, v: q, weights: keep }).weights;
  // @ts-expect-error: with weights not known to be true, the weights may be null (fails if typed Tensor)
  const notMaybe: Tensor = pe.attention({ q, k: q, v: q, weights: keep }).weights;
  const bhsd = pe.attention({ q, k: q, v: q, axes: 'bhsd', bias: { data: new Float32Array(16 * 16), shape: [1, 1, 16, 16] } });
  void [
    fromJson,
    fromImported,
    olderName,
    read,
    ortLayout,
    sin,
    cacheRows,
    halfBits,
    notFloat32,
    tokenIds,
    bloom,
    rel,
    deltas,
    whisper,
    maybe,
    notMaybe,
    bhsd,
  ];
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

// posenc/lab: the teaching models beside every core method.
async function teaching(): Promise<void> {
  const lab: Lab = await loadLab();
  const result = lab.permutationLab({ encoding: 'rope', permutation: [5, 4, 3, 2, 1, 0] });
  const err: number = result.equivarianceError;
  const baselines: number[] = (['nope', 'xpos'] as const).map((encoding) => lab.permutationLab({ encoding }).equivarianceError);
  // @ts-expect-error: scoreTerms takes the additive encodings only
  lab.scoreTerms({ encoding: 'xpos' });
  const terms = lab.scoreTerms({ encoding: 'learned' });
  // @ts-expect-error: the lab has no 'shaw' encoding
  lab.permutationLab({ encoding: 'shaw' });
  const table = lab.sinusoidal({ length: 4, dModel: 4 });
  const trainer: ToyTrainer = lab.trainToy({ task: 'before', encoding: 'rope', length: 16 });
  const controller = { aborted: false };
  const report = await trainer.run({ signal: controller, onProgress: (r) => void r.step });
  const at64: number = trainer.evaluate({ length: 64, scaling: { type: 'yarn', factor: 4 } });
  trainer.step(10, { length: 32, scaling: { type: 'linear', factor: 2 } });
  const { orderBlindAccuracy } = trainer.clone().baseline();
  // @ts-expect-error: run() is asynchronous
  const sync: number = trainer.run().heldOutAccuracy;
  trainer.dispose();
  void [err, baselines, terms, table, report, at64, orderBlindAccuracy, sync];
}
void teaching;
