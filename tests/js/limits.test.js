// The limits search (scripts/limits/search.mjs, docs/LIMITS.md): its --quick run completes on both
// backends and times every public function of the package, the list derived from the exports (a new
// function without a search family fails here); and the calls the full search found running past
// LIMITS.maxCallSeconds are refused before they start, with a RangeError naming the limit.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import * as posenc from 'posenc';
import * as posencLab from 'posenc/lab';
import { LIMITS } from '../../src/js/contract.js';
import { estimateSeconds } from '../../src/js/cost.js';
import { labBackends } from './helpers.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const SEARCH = path.join(ROOT, 'scripts/limits/search.mjs');
const BOUNDARY = path.join(ROOT, 'scripts/limits/boundary.mjs');
const pes = await labBackends();

// Every public function: the packages' exported functions, the methods of loadLab()'s object (which
// has load()'s too) and the methods of the objects they return (Class.method).
function publicFunctions(pe) {
  const names = new Set();
  for (const mod of [posenc, posencLab]) for (const [k, v] of Object.entries(mod)) if (typeof v === 'function') names.add(k);
  for (const k of Object.keys(Object.getPrototypeOf(pe))) if (typeof pe[k] === 'function') names.add(k);
  for (const k of Object.keys(pe)) if (typeof pe[k] === 'function') names.add(k);
  const methodsOf = (label, obj) => {
    for (const k of Object.getOwnPropertyNames(Object.getPrototypeOf(obj))) {
      const d = Object.getOwnPropertyDescriptor(Object.getPrototypeOf(obj), k);
      if (k !== 'constructor' && typeof d.value === 'function') names.add(`${label}.${k}`);
    }
  };
  const learned = pe.learned({ maxLength: 4, dModel: 4 });
  const token = pe.tokenEmbedding({ vocabSize: 4, dModel: 4 });
  const toy = pe.trainToy({ task: 'before' });
  try {
    methodsOf('LearnedEmbedding', learned);
    methodsOf('TokenEmbedding', token);
    methodsOf('ToyTrainer', toy);
  } finally {
    learned.dispose();
    token.dispose();
    toy.dispose();
  }
  return [...names].sort();
}

describe('the limits search', () => {
  test('covers every public function (a family each, or a stated reason not to time it)', async () => {
    const { FAMILIES, NOT_SEARCHED } = await import('../../scripts/limits/search.mjs');
    const searched = new Set(FAMILIES.map((f) => f.fn));
    const missing = publicFunctions(pes[0]).filter((name) => !searched.has(name) && !(name in NOT_SEARCHED));
    assert.deepEqual(missing, [], `public functions without a family in scripts/limits/search.mjs: ${missing.join(', ')}`);
    assert.ok(searched.has('ToyTrainer.step') && searched.has('LearnedEmbedding.resize') && searched.has('rope'));
  });

  test('--quick runs every family on both backends and prints each function', async () => {
    const { FAMILIES } = await import('../../scripts/limits/search.mjs');
    const r = spawnSync(process.execPath, [SEARCH, '--quick', '--json'], { encoding: 'utf8', maxBuffer: 1 << 26 });
    assert.equal(r.status, 0, `search --quick failed (status ${r.status}):\n${r.stderr.slice(-4000)}`);
    const json = JSON.parse(r.stdout.slice(r.stdout.indexOf('\n{') + 1));
    assert.equal(json.rows.length, FAMILIES.length);
    for (const row of json.rows)
      for (const b of ['wasm-scalar', 'wasm-simd']) {
        assert.notEqual(row[b].refusal?.kind, 'error', `${b} ${row.fn} [${row.family}]: ${row[b].refusal?.message}`);
        assert.ok(row[b].n !== null, `${b} ${row.fn} [${row.family}]: no call accepted (${row[b].refusal?.message})`);
      }
    const printed = new Set([...r.stdout.matchAll(/^\| ([\w.]+) \|/gm)].map((m) => m[1]));
    for (const name of publicFunctions(pes[0]).filter((n) => FAMILIES.some((f) => f.fn === n)))
      assert.ok(printed.has(name), `the table has no row for ${name}`);
  });
});

// scripts/limits/toy.mjs calibrates the trainer's costs through the lab module's raw entry points, below
// the checks it calibrates: --smoke (two small models, one short run each) keeps it in step with them.
test('scripts/limits/toy.mjs --smoke times the trainer through its raw entry points on both backends', () => {
  const r = spawnSync(process.execPath, [path.join(ROOT, 'scripts/limits/toy.mjs'), '--smoke'], { encoding: 'utf8' });
  assert.equal(r.status, 0, `toy.mjs --smoke failed (status ${r.status}):\n${r.stderr.slice(-3000)}`);
  for (const backend of ['wasm-simd', 'wasm-scalar'])
    assert.match(r.stdout, new RegExp(`^  '${backend}': Object\\.freeze\\(\\{trainMac: .*evalBlock: [^}]*\\}\\),$`, 'm'), r.stdout);
});

// The cost model against the clock, at a small scale: scripts/limits/boundary.mjs --check runs each
// of its boundary cases (the calls the full search found at the time budget's edge) at the size
// estimated at 0.3 s, as the first call of its function in a fresh process (the slowest it runs: V8's
// baseline code, fresh memory), between two runs of a plain-JS calibration workload. A call may run
// for up to TOLERANCE times its estimate, times how much slower the calibration ran than on the
// reference machine (a busy machine slows both alike; never less than 1). A cost model that
// underestimates (as the costs did before the first-call costs: ratios up to 3.9 here)
// fails; a case over is measured again in new processes, best of 3, before it counts.
const TOLERANCE = 1.5;
describe('the cost model does not underestimate', () => {
  const check = (backend, only) => {
    const r = spawnSync(process.execPath, [BOUNDARY, '--check', '--backend', backend, ...(only ? ['--only', only.join(',')] : [])], {
      encoding: 'utf8',
    });
    assert.equal(r.status, 0, `boundary.mjs --check ${backend} failed:\n${r.stderr.slice(-2000)}`);
    return JSON.parse(r.stdout);
  };
  for (const backend of ['wasm-scalar', 'wasm-simd'])
    test(`each boundary case's first call at a small scale runs within its estimate (${backend}, ratio to a calibration)`, async () => {
      const { CALIBRATION_SECONDS } = await import('../../scripts/limits/boundary.mjs');
      const over = (x) => x.seconds / x.estimate > TOLERANCE * Math.max(1, x.calibration / CALIBRATION_SECONDS);
      let rows = check(backend);
      assert.ok(rows.length >= 8 && rows.every((x) => x.estimate > 0.05), JSON.stringify(rows));
      for (let retry = 0; retry < 2 && rows.some(over); retry++) {
        const again = new Map(
          check(
            backend,
            rows.filter(over).map((x) => x.name),
          ).map((x) => [x.name, x]),
        );
        rows = rows.map((x) =>
          again.has(x.name) && x.seconds / x.estimate > again.get(x.name).seconds / again.get(x.name).estimate ? again.get(x.name) : x,
        );
      }
      const report = (x) =>
        `${x.name} n=${x.n}: ${x.seconds.toFixed(3)} s measured, ${x.estimate.toFixed(3)} s estimated (ratio ${(x.seconds / x.estimate).toFixed(2)}), calibration ${x.calibration.toFixed(3)} s`;
      assert.deepEqual(rows.filter(over).map(report), [], `calls slower than their estimate allows:\n${rows.map(report).join('\n')}`);
    });
});

// Calls the search found running far past the budget on the scalar build (docs/LIMITS.md): each is now
// refused from its time estimate before it starts, on both backends (or the one named last), while a
// call of the same family a few times smaller is accepted. (No call here is timed.)
const BUDGET = /would run for about [\d.]+ s on this backend; a call may run for at most about 2 s \(LIMITS\.maxCallSeconds\)/;
const spread = (n, scale) => Float64Array.from({ length: n }, (_, i) => scale * (1 + ((i * 0.6180339887498949) % 1)));
const ropeInput = (n) => ({ data: new Float32Array(n * 8 * 64), shape: [n, 8, 64] });
const ropeRows = (n) => ({ data: new Float32Array(n * 64), shape: [n, 64] });
const streams = (n) => ({ data: Int32Array.from({ length: 3 * n }, (_, i) => (i * 7919) % 4096), shape: [3, n] });
// A table of 2^22 rows of 64 (2^28 values) refused; one of 2^12 rows made and freed.
const table = (fn, what, make) => [fn, what, (pe) => make(pe, 2 ** 22), (pe) => make(pe, 2 ** 12).dispose()];
const REFUSED = [
  [
    'sinusoidal',
    'explicit positions near 1e300 (Payne-Hanek reduction)',
    (pe) => pe.sinusoidal({ positions: spread(2 ** 20, 1e300), dModel: 256 }),
    (pe) => pe.sinusoidal({ positions: spread(2 ** 12, 1e300), dModel: 256 }),
  ],
  [
    'sinusoidal',
    'explicit positions near 1e9 (each angle reduced on its own)',
    (pe) => pe.sinusoidal({ positions: spread(2 ** 20, 1e9), dModel: 256 }),
    (pe) => pe.sinusoidal({ positions: spread(2 ** 12, 1e9), dModel: 256 }),
  ],
  [
    'sinusoidal',
    'rows of 2^24 columns',
    (pe) => pe.sinusoidal({ length: 16, dModel: 2 ** 24 }),
    (pe) => pe.sinusoidal({ length: 1, dModel: 2 ** 20 }),
  ],
  ['wavelengths', 'dModel 2^28', (pe) => pe.wavelengths({ dModel: 2 ** 28 }), (pe) => pe.wavelengths({ dModel: 2 ** 20 })],
  table('learned', "a 'normal' init of 2^28 values", (pe, rows) => pe.learned({ maxLength: rows, dModel: 64 })),
  [
    'ropeCache',
    'explicit positions near 1e300',
    (pe) => pe.ropeCache({ positions: spread(2 ** 20, 1e300), rotaryDim: 256 }),
    (pe) => pe.ropeCache({ positions: spread(2 ** 12, 1e300), rotaryDim: 256 }),
  ],
  [
    'rope',
    'offset 2^60 (every angle reduced on its own, by Payne-Hanek)',
    (pe) => pe.rope({ data: new Uint16Array(2 ** 26), shape: [2 ** 18, 1, 256] }, { offset: 2 ** 60, dtype: 'float16' }),
    (pe) => pe.rope({ data: new Uint16Array(2 ** 18), shape: [2 ** 10, 1, 256] }, { offset: 2 ** 60, dtype: 'float16' }),
  ],
  [
    'mropePositions',
    'get_rope_index over 2^25 token ids',
    (pe) =>
      pe.mropePositions({
        inputIds: { data: new Int32Array(2 ** 25), shape: [4, 2 ** 23] },
        imageTokenId: 1,
        videoTokenId: 2,
        visionStartTokenId: 3,
      }),
    (pe) =>
      pe.mropePositions({
        inputIds: { data: new Int32Array(2 ** 14), shape: [4, 2 ** 12] },
        imageTokenId: 1,
        videoTokenId: 2,
        visionStartTokenId: 3,
      }),
  ],
  [
    't5Buckets',
    '2^26 relativePositions (a logarithm each: 7.8 s for 1.7e8 on the scalar build)',
    (pe) => pe.t5Buckets({ relativePositions: new Int32Array(2 ** 26).fill(1000) }),
    (pe) => pe.t5Buckets({ relativePositions: new Int32Array(2 ** 16).fill(1000) }),
  ],
  [
    'nearestDistances',
    'rows of 8192 values (no longer in cache: about 2 s at [512, 8192] where the narrow costs said 0.5 s)',
    (pe) => pe.nearestDistances({ data: new Float32Array(1024 * 8192).fill(1), shape: [1024, 8192] }),
    (pe) => pe.nearestDistances({ data: new Float32Array(64 * 8192).fill(1), shape: [64, 8192] }),
  ],
  [
    'LearnedEmbedding.lookup',
    '2^22 rows of 64 (the largest lookup result)',
    (pe) => {
      const t = pe.learned({ maxLength: 1024, dModel: 64, init: 'zeros' });
      try {
        return t.lookup(new Int32Array(2 ** 22));
      } finally {
        t.dispose();
      }
    },
    (pe) => {
      const t = pe.learned({ maxLength: 1024, dModel: 64, init: 'zeros' });
      try {
        return t.lookup(new Int32Array(2 ** 12));
      } finally {
        t.dispose();
      }
    },
  ],
  [
    'TokenEmbedding.lookup',
    '2^22 rows of 64 (the largest lookup result)',
    (pe) => {
      const t = pe.tokenEmbedding({ vocabSize: 1024, dModel: 64 });
      try {
        return t.lookup(new Int32Array(2 ** 22));
      } finally {
        t.dispose();
      }
    },
    (pe) => {
      const t = pe.tokenEmbedding({ vocabSize: 1024, dModel: 64 });
      try {
        return t.lookup(new Int32Array(2 ** 12));
      } finally {
        t.dispose();
      }
    },
  ],
  [
    'attention',
    'one query over 2^24 + 2^23 keys (a first call reads each key row: 4 s at 2.3e7 keys where the logits said 1.7 s)',
    (pe) => {
      const k = { data: new Float32Array(3 * 2 ** 23), shape: [3 * 2 ** 23, 1] };
      return pe.attention({ q: { data: new Float32Array(1), shape: [1, 1] }, k, v: k });
    },
    (pe) => {
      const k = { data: new Float32Array(2 ** 16), shape: [2 ** 16, 1] };
      return pe.attention({ q: { data: new Float32Array(1), shape: [1, 1] }, k, v: k });
    },
  ],
  [
    'rope',
    "M-RoPE over x [327680, 8, 64] (three passes: twice rope's time a value)",
    (pe) => pe.rope(ropeInput(327680), { mropeSection: [8, 12, 12], positions: streams(327680) }),
    (pe) => pe.rope(ropeInput(4096), { mropeSection: [8, 12, 12], positions: streams(4096) }),
  ],
  table('learned', "a 'xavier' init of 2^28 values (2.3 s as a first call)", (pe, rows) =>
    pe.learned({ maxLength: rows, dModel: 64, init: 'xavier' }),
  ),
  table('tokenEmbedding', 'a table of 2^28 values (a uniform draw each: 2.1 s as a first call, SIMD)', (pe, rows) =>
    pe.tokenEmbedding({ vocabSize: rows, dModel: 64 }),
  ),
  [
    'addPositional',
    'x, p [2621440, 64] (2.6 s as a first call, scalar: two inputs copied in and the sum copied out)',
    // untouched zero pages: refused before a byte is read
    (pe) => {
      const big = { data: new Float32Array(2621440 * 64), shape: [2621440, 64] };
      return pe.addPositional(big, big);
    },
    (pe) => pe.addPositional(ropeRows(4096), ropeRows(4096)),
  ],
  [
    'alibiBias',
    'an attentionMask [2, 4096] with 8 heads (2.1 s as a first call, scalar)',
    (pe) => pe.alibiBias({ numHeads: 8, attentionMask: { data: new Int32Array(2 * 4096).fill(1), shape: [2, 4096] } }),
    (pe) => pe.alibiBias({ numHeads: 8, attentionMask: { data: new Int32Array(2 * 64).fill(1), shape: [2, 64] } }),
    'wasm-scalar', // 1.5 s on SIMD, where it is accepted
  ],
];

for (const pe of pes)
  describe(`calls past the time budget are refused (${pe.backend})`, () => {
    for (const [fn, what, refused, accepted] of REFUSED.filter((r) => (r[4] ?? pe.backend) === pe.backend))
      test(`${fn}: ${what}`, () => {
        assert.throws(
          () => refused(pe),
          (e) => e instanceof RangeError && e.message.startsWith(`posenc.${fn}: `) && BUDGET.test(e.message),
        );
        accepted(pe);
      });
  });

// The refusals above are at the sizes that ran long; half those sizes must stay within the budget, so
// that the costs are not far too high (checked on the estimates, nothing run). And a refused masked
// ALiBi bias of one row says what can be made smaller.
for (const pe of pes)
  test(`half of addPositional's, tokenEmbedding's and masked alibiBias's refused sizes is within the budget (${pe.backend})`, () => {
    const within = (terms) => estimateSeconds(pe.backend, terms) <= LIMITS.maxCallSeconds;
    assert.ok(within({ addValue: (2621440 / 2) * 64 }));
    assert.ok(within({ uniformValue: 2 ** 27 }));
    assert.ok(within({ alibiMaskedValue: (2 * 8 * 4096 * 4096) / 2 }));
    const oneRow = () => pe.alibiBias({ numHeads: 16, attentionMask: new Int32Array(4096).fill(1) });
    if (within({ alibiMaskedValue: 16 * 4096 * 4096 })) return; // accepted on SIMD: nothing to refuse
    assert.throws(oneRow, (e) => e instanceof RangeError && /: use fewer heads or a shorter mask$/.test(e.message));
  });
