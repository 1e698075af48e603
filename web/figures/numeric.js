// Small numeric helpers shared by the figure specs, the page and the notebooks: pure functions over
// plain arrays and posenc's { data, shape } tensors, each defined once.

// The median (of a copy, in float64).
export function median(values) {
  const v = Float64Array.from(values).sort();
  if (v.length === 0) return NaN;
  const m = v.length >> 1;
  return v.length % 2 ? v[m] : (v[m - 1] + v[m]) / 2;
}

export function maxAbsDiff(a, b) {
  if (a.length !== b.length) throw new RangeError(`maxAbsDiff: lengths differ (${a.length} and ${b.length})`);
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i] - b[i]));
  return m;
}

// y = M x for M [d, d] (row-major) and x of length d, in float64.
export function matVec(M, x) {
  const d = x.length;
  const y = new Float64Array(d);
  for (let r = 0; r < d; r++) {
    let s = 0;
    for (let c = 0; c < d; c++) s += M[r * d + c] * x[c];
    y[r] = s;
  }
  return y;
}

// For a square [L, L] tensor: the largest spread (max − min) along any diagonal j − i = k. A matrix
// that depends only on the offset j − i (a Toeplitz matrix) has spread 0.
export function diagonalSpread(t) {
  const [L, L2] = t.shape;
  if (L !== L2) throw new RangeError(`diagonalSpread: expected a square matrix, got [${t.shape}]`);
  let worst = 0;
  for (let k = -(L - 1); k < L; k++) {
    let lo = Infinity,
      hi = -Infinity;
    for (let i = Math.max(0, -k); i < Math.min(L, L - k); i++) {
      const v = t.data[i * L + i + k];
      lo = Math.min(lo, v);
      hi = Math.max(hi, v);
    }
    worst = Math.max(worst, hi - lo);
  }
  return worst;
}

// mulberry32 (Tommy Ettinger): a tiny seeded generator of uniforms in [0, 1), so that random
// examples are the same on every run.
export function mulberry32(seed) {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = Math.imul(s ^ (s >>> 15), s | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  };
}

// A deterministic vector of `dim` standard normals (Box-Muller over mulberry32).
export function gaussianVector(dim, seed = 1) {
  const random = mulberry32(seed);
  return Float32Array.from({ length: dim }, () => Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random()));
}

// Every ordering of 0..n-1 (n! of them), in lexicographic order.
export function permutations(n) {
  const out = [];
  const walk = (prefix, rest) => {
    if (rest.length === 0) return void out.push(prefix);
    rest.forEach((v, i) => walk([...prefix, v], [...rest.slice(0, i), ...rest.slice(i + 1)]));
  };
  walk([], [...Array(n).keys()]);
  return out;
}

// A figure's own parameters (those it uses before or besides posenc, which checks what it is given), for
// readers who call a figure by hand (the notebooks): an error naming the figure and the parameter instead
// of a crash inside the drawing code, or a loop that does not end. `max` keeps a figure to what it can draw.
export function param(figure, name, v, { min = 0, max = 1e5, integer = true } = {}) {
  if (typeof v !== 'number') throw new TypeError(`${figure}: ${name} must be a number, got ${typeof v === 'string' ? `"${v}"` : String(v)}`);
  if (!(v >= min && v <= max) || (integer && !Number.isInteger(v)))
    throw new RangeError(`${figure}: ${name} must be ${integer ? 'an integer' : 'a number'} from ${min} to ${max}, got ${v}`);
  return v;
}
// ... and a list parameter, which must hold at least `min` values.
export function values(figure, name, v, min = 1) {
  if (!Array.isArray(v) && !ArrayBuffer.isView(v)) throw new TypeError(`${figure}: ${name} must be a list of numbers, got ${String(v)}`);
  if (v.length < min) throw new RangeError(`${figure}: ${name} must hold at least ${min} value${min === 1 ? '' : 's'}, got ${v.length}`);
  return v;
}
