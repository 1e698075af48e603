// ONNX Runtime Web as a contender: the runtime models are deployed with, in the same process, on the same
// shapes. onnxruntime-web's wasm backend with one thread and SIMD (what a page gets without cross-origin
// isolation), its operators as exported models use them, each a one-node model built by the test suite's
// ONNX builder (tests/js/fixtures/onnx.js). Both sides are timed as a caller sees them, from JS arrays
// to JS arrays: posenc's API call (with `out`, and `weights: false` for attention: ORT's operators return
// no weights) against `await session.run(feeds)` (which copies the inputs into wasm memory and the output
// out of it). The cos/sin caches and the constant position ids and sequence lengths are initializers
// of the model: prebuilt, in ORT's memory once, never fed.
//
//   rope [1, 2048, 32·128]    posenc rope ({ out })               com.microsoft.RotaryEmbedding
//   attention S = 1024, d = 64, 1 and 32 heads, causal or not  com.microsoft.MultiHeadAttention (unidirectional)
//   grouped-query 32 / 8 heads, causal                         Attention-23 (kv_num_heads 8, is_causal)
// The full run adds Attention-23 (the standard ONNX operator) as a second ORT contender of the
// MultiHeadAttention workloads; --ort-gqa adds com.microsoft.GroupQueryAttention to the grouped one (its
// CPU kernel takes about 10 s a call on this prompt, so 31 samples take minutes). Each workload prints
// the ratio ORT time / posenc time and the largest difference of the outputs.
import { input, model, output } from '../../tests/js/fixtures/onnx.js';
import * as plain from './plain.js';
import { jsContender } from './suite.js';

// onnxruntime-web, configured before its first session: 1 thread, SIMD. undefined (with a printed
// reason) when it cannot be loaded.
export async function loadOrt(log = console.log) {
  try {
    const ort = await import('onnxruntime-web');
    ort.env.wasm.numThreads = 1;
    ort.env.wasm.simd = true;
    ort.env.logLevel = 'error';
    return { ort, info: `ONNX Runtime Web ${ort.env.versions?.web ?? ''}, wasm backend, 1 thread, SIMD` };
  } catch (e) {
    log(`ONNX Runtime Web not available (${e.message}); run npm install. Skipping the ONNX Runtime contender.`);
    return undefined;
  }
}

// A contender around an asynchronous call (session.run): sample(reps) awaits reps calls in a row.
function asyncContender(id, label, kind, fn) {
  let last;
  return {
    id,
    label,
    kind,
    async sample(reps) {
      const t0 = performance.now();
      for (let r = 0; r < reps; r++) last = await fn();
      return performance.now() - t0;
    },
    output: () => last,
  };
}

// A session of a one-node model whose constant inputs are initializers; run() returns output 'y'.
async function session(ort, { op, domain, inputs, attributes, feeds, constants = [], outputs = ['y'] }) {
  const names = new Set(constants.map((c) => c.name));
  const bytes = model({
    node: { op, domain, inputs, outputs, attributes },
    inputs: inputs.filter((i) => i && !names.has(i)).map((i) => input(i, 'float32', feeds[i].dims)),
    outputs: outputs.map((o) => output(o, 'float32')),
    initializers: constants,
  });
  const s = await ort.InferenceSession.create(bytes, { executionProviders: ['wasm'] });
  return {
    release: () => s.release(),
    async run() {
      const r = await s.run(feeds);
      const y = r.y.data;
      for (const t of Object.values(r)) t.dispose?.();
      return y;
    },
  };
}

const maxAbsDiff = (a, b) => a.reduce((m, x, i) => Math.max(m, Math.abs(x - b[i])), 0);

// posenc's contender first, then ORT's: after sampling, the ORT contenders record their largest
// difference from posenc's output and the workload its speed ratio (ORT time / posenc time).
function compare(result) {
  const [mine, ...theirs] = result.contenders;
  for (const c of theirs) if (c.outputArray && mine.outputArray) c.maxError = maxAbsDiff(c.outputArray, mine.outputArray);
  result.speedup = Object.fromEntries(theirs.map((c) => [c.id, c.ms / mine.ms]));
}

// RoPE, half layout, base 10000, positions 0 .. S-1, x [1, S, H·D].
function ropeWorkload(env, S, H, D) {
  return async () => {
    const { ort, info } = env.ort;
    const n = S * H * D;
    const x = plain.input(n, 11);
    const half = D / 2;
    const cos = new Float32Array(S * half);
    const sin = new Float32Array(S * half);
    for (let p = 0; p < S; p++)
      for (let i = 0; i < half; i++) {
        const angle = p * 10000 ** (-(2 * i) / D);
        cos[p * half + i] = Math.cos(angle);
        sin[p * half + i] = Math.sin(angle);
      }
    const s = await session(ort, {
      op: 'RotaryEmbedding',
      domain: 'com.microsoft',
      inputs: ['x', 'position_ids', 'cos_cache', 'sin_cache'],
      attributes: { interleaved: 0, num_heads: H },
      feeds: { x: new ort.Tensor('float32', x, [1, S, H * D]) },
      constants: [
        { name: 'position_ids', type: 'int64', dims: [1], data: BigInt64Array.of(0n) }, // token s at position 0 + s
        { name: 'cos_cache', type: 'float32', dims: [S, half], data: cos },
        { name: 'sin_cache', type: 'float32', dims: [S, half], data: sin },
      ],
    });
    const pe = env.simd;
    const out = new Float32Array(n);
    return {
      id: `ort/rope/${S}x${H}x${D}`,
      family: 'ort',
      title: `vs ORT: RoPE [1, ${S}, ${H}·${D}]`,
      bytes: n * 4,
      contenders: [
        jsContender('simd-api-out', 'posenc simd, rope with out', 'api', () => pe.rope({ data: x, shape: [1, S, H, D] }, { out }).data),
        asyncContender('ort', `${info}: com.microsoft.RotaryEmbedding, caches prebuilt`, 'ort', () => s.run()),
      ],
      native: [],
      derive: compare,
      cleanup: () => s.release(),
    };
  };
}

// Attention over q [1, S, H, d] and k/v [1, S, Hkv, d] (ORT: [1, S, H·d] and [1, S, Hkv·d]), scale 1/√d.
// Hkv < H: Attention-23 with kv_num_heads (and GroupQueryAttention, always causal, with --ort-gqa);
// else MultiHeadAttention, unidirectional when causal (and Attention-23 in the full run).
function attentionWorkload(env, { S, H, Hkv = H, d, causal }) {
  return async () => {
    const { ort, info } = env.ort;
    const grouped = Hkv !== H;
    const [q, k, v] = [
      [S * H * d, 1],
      [S * Hkv * d, 2],
      [S * Hkv * d, 3],
    ].map(([n, seed]) => plain.input(n, seed));
    const feeds = {
      query: new ort.Tensor('float32', q, [1, S, H * d]),
      key: new ort.Tensor('float32', k, [1, S, Hkv * d]),
      value: new ort.Tensor('float32', v, [1, S, Hkv * d]),
    };
    const mha = {
      op: 'MultiHeadAttention',
      domain: 'com.microsoft',
      inputs: ['query', 'key', 'value'],
      attributes: { num_heads: H, unidirectional: causal ? 1 : 0 },
    };
    const onnx = { op: 'Attention', inputs: ['query', 'key', 'value'], attributes: { q_num_heads: H, kv_num_heads: Hkv, is_causal: causal ? 1 : 0 } };
    const gqa = {
      op: 'GroupQueryAttention',
      domain: 'com.microsoft',
      inputs: ['query', 'key', 'value', '', '', 'seqlens_k', 'total_sequence_length'],
      outputs: ['y', 'present_key', 'present_value'], // its CPU kernel writes the KV cache: required
      attributes: { num_heads: H, kv_num_heads: Hkv },
      constants: [
        { name: 'seqlens_k', type: 'int32', dims: [1], data: Int32Array.of(S - 1) },
        { name: 'total_sequence_length', type: 'int32', dims: [1], data: Int32Array.of(S) },
      ],
    };
    // 'ort' is the contender the targets use: MultiHeadAttention, or for grouped heads Attention-23
    // (GroupQueryAttention's CPU kernel takes about 10x longer on this prompt: opt-in with --ort-gqa).
    const sessions = grouped
      ? [
          { id: 'ort', label: `${info}: Attention-23, grouped heads, is_causal`, spec: onnx },
          ...(env.ortGqa ? [{ id: 'ort-gqa', label: `${info}: com.microsoft.GroupQueryAttention`, spec: gqa }] : []),
        ]
      : [
          { id: 'ort', label: `${info}: com.microsoft.MultiHeadAttention${causal ? ', unidirectional' : ''}`, spec: mha },
          ...(env.quick ? [] : [{ id: 'ort-onnx', label: `${info}: Attention-23${causal ? ', is_causal' : ''}`, spec: onnx }]),
        ];
    const opened = [];
    for (const o of sessions) opened.push({ ...o, s: await session(ort, { ...o.spec, feeds }) });
    const pe = env.simd;
    const out = new Float32Array(S * H * d);
    const t = (data, heads) => ({ data, shape: [1, S, heads, d] });
    const name = grouped ? `grouped-query ${H}/${Hkv} heads` : `${H} head${H > 1 ? 's' : ''}`;
    return {
      id: `ort/attention/${S}x${H}${grouped ? `x${Hkv}` : ''}x${d}${causal ? '/causal' : ''}`,
      family: 'ort',
      title: `vs ORT: attention ${name}, d = ${d}, S = ${S}${causal ? ', causal' : ''}`,
      flops: 4 * S * S * d * H, // nominal (causal attention needs about half)
      contenders: [
        jsContender(
          'simd-api-out',
          'posenc simd, attention with out, weights: false',
          'api',
          () => pe.attention({ q: t(q, H), k: t(k, Hkv), v: t(v, Hkv), causal, weights: false, out }).output.data,
        ),
        ...opened.map((o) => asyncContender(o.id, o.label, 'ort', () => o.s.run())),
      ],
      native: [],
      derive: compare,
      cleanup: () => opened.forEach((o) => o.s.release()),
    };
  };
}

// The workloads, in running order ([{ id, make }], make() async).
export function ortWorkloads(env) {
  const list = [[`ort/rope/2048x32x128`, ropeWorkload(env, 2048, 32, 128)]];
  for (const H of [1, 32])
    for (const causal of [false, true])
      list.push([`ort/attention/1024x${H}x64${causal ? '/causal' : ''}`, attentionWorkload(env, { S: 1024, H, d: 64, causal })]);
  list.push(['ort/attention/1024x32x8x64/causal', attentionWorkload(env, { S: 1024, H: 32, Hkv: 8, d: 64, causal: true })]);
  return list.map(([id, make]) => ({ id, make }));
}

// The maintainers' targets against ONNX Runtime Web: rope >= 3x with out; attention >= 1.1x without a
// mask, >= 2x causal and grouped-query. Each reported with its figures, never a pass/fail of a test.
export function ortTargets(results) {
  const out = [];
  const get = (id) => results.find((w) => w.id === id);
  const x = (w) => w?.speedup?.ort;
  const fmt = (r) => (r === undefined ? 'n/a' : `${r.toFixed(2)}x`);
  const err = (w) => w?.contenders.find((c) => c.id === 'ort')?.maxError;
  const add = (id, text, ws, threshold) => {
    const rs = ws.map(([label, w]) => [label, x(w), err(w)]).filter(([, r]) => r !== undefined);
    if (!rs.length) return;
    out.push({
      id,
      text,
      met: rs.every(([, r]) => r >= threshold),
      figure: rs.map(([label, r]) => `${label} ${fmt(r)}`).join(', '),
      detail: [
        `largest output difference ${Math.max(...rs.map(([, , e]) => e ?? 0)).toExponential(1)}`,
        ...ws.flatMap(([label, w]) =>
          Object.entries(w?.speedup ?? {})
            .filter(([id]) => id !== 'ort')
            .map(
              ([id, r]) =>
                `${label ? `${label}, ` : ''}${w.contenders
                  .find((c) => c.id === id)
                  .label.split(': ')
                  .at(-1)} ${fmt(r)}`,
            ),
        ),
      ].join('; '),
    });
  };
  add(
    'ort-rope',
    'rope [1, 2048, 32·128] with out: >= 3x ONNX Runtime Web (RotaryEmbedding, caches prebuilt)',
    [['', get('ort/rope/2048x32x128')]],
    3,
  );
  add(
    'ort-attention',
    'attention S=1024, d=64 without a mask: >= 1.1x ONNX Runtime Web (MultiHeadAttention)',
    [
      ['1 head', get('ort/attention/1024x1x64')],
      ['32 heads', get('ort/attention/1024x32x64')],
    ],
    1.1,
  );
  add(
    'ort-attention-causal',
    'attention S=1024, d=64 causal and grouped-query 32/8: >= 2x ONNX Runtime Web (MultiHeadAttention unidirectional; Attention-23 for grouped heads)',
    [
      ['1 head', get('ort/attention/1024x1x64/causal')],
      ['32 heads', get('ort/attention/1024x32x64/causal')],
      ['grouped-query 32/8', get('ort/attention/1024x32x8x64/causal')],
    ],
    2,
  );
  for (const t of out) t.figure = t.figure.replace(/^ /, '');
  return out;
}
