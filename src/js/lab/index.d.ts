// Types of posenc/lab: the teaching models (the permutation lab, the score terms and the toy trainer),
// in their own wasm module. loadLab() resolves to a Lab: every method of the core (load()'s) plus these.
import type { Disposable, HFRopeScaling, LoadOptions, Posenc, RopeScaling, Tensor } from '../index.js';

/**
 * Loads the lab module and the core (load()'s, shared with load() in the same thread). wasmURL and
 * wasmBinary locate the lab module's .wasm; `core` locates the core's, as load()'s options do.
 */
export function loadLab(options?: LoadOptions & { core?: Pick<LoadOptions, 'wasmURL' | 'wasmBinary'> }): Promise<Lab>;
/** The package version. */
export const version: string;

/**
 * The lab's encodings. `'xpos'` is RoPE with xPos's decaying scale (torchscale's interleaved layout,
 * scale base 512, centred at ⌈L/2⌉). `'nope'`, the NoPE paper's name for no positional encoding, is
 * taken too and reported as `'none'` (in the lab's bidirectional layer, as in a bidirectional toy model,
 * no positions is no positions).
 */
export type LabEncoding = 'none' | 'sinusoidal' | 'learned' | 'rope' | 'alibi' | 't5' | 'xpos';
/** A lab encoding as an option: also `'nope'` (= `'none'`). */
export type LabEncodingOption = LabEncoding | 'nope';
/** The encodings trainToy trains: the lab's but `'xpos'`. */
export type ToyEncoding = 'none' | 'sinusoidal' | 'learned' | 'rope' | 'alibi' | 't5';

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
  /** Any lab encoding but 'xpos' (also `'nope'` = `'none'`). Default 'none'. */
  encoding?: ToyEncoding | 'nope';
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
  /** Accuracy on 256 held-out examples at the length (and scaling) the call trained at. */
  heldOutAccuracy: number;
}

/** A length and, for the 'rope' encoding, a RoPE scaling applied there (as ropeFrequencies takes it). */
export interface ToyAt {
  /** 4..128 (evaluate); default the training length. */
  length?: number;
  /** originalMaxPositions defaults to the training length, seqLength to `length`. */
  scaling?: RopeScaling | HFRopeScaling | null;
}

/** An AbortSignal (described structurally: these types need no DOM or Node lib). */
export interface AbortSignalLike {
  readonly aborted: boolean;
  readonly reason?: unknown;
}

export interface ToyRunOptions {
  /** Aborts the run between chunks: run() rejects with signal.reason. */
  signal?: AbortSignalLike;
  /** Called after each chunk of about 50 ms of training. */
  onProgress?: (report: ToyReport) => void;
}

/** What a model can score without learning the task: a constant guess, or a guess from the bag of tokens. */
export interface ToyBaseline {
  /** The best constant answer: 1/2 ('before'), 1/vocab ('copy'), 1/5 ('count'). */
  chanceAccuracy: number;
  /** The best any function of the bag of tokens (blind to order) can do: 1/2, E[max count]/length ('copy'), 1 ('count'). */
  orderBlindAccuracy: number;
}

export interface ToyTrainer extends Disposable {
  /** The options with every default filled in. */
  readonly config: Readonly<Required<ToyOptions>>;
  /**
   * Trains n more steps (default 1) synchronously, at `length` with `scaling` when given (fine-tuning
   * at a longer length); step(0) only reports. Refused (RangeError) past about 2 s of estimated work.
   */
  step(n?: number, options?: ToyAt): ToyReport;
  /** Trains until config.steps are done, in chunks that yield to the event loop; cancellable. */
  run(options?: ToyRunOptions): Promise<ToyReport>;
  /** Held-out accuracy at another length (4..128), for 'rope' with a test-time scaling; a learned table past its training length is a RangeError. */
  evaluate(options?: ToyAt): number;
  /** The task's baselines at a length (default the training length). */
  baseline(options?: { length?: number }): ToyBaseline;
  /** A copy of this trainer in its current state (to fine-tune one model several ways). */
  clone(): ToyTrainer;
}

export interface ScoreTermsResult {
  tokens: string[];
  contentContent: Tensor;
  contentPosition: Tensor;
  positionContent: Tensor;
  positionPosition: Tensor;
  total: Tensor;
}

export interface Lab extends Posenc {
  /** One toy self-attention layer on a sentence and on its shuffle (default sentence "The cat sat on the mat"). */
  permutationLab(options?: {
    sentence?: string;
    permutation?: ArrayLike<number>;
    encoding?: LabEncodingOption;
    dModel?: number;
    seed?: number;
  }): PermutationLabResult;
  /** The attention score with absolute encodings, (E_i+P_i) W_Q W_K^T (E_j+P_j)^T / sqrt(d), split into its four terms. */
  scoreTerms(options?: { sentence?: string; encoding?: 'sinusoidal' | 'learned'; dModel?: number; seed?: number }): ScoreTermsResult;
  /**
   * A toy transformer (residual attention layers and a linear readout) trained with Adam in the wasm
   * core, to see a model need positions: without an encoding 'before' stays at chance.
   */
  trainToy(options: ToyOptions): ToyTrainer;
}
