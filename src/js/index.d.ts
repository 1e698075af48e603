// Hand-written types for posenc (Emscripten 3.1.6 has no --emit-tsd). Checked by `tsc` in npm test,
// and a test asserts that every method declared on Posenc exists at run time.

/** A row-major tensor. `data` is owned by the caller (a copy, never a view into wasm memory). */
export interface Tensor<T extends Float32Array | Int32Array = Float32Array> {
  data: T;
  shape: number[];
}

export interface LoadOptions {
  /** `false` forces the scalar build; `true` requires SIMD (rejects if unsupported). Default: probe. */
  simd?: boolean;
  /** Where to fetch the `.wasm` from (bundlers / CDNs). */
  wasmURL?: string | URL;
  /** The `.wasm` bytes themselves (offline use). */
  wasmBinary?: ArrayBuffer | Uint8Array;
}

/** Loads posenc: the SIMD build when the engine supports WebAssembly SIMD, else the scalar build. Memoised per backend. */
export function load(options?: LoadOptions): Promise<Posenc>;
/** Whether this engine validates WebAssembly SIMD. */
export function simdSupported(): boolean;
/** The package version. */
export const version: string;

export type SinusoidalLayout = 'interleaved' | 'split';

export interface SinusoidalOptions {
  /** Number of positions (rows). Optional when `positions` is given. */
  length?: number;
  /** Model dimension (columns). Odd values allowed: see the README. */
  dModel: number;
  /** Frequency base: w_i = base^(-2i/dModel). Default 10000. */
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
  lookup(positions: Indices): Tensor;
  /** A new embedding of newMaxLength rows: linear `'interpolate'` (ViT) or `'tile'` (Longformer). Default 'interpolate'. */
  resize(newMaxLength: number, method?: 'interpolate' | 'tile'): LearnedEmbedding;
}

export interface TokenEmbedding extends Disposable {
  readonly vocabSize: number;
  readonly dModel: number;
  readonly scale: boolean;
  readonly table: Tensor;
  /** Embeddings of token ids, times sqrt(dModel) when `scale`. */
  lookup(ids: Indices): Tensor;
}

export interface Stats {
  min: number;
  max: number;
  mean: number;
  /** Population standard deviation (divides by N). */
  std: number;
}

export interface Posenc {
  readonly backend: 'wasm-simd' | 'wasm-scalar';
  readonly version: string;
  /** The instruction set the kernels were compiled for ('wasm' or 'emulated'). */
  readonly simdArch: string;

  /** The sinusoidal table [length, dModel] (Vaswani et al. 2017); angles reduced in double precision. */
  sinusoidal(options: SinusoidalOptions): Tensor;
  /** A learned absolute position embedding table. */
  learned(options: LearnedOptions): LearnedEmbedding;
  /** A token embedding table (Xavier-uniform). */
  tokenEmbedding(options: TokenEmbeddingOptions): TokenEmbedding;
  /** x + p for x [seq, d] or [batch, seq, d]; p [rows >= seq, d] (its first seq rows are used). */
  addPositional(x: TensorInput, p: TensorInput): Tensor;
  /** Wavelengths 2*pi*base^(2i/dModel), i < ceil(dModel/2). */
  wavelengths(options: { dModel: number; base?: number }): Float64Array;
  /** Min, max, mean and population std of every value. */
  stats(t: TensorInput | Float32Array): Stats;
}
