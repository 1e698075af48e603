// Hand-written types for posenc (Emscripten 3.1.6 has no --emit-tsd). Checked by `tsc` in npm test,
// and a test asserts that every method declared on Posenc exists at run time.
//
// Errors: a wrong type or shape is a TypeError, a value out of range (or out of wasm memory) a
// RangeError; every message starts with `posenc.<function>:` and names the argument, the value
// received and what is allowed. An option key a function does not know is a TypeError with a
// did-you-mean. After any error the instance keeps working. Inputs are read once (each option, each
// shape entry, each tensor's bytes), so nothing a getter does mid-call changes what is computed.

declare global {
  // Symbol.dispose, for projects whose `lib` has no ESNext.Disposable (TypeScript < 5.2 libs, browser-only projects).
  interface SymbolConstructor {
    readonly dispose: unique symbol;
  }
}

/**
 * `out`: every call that returns a tensor accepts a typed array of exactly the result's length and
 * type; the result is written there and returned as `data` (no allocation). `rope` with
 * `out: x.data` rotates in place. A wrong length is a RangeError, a wrong type a TypeError.
 */
export interface OutOption<T extends Float32Array | Int32Array | Float64Array = Float32Array> {
  out?: T;
}

/** A row-major tensor. `data` is owned by the caller (a copy, never a view into wasm memory). */
export interface Tensor<T extends Float32Array | Int32Array = Float32Array> {
  data: T;
  shape: number[];
}

export interface LoadOptions {
  /** `false` forces the scalar build; `true` requires SIMD (rejects if unsupported). Default: probe. */
  simd?: boolean;
  /**
   * Where to fetch the `.wasm` from (bundlers / CDNs): one address for the selected build, or one per
   * build, `{ simd, scalar }`. Relative addresses resolve against the page (or the module in Node).
   */
  wasmURL?: string | URL | PerBuild<string | URL>;
  /**
   * The `.wasm` bytes themselves (offline use): for the selected build, or `{ simd, scalar }`. Bytes of
   * the other build are refused with a RangeError (the module reports which build it is).
   */
  wasmBinary?: ArrayBuffer | Uint8Array | PerBuild<ArrayBuffer | Uint8Array>;
}

/** A value per wasm build; a build left out uses its default. */
export interface PerBuild<T> {
  simd?: T;
  scalar?: T;
}

/** Loads posenc: the SIMD build when the engine supports WebAssembly SIMD, else the scalar build. Memoised per backend. */
export function load(options?: LoadOptions): Promise<Posenc>;
/** Whether this engine validates WebAssembly SIMD. */
export function simdSupported(): boolean;
/** The package version. */
export const version: string;

export type SinusoidalLayout = 'interleaved' | 'split';

export interface SinusoidalOptions extends OutOption {
  /** Number of positions (rows). Optional when `positions` is given. */
  length?: number;
  /** Model dimension (columns). Odd values allowed: see the README. */
  dModel: number;
  /** Frequency base: w_i = base^(-2i/dModel), in [1e-300, 1e300]. Default 10000. */
  base?: number;
  /** `'interleaved'` (sin even / cos odd columns, Vaswani) or `'split'` ([sin | cos]). Default `'interleaved'`. */
  layout?: SinusoidalLayout;
  /** First position (rows are offset .. offset+length-1). Default 0. */
  offset?: number;
  /** Explicit positions (any finite numbers), replacing offset/length. */
  positions?: ArrayLike<number>;
}

export interface LearnedOptions {
  maxLength: number;
  dModel: number;
  /** Default `'normal'`. */
  init?: 'normal' | 'xavier' | 'sinusoidal' | 'zeros';
  /** Standard deviation of the `'normal'` init. Default 0.02. */
  std?: number;
  /** Seed of the deterministic generator (identical values in every backend). Default 0. */
  seed?: number;
}

export interface TokenEmbeddingOptions {
  vocabSize: number;
  dModel: number;
  seed?: number;
  /** Multiply looked-up embeddings by sqrt(dModel). Default true. */
  scale?: boolean;
}

/** Integer indices: a list, or a tensor whose shape is kept (result shape: [...shape, dModel]). */
export type Indices = ArrayLike<number> | { data: ArrayLike<number>; shape: number[] };
/** A float tensor argument: `{ data, shape }`. */
export type TensorInput = Tensor<Float32Array>;

export interface Disposable {
  dispose(): void;
  [Symbol.dispose](): void;
  readonly disposed: boolean;
}

export interface LearnedEmbedding extends Disposable {
  readonly maxLength: number;
  readonly dModel: number;
  /** A copy of the whole table, [maxLength, dModel]. */
  readonly table: Tensor;
  /** Rows for positions; a position >= maxLength is a RangeError naming it and maxLength. */
  lookup(positions: Indices, options?: OutOption): Tensor;
  /** A new embedding of newMaxLength rows: linear `'interpolate'` (ViT) or `'tile'` (Longformer). Default 'interpolate'. */
  resize(newMaxLength: number, method?: 'interpolate' | 'tile'): LearnedEmbedding;
}

export interface TokenEmbedding extends Disposable {
  readonly vocabSize: number;
  readonly dModel: number;
  readonly scale: boolean;
  readonly table: Tensor;
  /** Embeddings of token ids, times sqrt(dModel) when `scale`. */
  lookup(ids: Indices, options?: OutOption): Tensor;
}

export interface Stats {
  min: number;
  max: number;
  mean: number;
  /** Population standard deviation (divides by N). */
  std: number;
}

export type RopeScalingType = 'none' | 'linear' | 'ntk' | 'dynamic' | 'yarn' | 'llama3' | 'longrope';

/**
 * A Hugging Face config.json `rope_scaling` object exactly as written there: snake_case keys,
 * `rope_type` (or the older `type`), `'default'` meaning no scaling, `'su'` LongRoPE's first name.
 */
export interface HFRopeScaling {
  /** One of {@link RopeScalingType}, `'default'` or `'su'`; a string, as a parsed config.json gives it (checked at run time). */
  rope_type?: string;
  type?: string;
  factor?: number;
  original_max_position_embeddings?: number;
  beta_fast?: number;
  beta_slow?: number;
  truncate?: boolean;
  low_freq_factor?: number;
  high_freq_factor?: number;
  short_factor?: ArrayLike<number>;
  long_factor?: ArrayLike<number>;
  attention_factor?: number;
  mscale?: number;
  mscale_all_dim?: number;
}

/** The fields of a Hugging Face config.json that RoPE depends on (the rest of the file is ignored). */
export interface HFConfig {
  head_dim?: number | null;
  /** DeepSeek: the rotary part of each head. */
  qk_rope_head_dim?: number;
  hidden_size?: number;
  num_attention_heads?: number;
  partial_rotary_factor?: number;
  rope_theta?: number;
  rope_scaling?: HFRopeScaling | null;
  max_position_embeddings?: number;
  /** Phi-3 (LongRoPE) keeps the original context length here. */
  original_max_position_embeddings?: number;
  [key: string]: unknown;
}

/** Long-context RoPE scaling, with Hugging Face `rope_scaling` semantics in camelCase (or an {@link HFRopeScaling}). */
export interface RopeScaling {
  type: RopeScalingType;
  /** Context extension factor (linear, ntk, dynamic, yarn, llama3, longrope). */
  factor?: number;
  /** Pre-training context length (HF `original_max_position_embeddings`); needed by dynamic, yarn, llama3, longrope. */
  originalMaxPositions?: number;
  /** YaRN ramp bounds in rotations (defaults 32 and 1). */
  betaFast?: number;
  betaSlow?: number;
  /** YaRN: floor/ceil the correction range (default true). */
  truncate?: boolean;
  /** Llama 3.1 band limits (defaults 1 and 4). */
  lowFreqFactor?: number;
  highFreqFactor?: number;
  /** LongRoPE per-frequency factors, dim/2 values each. */
  shortFactor?: ArrayLike<number>;
  longFactor?: ArrayLike<number>;
  /** Current sequence length (dynamic NTK; longrope picks longFactor past originalMaxPositions). */
  seqLength?: number;
  /** Overrides the derived attention factor (which multiplies cos and sin); finite, > 0, within float32. */
  attentionFactor?: number;
  /** YaRN, DeepSeek variant: attention factor mscale(factor, mscale) / mscale(factor, mscaleAllDim). */
  mscale?: number;
  mscaleAllDim?: number;
}

export interface RopeOptions extends OutOption {
  /** Positions of the rows (KV caches, packed sequences); replaces offset. */
  positions?: ArrayLike<number> | Tensor<Int32Array | Float32Array> | [ArrayLike<number>, ArrayLike<number>, ArrayLike<number>];
  /** Position of the first row. Default 0. */
  offset?: number;
  /** Default 10000. */
  base?: number;
  /** `'half'`: GPT-NeoX / HF rotate_half (default); `'interleaved'`: GPT-J / Meta LLaMA pairs. */
  layout?: 'half' | 'interleaved';
  /**
   * Multimodal RoPE (Qwen2-VL): the rotary half split into [t, h, w] sections (summing to rotaryDim/2);
   * `positions` is then [3, seq] (e.g. from `mropePositions`), frequency j following the stream of its section.
   */
  mropeSection?: [number, number, number];
  /** xPos (torchscale): pair i scaled by ((2i + 0.4d) / 1.4d)^((p - center) / scaleBase); needs `role`. */
  xpos?: { scaleBase?: number; center?: number };
  /** xPos: queries are scaled up with the position, keys down. */
  role?: 'query' | 'key';
  /** Rotate only the leading rotaryDim channels of each head (even). Default: the head dimension. */
  rotaryDim?: number;
  scaling?: RopeScaling | HFRopeScaling | null;
  /** Shape of x when x is a bare Float32Array. */
  shape?: number[];
}

export interface AttentionOptions extends OutOption {
  /** [seqQ, d], [seqQ, heads, d] or [batch, seqQ, heads, d]. */
  q: TensorInput;
  /** Same rank as q: [seqK, d], [seqK, kvHeads, d] or [batch, seqK, kvHeads, d]; kvHeads divides heads (GQA; MQA with 1). */
  k: TensorInput;
  /** Like k, with dv channels. */
  v: TensorInput;
  /** Added to the logits: [seqQ, seqK] (every head) or [heads, seqQ, seqK]; -Infinity masks. */
  bias?: TensorInput;
  /** Query i sees keys j <= i + (seqK - seqQ) (queries at the end of a KV cache); masked logits are not computed. Default false. */
  causal?: boolean;
  /** Default 1/sqrt(d); must fit in float32. */
  scale?: number;
  /** `false`: stream the keys with an online softmax in O(seq·d) memory and return `weights: null`. Default true. */
  weights?: boolean;
}

/**
 * The lab's encodings. `'nope'` is the no-position baseline (NoPE) under its own name: in the lab's
 * bidirectional layer it computes exactly what `'none'` does. `'xpos'` is RoPE with xPos's decaying
 * scale (torchscale's interleaved layout, scale base 512, centred at ⌈L/2⌉).
 */
export type LabEncoding = 'none' | 'sinusoidal' | 'learned' | 'rope' | 'alibi' | 't5' | 'nope' | 'xpos';

export interface PermutationLabResult {
  tokens: string[];
  permutedTokens: string[];
  /** permutation[i] = index in `tokens` of the token at position i of the shuffled sentence. */
  permutation: number[];
  encoding: LabEncoding;
  /** [L, dModel] */
  output: Tensor;
  permutedOutput: Tensor;
  /** [heads, L, L] */
  weights: Tensor;
  permutedWeights: Tensor;
  /** max |f(Px) - P f(x)|: ~1e-7 without an encoding. */
  equivarianceError: number;
  /** max over channels of |mean-pooled output - mean-pooled shuffled output|. */
  pooledDifference: number;
}

/** trainToy's tasks: two that need word order and one that does not (the control). */
export type ToyTask = 'before' | 'copy' | 'count';

export interface ToyOptions {
  /** 'before': do tokens A and B come in that order? 'copy': which token is at position k (asked by the readout token)? 'count': how many times does token 0 occur (0..4)? */
  task: ToyTask;
  /** Any lab encoding but 'xpos'. Default 'none'. */
  encoding?: Exclude<LabEncoding, 'xpos'>;
  /** Steps run() trains to. Default 2000. */
  steps?: number;
  /** Seeds the parameters and the examples: the same seed trains to the same bits on every backend. Default 0. */
  seed?: number;
  /** Tokens per sequence, 4..32 (a readout token follows them). Default 8. */
  length?: number;
  /** Width, a multiple of 2 * heads in 8..64. Default 16. */
  dModel?: number;
  /** Attention heads, 1..4. Default 2. */
  heads?: number;
  /** Residual attention layers, 1 or 2. Default 2. */
  layers?: number;
  /** Examples per step, 1..256. Default 16. */
  batch?: number;
  /** Content tokens, 4..64. Default 8. */
  vocab?: number;
  /** Mask the future (query i sees keys j <= i). Default false: bidirectional. */
  causal?: boolean;
  /** Adam's learning rate, in (0, 1]. Default 0.003. */
  learningRate?: number;
}

export interface ToyReport {
  step: number;
  /** Mean cross-entropy over the last 10 steps' batches. */
  loss: number;
  /** Accuracy over the same batches. */
  trainAccuracy: number;
  /** Accuracy on 256 held-out examples at the training length. */
  heldOutAccuracy: number;
}

export interface ToyTrainer extends Disposable {
  /** The options with every default filled in. */
  readonly config: Readonly<Required<ToyOptions>>;
  /** Trains n more steps (default 1); step(0) only reports. */
  step(n?: number): ToyReport;
  /** Trains until config.steps are done. */
  run(): ToyReport;
  /** Held-out accuracy at another sequence length (4..128); a learned table past its training length is a RangeError. */
  evaluate(options?: { length?: number }): number;
}

export interface ScoreTermsResult {
  tokens: string[];
  contentContent: Tensor;
  contentPosition: Tensor;
  positionContent: Tensor;
  positionPosition: Tensor;
  total: Tensor;
}

export interface Posenc {
  readonly backend: 'wasm-simd' | 'wasm-scalar';
  readonly version: string;
  /** The instruction set the kernels were compiled for ('wasm' or 'emulated'). */
  readonly simdArch: string;

  /** The sinusoidal table [length, dModel] (Vaswani et al. 2017); angles reduced in double precision. */
  sinusoidal(options: SinusoidalOptions): Tensor;
  /**
   * MAE's 2-D sin-cos table for a height x width grid of patches: [clsToken + height·width, dModel]; the first
   * half of the channels encodes the column, the second the row (dModel a multiple of 4).
   */
  sinusoidal2d(options: { height: number; width: number; dModel: number; base?: number; clsToken?: boolean } & OutOption): Tensor;
  /** A learned absolute position embedding table. */
  learned(options: LearnedOptions): LearnedEmbedding;
  /** A token embedding table (Xavier-uniform). */
  tokenEmbedding(options: TokenEmbeddingOptions): TokenEmbedding;
  /** x + p for x [seq, d] or [batch, seq, d]; p [rows >= seq, d] (its first seq rows are used). */
  addPositional(x: TensorInput, p: TensorInput, options?: OutOption): Tensor;
  /** Wavelengths 2*pi*base^(2i/dModel), i < ceil(dModel/2). */
  wavelengths(options: { dModel: number; base?: number } & OutOption<Float64Array>): Float64Array;
  /** Min, max, mean and population std of every value. */
  stats(t: TensorInput | Float32Array): Stats;

  /**
   * RoPE inverse frequencies (dim/2) and the attention factor, for a scaling or none; or for a whole
   * Hugging Face config.json (`config`: head_dim or hidden_size / num_attention_heads, times
   * partial_rotary_factor; rope_theta; rope_scaling).
   */
  ropeFrequencies(
    options:
      | ({ dim: number; base?: number; scaling?: RopeScaling | HFRopeScaling | null } & OutOption)
      | ({ config: HFConfig; dim?: never; base?: never; scaling?: never } & OutOption),
  ): { invFreq: Float32Array; attentionFactor: number };
  /** A rotated copy of x (or x rotated in place with `out: x.data`): [seq, dim], [seq, heads, headDim] or [batch, seq, heads, headDim]. */
  rope(x: TensorInput | Float32Array, options?: RopeOptions): Tensor;
  /**
   * Qwen2-VL's position ids [3, seq] (temporal, height, width) for text and vision segments, e.g.
   * `[{ text: 3 }, { image: [1, 4, 6] }, { text: 2 }]` (grids after spatial merging; `video` alike).
   */
  mropePositions(
    segments: Array<{ text: number } | { image: [number, number, number] } | { video: [number, number, number] }>,
    options?: OutOption<Int32Array>,
  ): Tensor<Int32Array>;
  /** ALiBi head slopes (Press et al.), including non-powers of two. */
  alibiSlopes(numHeads: number, options?: OutOption): Float32Array;
  /** ALiBi biases [heads, q, k]: -m (pos_i - j), or -m |pos_i - j| when symmetric. */
  alibiBias(options: { numHeads: number; queryLength: number; keyLength?: number; symmetric?: boolean } & OutOption): Tensor;
  /** T5 relative position buckets of key - query, [q, k]. */
  t5Buckets(
    options: {
      queryLength: number;
      keyLength?: number;
      numBuckets?: number;
      maxDistance?: number;
      bidirectional?: boolean;
    } & OutOption<Int32Array>,
  ): Tensor<Int32Array>;
  /** Shaw et al. indices clip(j - i, -k, k) + k, [L, L]. */
  relativePositions(options: { length: number; maxRelative: number } & OutOption<Int32Array>): Tensor<Int32Array>;

  /** softmax(q k^T * scale + bias) v, streamed over the keys in O(seq·d) memory, without the weights. */
  attention(options: AttentionOptions & { weights: false }): { output: Tensor; weights: null };
  /**
   * softmax(q k^T * scale + bias) v per batch entry and head. Output: the shape of q with dv channels.
   * Weights: [seqQ, seqK] for 2-D inputs, [heads, seqQ, seqK] for 3-D, [batch, heads, seqQ, seqK] for 4-D.
   * NaN/Infinity inputs are a RangeError; rows whose logits overflow float32 are computed again in
   * double, so any finite input gives the right weights. At most 2^34 multiply-adds per call. `out` receives the output.
   */
  attention(options: AttentionOptions): { output: Tensor; weights: Tensor };
  /** One toy self-attention layer on a sentence and on its shuffle (default sentence "The cat sat on the mat"). */
  permutationLab(options?: {
    sentence?: string;
    permutation?: ArrayLike<number>;
    encoding?: LabEncoding;
    dModel?: number;
    seed?: number;
  }): PermutationLabResult;
  /** Seed 001's score (E_i+P_i) W_Q W_K^T (E_j+P_j)^T / sqrt(d) split into its four terms. */
  scoreTerms(options?: { sentence?: string; encoding?: 'sinusoidal' | 'learned'; dModel?: number; seed?: number }): ScoreTermsResult;

  /**
   * A toy transformer (residual attention layers and a linear readout) trained with Adam in the wasm
   * core, to see a model need positions: without an encoding 'before' stays at chance.
   */
  trainToy(options: ToyOptions): ToyTrainer;

  /** [L, L] dot products (default) or cosines between the rows of t. */
  similarity(t: TensorInput, options?: { metric?: 'dot' | 'cosine' } & OutOption): Tensor;
  /** The [d, d] block-diagonal rotation M_k with PE(p + k) = M_k PE(p) (interleaved layout, even dModel). */
  shiftMatrix(options: { dModel: number; base?: number; k: number } & OutOption): Tensor;
  /** For each row of t, the Euclidean distance to its nearest other row (accumulated in double). */
  nearestDistances(t: TensorInput, options?: OutOption): Float32Array;
}
