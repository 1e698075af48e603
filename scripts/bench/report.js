// docs/BENCHMARKS.md from the results object run.mjs writes as benchmarks.json.
import { TOY_STEPS } from './suite.js';

const get = (w, id) => w.contenders.find((c) => c.id === id);
const ms = (w, id) => get(w, id)?.ms;
const time = (x) => (x === undefined ? '–' : x >= 100 ? `${x.toFixed(0)} ms` : x >= 1 ? `${x.toFixed(2)} ms` : `${(x * 1000).toFixed(1)} µs`);
const ratio = (a, b) => (a === undefined || b === undefined ? '–' : `${(a / b).toFixed(a / b >= 10 ? 0 : a / b >= 1 ? 1 : 2)}×`);
const gbs = (c) => (c?.gbPerSecond === undefined ? '' : ` (${c.gbPerSecond.toFixed(1)} GB/s)`);
// two decimals: the ONNX Runtime targets sit at 1.1x and 2x
const ratio2 = (a, b) => (a === undefined || b === undefined ? '–' : `${(a / b).toFixed(2)}×`);
const row = (cells) => `| ${cells.join(' | ')} |`;
const table = (head, rows) => [row(head), row(head.map(() => '---')), ...rows.map(row)].join('\n');

export function markdown(r, notes = '') {
  const W = r.workloads;
  const fam = (f) => W.filter((w) => w.family === f);
  const out = [];
  const m = r.machine;
  const v = r.versions;
  out.push('# posenc benchmarks', '');
  out.push(
    `Measured by \`${r.command}\` on ${r.generated.slice(0, 10)} (${r.durationSeconds} s). ` +
      `Machine: ${m.cpu}, ${m.cores} cores, ${m.memoryGB} GB, ${m.os}, Linux ${m.kernel} (load average at start ${m.loadAverage.join(' ')}). ` +
      `Versions: posenc ${v.posenc}, Node ${v.node} (V8 ${v.v8}), Emscripten ${v.emscripten}, xsimd ${v.xsimd}, g++ ${v.gxx}, TF.js ${v.tfjs ?? '–'}, ONNX Runtime Web ${v.ort ?? '–'}. ` +
      `Backends: wasm SIMD (xsimd \`${r.backends.simd}\`), wasm scalar (xsimd \`${r.backends.scalar}\`), native built with \`g++ -O3 -msse4.2\` / \`-mavx2\`.`,
    '',
    `Every figure is the median of ${r.settings.samples} samples per contender, taken in interleaved rounds after a warm-up ` +
      '(see [Method](#method)); times are per call. The raw results, with quartiles, repetitions and checksums, are in ' +
      '[benchmarks.json](benchmarks.json). Run `npm run bench` to regenerate this page, `npm run bench -- --quick` for a shorter check (a few minutes, most of it the 32-head attention against ONNX Runtime Web).',
    '',
  );

  out.push('## Targets', '');
  out.push(
    table(
      ['', 'target', 'measured'],
      r.targets.map((t) => [t.met === true ? '✅ met' : t.met === false ? '❌ not met' : '–', t.text, t.figure + (t.detail ? `; ${t.detail}` : '')]),
    ),
    '',
  );

  if (fam('sinusoidal').length) {
    out.push('## Sinusoidal table', '');
    out.push(
      'Kernel: `sinusoidal::table` inside wasm (interleaved, base 10000, positions 0 .. L−1). API: `pe.sinusoidal({ length, dModel })`, which also copies the table out of wasm memory into a new `Float32Array`. Max error: largest |value − float64 sin/cos| over the whole table.',
      '',
    );
    out.push(
      table(
        [
          'L × d',
          'plain JS',
          'scalar',
          'SIMD',
          'SIMD API',
          'native SSE4.2',
          'native AVX2',
          'SIMD vs JS',
          'SIMD vs scalar',
          'SIMD / native SSE',
          'max error SIMD / JS',
        ],
        fam('sinusoidal').map((w) => [
          w.id.split('/')[1].replace('x', ' × '),
          time(ms(w, 'js')),
          time(ms(w, 'scalar-kernel')),
          time(ms(w, 'simd-kernel')),
          time(ms(w, 'simd-api')),
          time(ms(w, 'native-sse4.2')),
          time(ms(w, 'native-avx2')),
          ratio(ms(w, 'js'), ms(w, 'simd-kernel')),
          ratio(ms(w, 'scalar-kernel'), ms(w, 'simd-kernel')),
          ratio(ms(w, 'simd-kernel'), ms(w, 'native-sse4.2')),
          `${get(w, 'simd-kernel')?.maxError?.toExponential(1) ?? '–'} / ${get(w, 'js')?.maxError?.toExponential(1) ?? '–'}`,
        ]),
      ),
      '',
    );
  }

  if (fam('rope').length) {
    out.push('## RoPE', '');
    out.push(
      'x is `[seq, heads, headDim]` float32, full rotary dimension, base 10000. Kernel: `rope::apply` inside wasm, in place as the API runs it; ' +
        '“x → out” writes a second buffer. Baselines: one wasm `memory.copy` of x inside the module (GB/s = bytes read + written), and one JS ' +
        '`Float32Array` copy of x (`x.slice()`). API: `pe.rope({ data, shape }, { layout })` (copy in, rotate, copy out).',
      '',
    );
    out.push(
      table(
        [
          'x',
          'layout',
          'plain JS',
          'scalar',
          'SIMD in place',
          'SIMD x → out',
          'memory.copy',
          'kernel / copy',
          'JS copy',
          'SIMD API',
          'API / JS copy',
          'native SSE4.2 in place',
          'native memcpy',
        ],
        fam('rope').map((w) => {
          const [, shape, layout] = w.id.split('/');
          return [
            `[${shape.split('x').join(', ')}]`,
            layout,
            time(ms(w, 'js')),
            time(ms(w, 'scalar-kernel')),
            time(ms(w, 'simd-kernel')) + gbs(get(w, 'simd-kernel')),
            time(ms(w, 'simd-kernel-oop')) + gbs(get(w, 'simd-kernel-oop')),
            time(ms(w, 'memory-copy')) + gbs(get(w, 'memory-copy')),
            ratio(ms(w, 'memory-copy'), ms(w, 'simd-kernel')),
            time(ms(w, 'js-copy')),
            time(ms(w, 'simd-api')),
            ratio(ms(w, 'simd-api'), ms(w, 'js-copy')),
            time(ms(w, 'native-sse4.2')) + gbs(get(w, 'native-sse4.2')),
            time(ms(w, 'native-sse4.2-copy')),
          ];
        }),
      ),
      '',
    );
  }

  const bias = [...fam('alibi'), ...fam('t5')];
  if (bias.length) {
    out.push('## ALiBi bias and T5 buckets', '');
    out.push(
      'Kernel: `relative::alibi_bias` (causal) / `relative::t5_buckets` (32 buckets, max distance 128, bidirectional) inside wasm. Baseline: one wasm `memory.fill` of the same number of bytes (GB/s = bytes written).',
      '',
    );
    out.push(
      table(
        [
          'workload',
          'plain JS',
          'scalar',
          'SIMD',
          'memory.fill',
          'SIMD / fill',
          'SIMD API',
          'native SSE4.2',
          'native memset',
          'SIMD vs JS',
          'SIMD vs scalar',
          'SIMD / native SSE',
        ],
        bias.map((w) => [
          w.title,
          time(ms(w, 'js')),
          time(ms(w, 'scalar-kernel')),
          time(ms(w, 'simd-kernel')) + gbs(get(w, 'simd-kernel')),
          time(ms(w, 'memory-fill')) + gbs(get(w, 'memory-fill')),
          ratio(ms(w, 'memory-fill'), ms(w, 'simd-kernel')),
          time(ms(w, 'simd-api')),
          time(ms(w, 'native-sse4.2')),
          time(ms(w, 'native-sse4.2-fill')),
          ratio(ms(w, 'js'), ms(w, 'simd-kernel')),
          ratio(ms(w, 'scalar-kernel'), ms(w, 'simd-kernel')),
          ratio(ms(w, 'simd-kernel'), ms(w, 'native-sse4.2')),
        ]),
      ),
      '',
    );
  }

  if (fam('attention').length) {
    out.push('## Attention', '');
    out.push(
      'One head, q, k, v `[S, 64]`, `softmax(q kᵀ / 8) v`. Kernel: `attention::attention` inside wasm (writes the output and the weights). ' +
        'TF.js: `@tensorflow/tfjs-backend-wasm` (SIMD, one thread) running matMul → mul → softmax → matMul on tensors made once, reading the output back ' +
        '(“resident”), or making the tensors from the arrays and reading output and weights back (“from arrays”, what the posenc API call does). GFLOP/s counts 4·S²·d.',
      '',
    );
    out.push(
      table(
        [
          'S',
          'plain JS',
          'scalar',
          'SIMD',
          'TF.js resident',
          'TF.js from arrays',
          'SIMD API',
          'native SSE4.2',
          'native AVX2',
          'SIMD vs JS',
          'SIMD vs TF.js',
          'API vs TF.js arrays',
          'SIMD vs scalar',
          'SIMD / native SSE',
        ],
        fam('attention').map((w) => [
          w.id.split('/')[1].split('x')[0],
          time(ms(w, 'js')) + gf(get(w, 'js')),
          time(ms(w, 'scalar-kernel')) + gf(get(w, 'scalar-kernel')),
          time(ms(w, 'simd-kernel')) + gf(get(w, 'simd-kernel')),
          time(ms(w, 'tfjs')) + gf(get(w, 'tfjs')),
          time(ms(w, 'tfjs-arrays')),
          time(ms(w, 'simd-api')),
          time(ms(w, 'native-sse4.2')) + gf(get(w, 'native-sse4.2')),
          time(ms(w, 'native-avx2')),
          ratio(ms(w, 'js'), ms(w, 'simd-kernel')),
          ratio(ms(w, 'tfjs'), ms(w, 'simd-kernel')),
          ratio(ms(w, 'tfjs-arrays'), ms(w, 'simd-api')),
          ratio(ms(w, 'scalar-kernel'), ms(w, 'simd-kernel')),
          ratio(ms(w, 'simd-kernel'), ms(w, 'native-sse4.2')),
        ]),
      ),
      '',
    );
  }

  if (fam('ort').length) {
    out.push('## Against ONNX Runtime Web', '');
    out.push(
      `ONNX Runtime Web ${v.ort ?? ''} in the same Node process, wasm backend, one thread, SIMD, running one-node models built by ` +
        '`tests/js/fixtures/onnx.js` (the interop suite checks these operators against posenc and float64 formulas). Both sides from JS arrays to ' +
        'JS arrays: posenc’s API call (with `out`; attention with `weights: false`, as ORT’s operators return no weights) against ' +
        '`await session.run(feeds)`. RoPE’s cos/sin caches and the constant position ids are initializers of the model (prebuilt). ' +
        'Ratios are ORT time / posenc time (above 1: posenc is faster).',
      '',
    );
    const others = (w) =>
      w.contenders
        .filter((c) => c.kind === 'ort' && c.id !== 'ort')
        .map((c) => `${c.label.split(': ').at(-1)} ${time(c.ms)} (${ratio2(c.ms, ms(w, 'simd-api-out'))})`)
        .join('; ') || '–';
    out.push(
      table(
        ['workload', 'posenc SIMD API', 'ONNX Runtime Web', 'ORT / posenc', 'other ORT operators', 'largest difference'],
        fam('ort').map((w) => [
          w.title.replace(/^vs ORT: /, ''),
          time(ms(w, 'simd-api-out')),
          `${time(ms(w, 'ort'))} (${get(w, 'ort')?.label.split(': ').at(-1)})`,
          ratio2(ms(w, 'ort'), ms(w, 'simd-api-out')),
          others(w),
          get(w, 'ort')?.maxError?.toExponential(1) ?? '–',
        ]),
      ),
      '',
    );
  }

  const toy = W.find((w) => w.family === 'toy');
  if (toy) {
    const steps = (id) => (ms(toy, id) === undefined ? '–' : `${((TOY_STEPS * 1000) / ms(toy, id)).toFixed(0)}`);
    out.push('## Training the toy transformer', '');
    out.push(
      `\`pe.trainToy({ task: 'before' })\` (batch 16, 8 tokens and a readout token, d = 16, 2 heads, 2 layers, Adam) against the same model written in TF.js with the wasm backend (\`scripts/bench/toy-tf.js\`). One call is ${TOY_STEPS} steps; posenc's \`step()\` also scores 256 held-out examples once per call, which its figures include.`,
      '',
    );
    out.push(
      table(
        ['', 'per 50 steps', 'steps/s', 'vs TF.js'],
        [
          ['posenc SIMD', time(ms(toy, 'simd-api')), steps('simd-api'), ratio(ms(toy, 'tfjs'), ms(toy, 'simd-api'))],
          ['posenc scalar', time(ms(toy, 'scalar-api')), steps('scalar-api'), ratio(ms(toy, 'tfjs'), ms(toy, 'scalar-api'))],
          ['TF.js wasm', time(ms(toy, 'tfjs')), steps('tfjs'), '1×'],
        ],
      ),
      '',
    );
  }

  out.push('## Loading and size', '');
  if (r.load)
    out.push(
      `\`load()\` in a fresh Node process (median of ${r.load.samples}): ${r.load.simdMs.toFixed(1)} ms for the SIMD build, ${r.load.scalarMs.toFixed(1)} ms for the scalar build (importing the package first: ${r.load.importMs.toFixed(1)} ms).`,
      '',
    );
  const b = r.bundle;
  const kb = (x) => (x / 1024).toFixed(1);
  out.push(
    table(
      ['what', 'raw', 'gzip'],
      [
        ...[...b.simd.files, ...b.scalar.files].map((f) => [`\`${f.file}\``, `${kb(f.raw)} KB`, `${kb(f.gzip)} KB`]),
        ['SIMD wasm + glue (what a page with SIMD loads)', `${kb(b.simd.raw)} KB`, `${kb(b.simd.gzip)} KB`],
        ['scalar wasm + glue', `${kb(b.scalar.raw)} KB`, `${kb(b.scalar.gzip)} KB`],
        [`package JS (\`src/js/*.js\`, ${b.packageJs.files.length} files)`, `${kb(b.packageJs.raw)} KB`, `${kb(b.packageJs.gzip)} KB`],
      ],
    ),
    '',
  );

  out.push('## Checksums', '');
  out.push(
    'Sum of x[i]·(i mod 7 + 1) over each contender’s output (RoPE kernels: one in-place rotation of x), in float64. Contenders agree to float32 rounding; the plain JS versions compute in float64, so they differ in the low digits.',
    '',
  );
  out.push(
    table(
      ['workload', 'checksums'],
      W.map((w) => [
        w.id,
        w.contenders
          .filter((c) => c.checksum !== undefined)
          .map((c) => `${c.id} ${c.checksum.toPrecision(9)}`)
          .join('; '),
      ]),
    ),
    '',
  );

  out.push('## Method', '');
  out.push(
    '- One Node process holds every contender of a workload: plain JS, both wasm builds (`load()` and `load({ simd: false })`), the baseline, ' +
      'TF.js and ONNX Runtime Web. Each contender is warmed up (at least 3 calls and ' +
      `${r.settings.warmupMs} ms, so V8 has tiered the wasm and JS code up), then calibrated to a number of calls per sample of at least ` +
      `${r.settings.sampleMs} ms. Samples are taken in rounds: every round runs every contender of a group once, starting at a rotating ` +
      'position, so the noise of a busy 2-core machine falls on the contenders of a group alike. The groups are what runs inside wasm ' +
      '(kernels, `memory.copy` / `memory.fill`), sampled first, then what runs from JS (plain JS, API calls, JS copies, TF.js), whose large ' +
      'fresh arrays V8 frees on background threads. The figure is the median over the rounds of (sample time / calls).',
    `- Before each sample, a kernel or baseline runs untimed for up to 8 calls or ${r.settings.primeMs} ms, so that it is measured in the ` +
      'steady state of a loop calling it (its buffers back in the caches), as the native executable measures it; the garbage collector ' +
      'runs (`--expose-gc`) before every sample.',
    '- Kernel figures are timed inside wasm by the `_bench*` bindings (a loop around the core function, `emscripten_get_now`), so they leave ' +
      'out embind, the JS layer and copies. API figures time the public call from JS, copies in and out included.',
    '- `memory.copy` / `memory.fill` run in a 131-byte wasm module built by the harness (`scripts/bench/bulk-memory.js`) that imports the posenc ' +
      'module’s own memory: the same bytes, the same memory, the same engine.',
    '- The native contender is `scripts/bench/native.cpp`, compiled from the same `src/core` sources with `g++ -O3 -ffp-contract=off -msse4.2` ' +
      'and `-mavx2` (xsimd then picks its `sse4.2` / `avx2` kernels), run as a child process right after the workload’s rounds, with the ' +
      'same number of samples and calls per sample as the SIMD kernel; it prints its own medians.',
    '- Benchmarks are a program that prints figures, never a test that fails: a missed target is reported, with its figure, above.',
    '',
  );
  if (notes.trim()) out.push(notes.trim(), '');
  return out.join('\n');
}

function gf(c) {
  return c?.gflops === undefined ? '' : ` (${c.gflops.toFixed(1)} GF/s)`;
}
