// The performance panel: one workload timed live in wasm-SIMD, wasm-scalar and plain JS, in small
// slices so the page never freezes.
import * as Plot from '@observablehq/plot';
import { load } from 'posenc';
import { median } from './figures/numeric.js';
import { show } from './figures/render.js';

// The textbook formula in plain JavaScript (float64 Math.sin/cos into a Float32Array).
function sinusoidalJS(L, d) {
  const out = new Float32Array(L * d);
  for (let p = 0; p < L; p++)
    for (let i = 0; i < d / 2; i++) {
      const a = p * Math.exp((-2 * i * Math.log(10000)) / d);
      out[p * d + 2 * i] = Math.sin(a);
      out[p * d + 2 * i + 1] = Math.cos(a);
    }
  return out;
}

export function performancePanel() {
  const button = document.querySelector('[data-action="benchmark"]');
  const progress = document.querySelector('[data-progress="benchmark"]');
  button.addEventListener('click', async () => {
    button.disabled = true;
    const [simd, scalar] = [await load(), await load({ simd: false })];
    const L = 2048;
    const d = 512;
    const contenders = [
      ['posenc wasm-simd', () => simd.sinusoidal({ length: L, dModel: d }).data],
      ['posenc wasm-scalar', () => scalar.sinusoidal({ length: L, dModel: d }).data],
      ['plain JavaScript', () => sinusoidalJS(L, d)],
    ];
    const samples = 15;
    const times = contenders.map(() => []);
    progress.max = samples * contenders.length;
    progress.value = 0;
    progress.hidden = false;
    let sink = 0; // each result is read, so that no engine can skip the work
    for (let s = 0; s < samples; s++)
      for (const [c, [, fn]] of contenders.entries()) {
        const t0 = performance.now();
        sink += fn()[1000];
        times[c].push(performance.now() - t0);
        progress.value += 1;
        await new Promise((r) => setTimeout(r)); // one slice per sample: the page stays responsive
      }
    const rows = contenders.map(([name], c) => ({ contender: name, ms: median(times[c]) }));
    const js = rows[2].ms;
    for (const r of rows) r.speedup = js / r.ms;
    const slowest = Math.max(...rows.map((r) => r.ms));
    show('performance', {
      panels: [
        {
          width: 700,
          height: 200,
          options: {
            marginLeft: 150,
            marginRight: 20,
            x: { label: 'median milliseconds (lower is faster) →', grid: true, domain: [0, slowest * 1.9] },
            y: { label: null },
            marks: [
              Plot.barX(rows, { y: 'contender', x: 'ms', fill: '#5e3c99' }),
              Plot.text(rows, {
                y: 'contender',
                x: 'ms',
                text: (r) => `${r.ms.toFixed(2)} ms (${r.speedup.toFixed(1)}× JS)`,
                dx: 6,
                textAnchor: 'start',
              }),
            ],
          },
        },
      ],
      takeaway: `posenc's SIMD build computes a ${L} × ${d} table ${(js / rows[0].ms).toFixed(1)}× as fast as a plain JavaScript loop in this browser.`,
      caption: `A ${L} × ${d} sinusoidal table, median of ${samples} runs in this browser: SIMD ${rows[0].ms.toFixed(2)} ms, scalar ${rows[1].ms.toFixed(2)} ms, plain JavaScript ${js.toFixed(2)} ms. posenc also reduces every angle in double precision, which the plain loop's float32 output cannot match at long positions.`,
      alt: `Bar chart: SIMD ${rows[0].ms.toFixed(2)} ms, scalar ${rows[1].ms.toFixed(2)} ms, plain JavaScript ${js.toFixed(2)} ms.`,
      csv: rows,
    });
    progress.hidden = true;
    if (!Number.isFinite(sink)) console.warn('benchmark: a contender returned a value that is not finite');
    button.disabled = false;
  });
}
