// The plain JavaScript contenders: what one would write without posenc, straight from the formulas
// (and, for the sinusoidal table, a port of the classic tutorials' PyTorch code). Float64 arithmetic (JS numbers), float32
// outputs. No Node APIs: the page's performance panel can import this file too.

// Deterministic inputs in [-0.5, 0.5): the same generator as scripts/bench/native.cpp.
export function input(n, seed) {
  const out = new Float32Array(n);
  let s = seed >>> 0;
  for (let i = 0; i < n; i++) {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    out[i] = (s >>> 8) / 16777216 - 0.5;
  }
  return out;
}

// A checksum that sees every value and its position: sum of x[i] * (i % 7 + 1), in float64.
export function checksum(a) {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i] * ((i % 7) + 1);
  return s;
}

// The scale against which two checksums are compared: sum of |x[i]| * (i % 7 + 1). Contenders that
// compute the same thing agree to float32 rounding: |a - b| <= 1e-5 * scale (integers: exactly).
export function checksumScale(a) {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += Math.abs(a[i]) * ((i % 7) + 1);
  return s;
}

// The tutorials' PyTorch recipe: div_term = exp(arange(0, d, 2) * -ln(10000) / d); pe[:, 0::2] = sin(position *
// div_term); pe[:, 1::2] = cos(position * div_term). (They do this in float32 tensors; the
// port computes in float64 and stores float32, so it is more accurate than the original.)
// `pe`: an existing array to write into (default: a new one).
export function sinusoidal(length, dModel, pe = new Float32Array(length * dModel)) {
  const half = Math.ceil(dModel / 2);
  const divTerm = new Float64Array(half);
  for (let i = 0; i < half; i++) divTerm[i] = Math.exp(2 * i * (-Math.log(10000) / dModel));
  for (let pos = 0; pos < length; pos++) {
    const row = pos * dModel;
    for (let i = 0; i < half; i++) {
      const angle = pos * divTerm[i];
      pe[row + 2 * i] = Math.sin(angle);
      if (2 * i + 1 < dModel) pe[row + 2 * i + 1] = Math.cos(angle);
    }
  }
  return pe;
}

// Largest |table - exact| over a [length, dModel] sinusoidal table (positions 0 .. length-1, base
// 10000), against float64 sin/cos of p * 10000^(-2i/d) (|error| of the float64 reference < 1e-12 here).
export function sinusoidalMaxError(table, length, dModel) {
  const half = Math.ceil(dModel / 2);
  const w = Float64Array.from({ length: half }, (_, i) => 10000 ** ((-2 * i) / dModel));
  let err = 0;
  for (let p = 0; p < length; p++)
    for (let i = 0; i < half; i++) {
      const a = p * w[i];
      const at = p * dModel + 2 * i;
      err = Math.max(err, Math.abs(table[at] - Math.sin(a)));
      if (2 * i + 1 < dModel) err = Math.max(err, Math.abs(table[at + 1] - Math.cos(a)));
    }
  return err;
}

// RoPE as Hugging Face computes it: cos/sin of position * inv_freq once per position, then every head
// rotated; 'half' pairs channel i with i + headDim/2 (rotate_half), 'interleaved' pairs 2i with 2i+1.
// `out`: an existing array to write into (default: a new one).
export function rope(x, seq, heads, headDim, layout, out = new Float32Array(x.length)) {
  const half = headDim / 2;
  const invFreq = Float64Array.from({ length: half }, (_, i) => 1 / 10000 ** ((2 * i) / headDim));
  const cos = new Float64Array(half);
  const sin = new Float64Array(half);
  for (let p = 0; p < seq; p++) {
    for (let i = 0; i < half; i++) {
      cos[i] = Math.cos(p * invFreq[i]);
      sin[i] = Math.sin(p * invFreq[i]);
    }
    for (let h = 0; h < heads; h++) {
      const base = (p * heads + h) * headDim;
      for (let i = 0; i < half; i++) {
        const a = layout === 'half' ? base + i : base + 2 * i;
        const b = layout === 'half' ? base + half + i : base + 2 * i + 1;
        const x1 = x[a];
        const x2 = x[b];
        out[a] = x1 * cos[i] - x2 * sin[i];
        out[b] = x2 * cos[i] + x1 * sin[i];
      }
    }
  }
  return out;
}

// ALiBi slopes (Press et al.: 2^(-8h/n) for the closest power of two n, then every other slope of 2n).
export function alibiSlopes(heads) {
  const n = 2 ** Math.floor(Math.log2(heads));
  return Array.from({ length: heads }, (_, h) => (h < n ? 2 ** ((-8 * (h + 1)) / n) : 2 ** ((-4 * (2 * (h - n) + 1)) / n)));
}

// [heads, q, k] causal ALiBi bias -m_h * (i - j), queries the last q of k positions.
export function alibiBias(heads, q, k) {
  const out = new Float32Array(heads * q * k);
  const slopes = alibiSlopes(heads).map(Math.fround);
  let at = 0;
  for (let h = 0; h < heads; h++) {
    const m = slopes[h];
    for (let i = 0; i < q; i++) {
      const pos = i + k - q;
      for (let j = 0; j < k; j++) out[at++] = 0 - m * (pos - j);
    }
  }
  return out;
}

// T5 buckets, a port of Hugging Face's T5Attention._relative_position_bucket, element by element.
export function t5Buckets(q, k, numBuckets = 32, maxDistance = 128, bidirectional = true) {
  const out = new Int32Array(q * k);
  const nb = bidirectional ? numBuckets / 2 : numBuckets;
  const maxExact = nb / 2;
  const logRange = Math.log(maxDistance / maxExact);
  for (let i = 0; i < q; i++) {
    const pos = i + k - q;
    for (let j = 0; j < k; j++) {
      let rel = j - pos;
      let bucket = 0;
      if (bidirectional) {
        if (rel > 0) bucket += nb;
        rel = Math.abs(rel);
      } else {
        rel = -Math.min(rel, 0);
      }
      if (rel < maxExact) bucket += rel;
      else bucket += Math.min(maxExact + Math.floor((Math.log(rel / maxExact) / logRange) * (nb - maxExact)), nb - 1);
      out[i * k + j] = bucket;
    }
  }
  return out;
}

// softmax(q k^T / sqrt(d)) v for one head: q, k, v [S, d]; returns { output [S, d], weights [S, S] }.
// causal: query i sees keys j <= i.
export function attention(q, k, v, S, d, { causal = false } = {}) {
  const weights = new Float32Array(S * S);
  const output = new Float32Array(S * d);
  const scale = 1 / Math.sqrt(d);
  const acc = new Float64Array(d);
  for (let i = 0; i < S; i++) {
    const row = i * S;
    let max = -Infinity;
    const keys = causal ? i + 1 : S;
    for (let j = 0; j < keys; j++) {
      let dot = 0;
      for (let c = 0; c < d; c++) dot += q[i * d + c] * k[j * d + c];
      const logit = dot * scale;
      weights[row + j] = logit;
      if (logit > max) max = logit;
    }
    let sum = 0;
    for (let j = 0; j < keys; j++) {
      const e = Math.exp(weights[row + j] - max);
      weights[row + j] = e;
      sum += e;
    }
    acc.fill(0);
    for (let j = 0; j < keys; j++) {
      const w = (weights[row + j] /= sum);
      for (let c = 0; c < d; c++) acc[c] += w * v[j * d + c];
    }
    output.set(acc, i * d);
  }
  return { output, weights };
}
