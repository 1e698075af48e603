// Helpers for notebook 03 ("RoPE and long context"): model configurations, Hugging Face
// `rope_scaling` dictionaries in posenc's spelling, and attention scores between rotated vectors.
import { mulberry32 } from './util.js';

// Llama 3.1 8B's config.json: head_dim 128 (4096 / 32 heads), rope_theta 500000, and its
// rope_scaling block, as Hugging Face writes it.
export const LLAMA_31 = {
  headDim: 128,
  ropeTheta: 500000,
  maxPositionEmbeddings: 131072,
  ropeScaling: { rope_type: 'llama3', factor: 8.0, low_freq_factor: 1.0, high_freq_factor: 4.0, original_max_position_embeddings: 8192 },
};

// A Phi-3-style LongRoPE setup (head_dim 96, rope_theta 10000, 4096 -> 131072 positions). The real
// model ships 48 searched factors per list; these are illustrative stand-ins of the same shape:
// short factors 1 (no change inside the original window), long factors growing from 1 for the
// fastest pairs to 2 x 32 for the slowest.
export function phi3StyleConfig() {
  const half = 48,
    factor = 32;
  const longFactor = Array.from({ length: half }, (_, i) => (2 * factor) ** ((i / (half - 1)) ** 2));
  return {
    headDim: 96,
    ropeTheta: 10000,
    maxPositionEmbeddings: 131072,
    ropeScaling: { rope_type: 'longrope', short_factor: new Array(half).fill(1), long_factor: longFactor, original_max_position_embeddings: 4096 },
  };
}

const HF_KEYS = {
  factor: 'factor',
  original_max_position_embeddings: 'originalMaxPositions',
  beta_fast: 'betaFast',
  beta_slow: 'betaSlow',
  low_freq_factor: 'lowFreqFactor',
  high_freq_factor: 'highFreqFactor',
  short_factor: 'shortFactor',
  long_factor: 'longFactor',
  attention_factor: 'attentionFactor',
  mscale: 'mscale',
  mscale_all_dim: 'mscaleAllDim',
  truncate: 'truncate',
};
const HF_TYPES = { default: 'none', linear: 'linear', dynamic: 'dynamic', yarn: 'yarn', llama3: 'llama3', longrope: 'longrope', su: 'longrope' };

// A Hugging Face `rope_scaling` dict -> posenc's `scaling` option. HF derives LongRoPE's factor from
// max_position_embeddings / original_max_position_embeddings; pass maxPositionEmbeddings for that.
export function scalingFromHF(ropeScaling, { maxPositionEmbeddings } = {}) {
  if (ropeScaling == null) return undefined;
  const kind = ropeScaling.rope_type ?? ropeScaling.type;
  const type = HF_TYPES[kind];
  if (!type) throw new RangeError(`scalingFromHF: unknown rope_type ${JSON.stringify(kind)} (known: ${Object.keys(HF_TYPES).join(', ')})`);
  const out = { type };
  for (const [hf, ours] of Object.entries(HF_KEYS)) if (ropeScaling[hf] !== undefined && ropeScaling[hf] !== null) out[ours] = ropeScaling[hf];
  if (type === 'longrope' && out.factor === undefined && maxPositionEmbeddings && out.originalMaxPositions)
    out.factor = maxPositionEmbeddings / out.originalMaxPositions;
  return out;
}

// Wavelength (positions per full turn) of each rotating pair: 2 pi / invFreq.
export const wavelengths = (invFreq) => Float64Array.from(invFreq, (w) => (2 * Math.PI) / w);

// The vector v (length dim) repeated on `positions.length` rows and rotated by RoPE at those
// positions: row r is R(positions[r]) v.
export function rotateAt(pe, v, positions, options = {}) {
  const dim = v.length;
  const x = new Float32Array(positions.length * dim);
  for (let r = 0; r < positions.length; r++) x.set(v, r * dim);
  return pe.rope({ data: x, shape: [positions.length, dim] }, { ...options, positions });
}

// Attention logits <R(m) q, R(n) k> for m in qPositions, n in kPositions: [M, N], float64 sums.
export function rotatedScores(pe, q, k, qPositions, kPositions = qPositions, options = {}) {
  const Q = rotateAt(pe, q, qPositions, options),
    K = rotateAt(pe, k, kPositions, options);
  const dim = q.length,
    M = qPositions.length,
    N = kPositions.length;
  const data = new Float64Array(M * N);
  for (let m = 0; m < M; m++)
    for (let n = 0; n < N; n++) {
      let s = 0;
      for (let c = 0; c < dim; c++) s += Q.data[m * dim + c] * K.data[n * dim + c];
      data[m * N + n] = s;
    }
  return { data, shape: [M, N] };
}

// A deterministic vector of `dim` standard normals (Box-Muller over mulberry32).
export function gaussianVector(dim, seed = 1) {
  const random = mulberry32(seed);
  return Float32Array.from({ length: dim }, () => Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random()));
}
