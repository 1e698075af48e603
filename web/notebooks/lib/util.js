// Small numeric helpers shared by the notebooks.

export function maxAbsDiff(a, b) {
  if (a.length !== b.length) throw new RangeError(`maxAbsDiff: lengths differ (${a.length} and ${b.length})`);
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i] - b[i]));
  return m;
}

// The median (of a copy, in float64): the one the page uses too.
export { median } from '../../figures/spec.js';

// A number for people: 3 significant digits, scientific when tiny or huge.
export function fmt(x, digits = 3) {
  if (!Number.isFinite(x)) return String(x);
  if (x === 0) return '0';
  const a = Math.abs(x);
  return a < 1e-3 || a >= 1e6 ? x.toExponential(digits - 1) : String(Number(x.toPrecision(digits)));
}

// mulberry32 (Tommy Ettinger): a tiny seeded generator of uniforms in [0, 1), so the notebooks'
// random examples are the same on every run.
export function mulberry32(seed) {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = Math.imul(s ^ (s >>> 15), s | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  };
}

// The verdict of a self-checked exercise: `attempt()` returns the largest difference between the
// reader's answer and posenc's (or throws). '✓ …' when it is within `tolerance`, '✗ …' otherwise (NaN
// and a thrown error included), so that a notebook shows at a glance which answers hold.
export function verdict(name, attempt, tolerance) {
  let error;
  try {
    error = attempt();
  } catch (e) {
    return `✗ ${name}: your code threw ${e?.name ?? 'an error'}: ${e?.message ?? e}`;
  }
  const ok = error <= tolerance;
  return `${ok ? '✓' : '✗'} ${name}: largest difference from posenc ${fmt(error)} (${ok ? 'within' : 'over'} the tolerance ${fmt(tolerance)})`;
}
