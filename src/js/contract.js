// The one definition of posenc's contract: limits, defaults and enum names. The JS validation
// (validate.js and each family), the C++ core (through build/generated/contract.hpp, written from
// this file by scripts/contract-hpp.mjs), the tests' error tables and the documentation checks all
// read it from here. Enums cross the wasm boundary as their index in these lists.

export const LIMITS = Object.freeze({
  // Largest tensor (input or output) in values: 1 GiB of float32, half of what wasm memory holds.
  maxElements: 2 ** 28,
  // What a wasm module's memory can grow to (CMakeLists.txt links with -sMAXIMUM_MEMORY of this).
  maxMemoryBytes: 2 ** 31,
  // Longest a synchronous call may run, in seconds, as estimated from its sizes by src/js/cost.js
  // (per-unit costs measured on each backend); longer requests are refused before they start.
  maxCallSeconds: 2,
  // Frequency bases: [1e-300, 1e300] keeps every frequency and wavelength a finite double.
  minBase: 1e-300,
  maxBase: 1e300,
  // The largest finite float32.
  float32Max: 3.4028234663852886e38,
  // ALiBi heads (alibiSlopes, alibiBias).
  maxHeads: 4096,
  // T5 buckets.
  maxBuckets: 4096,
  // Rotary dimensions: far above any model's head size, small enough for the frequency tables.
  maxRotaryDim: 2 ** 24,
  // Shaw et al. clipping distance.
  maxRelative: 2 ** 30,
  // The shift matrix's dModel (a [d, d] result).
  maxShiftDModel: 8192,
  // Standard deviation of the normal init: |z| < 8.6 for every normal drawn, so the table stays finite.
  maxStd: 1e30,
  // The permutation lab and scoreTerms: sentence length and model width.
  maxSentenceChars: 65536,
  maxTokens: 512,
  minLabDModel: 4,
  maxLabDModel: 768,
  // The lab's toy model: two heads of dModel/2 channels.
  labHeads: 2,
  // trainToy: sequence lengths (training; evaluation), width, heads, layers, batch, vocabulary, steps.
  toyMinLength: 4,
  toyMaxLength: 32,
  toyMaxEvalLength: 128,
  toyMinDModel: 8,
  toyMaxDModel: 64,
  toyMaxHeads: 4,
  toyMaxLayers: 2,
  toyMaxBatch: 256,
  toyMinVocab: 4,
  toyMaxVocab: 64,
  toyMaxSteps: 1e6,
  // Held-out examples per evaluation of the toy model.
  toyHeldOut: 256,
});

export const DEFAULTS = Object.freeze({
  base: 10000,
  sinusoidalLayout: 'interleaved',
  sinusoidalSpacing: 'vaswani',
  ropeLayout: 'half',
  learnedInit: 'normal',
  learnedStd: 0.02,
  numBuckets: 32,
  maxDistance: 128,
  xposScaleBase: 512,
  labDModel: 16,
  labEncoding: 'none',
  metric: 'dot',
  toyEncoding: 'none',
  toySteps: 2000,
  toyLength: 8,
  toyDModel: 16,
  toyHeads: 2,
  toyLayers: 2,
  toyBatch: 16,
  toyVocab: 8,
  toyLearningRate: 0.003,
});

const LAB_ENCODINGS = Object.freeze(['none', 'sinusoidal', 'learned', 'rope', 'alibi', 't5', 'xpos']);

export const ENUMS = Object.freeze({
  sinusoidalLayout: Object.freeze(['interleaved', 'split']),
  // Frequency spacing: Vaswani's base^(-2i/d), or tensor2tensor's (also fairseq's and Whisper's)
  // base^(-i/(h-1)) with h = d/2.
  sinusoidalSpacing: Object.freeze(['vaswani', 'tensor2tensor']),
  ropeLayout: Object.freeze(['half', 'interleaved']),
  // xPos's role in rope: a query (scaled by zeta^(p/scaleBase)) or a key (the inverse).
  xposRole: Object.freeze(['query', 'key']),
  // Axis order of rope's and attention's 4-D tensors: [batch, seq, heads, headDim] (transformers'
  // activations) or [batch, heads, seq, headDim] (ONNX Runtime, torch KV caches). Rank-3 tensors drop
  // the batch ('shd', 'hsd').
  axes: Object.freeze(['bshd', 'bhsd']),
  scalingType: Object.freeze(['none', 'linear', 'ntk', 'dynamic', 'yarn', 'llama3', 'longrope']),
  learnedInit: Object.freeze(['normal', 'xavier', 'sinusoidal', 'zeros']),
  resizeMethod: Object.freeze(['interpolate', 'tile']),
  metric: Object.freeze(['dot', 'cosine']),
  // (The lab's API also takes 'nope', the NoPE paper's name for 'none': one encoding, one name here.)
  labEncoding: LAB_ENCODINGS,
  // The encodings the toy trainer trains: labEncoding's but its last, 'xpos' (a prefix, so a trainable
  // encoding crosses as its lab index; toy.cpp asserts it).
  toyEncoding: Object.freeze(LAB_ENCODINGS.filter((e) => e !== 'xpos')),
  toyTask: Object.freeze(['before', 'copy', 'count']),
});

// RoPE scaling parameters as they cross the boundary: a Float64Array in this order (the type as
// its index in ENUMS.scalingType, booleans as 0/1, NaN for "not given" where the core derives a value).
export const SCALING_FIELDS = Object.freeze([
  'type',
  'factor',
  'originalMaxPositions',
  'betaFast',
  'betaSlow',
  'lowFreqFactor',
  'highFreqFactor',
  'seqLength',
  'attentionFactor',
  'mscale',
  'mscaleAllDim',
  'truncate',
  'shortMscale',
  'longMscale',
]);

// Status codes the core returns (C++ posenc::Code).
export const CODES = Object.freeze({ ok: 0, range: 1, outOfMemory: 2 });
