// The benchmark suite: workloads, contenders, interleaved sampling, targets. No Node APIs: the Node
// runner (run.mjs) adds native and TF.js contenders and the ONNX Runtime Web workloads (ort.js) and
// writes the results; a page can run it with just the two posenc instances.
//
// Method. Every contender of a workload is warmed up (V8 tiers wasm and JS up while it runs), then
// calibrated to a number of calls `reps` per sample (>= sampleMs of work); samples are taken in
// interleaved rounds (each round runs every contender of a group once, in a rotated order), so machine
// noise hits the contenders of a group alike; the figure is the median over the samples of (sample
// time / reps). The groups: what runs inside wasm (kernels, memory.copy/fill), then what runs from JS.
// Kernel and baseline samples start with primeMs of untimed calls, so that they measure the steady
// state of a loop calling the kernel (its buffers back in the caches: a 32 MB output written once
// after other work takes twice as long as in the loop), which is what the native executable measures.
// Kernel contenders time themselves inside wasm (the `_bench*` bindings, emscripten_get_now), so
// they leave out embind, the JS layer and copies; API contenders are the public calls, copies in and
// out included. After sampling, every contender's output gets a checksum (sum of x[i] * (i % 7 + 1)).
import { bulkMemory } from './bulk-memory.js';
import { blockRowsOf } from '../../src/js/heap.js';
import * as plain from './plain.js';

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const quantile = (xs, q) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))];
};

// Settings. samples >= 30 in every mode (a stable median needs at least 30).
export function settings(quick) {
  return quick ? { quick, samples: 31, warmupMs: 60, sampleMs: 1, primeMs: 20 } : { quick, samples: 41, warmupMs: 300, sampleMs: 3, primeMs: 20 };
}

// A kernel timing from a `_bench*` binding (the dev module); -1 means the kernel failed, with its
// message in the core's error buffer.
function benchCall(mod, ms) {
  if (ms < 0) {
    const p = mod._errorMessage();
    throw new Error(`bench: the kernel failed: ${new TextDecoder().decode(mod.HEAPU8.subarray(p, p + mod._errorLength()))}`);
  }
  return ms;
}

// ---- wasm buffers ------------------------------------------------------------------------------------
// Buffers are 64-byte aligned and staggered by 2112 bytes modulo 4096: two buffers at the same offset
// in their pages make the CPU's loads wait for unrelated stores (4K aliasing), which slowed the x -> out
// RoPE kernel 3x when malloc happened to place out 16 bytes past a multiple of 4096 from x.
function wasmBuffers(mod) {
  const owned = [];
  return {
    alloc(bytes) {
      const raw = mod._malloc(bytes + 8192);
      if (!raw) throw new Error(`bench: cannot allocate ${bytes} bytes of wasm memory`);
      owned.push(raw);
      const stagger = (owned.length * 2112) % 4096;
      return raw + ((4096 - (raw % 4096)) % 4096) + stagger;
    },
    put(array) {
      const p = this.alloc(array.byteLength);
      mod.HEAPU8.set(new Uint8Array(array.buffer, array.byteOffset, array.byteLength), p);
      return p;
    },
    get(Type, p, n) {
      return new Type(mod.HEAPU8.buffer, p, n).slice();
    },
    free() {
      for (const p of owned.splice(0)) mod._free(p);
    },
  };
}

// Runs setup(name, pe, mod, buf) for the scalar and the SIMD module, each with its own wasm buffers,
// which the workload's cleanup releases.
function forEachBackend(env, cleanup, setup) {
  for (const [name, pe] of [
    ['scalar', env.scalar],
    ['simd', env.simd],
  ]) {
    const buf = wasmBuffers(pe._mod);
    cleanup.push(buf);
    setup(name, pe, pe._mod, buf);
  }
}

// A contender timed from JS: `fn` is one call; sample(reps) times reps calls. (A contender's sample
// may also return a promise of its time, as ort.js's asynchronous session.run contenders do.)
export function jsContender(id, label, kind, fn) {
  let last;
  return {
    id,
    label,
    kind,
    sample(reps) {
      const t0 = performance.now();
      for (let r = 0; r < reps; r++) last = fn();
      return performance.now() - t0;
    },
    output: () => last,
  };
}

// The native builds: SSE4.2 (what the targets compare with) and, in the full run, AVX2.
const nativeArchs = (env) => (env.quick ? ['sse4.2'] : ['sse4.2', 'avx2']);

// ---- workloads ---------------------------------------------------------------------------------------
// Each returns { id, family, title, contenders, native: [{ id, label, spec, arch }], derive(results) }.
// `native` specs are run by env.native (a child process) with the reps of the SIMD kernel.

function sinusoidalWorkload(env, L, d) {
  const n = L * d;
  const into = new Float32Array(n);
  const contenders = [
    jsContender('js', "plain JS (the tutorials' code)", 'js', () => plain.sinusoidal(L, d)),
    jsContender('js-into', 'plain JS into an existing array', 'js', () => plain.sinusoidal(L, d, into)),
    jsContender('js-alloc-fill', 'JS new Float32Array + fill', 'baseline-js', () => new Float32Array(n).fill(1)),
  ];
  const cleanup = [];
  forEachBackend(env, cleanup, (name, pe, mod, buf) => {
    const out = buf.alloc(n * 4);
    contenders.push({
      id: `${name}-kernel`,
      label: `posenc ${name}, kernel`,
      kind: 'kernel',
      backend: name,
      sample: (reps) => benchCall(mod, mod._benchSinusoidal({ out, rows: L, dModel: d, layout: 0, reps })),
      output: () => buf.get(Float32Array, out, n),
    });
    if (name === 'simd' || !env.quick)
      contenders.push(jsContender(`${name}-api`, `posenc ${name}, API`, 'api', () => pe.sinusoidal({ length: L, dModel: d }).data));
    if (name === 'simd') {
      const apiOut = new Float32Array(n);
      contenders.push(
        jsContender('simd-api-out', 'posenc simd, API with out', 'api', () => pe.sinusoidal({ length: L, dModel: d, out: apiOut }).data),
      );
      // What any fresh result produced in wasm costs besides the kernel: a new Float32Array and the copies
      // of the API's cache-sized blocks into it (src/js/heap.js produceRows), without computing anything.
      const blockRows = blockRowsOf(L, d, Float32Array);
      const block = buf.alloc(blockRows * d * 4);
      contenders.push(
        jsContender('js-alloc-copy', 'JS new Float32Array + copies of a wasm block', 'baseline-js', () => {
          const a = new Float32Array(n);
          const view = new Float32Array(mod.HEAPU8.buffer, block, blockRows * d);
          for (let r0 = 0; r0 < L; r0 += blockRows) a.set(r0 + blockRows <= L ? view : view.subarray(0, (L - r0) * d), r0 * d);
          return a;
        }),
      );
    }
  });
  return {
    id: `sinusoidal/${L}x${d}`,
    family: 'sinusoidal',
    title: `sinusoidal ${L} x ${d}`,
    values: n,
    contenders,
    native: nativeArchs(env).map((arch) => ({ id: `native-${arch}`, label: `native ${arch}`, arch, spec: `sinusoidal/${L}x${d}` })),
    derive(r) {
      for (const c of r.contenders) if (c.outputArray) c.maxError = plain.sinusoidalMaxError(c.outputArray, L, d);
    },
    cleanup: () => cleanup.forEach((b) => b.free()),
  };
}

function ropeWorkload(env, S, H, D, layout) {
  const n = S * H * D;
  const bytes = n * 4;
  const x = plain.input(n, 1);
  const layoutIndex = layout === 'half' ? 0 : 1;
  const into = new Float32Array(n);
  const contenders = [
    jsContender('js', 'plain JS', 'js', () => plain.rope(x, S, H, D, layout)),
    jsContender('js-into', 'plain JS (sin/cos hoisted) into an existing array', 'js', () => plain.rope(x, S, H, D, layout, into)),
    jsContender('js-copy', 'JS Float32Array copy of x', 'baseline-js', () => x.slice()),
  ];
  const cleanup = [];
  forEachBackend(env, cleanup, (name, pe, mod, buf) => {
    const px = buf.put(x);
    const work = buf.alloc(bytes);
    const kernelOutput = () => {
      // the checksum comes from one fresh in-place rotation of x
      mod.HEAPU8.copyWithin(work, px, px + bytes);
      benchCall(mod, mod._benchRope({ x: work, out: work, seq: S, heads: H, headDim: D, layout: layoutIndex, reps: 1 }));
      return buf.get(Float32Array, work, n);
    };
    contenders.push({
      id: `${name}-kernel`,
      label: `posenc ${name}, kernel in place`,
      kind: 'kernel',
      backend: name,
      sample: (reps) => benchCall(mod, mod._benchRope({ x: work, out: work, seq: S, heads: H, headDim: D, layout: layoutIndex, reps })),
      output: kernelOutput,
    });
    if (name === 'simd') {
      const out = buf.alloc(bytes);
      contenders.push({
        id: 'simd-kernel-oop',
        label: 'posenc simd, kernel x -> out',
        kind: 'kernel',
        backend: name,
        sample: (reps) => benchCall(mod, mod._benchRope({ x: px, out, seq: S, heads: H, headDim: D, layout: layoutIndex, reps })),
        output: () => buf.get(Float32Array, out, n),
      });
      const bulk = bulkMemory(mod);
      const copy = buf.alloc(bytes); // its own buffer: the kernels' outputs stay theirs for the checksums
      contenders.push({
        id: 'memory-copy',
        label: 'wasm memory.copy of x',
        kind: 'baseline',
        sample: (reps) => {
          const t0 = performance.now();
          bulk.copy(copy, px, bytes, reps);
          return performance.now() - t0;
        },
      });
    }
    if (name === 'simd' || !env.quick)
      contenders.push(jsContender(`${name}-api`, `posenc ${name}, API`, 'api', () => pe.rope({ data: x, shape: [S, H, D] }, { layout }).data));
    if (name === 'simd') {
      const apiOut = new Float32Array(n);
      contenders.push(
        jsContender('simd-api-out', 'posenc simd, API with out', 'api', () => pe.rope({ data: x, shape: [S, H, D] }, { layout, out: apiOut }).data),
      );
    }
  });
  return {
    id: `rope/${S}x${H}x${D}/${layout}`,
    family: 'rope',
    title: `RoPE [${S}, ${H}, ${D}] ${layout}`,
    bytes,
    traffic: 2 * bytes, // read x + write the rotation
    contenders,
    native: nativeArchs(env).flatMap((arch) => [
      { id: `native-${arch}`, label: `native ${arch}, in place`, arch, spec: `rope/${S}x${H}x${D}/${layout}-inplace` },
      ...(env.quick ? [] : [{ id: `native-${arch}-copy`, label: `native ${arch} memcpy`, arch, spec: `copy/${bytes}` }]),
    ]),
    cleanup: () => cleanup.forEach((b) => b.free()),
  };
}

function biasWorkload(env, kind, dims) {
  const alibi = kind === 'alibi';
  const [H, Q, K] = alibi ? dims : [1, ...dims];
  const n = H * Q * K;
  const bytes = n * 4;
  const Type = alibi ? Float32Array : Int32Array;
  const contenders = [jsContender('js', 'plain JS', 'js', () => (alibi ? plain.alibiBias(H, Q, K) : plain.t5Buckets(Q, K)))];
  const cleanup = [];
  forEachBackend(env, cleanup, (name, pe, mod, buf) => {
    const out = buf.alloc(bytes);
    contenders.push({
      id: `${name}-kernel`,
      label: `posenc ${name}, kernel`,
      kind: 'kernel',
      backend: name,
      sample: (reps) => benchCall(mod, (alibi ? mod._benchAlibi : mod._benchT5)({ out, heads: H, queryLength: Q, keyLength: K, reps })),
      output: () => buf.get(Type, out, n),
    });
    if (name === 'simd') {
      const bulk = bulkMemory(mod);
      const filled = buf.alloc(bytes); // its own buffer: the kernel's output stays its own for the checksum
      contenders.push({
        id: 'memory-fill',
        label: 'wasm memory.fill, same bytes',
        kind: 'baseline',
        sample: (reps) => {
          const t0 = performance.now();
          bulk.fill(filled, bytes, reps);
          return performance.now() - t0;
        },
      });
    }
    if (!env.quick)
      contenders.push(
        jsContender(`${name}-api`, `posenc ${name}, API`, 'api', () =>
          alibi ? pe.alibiBias({ numHeads: H, queryLength: Q, keyLength: K }).data : pe.t5Buckets({ queryLength: Q, keyLength: K }).data,
        ),
      );
  });
  const id = alibi ? `alibi/${H}x${Q}x${K}` : `t5/${Q}x${K}`;
  return {
    id,
    family: kind,
    title: alibi ? `ALiBi bias ${H} x ${Q} x ${K}` : `T5 buckets ${Q} x ${K}`,
    bytes,
    traffic: bytes, // written
    contenders,
    native: nativeArchs(env).flatMap((arch) => [
      { id: `native-${arch}`, label: `native ${arch}`, arch, spec: id },
      ...(env.quick ? [] : [{ id: `native-${arch}-fill`, label: `native ${arch} memset`, arch, spec: `fill/${bytes}` }]),
    ]),
    cleanup: () => cleanup.forEach((b) => b.free()),
  };
}

function attentionWorkload(env, S, d) {
  const q = plain.input(S * d, 1);
  const k = plain.input(S * d, 2);
  const v = plain.input(S * d, 3);
  const contenders = [jsContender('js', 'plain JS', 'js', () => plain.attention(q, k, v, S, d).output)];
  const cleanup = [];
  forEachBackend(env, cleanup, (name, pe, mod, buf) => {
    const [pq, pk, pv] = [q, k, v].map((a) => buf.put(a));
    const out = buf.alloc(S * d * 4);
    const w = buf.alloc(S * S * 4);
    contenders.push({
      id: `${name}-kernel`,
      label: `posenc ${name}, kernel`,
      kind: 'kernel',
      backend: name,
      sample: (reps) => benchCall(mod, mod._benchAttention({ q: pq, k: pk, v: pv, out, weights: w, seq: S, d, reps, causal: false })),
      output: () => buf.get(Float32Array, out, S * d),
    });
    if (name === 'simd') {
      const causalOut = buf.alloc(S * d * 4);
      contenders.push({
        id: 'simd-kernel-causal',
        label: 'posenc simd, kernel, causal',
        kind: 'kernel',
        backend: name,
        sample: (reps) => benchCall(mod, mod._benchAttention({ q: pq, k: pk, v: pv, out: causalOut, weights: w, seq: S, d, reps, causal: true })),
        // a different computation: checked against plain JS's causal attention below
        output: () => buf.get(Float32Array, causalOut, S * d),
        reference: () => plain.attention(q, k, v, S, d, { causal: true }).output,
      });
      // without weights (online softmax over key blocks), both masks
      for (const causal of [false, true]) {
        const streamOut = buf.alloc(S * d * 4);
        contenders.push({
          id: `simd-kernel-stream${causal ? '-causal' : ''}`,
          label: `posenc simd, kernel, weights: false${causal ? ', causal' : ''}`,
          kind: 'kernel',
          backend: name,
          sample: (reps) => benchCall(mod, mod._benchAttention({ q: pq, k: pk, v: pv, out: streamOut, weights: 0, seq: S, d, reps, causal })),
          output: () => buf.get(Float32Array, streamOut, S * d),
          reference: causal ? () => plain.attention(q, k, v, S, d, { causal: true }).output : undefined,
        });
      }
    }
    const t = (data) => ({ data, shape: [S, d] });
    if (name === 'simd' || !env.quick)
      contenders.push(jsContender(`${name}-api`, `posenc ${name}, API`, 'api', () => pe.attention({ q: t(q), k: t(k), v: t(v) }).output.data));
  });
  if (env.tf) {
    const tf = env.tf;
    const scale = 1 / Math.sqrt(d);
    const [tq, tk, tv] = [q, k, v].map((a) => tf.tensor2d(a, [S, d]));
    // tidy() frees the intermediates (q kᵀ, the scaled logits, the scalar) and keeps what is returned
    const ops = (a, b, c) =>
      tf.tidy(() => {
        const weights = tf.softmax(tf.mul(tf.matMul(a, b, false, true), tf.scalar(scale)));
        return [tf.matMul(weights, c), weights];
      });
    contenders.push(
      jsContender('tfjs', 'TF.js wasm, resident tensors', 'tfjs', () => {
        const [o, wt] = ops(tq, tk, tv);
        const data = o.dataSync();
        tf.dispose([o, wt]);
        return data;
      }),
    );
    if (!env.quick)
      contenders.push(
        jsContender('tfjs-arrays', 'TF.js wasm, from arrays', 'tfjs', () => {
          const ins = [q, k, v].map((a) => tf.tensor2d(a, [S, d]));
          const [o, wt] = ops(...ins);
          const data = o.dataSync();
          wt.dataSync(); // posenc's API returns the weights too
          tf.dispose([o, wt, ...ins]);
          return data;
        }),
      );
    cleanup.push({ free: () => tf.dispose([tq, tk, tv]) });
  }
  return {
    id: `attention/${S}x${d}`,
    family: 'attention',
    title: `attention 1 head, d = ${d}, S = ${S}`,
    flops: 4 * S * S * d,
    contenders,
    native: nativeArchs(env).map((arch) => ({ id: `native-${arch}`, label: `native ${arch}`, arch, spec: `attention/${S}x${d}` })),
    cleanup: () => cleanup.forEach((b) => b.free()),
  };
}

// Training the toy transformer (pe.trainToy, 'before', no encoding, the defaults: batch 16, 8 tokens + a
// readout token, d = 16, 2 heads, 2 layers) against the same model in TF.js (toy-tf.js). One call is
// TOY_STEPS Adam steps; posenc's step() also scores 256 held-out examples once per call (about a tenth
// of 50 steps' work), which the figure includes. No checksum: the two draw different random batches.
export const TOY_STEPS = 50;
function toyWorkload(env) {
  const contenders = [];
  const trainers = [];
  for (const [name, pe] of [
    ['simd', env.simd],
    ['scalar', env.scalar],
  ]) {
    const tr = pe.trainToy({ task: 'before', steps: 1e6 });
    trainers.push(tr);
    contenders.push(jsContender(`${name}-api`, `posenc ${name}, trainToy`, 'api', () => void tr.step(TOY_STEPS)));
  }
  if (env.toyTF) {
    const tr = env.toyTF();
    trainers.push(tr);
    contenders.push(
      jsContender('tfjs', 'TF.js wasm, the same model', 'tfjs', () => {
        for (let i = 0; i < TOY_STEPS; i++) tr.step();
      }),
    );
  }
  return {
    id: 'toy/before',
    family: 'toy',
    title: `trainToy: ${TOY_STEPS} Adam steps (batch 16, 9 tokens, d = 16, 2 heads, 2 layers)`,
    contenders,
    native: [],
    cleanup: () => trainers.forEach((t) => t.dispose()),
  };
}

// The workload list, in running order. Quick mode keeps every workload with a target (RoPE: the
// two shapes [2048, 8, 64] and [2048, 32, 128]) but leaves out the scalar build's API calls, the
// ALiBi / T5 API calls, TF.js from arrays, the AVX2 and the memcpy / memset native runs; the full run
// adds the other two RoPE shapes and the single-head case.
export function workloads(env, quick) {
  const ropeShapes = quick
    ? [
        [2048, 8, 64],
        [2048, 32, 128],
      ]
    : [
        [2048, 8, 64],
        [2048, 8, 128],
        [2048, 32, 64],
        [2048, 32, 128],
        [2048, 1, 128],
      ];
  const list = [
    ...[
      [64, 64],
      [2048, 512],
      [8192, 1024],
    ].map(([L, d]) => [`sinusoidal/${L}x${d}`, () => sinusoidalWorkload(env, L, d)]),
    ...ropeShapes.flatMap(([S, H, D]) =>
      ['half', 'interleaved'].map((layout) => [`rope/${S}x${H}x${D}/${layout}`, () => ropeWorkload(env, S, H, D, layout)]),
    ),
    ['alibi/16x2048x2048', () => biasWorkload(env, 'alibi', [16, 2048, 2048])],
    ['t5/2048x2048', () => biasWorkload(env, 't5', [2048, 2048])],
    ...[64, 256, 1024].map((S) => [`attention/${S}x64`, () => attentionWorkload(env, S, 64)]),
    ['toy/before', () => toyWorkload(env)],
  ];
  return list.map(([id, make]) => ({ id, make }));
}

// ---- running -----------------------------------------------------------------------------------------
async function calibrate(c, s) {
  // Warm-up: at least 3 calls and warmupMs; the per-call time sets reps for sampleMs per sample.
  let calls = 0;
  let spent = 0;
  const t0 = performance.now();
  while (calls < 3 || performance.now() - t0 < s.warmupMs) {
    spent += await c.sample(1);
    calls++;
  }
  const perCall = spent / calls;
  return { perCall, reps: Math.max(1, Math.min(100000, Math.ceil(s.sampleMs / Math.max(perCall, 1e-6)))) };
}

// Up to 8 untimed calls, stopping once ms have passed: enough for a large output to be back in cache
// (a 32 MB table needs ~20 ms). Kernels slower than that are not primed: their data is far larger
// than the caches.
async function prime(c, ms) {
  const t0 = performance.now();
  let calls = 0;
  do await c.sample(1);
  while (++calls < 8 && performance.now() - t0 < ms);
}

export async function runWorkload(make, env, s) {
  const started = performance.now();
  const w = await make();
  const log = env.log ?? (() => {});
  log(`${w.title} ...`);
  const reps = new Map();
  const perCall = new Map();
  for (const c of w.contenders) {
    const cal = await calibrate(c, s);
    reps.set(c, cal.reps);
    perCall.set(c, cal.perCall);
  }
  const times = new Map(w.contenders.map((c) => [c, []]));
  let sink = 0;
  // Two groups, each sampled in its own interleaved rounds: what runs inside wasm (kernels, baselines),
  // then what runs from JS (plain JS, API calls, TF.js), whose large fresh arrays V8 frees on background
  // threads, which must not overlap the wasm group's samples.
  const inWasm = (c) => c.kind === 'kernel' || c.kind === 'baseline';
  for (const group of [w.contenders.filter(inWasm), w.contenders.filter((c) => !inWasm(c))]) {
    for (let round = 0; round < s.samples; round++) {
      const k = round % group.length;
      for (const c of [...group.slice(k), ...group.slice(0, k)]) {
        const r = reps.get(c);
        env.gc?.(); // the previous contender's garbage is collected now, not during this sample
        if (inWasm(c) && perCall.get(c) < s.primeMs) await prime(c, s.primeMs);
        times.get(c).push((await c.sample(r)) / r);
      }
    }
  }
  const result = { id: w.id, family: w.family, title: w.title, values: w.values, bytes: w.bytes, traffic: w.traffic, flops: w.flops, contenders: [] };
  for (const c of w.contenders) {
    const t = times.get(c);
    const entry = {
      id: c.id,
      label: c.label,
      kind: c.kind,
      ms: median(t),
      p25: quantile(t, 0.25),
      p75: quantile(t, 0.75),
      samples: t.length,
      reps: reps.get(c),
    };
    const out = c.output?.();
    if (out) {
      entry.checksum = plain.checksum(out);
      entry.checksumScale = plain.checksumScale(out);
      const reference = c.reference?.();
      if (reference)
        Object.defineProperty(entry, 'referenceChecksum', {
          value: { checksum: plain.checksum(reference), scale: plain.checksumScale(reference) },
          enumerable: false,
        });
      Object.defineProperty(entry, 'outputArray', { value: out, enumerable: false }); // for derive(), not serialised
      sink += out[0];
    }
    result.contenders.push(entry);
  }
  w.derive?.(result);
  w.cleanup?.();
  if (env.native && w.native.length) {
    const simdReps = reps.get(w.contenders.find((c) => c.id === 'simd-kernel'));
    const native = await env.native(
      w.native.map((n) => ({ ...n, reps: simdReps })),
      s.samples,
    );
    for (const n of native)
      result.contenders.push({
        id: n.id,
        label: n.label,
        kind: 'native',
        ms: n.ms,
        samples: n.samples,
        reps: n.reps,
        checksum: n.checksum,
        maxError: n.maxError,
      });
  }
  checkAgreement(result, log);
  for (const c of result.contenders) {
    if (result.traffic) c.gbPerSecond = result.traffic / (c.ms * 1e6);
    if (result.flops) c.gflops = result.flops / (c.ms * 1e6);
    if (result.values) c.mValuesPerSecond = result.values / (c.ms * 1e3);
  }
  result.sink = sink;
  result.seconds = +((performance.now() - started) / 1000).toFixed(1);
  return result;
}

// Every contender that computes the workload's result (not a memory baseline) must agree with the
// plain JS one to float32 rounding: a disagreement is reported loudly and recorded, never averaged away.
function checkAgreement(result, log) {
  const ref = result.contenders.find((c) => c.id === 'js');
  if (!ref || ref.checksum === undefined) return;
  const tolerance = 1e-5 * (ref.checksumScale ?? Math.abs(ref.checksum)) + 1e-9;
  result.disagreements = [];
  for (const c of result.contenders) {
    if (c.checksum === undefined || c.kind.startsWith('baseline') || /-(copy|fill)$/.test(c.id)) continue;
    const own = c.referenceChecksum;
    c.agrees = own ? Math.abs(c.checksum - own.checksum) <= 1e-5 * own.scale + 1e-9 : Math.abs(c.checksum - ref.checksum) <= tolerance;
    if (!c.agrees) result.disagreements.push(c.id);
  }
  if (result.disagreements.length) {
    const msg = `bench: ${result.title}: ${result.disagreements.join(', ')} disagree with plain JS (checksum ${ref.checksum}): ${result.contenders
      .filter((c) => result.disagreements.includes(c.id))
      .map((c) => `${c.id} ${c.checksum}`)
      .join(', ')}`;
    console.error(`\n!!! ${msg}\n`);
    (log ?? console.log)(`!!! ${msg}`);
  }
}

export async function runSuite(env) {
  const s = settings(env.quick);
  const results = [];
  for (const { make } of workloads(env, env.quick)) results.push(await runWorkload(make, env, s));
  return { settings: s, workloads: results, targets: targets(results) };
}

// ---- targets -----------------------------------------------------------------------------------------
const find = (results, id) => results.find((w) => w.id === id);
const ms = (w, id) => w?.contenders.find((c) => c.id === id)?.ms;
const fmt = (x, digits = 2) => (x === undefined || Number.isNaN(x) ? 'n/a' : x >= 100 ? x.toFixed(0) : x.toPrecision(digits + 1));

// Each target: { id, text, figure (a string), met (true/false/null when not measured), detail }.
export function targets(results) {
  const out = [];
  const add = (id, text, met, figure, detail = '') => out.push({ id, text, met, figure, detail });

  const sin = find(results, 'sinusoidal/2048x512');
  if (sin) {
    const speed = ms(sin, 'js') / ms(sin, 'simd-kernel');
    const apiSpeed = ms(sin, 'js') / ms(sin, 'simd-api');
    const err = sin.contenders.find((c) => c.id === 'simd-kernel')?.maxError;
    add(
      'sinusoidal-speed',
      'sinusoidal 2048x512: >= 15x plain JS, max error <= 1e-6',
      speed >= 15 && err <= 1e-6,
      `kernel ${fmt(speed)}x, API ${fmt(apiSpeed)}x, max error ${err?.toExponential(1)}`,
    );
  }

  if (sin) {
    const intoSpeed = ms(sin, 'js-into') / ms(sin, 'simd-api-out');
    const allocRatio = ms(sin, 'simd-api') / ms(sin, 'js-alloc-fill');
    // No fresh result copied out of wasm can cost less than allocating it, copying the blocks and running the kernel.
    const floor = (ms(sin, 'js-alloc-copy') + ms(sin, 'simd-kernel')) / ms(sin, 'js-alloc-fill');
    add('sinusoidal-out', 'sinusoidal 2048x512 with out: >= 15x plain JS writing into the same array', intoSpeed >= 15, `${fmt(intoSpeed)}x`);
    add(
      'sinusoidal-alloc',
      'sinusoidal 2048x512 without out: within 1.3x of allocating and filling a Float32Array in JS',
      allocRatio <= 1.3,
      `${fmt(allocRatio)}x the JS allocation and fill`,
      `floor for a fresh array written from wasm: allocation + block copies + kernel = ${fmt(floor)}x; see notes`,
    );
  }

  const big = find(results, 'rope/2048x32x128/half');
  if (big) {
    const r = ms(big, 'js-into') / ms(big, 'simd-api-out');
    add('rope-out', 'rope [2048, 32, 128] with out: >= 3x plain JS (sin/cos hoisted) writing into an existing array', r >= 3, `${fmt(r)}x`);
  }

  const att = find(results, 'attention/1024x64');
  if (att) {
    const r = ms(att, 'simd-kernel') / ms(att, 'simd-kernel-causal');
    const rs = ms(att, 'simd-kernel-stream') / ms(att, 'simd-kernel-stream-causal');
    add(
      'attention-causal',
      'attention S=1024: causal >= 1.7x faster than non-causal (masked keys skipped), with weights',
      r >= 1.7,
      `${fmt(r)}x with weights; ${fmt(rs)}x with weights: false`,
    );
  }

  const disagreements = results.flatMap((w) => (w.disagreements ?? []).map((id) => `${w.id}: ${id}`));
  add(
    'checksums',
    'every contender computing a result agrees with plain JS (checksums)',
    disagreements.length === 0,
    disagreements.length ? `${disagreements.length} disagree` : 'all agree',
    disagreements.join(', '),
  );

  const ropes = results.filter((w) => w.family === 'rope' && !w.id.includes('x1x'));
  if (ropes.length) {
    const k = ropes.map((w) => ms(w, 'memory-copy') / ms(w, 'simd-kernel'));
    const oop = ropes.map((w) => ms(w, 'memory-copy') / ms(w, 'simd-kernel-oop'));
    const api = ropes.map((w) => ms(w, 'simd-api') / ms(w, 'js-copy'));
    add(
      'rope-kernel',
      'RoPE kernel >= 1.0x memory.copy bandwidth (read + write), every shape and layout',
      Math.min(...k) >= 1,
      `in place ${fmt(Math.min(...k))}x .. ${fmt(Math.max(...k))}x; x -> out ${fmt(Math.min(...oop))}x .. ${fmt(Math.max(...oop))}x`,
    );
    add(
      'rope-api',
      'RoPE API within 4x of one JS Float32Array copy of x',
      Math.max(...api) <= 4,
      `${fmt(Math.min(...api))}x .. ${fmt(Math.max(...api))}x the copy`,
    );
  }

  for (const S of [256, 1024]) {
    const w = find(results, `attention/${S}x64`);
    if (!w) continue;
    const js = ms(w, 'js') / ms(w, 'simd-kernel');
    const tf = ms(w, 'tfjs') / ms(w, 'simd-kernel');
    const tfApi = ms(w, 'tfjs-arrays') / ms(w, 'simd-api');
    add(
      `attention-${S}`,
      `attention S=${S}: >= 10x plain JS and >= 2x TF.js-wasm`,
      Number.isNaN(tf) ? null : js >= 10 && tf >= 2,
      `${fmt(js)}x plain JS; ${fmt(tf)}x TF.js (kernel vs resident tensors)${Number.isNaN(tfApi) ? '' : `; API ${fmt(tfApi)}x TF.js from arrays`}`,
    );
  }

  const toy = find(results, 'toy/before');
  if (toy) {
    const rate = (id) => (TOY_STEPS * 1000) / ms(toy, id);
    add(
      'toy-steps',
      'trainToy steps/s against the same model in TF.js (wasm backend, same shapes and steps): reported, no threshold',
      null,
      `posenc SIMD ${fmt(rate('simd-api'))} steps/s, scalar ${fmt(rate('scalar-api'))}, TF.js ${fmt(rate('tfjs'))}: ${fmt(rate('simd-api') / rate('tfjs'))}x TF.js`,
    );
  }

  const ratios = results.map((w) => ({ id: w.id, r: ms(w, 'scalar-kernel') / ms(w, 'simd-kernel') })).filter((x) => x.r);
  if (ratios.length) {
    const low = ratios.filter((x) => x.r < 3);
    add(
      'simd-vs-scalar',
      'SIMD >= 3x scalar wasm on every kernel',
      low.length === 0,
      `${fmt(Math.min(...ratios.map((x) => x.r)))}x .. ${fmt(Math.max(...ratios.map((x) => x.r)))}x`,
      low.length ? `below 3x: ${low.map((x) => `${x.id} ${fmt(x.r)}x`).join(', ')}` : '',
    );
  }

  const nat = results.map((w) => ({ id: w.id, r: ms(w, 'simd-kernel') / ms(w, 'native-sse4.2') })).filter((x) => x.r);
  if (nat.length) {
    const high = nat.filter((x) => x.r > 1.5);
    add(
      'simd-vs-native',
      'SIMD wasm within 1.5x of native SSE4.2 on every kernel',
      high.length === 0,
      `wasm / native ${fmt(Math.min(...nat.map((x) => x.r)))}x .. ${fmt(Math.max(...nat.map((x) => x.r)))}x`,
      high.length ? `over 1.5x: ${high.map((x) => `${x.id} ${fmt(x.r)}x`).join(', ')}` : '',
    );
  }
  return out;
}
