// xPos's scores, without drawing (no Plot here: the page computes them in a Worker; beyond.js draws).
// Every number comes from pe.rope with its xpos option.
import { param } from './numeric.js';

// (1, …, 1) as [rows, dim].
const ones = (rows, dim) => ({ data: new Float32Array(rows * dim).fill(1), shape: [rows, dim] });

// q·k / headDim for q = k = (1, …, 1), the query `distance` positions after the key, rotated by pe.rope
// in torchscale's interleaved layout, with and without xPos (centre 0: the key at position 0 is left as
// it is). `envelope` is the largest |score| over the next `window` distances.
export function xposScores(pe, { headDim = 64, scaleBase = 512, maxDistance = 4096, base = 10000, window = 64 } = {}) {
  param('xposScores', 'headDim', headDim, { min: 2, max: 4096 });
  param('xposScores', 'maxDistance', maxDistance, { min: 1, max: 1e5 });
  param('xposScores', 'window', window, { min: 1, max: 1e4 });
  const n = maxDistance + window;
  const score = (xpos) => {
    const opts = (role) => (xpos ? { xpos: { scaleBase, center: 0 }, role, layout: 'interleaved', base } : { layout: 'interleaved', base });
    const q = pe.rope(ones(n, headDim), opts('query')).data;
    const k = pe.rope(ones(1, headDim), opts('key')).data;
    const out = new Float64Array(n);
    for (let i = 0; i < n; i++) {
      let s = 0;
      for (let c = 0; c < headDim; c++) s += q[i * headDim + c] * k[c];
      out[i] = s / headDim;
    }
    return { q, out };
  };
  const xpos = score(true);
  const rope = score(false);
  const envelope = (s) =>
    Float64Array.from({ length: maxDistance + 1 }, (_, d) => s.subarray(d, d + window).reduce((m, v) => Math.max(m, Math.abs(v)), 0));
  // xPos's scale of pair i at a distance: |rotated pair| / |(1, 1)|
  const pairScale = (d) =>
    Float64Array.from({ length: headDim / 2 }, (_, i) => Math.hypot(xpos.q[d * headDim + 2 * i], xpos.q[d * headDim + 2 * i + 1]) / Math.SQRT2);
  return { xpos: xpos.out, rope: rope.out, xposEnvelope: envelope(xpos.out), ropeEnvelope: envelope(rope.out), pairScale };
}
