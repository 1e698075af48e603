// The clock-face view of the sinusoidal encoding: each frequency pair (sin, cos) of PE(p) is a hand
// at angle p·w_i. M_k turns every hand by k·w_i; RoPE turns query and key pairs by the same angles.
import * as Plot from '@observablehq/plot';
import { param } from './numeric.js';
import { fixed, minus, plural } from './spec.js';

const TAU = 2 * Math.PI;
const wrap = (a) => ((((a + Math.PI) % TAU) + TAU) % TAU) - Math.PI; // to (-π, π]

export function clockFaces(pe, { dModel = 64, base = 10000, position = 63, k = 3, pairs = 8 } = {}) {
  if (!(dModel >= 2)) throw new RangeError(`clockFaces: dModel must be at least 2 (one sin/cos pair, one clock), got ${dModel}`);
  param('clockFaces', 'pairs', pairs, { min: 1, max: 512 });
  const n = Math.min(pairs, Math.floor(dModel / 2));
  const t = pe.sinusoidal({ dModel, base, positions: [0, position, position + k] });
  const row = (r) => t.data.subarray(r * dModel, (r + 1) * dModel);
  const d2 = dModel - (dModel % 2);
  // M_k PE(p): the shift matrix applied to the row, to show that it lands on PE(p + k). M_k is
  // block-diagonal, so a drawn pair needs only its own 2 × 2 block (not d² work on every move of the
  // position slider). M_k exists for an even d_model; with an odd one (its last column a sine without a
  // cosine) each pair drawn is turned by k·w_i directly, which is what M_k's blocks do.
  const M = dModel % 2 === 0 ? pe.shiftMatrix({ dModel, base, k }).data : null;
  const p = row(1);
  const hands = [];
  let worst = 0;
  for (let i = 0; i < n; i++) {
    const angle = (v) => Math.atan2(v[2 * i], v[2 * i + 1]); // column 2i is sin(p w_i), 2i+1 is cos(p w_i)
    const w = base ** (-(2 * i) / dModel);
    const [a0, ap] = [angle(row(0)), angle(p)];
    const m = (r, c) => M[(2 * i + r) * dModel + 2 * i + c];
    const ak = M ? Math.atan2(m(0, 0) * p[2 * i] + m(0, 1) * p[2 * i + 1], m(1, 0) * p[2 * i] + m(1, 1) * p[2 * i + 1]) : wrap(ap + k * w);
    worst = Math.max(worst, Math.abs(wrap(ak - angle(row(2)))));
    hands.push({ i, angle: ap, shifted: ak, offset: wrap(ap - a0), w, turns: (position * w) / TAU });
  }
  const K = minus(k);
  const turnedBy = M
    ? `M_${K}·PE(${position}): every hand turned by ${K}·w_i`
    : `PE(${position})'s pairs each turned by ${K}·w_i, as M_${K} would turn them (posenc builds M_k for an even d_model)`;
  // The clocks side by side in one plot (at most 4 to a row, each with its label below it), x and y in
  // the same units: with equal margins all round and the height following the width, 1 unit is as many
  // pixels across as down, so a clock is round and a hand's angle is the angle drawn.
  const cols = Math.min(4, n);
  const rows = Math.ceil(n / cols);
  const [across, down, margin] = [2.6, 2.95, 10]; // units per clock across and down (the label under it), px
  const cx = (h) => (h.i % cols) * across;
  const cy = (h) => -Math.floor(h.i / cols) * down;
  const aspect = (rows * down) / (cols * across);
  const circle = hands.flatMap((h) =>
    Array.from({ length: 49 }, (_, j) => ({ ...h, x: cx(h) + Math.cos((j / 48) * TAU), y: cy(h) + Math.sin((j / 48) * TAU) })),
  );
  // Hands drawn as (sin, cos) -> clockwise from 12 o'clock: x = sin, y = cos.
  const hand = (key, r) => ({ x1: cx, y1: cy, x2: (h) => cx(h) + r * Math.sin(h[key]), y2: (h) => cy(h) + r * Math.cos(h[key]) });
  const dist0 = Math.hypot(...row(1).map((v, c) => v - row(0)[c]));
  const h0 = hands[0];
  const last = hands[n - 1];
  const close = hands.filter((h) => Math.abs(h.offset) < 0.2).length;
  const drawn = n === 1 ? `pair 0 of ${d2 / 2}` : `pairs 0–${n - 1} of ${d2 / 2}`;
  const turned =
    n === 1
      ? `its hand has made ${h0.turns.toFixed(2)} turns`
      : `the fastest hand drawn has made ${h0.turns.toFixed(2)} turns, the slowest ${last.turns.toFixed(2)}`;
  return {
    hands,
    panels: [
      {
        width: 160 * cols,
        // height = 2·margin + (width − 2·margin)·aspect
        aspect,
        extraHeight: 2 * margin * (1 - aspect),
        options: {
          margin,
          x: { domain: [-across / 2, (cols - 0.5) * across], axis: null },
          y: { domain: [-(rows - 1) * down - (down - across / 2), across / 2], axis: null },
          marks: [
            Plot.line(circle, { x: 'x', y: 'y', z: 'i', stroke: '#bbb' }),
            Plot.dot(hands, { x: cx, y: (h) => cy(h) + 1, fill: '#999', r: 3 }), // where every hand starts (p = 0)
            Plot.arrow(hands, { ...hand('angle', 1), stroke: '#5e3c99', strokeWidth: 2.5 }),
            Plot.arrow(hands, { ...hand('shifted', 0.8), stroke: '#e66101', strokeDasharray: '3,2' }),
            Plot.text(hands, {
              x: cx,
              y: (h) => cy(h) - 1.2,
              text: (h) => `pair ${h.i}\n${h.turns.toFixed(2)} turns`,
              lineAnchor: 'top',
              fontSize: 10,
            }),
          ],
        },
      },
    ],
    takeaway: `PE(${position}) as ${drawn}: ${turned}. Dashed orange: ${M ? `M_${K}·PE(${position}), each hand turned by a further ${K}·w_i` : `each hand turned by a further ${K}·w_i`}.`,
    caption: `PE(${position}) as ${plural(n, 'clock hand')} (${drawn}; d = ${dModel}, base ${base}): pair i is the point (sin, cos) of angle ${position}·w_i, starting at 12 o'clock (grey dot) at position 0. The dashed orange hands are ${turnedBy}, landing on PE(${minus(position + k)}) within ${worst.toExponential(1)} rad; RoPE turns each query and key pair by exactly these angles. Pair 0 has made ${h0.turns.toFixed(2)} turns and sits ${Math.abs(h0.offset).toFixed(3)} rad from its start; ${close} of ${plural(n, 'hand')} ${close === 1 ? 'is' : 'are'} within 0.2 rad of theirs, and |PE(${position}) − PE(0)| = ${dist0.toFixed(3)}.`,
    alt: `${plural(n, 'clock face')} for position ${position}; the fastest hand has turned ${h0.turns.toFixed(2)} times and is ${Math.abs(h0.offset).toFixed(3)} rad from its start.`,
    csv: hands.map(({ i, w, angle, offset, turns }) => ({ pair: i, w, angle, offsetFromStart: offset, turns })),
  };
}

// PE(p) as a vector: one bar per dimension.
export function rowVector(pe, { dModel = 64, base = 10000, layout = 'interleaved', position = 63 } = {}) {
  const t = pe.sinusoidal({ dModel, base, layout, positions: [position] });
  const bars = Array.from(t.data, (value, dim) => ({ dim, value }));
  const shown = bars.slice(0, 128);
  // The right (slow) dimensions sit near sin 0 = 0 and cos 0 = 1 while the slowest pair's angle p·w is
  // small (0.006 rad at p = 63, base 10000, d = 64); a small base or d_model turns them too.
  const slowest = Math.max(...pe.wavelengths({ dModel, base }));
  const angle = (2 * Math.PI * position) / slowest;
  const still = angle < 0.25;
  const right = still
    ? 'the right ones sit near sin 0 = 0 and cos 0 = 1'
    : `at base ${base} and d = ${dModel} even the slowest pair has turned ${(angle / (2 * Math.PI)).toFixed(2)} times by position ${position}, so none sits at sin 0 = 0, cos 0 = 1`;
  return {
    panels: [
      {
        width: 900,
        height: 180,
        options: {
          x: { label: 'dimension →', type: 'band', ticks: shown.filter((b) => b.dim % Math.ceil(shown.length / 16) === 0).map((b) => b.dim) },
          y: { label: '↑ PE(p, dim)', domain: [-1, 1], grid: true },
          marks: [Plot.barY(shown, { x: 'dim', y: 'value', fill: (b) => (b.value < 0 ? '#5e3c99' : '#e66101') }), Plot.ruleY([0])],
        },
      },
    ],
    takeaway: `PE(${position}) as a vector: the left dimensions change from one position to the next, ${right}.`,
    caption: `Row ${position} of the table as a vector (${shown.length < bars.length ? `first ${shown.length} of ${bars.length}` : `all ${bars.length}`} dimensions): the left dimensions swing between −1 and 1 from one position to the next, ${still ? 'the right ones stay near sin 0 = 0 and cos 0 = 1' : right}.`,
    alt: `Bar chart of the ${bars.length} values of PE(${position}); the first is ${fixed(t.data[0], 3)}, the last ${fixed(t.data[bars.length - 1], 3)}.`,
    csv: bars,
  };
}
