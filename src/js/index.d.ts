// Hand-written types for posenc (Emscripten 3.1.6 has no --emit-tsd). Checked by `tsc` in npm test,
// and a test asserts that every method declared on Posenc exists at run time.
//
// Errors: a wrong type (a string for a number, a list where a tensor goes) is a TypeError; a value
// out of range, a shape that does not fit (rank, sizes, data length) or out of wasm memory a
// RangeError; every message starts with `posenc.<function>:` and names the argument, the value
// received and what is allowed. An option key a function does not know is a TypeError listing the
// keys it knows (with a did-you-mean when one is close). After any error the instance keeps working. Inputs are read once (each option, each
// shape entry, each tensor's bytes), so nothing a getter does mid-call changes what is computed.

declare global {
  // Symbol.dispose, for projects whose `lib` has no ESNext.Disposable (TypeScript < 5.2 libs, browser-only projects).
  interface SymbolConstructor {
    readonly dispose: unique symbol;
  }
}

/**
 * A Float16Array (where the engine has one): half-float results of dtype `'float16'` come in one, else
 * in a Uint16Array of the same bits. Described structurally, so that these types need no `lib` that
 * declares Float16Array.
 */
export interface Float16ArrayLike extends ArrayLike<number> {
  readonly BYTES_PER_ELEMENT: number;
  readonly buffer: ArrayBufferLike;
  readonly byteOffset: number;
  readonly byteLength: number;
}

/** The 16-bit values of a half-float result: Uint16Array bits, or a Float16Array for float16 where the engine has one. */
export type HalfArray = Uint16Array | Float16ArrayLike;

/**
 * The element type of float results: `'float32'` (default), or half floats `'float16'` / `'bfloat16'`,
 * rounded to nearest even from the float32 maths. The same option reads Uint16Array inputs as that type.
 */
export type DType = 'float32' | 'float16' | 'bfloat16';

/** The data of a float result of dtype D. */
export type FloatsOf<D extends DType | undefined> = D extends 'float16' | 'bfloat16' ? HalfArray : Float32Array;

/**
 * `out`: every call that returns a tensor (but batched `mropePositions`, which returns two) accepts a typed array of exactly the result's length and
 * type; the result is written there and returned as `data` (no allocation). `rope` with
 * `out: x.data` rotates in place. A wrong length is a RangeError, a wrong type a TypeError.
 */
export interface OutOption<T extends Float32Array | Int32Array | Float64Array | HalfArray = Float32Array> {
  out?: T;
}

/**
 * dtype and out for a float result: out holds the 16-bit values for a half dtype. O: the data of the
 * result (for `rope`, `addPositional` and `attention` it follows the input when dtype is not given).
 */
export interface FloatOutput<D extends DType | undefined = 'float32', O = FloatsOf<D>> {
  dtype?: D;
  out?: O;
}

/**
 * The kind of a float input: a Float32Array (or a TF.js tensor) gives float32 results, half floats (a
 * Float16Array, an ONNX Runtime float16 / bfloat16 tensor) half results. An input typed as any
 * {@link TensorInput} counts as float32.
 */
export type DataOf<X> = [X] extends [{ data: Uint16Array | { readonly [Symbol.toStringTag]: 'Float16Array' } }] ? HalfArray : Float32Array;

/** The data of a result that follows its input X: dtype D's when given, else the input's kind. */
export type ResultOf<X, D extends DType | undefined> = [D] extends [DType] ? FloatsOf<D> : DataOf<X>;

/** A row-major tensor. `data` is owned by the caller (a copy, never a view into wasm memory). */
export interface Tensor<T extends Float32Array | Int32Array | HalfArray = Float32Array> {
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
  wasmURL?: string | URLLike | PerBuild<string | URLLike>;
  /**
   * The `.wasm` bytes themselves (offline use): for the selected build, or `{ simd, scalar }`. Bytes of
   * the other build are refused with a RangeError (the module reports which build it is).
   *
   * `wasmURL` and `wasmBinary` apply to the first `load()` of a build: each build is instantiated once
   * per realm, and later calls for it return that instance whatever bytes or address they name.
   */
  wasmBinary?: ArrayBuffer | Uint8Array | PerBuild<ArrayBuffer | Uint8Array>;
}

/** A URL object (structurally: these types need no DOM or Node `lib`). */
export interface URLLike {
  readonly href: string;
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
/**
 * Frequency spacing: `'vaswani'` is base^(-2i/d); `'tensor2tensor'` is base^(-i/(h-1)), h = ⌊d/2⌋, as
 * tensor2tensor, fairseq and Whisper compute it (with `layout: 'split'`, Whisper's table).
 */
export type SinusoidalSpacing = 'vaswani' | 'tensor2tensor';

export interface SinusoidalOptions<D extends DType = 'float32'> extends FloatOutput<D> {
  /** Number of positions (rows). Optional when `positions` is given. */
  length?: number;
  /** Model dimension (columns). Odd values allowed: see the README. */
  dModel: number;
  /** Frequency base, in [1e-300, 1e300]: w_i = base^(-2i/dModel) (the default spacing). Default 10000. */
  base?: number;
  /** `'interleaved'` (sin even / cos odd columns, Vaswani) or `'split'` ([sin | cos]). Default `'interleaved'`. */
  layout?: SinusoidalLayout;
  /** Default `'vaswani'`. */
  spacing?: SinusoidalSpacing;
  /** First position: row r is at offset + r, computed as a double. Default 0. */
  offset?: number;
  /**
   * Explicit positions (any finite numbers; integers may be BigInts), replacing offset/length. Every
   * angle is reduced exactly (within 1e-6 of the exact value at any finite position); an angle
   * position * frequency beyond double's range is a RangeError.
   */
  positions?: NumberList;
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

/**
 * A list of numbers as the runtimes hand them over: an array (of numbers, or BigInts within 2^53), any
 * numeric typed array (BigInt64Array for int64 ids included), a rectangular nested array, or a tensor:
 * `{ data, shape }`, an ONNX Runtime / transformers.js tensor `{ data, dims }`, a TF.js tensor.
 */
export type NumberList =
  ArrayLike<number | bigint> | BigInt64Array | BigUint64Array | ReadonlyArray<ReadonlyArray<number | bigint> | ArrayLike<number>> | ListTensor;
/** A tensor of numbers: `{ data, shape }`, `{ data, dims }` (ONNX Runtime, transformers.js), or a TF.js tensor. */
export type ListTensor =
  | { data: ArrayLike<number | bigint> | BigInt64Array | BigUint64Array; shape: readonly number[] }
  | { data: ArrayLike<number | bigint> | BigInt64Array | BigUint64Array; dims: readonly number[] }
  | { shape: readonly number[]; dataSync(): ArrayLike<number> };
/** Integer indices: a list, or a tensor or nested array whose shape is kept (result shape: [...shape, dModel]). */
export type Indices = NumberList;
/**
 * A float tensor argument: `{ data, shape }`, an ONNX Runtime tensor `{ data, dims }` (its `type`
 * 'float16' / 'bfloat16' read for 16-bit data), or a TF.js tensor. `data` is a Float32Array, or half
 * floats: a Float16Array, or a Uint16Array with `dtype` saying which.
 */
export type TensorInput =
  | { data: Float32Array | HalfArray; shape: readonly number[] }
  | { data: Float32Array | HalfArray; dims: readonly number[]; type?: string }
  | { shape: readonly number[]; dataSync(): Float32Array };

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
  lookup<D extends DType = 'float32'>(positions: Indices, options?: FloatOutput<D>): Tensor<FloatsOf<D>>;
  /** A new embedding of newMaxLength rows: linear `'interpolate'` (ViT) or `'tile'` (Longformer). Default 'interpolate'. */
  resize(newMaxLength: number, method?: 'interpolate' | 'tile'): LearnedEmbedding;
}

export interface TokenEmbedding extends Disposable {
  readonly vocabSize: number;
  readonly dModel: number;
  readonly scale: boolean;
  readonly table: Tensor;
  /** Embeddings of token ids, times sqrt(dModel) when `scale`. */
  lookup<D extends DType = 'float32'>(ids: Indices, options?: FloatOutput<D>): Tensor<FloatsOf<D>>;
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
  /** transformers' names: `'default'` is none, `'su'` LongRoPE's first name, `'mrope'` Qwen2-VL's (default frequencies). */
  rope_type?: HFRopeType | (string & {});
  type?: HFRopeType | (string & {});
  /** The config's base, when the object is transformers 5's rope_parameters (else pass `base`). */
  rope_theta?: number;
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
  /** LongRoPE: the attention factor of the short and of the long factors (vLLM, Phi-3-small). */
  short_mscale?: number;
  long_mscale?: number;
  /** Qwen2-VL: the M-RoPE sections [t, h, w] (used by `rope` when positions are [3, seq]). */
  mrope_section?: readonly number[];
}

/**
 * transformers' scaling type names. The config fields also take any string (a config.json read as JSON
 * types it `string`): a name posenc does not know is a RangeError at run time.
 */
export type HFRopeType = 'default' | 'linear' | 'dynamic' | 'yarn' | 'longrope' | 'llama3' | 'su' | 'mrope' | 'ntk';

/**
 * The fields of a Hugging Face config.json that RoPE depends on (the rest of the file is ignored):
 * rope_theta + rope_scaling, or transformers 5's rope_parameters (one object; one per layer type is
 * refused: pass the layer type's own). A multimodal config with the language model under
 * text_config is read there. Values given in two places must agree.
 */
export interface HFConfig {
  head_dim?: number | null;
  /** DeepSeek: the rotary part of each head. */
  qk_rope_head_dim?: number;
  hidden_size?: number;
  num_attention_heads?: number;
  partial_rotary_factor?: number;
  rope_theta?: number;
  rope_scaling?: HFRopeScaling | null;
  rope_parameters?: HFRopeScaling | null;
  max_position_embeddings?: number;
  /** Phi-3 (LongRoPE) keeps the original context length here. */
  original_max_position_embeddings?: number;
  /** GPT-NeoX, Pythia: the rotary fraction and the base under their names. */
  rotary_pct?: number;
  rotary_emb_base?: number;
  /** GPT-J, CodeGen: the rotary channels themselves. */
  rotary_dim?: number;
  /** GPT-2's names (GPT-J, CodeGen, Falcon, nomic-bert) for hidden_size and num_attention_heads. */
  n_embd?: number;
  n_head?: number;
  /** Qwen (1): the channels of each head (head_dim). */
  kv_channels?: number;
  /** StableLM-epoch: the rotary fraction (int(head * rope_pct)). */
  rope_pct?: number;
  /** nomic-bert: the rotary fraction (head * fraction, which must be a whole number). */
  rotary_emb_fraction?: number;
  /** Phi-3-small: the base. */
  rope_embedding_base?: number;
  /** The model family: GPT-J, CodeGen, Cohere, GLM and Helium ('gptj', 'codegen', 'cohere', 'cohere2', 'glm', 'glm4', 'helium') rotate interleaved pairs. */
  model_type?: string;
  /** nomic-bert, DeepSeek-V3: whether the pairs rotated are interleaved. */
  rotary_emb_interleaved?: boolean;
  rope_interleave?: boolean;
  text_config?: HFConfig;
  [key: string]: unknown;
}

/** What posenc reads from a config.json ({@link ropeConfig}). */
export interface RopeConfig {
  headDim: number;
  rotaryDim: number;
  base: number;
  /** The scaling in posenc's camelCase form, or null. */
  scaling: RopeScaling | null;
  /** max_position_embeddings, when given. */
  maxPositions: number | undefined;
  /** Qwen2-VL's M-RoPE sections, when given. */
  mropeSection?: number[];
  /** The pairs the model rotates, when the config says (by model_type or a flag); `rope({ config })` uses it. */
  layout?: 'half' | 'interleaved';
  /** The config.json fields read (`text_config.`-prefixed when read there); the others do not affect RoPE. */
  fields: string[];
}

/**
 * Reads a Hugging Face config.json as posenc's RoPE calls do (`config` option): the head and rotary
 * dimensions, the base, the scaling (camelCase) and max_position_embeddings. A config that cannot be
 * read (a missing or contradictory field, an unknown key) throws the same TypeError / RangeError those
 * calls would. Names of one setting from other model families (the base: rope_theta, rotary_emb_base,
 * rope_embedding_base; the fraction: partial_rotary_factor, rotary_pct, rope_pct, rotary_emb_fraction; the
 * head: head_dim, kv_channels; n_embd, n_head) must agree when a config gives several. Keys whose effect a
 * config cannot pass (Gemma 3's rope_local_base_freq, ModernBERT's global_rope_theta / local_rope_theta,
 * ChatGLM's rope_ratio / original_rope, Qwen's use_dynamic_ntk: true, nomic-bert's rotary_scaling_factor /
 * rotary_emb_scale_base, Phi-3-small's rope_position_scale ≠ 1, Falcon's alibi: true) throw a TypeError
 * saying what to pass instead; the ranges of the values (a factor below 1, a list of the wrong length) are checked
 * when frequencies are computed from them, e.g. by `pe.ropeFrequencies({ config })`.
 */
export function ropeConfig(config: HFConfig): RopeConfig;

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
  /** LongRoPE: the attention factor with the short / the long factors (vLLM's reading of Phi-3-small). */
  shortMscale?: number;
  longMscale?: number;
}

/**
 * Axis order of 4-D (and 3-D) rope and attention tensors: `'bshd'` = [batch, seq, heads, headDim]
 * (transformers' activations, the default), `'bhsd'` = [batch, heads, seq, headDim] (ONNX Runtime, torch KV
 * caches); rank 3 drops the batch (`'shd'`, `'hsd'`), or with `'bsd'` is [batch, seq, d], one head per entry.
 */
export type Axes = 'bshd' | 'bhsd' | 'shd' | 'hsd' | 'bsd';

export interface RopeOptions<D extends DType | undefined = DType, O = FloatsOf<D>> extends FloatOutput<D, O> {
  /**
   * Positions of the rows (KV caches, packed sequences); replaces offset. `[seq]`, or `[batch, seq]`
   * (one row per batch entry, as transformers' and ONNX Runtime's position_ids with left padding); with
   * M-RoPE `[3, seq]` or `[3, batch, seq]` (or three arrays). Integers may be BigInts (int64 ids).
   */
  positions?: NumberList | [ArrayLike<number>, ArrayLike<number>, ArrayLike<number>];
  /**
   * A Hugging Face config.json: base, rotary dimension and scaling as transformers reads them; dynamic
   * and LongRoPE scalings follow the largest position + 1 of the call. Excludes base, scaling, rotaryDim.
   */
  config?: HFConfig;
  /** Axis order of a 3-D or 4-D x. Default `'bshd'`. */
  axes?: Axes;
  /** Position of the first row: row r is at offset + r, computed as a double. Default 0. */
  offset?: number;
  /** Default 10000. */
  base?: number;
  /**
   * `'half'`: GPT-NeoX / HF rotate_half (default); `'interleaved'`: GPT-J / Meta LLaMA pairs. With `config`, the
   * config's pairs (`RopeConfig.layout`) are the default, and a layout that contradicts them is a TypeError.
   */
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
  /**
   * posenc's camelCase scaling (default base 10000), or a config.json rope_scaling object, which
   * needs the config's base (`base`, its own rope_theta, or the whole `config`): TypeError otherwise.
   */
  scaling?: RopeScaling | HFRopeScaling | null;
  /** Shape of x when x is a bare Float32Array. */
  shape?: number[];
}

export type RopeCacheOptions<D extends DType = 'float32'> = {
  /** Without it: [rows, rotaryDim/2] (ONNX Runtime's caches). With it: [rows, rotaryDim] in that layout's order ('half': transformers' cos and sin). */
  layout?: 'half' | 'interleaved';
  dtype?: D;
  out?: { cos: FloatsOf<D>; sin: FloatsOf<D> };
} & (
  | { config: HFConfig; rotaryDim?: never; base?: never; scaling?: never }
  | {
      config?: never;
      /** The rotary dimension (required without config). */
      rotaryDim: number;
      base?: number;
      scaling?: RopeScaling | HFRopeScaling | null;
    }
) &
  (
    | {
        /** Rows offset .. offset + length - 1; or `positions`. */
        length: number;
        offset?: number;
        positions?: never;
      }
    | { positions: NumberList; length?: number; offset?: never }
  );

export interface AttentionOptions<D extends DType | undefined = DType, Q extends TensorInput = TensorInput, O = FloatsOf<D>> extends FloatOutput<
  D,
  O
> {
  /** [seqQ, d], [seqQ, heads, d] or [batch, seqQ, heads, d] (axes 'bhsd': [batch, heads, seqQ, d]). */
  q: Q;
  /** Same rank and axes as q: [seqK, d], [seqK, kvHeads, d] or [batch, seqK, kvHeads, d]; kvHeads divides heads (GQA; MQA with 1). */
  k: TensorInput;
  /** Like k, with dv channels. */
  v: TensorInput;
  /** Added to the logits: [seqQ, seqK], [heads, seqQ, seqK] or [batch, heads, seqQ, seqK] (size-1 batch and heads broadcast, as ONNX Runtime's attention_bias); -Infinity masks. */
  bias?: TensorInput;
  /** Axis order of 3-D and 4-D q, k, v and the output. Default `'bshd'`. */
  axes?: Axes;
  /** Query i sees keys j <= i + (seqK - seqQ) (queries at the end of a KV cache); masked logits are not computed. Default false. */
  causal?: boolean;
  /** Default 1/sqrt(d); must fit in float32. */
  scale?: number;
  /**
   * `false`: stream the keys with an online softmax in O(seq·d) memory and return `weights: null`; no
   * [seqQ, seqK] matrix is allocated, so only the time budget (about 2 s a call; docs/LIMITS.md) bounds seqQ·seqK: on
   * the scalar build about [11209, 1] (causal [15817, 1]) at d = 1, the SIMD build [20178, 1], less at larger d.
   * Default true.
   */
  weights?: boolean;
}

/** get_rope_index's inputs (Qwen2-VL): ids `[batch, seq]`, grids `[n, 3]` before the spatial merge. */
export interface RopeIndexOptions {
  inputIds: NumberList;
  imageGridThw?: NumberList | null;
  videoGridThw?: NumberList | null;
  /** 1 for real tokens, 0 for padding (which gets id 1, as transformers). */
  attentionMask?: NumberList | null;
  /** The model's config.json: image_token_id, video_token_id, vision_start_token_id, vision_config.spatial_merge_size. */
  config?: { [key: string]: unknown };
  imageTokenId?: number;
  videoTokenId?: number;
  visionStartTokenId?: number;
  spatialMergeSize?: number;
}

/**
 * A loaded posenc module. Every method checks its arguments before it allocates or computes: wrong kinds
 * are TypeErrors, values out of range and shapes that do not fit RangeErrors naming the argument.
 * Synchronous calls are bounded in time: a call estimated to run longer than about 2 s (on the scalar
 * build; docs/LIMITS.md) is a RangeError saying how to split it.
 */
export interface Posenc {
  readonly backend: 'wasm-simd' | 'wasm-scalar';
  readonly version: string;
  /** The instruction set the kernels were compiled for ('wasm' or 'emulated'). */
  readonly simdArch: string;

  /** The sinusoidal table [length, dModel] (Vaswani et al. 2017); angles reduced in double precision. */
  sinusoidal<D extends DType = 'float32'>(options: SinusoidalOptions<D>): Tensor<FloatsOf<D>>;
  /**
   * MAE's 2-D sin-cos table for a height x width grid of patches: [clsToken + height·width, dModel]; the first
   * half of the channels encodes the column, the second the row (dModel a multiple of 4).
   */
  sinusoidal2d<D extends DType = 'float32'>(
    options: { height: number; width: number; dModel: number; base?: number; clsToken?: boolean } & FloatOutput<D>,
  ): Tensor<FloatsOf<D>>;
  /** A learned absolute position embedding table. */
  learned(options: LearnedOptions): LearnedEmbedding;
  /** A token embedding table (Xavier-uniform). */
  tokenEmbedding(options: TokenEmbeddingOptions): TokenEmbedding;
  /** x + p for x [seq, d] or [batch, seq, d]; p [rows >= seq, d] (its first seq rows are used). Half inputs give half results unless dtype says otherwise. */
  addPositional<X extends TensorInput, D extends DType | undefined = undefined>(
    x: X,
    p: TensorInput,
    options?: FloatOutput<D, ResultOf<X, D>>,
  ): Tensor<ResultOf<X, D>>;
  /** Wavelengths 2*pi / w_i, i < ceil(dModel/2) (the spacing's frequencies). */
  wavelengths(options: { dModel: number; base?: number; spacing?: SinusoidalSpacing } & OutOption<Float64Array>): Float64Array;
  /** Min, max, mean and population std of every value; all four are NaN if any value is NaN. */
  stats(t: TensorInput | Float32Array): Stats;

  /**
   * RoPE inverse frequencies (dim/2) and the attention factor, for a scaling or none; or for a whole
   * Hugging Face config.json (`config`: head_dim or hidden_size / num_attention_heads, times
   * partial_rotary_factor; rope_theta; rope_scaling).
   */
  ropeFrequencies<D extends DType = 'float32'>(
    options:
      | ({ dim: number; base?: number; scaling?: RopeScaling | HFRopeScaling | null } & FloatOutput<D>)
      | ({ config: HFConfig; dim?: never; base?: never; scaling?: never } & FloatOutput<D>),
  ): { invFreq: FloatsOf<D>; attentionFactor: number };
  /**
   * A rotated copy of x (or x rotated in place with `out: x.data`): [seq, dim], [seq, heads, headDim] or
   * [batch, seq, heads, headDim] (axes 'bhsd': [batch, heads, seq, headDim]). An out that shares memory
   * with x is written once the whole result is computed (a failed call leaves x unchanged). Half inputs
   * give half results unless dtype says otherwise.
   */
  rope<X extends TensorInput | Float32Array, D extends DType | undefined = undefined>(
    x: X,
    options?: RopeOptions<D, ResultOf<X, D>>,
  ): Tensor<ResultOf<X, D>>;
  /**
   * The cos and sin caches of ONNX Runtime's RotaryEmbedding, GroupQueryAttention and Attention: exact
   * from angles reduced in double, the attention factor applied as transformers applies it.
   */
  ropeCache<D extends DType = 'float32'>(options: RopeCacheOptions<D>): { cos: Tensor<FloatsOf<D>>; sin: Tensor<FloatsOf<D>> };
  /**
   * Qwen2-VL's position ids [3, seq] (temporal, height, width) for text and vision segments, e.g.
   * `[{ text: 3 }, { image: [1, 4, 6] }, { text: 2 }]` (grids after spatial merging; `video` alike).
   */
  mropePositions(
    segments: Array<{ text: number } | { image: [number, number, number] } | { video: [number, number, number] }>,
    options?: OutOption<Int32Array>,
  ): Tensor<Int32Array>;
  /**
   * transformers' get_rope_index for a batch: positions [3, batch, seq] (padding gets 1) and the deltas
   * [batch, 1] (largest id + 1 - seq) that decoding adds to its positions.
   */
  mropePositions(inputs: RopeIndexOptions): { positions: Tensor<Int32Array>; deltas: Tensor<Int32Array> };
  /** ALiBi head slopes (Press et al.), including non-powers of two. */
  alibiSlopes<D extends DType = 'float32'>(numHeads: number, options?: FloatOutput<D>): FloatsOf<D>;
  /**
   * ALiBi biases [heads, q, k]: -m (pos_i - j), or -m |pos_i - j| when symmetric. queryLength is
   * required; keyLength defaults to it. With attentionMask [batch, keyLength] (BLOOM): [batch, heads,
   * q, k], positions counted over each row's real tokens, -Infinity at its padded keys; keyLength is
   * the mask's, and queryLength defaults to it.
   */
  alibiBias<D extends DType = 'float32'>(
    options: { numHeads: number; keyLength?: number; symmetric?: boolean } & (
      { queryLength: number; attentionMask?: NumberList } | { queryLength?: number; attentionMask: NumberList }
    ) &
      FloatOutput<D>,
  ): Tensor<FloatsOf<D>>;
  /** T5 relative position buckets of key - query, [q, k]; or of each relative position given (any shape, kept). */
  t5Buckets(
    options: (
      | { queryLength: number; keyLength?: number; relativePositions?: never }
      | { relativePositions: NumberList; queryLength?: never; keyLength?: never }
    ) & {
      numBuckets?: number;
      maxDistance?: number;
      bidirectional?: boolean;
    } & OutOption<Int32Array>,
  ): Tensor<Int32Array>;
  /** Shaw et al. indices clip(j - i, -k, k) + k, [L, L]. */
  relativePositions(options: { length: number; maxRelative: number } & OutOption<Int32Array>): Tensor<Int32Array>;

  /** softmax(q k^T * scale + bias) v, streamed over the keys in O(seq·d) memory, without the weights. */
  attention<Q extends TensorInput, D extends DType | undefined = undefined>(
    options: AttentionOptions<D, Q, ResultOf<Q, D>> & { weights: false },
  ): { output: Tensor<ResultOf<Q, D>>; weights: null };
  /**
   * softmax(q k^T * scale + bias) v per batch entry and head. Output: the shape of q with dv channels.
   * Weights: [seqQ, seqK] for 2-D inputs, [heads, seqQ, seqK] for 3-D ([batch, seqQ, seqK] with axes 'bsd'), [batch, heads, seqQ, seqK] for 4-D.
   * NaN/Infinity inputs are a RangeError. The logits are float32 dot products, as in PyTorch and ONNX
   * Runtime (large cancelling terms q_t k_t lose precision there too); the softmax never overflows (rows
   * whose logits leave float32 are computed again in double). A call estimated to run longer than about
   * 2 s is a RangeError (split it). `out` receives the output.
   */
  attention<Q extends TensorInput, D extends DType | undefined = undefined>(
    options: AttentionOptions<D, Q, ResultOf<Q, D>> & { weights?: true },
  ): { output: Tensor<ResultOf<Q, D>>; weights: Tensor<ResultOf<Q, D>> };
  attention<Q extends TensorInput, D extends DType | undefined = undefined>(
    options: AttentionOptions<D, Q, ResultOf<Q, D>>,
  ): { output: Tensor<ResultOf<Q, D>>; weights: Tensor<ResultOf<Q, D>> | null };
  /** [L, L] dot products (default) or cosines between the rows of t. */
  similarity(t: TensorInput, options?: { metric?: 'dot' | 'cosine' } & OutOption): Tensor;
  /** The [d, d] block-diagonal rotation M_k with PE(p + k) = M_k PE(p) (interleaved layout, even dModel). */
  shiftMatrix(
    options: { dModel: number; base?: number; /** Any finite shift; an angle k * w beyond double's range is a RangeError. */ k: number } & OutOption,
  ): Tensor;
  /** For each row of t, the Euclidean distance to its nearest other row (accumulated in double). */
  nearestDistances(t: TensorInput, options?: OutOption): Float32Array;
}
