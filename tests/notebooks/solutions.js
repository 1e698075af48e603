// Worked solutions of the notebooks' exercises, by notebook and exercise number. The notebooks ship stubs
// (the code cell that starts `// Exercise N` throws 'not written yet' until the reader writes it);
// tests/notebooks/notebooks.test.js runs each notebook with these in place of the stubs and expects ✓ from every
// check cell, and ✗ naming a case with the stubs.
export const SOLUTIONS = {
  '01-why-order-matters.ipynb': {
    2: `// Exercise 2: worked solution
function causalAttention(q, k, v) {
  const d = q[0].length;
  return q.map((qi, i) => {
    const logits = k.slice(0, i + 1).map((kj) => qi.reduce((s, x, t) => s + x * kj[t], 0) / Math.sqrt(d));
    const max = Math.max(...logits);
    const w = logits.map((l) => Math.exp(l - max));
    const sum = w.reduce((a, b) => a + b, 0);
    return v[0].map((_, c) => w.reduce((s, wj, j) => s + (wj / sum) * v[j][c], 0));
  });
}
`,
    1: `// Exercise 1: worked solution
// The reversal, read by tokens: "mat The on sat cat the" is "mat the on sat cat The" to the model.
const blindShuffle = [5, 0, 3, 2, 1, 4];
`,
    3: `// Exercise 3: worked solution
function blindLoss() {
  return -Math.log(1 / 2); // probability 1/2 on the right answer, whatever the input
}
`,
  },
  '02-anatomy-of-the-sinusoidal-encoding.ipynb': {
    1: `// Exercise 1: worked solution
function longestWavelength(dModel, base) {
  const i = Math.ceil(dModel / 2) - 1; // the last frequency pair
  return 2 * Math.PI * base ** ((2 * i) / dModel);
}
`,
    2: `// Exercise 2: worked solution
function shiftMatrixOf(dModel, k, base = 10000) {
  const M = Array.from({ length: dModel }, () => new Array(dModel).fill(0));
  for (let i = 0; 2 * i < dModel; i++) {
    const a = k * base ** (-(2 * i) / dModel); // k · w_i
    M[2 * i][2 * i] = Math.cos(a);
    M[2 * i][2 * i + 1] = Math.sin(a);
    M[2 * i + 1][2 * i] = -Math.sin(a);
    M[2 * i + 1][2 * i + 1] = Math.cos(a);
  }
  return M;
}
`,
    3: `// Exercise 3: worked solution
function distanceAt(k, dModel, base = 10000) {
  let sum = 0;
  for (let i = 0; 2 * i < dModel; i++) sum += 2 - 2 * Math.cos(k * base ** (-(2 * i) / dModel));
  return Math.sqrt(sum);
}
`,
  },
  '03-rope-and-long-context.ipynb': {
    1: `// Exercise 1: worked solution
function ropeHalf(x, position, base = 10000) {
  const h = x.length / 2;
  const out = new Array(x.length);
  for (let i = 0; i < h; i++) {
    const a = position * base ** (-(2 * i) / x.length);
    out[i] = x[i] * Math.cos(a) - x[i + h] * Math.sin(a);
    out[i + h] = x[i + h] * Math.cos(a) + x[i] * Math.sin(a);
  }
  return out;
}
`,
    2: `// Exercise 2: worked solution
function yarnInvFreq(dim, base, factor, original, betaFast = 32, betaSlow = 1) {
  const pairAt = (turns) => (dim * Math.log(original / (turns * 2 * Math.PI))) / (2 * Math.log(base));
  const low = Math.max(Math.floor(pairAt(betaFast)), 0);
  let high = Math.min(Math.ceil(pairAt(betaSlow)), dim - 1);
  if (low === high) high += 0.001; // HF's guard against a zero-width ramp
  return Array.from({ length: dim / 2 }, (_, i) => {
    const theta = base ** (-(2 * i) / dim);
    const ramp = Math.min(Math.max((i - low) / (high - low), 0), 1);
    return (theta / factor) * ramp + theta * (1 - ramp);
  });
}
`,
    3: `// Exercise 3: worked solution
function alibiSlopes(heads) {
  const n = 2 ** Math.floor(Math.log2(heads));
  const slopes = Array.from({ length: n }, (_, h) => 2 ** ((-8 * (h + 1)) / n));
  for (let j = 0; slopes.length < heads; j++) slopes.push(2 ** ((-4 / n) * (2 * j + 1)));
  return slopes;
}
`,
  },
  '04-positions-beyond-text.ipynb': {
    1: `// Exercise 1: worked solution
function patchVector(row, col, dModel, base = 10000) {
  const quarter = dModel / 4;
  const v = new Array(dModel);
  for (let k = 0; k < quarter; k++) {
    const w = base ** (-k / quarter);
    v[k] = Math.sin(col * w); // first half: the column (MAE's grid[0] is grid_w)
    v[quarter + k] = Math.cos(col * w);
    v[2 * quarter + k] = Math.sin(row * w); // second half: the row
    v[3 * quarter + k] = Math.cos(row * w);
  }
  return v;
}
`,
    2: `// Exercise 2: worked solution
function mropeIds(segments) {
  const [t, h, w] = [[], [], []];
  let next = 0; // the largest id so far + 1
  for (const segment of segments) {
    const start = next;
    if ('text' in segment) {
      for (let k = 0; k < segment.text; k++) [t, h, w].forEach((s) => s.push(start + k));
      next = start + segment.text;
    } else {
      const [gt, gh, gw] = segment.image ?? segment.video;
      for (let a = 0; a < gt; a++)
        for (let b = 0; b < gh; b++)
          for (let c = 0; c < gw; c++) {
            t.push(start + a);
            h.push(start + b);
            w.push(start + c);
          }
      next = start + Math.max(gt, gh, gw);
    }
  }
  return [t, h, w];
}
`,
    3: `// Exercise 3: worked solution
function xposScore(distance, d, scaleBase = 512) {
  let s = 0;
  for (let i = 0; i < d / 2; i++) {
    const zeta = (2 * i + 0.4 * d) / (1.4 * d);
    s += 2 * zeta ** (distance / scaleBase) * Math.cos(distance * 10000 ** ((-2 * i) / d));
  }
  return s / d;
}
`,
  },
};
