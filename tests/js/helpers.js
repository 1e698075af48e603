// Shared test helpers: both backends, independent references, comparisons.
import { load } from 'posenc';
import { loadLab } from 'posenc/lab';

export const backends = async () => [await load(), await load({ simd: false })];
// loadLab()'s objects: the core's methods and the teaching models' (posenc/lab), on both backends.
export const labBackends = async () => [await loadLab(), await loadLab({ simd: false })];

export function maxAbsDiff(a, b) {
  if (a.length !== b.length) throw new Error(`length ${a.length} != ${b.length}`);
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i] - b[i]));
  return m;
}

// Vaswani's table in float64 straight from the formula: PE(p, 2i) = sin(p / base^(2i/d)), PE(p, 2i+1) = cos(...).
export function sinusoidalRef(positions, d, base = 10000) {
  const out = new Float64Array(positions.length * d);
  positions.forEach((p, r) => {
    for (let j = 0; j < d; j++) {
      const angle = p / base ** ((2 * Math.floor(j / 2)) / d);
      out[r * d + j] = j % 2 === 0 ? Math.sin(angle) : Math.cos(angle);
    }
  });
  return out;
}

export const range = (n, start = 0) => Array.from({ length: n }, (_, i) => start + i);

// `load` of a fresh copy of the loader (its own instance cache, so the first load of a backend is
// this one): the test's `tag` makes the module URL new.
export async function freshLoader(tag) {
  const { loadWith } = await import(`../../src/js/loader.js?${tag}`);
  const { wasmURL } = await import('../../src/js/urls.js');
  const { CORE } = await import('../../src/js/core.js');
  return (options) => loadWith(options, { ...CORE, url: wasmURL });
}
