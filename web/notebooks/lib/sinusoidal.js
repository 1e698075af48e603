// Helpers for notebook 02 ("Anatomy of the sinusoidal encoding"): two independent ways of computing
// the encoding (the seeds' float32 recipe and exact float64), and small linear algebra.
import { maxAbsDiff } from './util.js';

// PE(pos, 2i) = sin(pos / n^(2i/d)), PE(pos, 2i+1) = cos(pos / n^(2i/d)) in float64 (JavaScript's
// Math.sin/cos reduce large angles exactly): the reference the other two are measured against.
export function exactRow(pos, d, n = 10000) {
  const row = new Float64Array(d);
  for (let j = 0; j < d; j++) {
    const angle = pos / n ** ((2 * Math.floor(j / 2)) / d);
    row[j] = j % 2 ? Math.cos(angle) : Math.sin(angle);
  }
  return row;
}

// The seeds' PyTorch recipe, every step rounded to float32 as torch does on float32 tensors:
//   div_term = exp(arange(0, d, 2).float() * (-log(n) / d))
//   pe[:, 0::2] = sin(position * div_term); pe[:, 1::2] = cos(position * div_term)
// Math.fround rounds each intermediate to float32; sin/cos of the (already rounded) float32 angle
// are then rounded once more, as a correctly rounded float32 sin would be.
export function seedsFloat32Row(pos, d, n = 10000) {
  const f = Math.fround;
  const scale = f(-Math.log(n) / d); // a Python float turned into a float32 scalar
  const row = new Float32Array(d);
  for (let j = 0; j < d; j++) {
    const divTerm = f(Math.exp(f(f(2 * Math.floor(j / 2)) * scale)));
    const angle = f(f(pos) * divTerm); // the float32 product: the whole problem at large positions
    row[j] = j % 2 ? Math.cos(angle) : Math.sin(angle);
  }
  return row;
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

// Row p of a [rows, cols] tensor.
export const row = (t, p) => t.data.subarray(p * t.shape[1], (p + 1) * t.shape[1]);

// max over p of |M_k PE(p) - PE(p + k)| for the rows of `table` (the shift identity's residual).
export function shiftResidual(M, table, k) {
  let worst = 0;
  for (let p = 0; p + k < table.shape[0]; p++) worst = Math.max(worst, maxAbsDiff(matVec(M.data, row(table, p)), row(table, p + k)));
  return worst;
}

// For a square similarity matrix S [L, L]: S[i, i + k] for every start i, as rows { start, offset,
// value } (offsets 0 .. maxOffset). If S depends only on the offset, all starts give one curve.
export function byOffset(S, starts, maxOffset) {
  const L = S.shape[0];
  const rows = [];
  for (const i of starts) for (let k = 0; k <= maxOffset && i + k < L; k++) rows.push({ start: i, offset: k, value: S.data[i * L + i + k] });
  return rows;
}
