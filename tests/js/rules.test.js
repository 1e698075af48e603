// Every user-facing rule of the C++ core is reachable from the public API, and its message is the
// one users see. The rules are read from src/core (core-rules.js: each `fail(...)` and each call of a
// rule helper such as require_positive or checked_size); each case below is a public call, and the
// error it throws must be a RangeError "posenc.<function>: <the core's message>" produced by the core
// itself (the test counts the reads of the core's message buffer, so a JS check with the same words
// does not pass), matching the pattern of a rule. Every rule must be matched by a case, unless its
// line says `// invariant: <why>` (a check the JS layer always satisfies, so no call can fail it).
// A rule added without a case fails here, naming its file and line.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { loadLab } from 'posenc/lab';
import { coreRules } from './core-rules.js';

const T = (shape, f = (i) => Math.sin(0.7 * i + 0.3)) => {
  const n = shape.reduce((a, b) => a * b, 1);
  return { data: Float32Array.from({ length: n }, (_, i) => f(i)), shape };
};
const zeros = (shape) => ({ data: new Float32Array(shape.reduce((a, b) => a * b, 1)), shape });
const filled = (shape, v) => T(shape, () => v);
const rope32 =
  (scaling, o = {}) =>
  (pe) =>
    pe.ropeFrequencies({ dim: 32, scaling, ...o });
const toy = (config, then) => (pe) => {
  const t = pe.trainToy({ task: 'before', steps: 1, ...config });
  try {
    return then(t);
  } finally {
    t.dispose();
  }
};

// [what, function named in the message, call]. Several cases may meet one rule (different routes).
const CASES = [
  // analysis
  ['similarity of t without rows', 'similarity', (pe) => pe.similarity(zeros([0, 3]))],
  ['nearestDistances of one row', 'nearestDistances', (pe) => pe.nearestDistances(T([1, 3]))],
  ['similarity of t without columns', 'similarity', (pe) => pe.similarity(zeros([2, 0]))],
  ['similarity of t holding NaN', 'similarity', (pe) => pe.similarity(T([2, 2], (i) => (i === 3 ? NaN : i)))],
  ['dot products beyond float32', 'similarity', (pe) => pe.similarity(filled([2, 1], 1e20))],
  ['stats of no values', 'stats', (pe) => pe.stats(new Float32Array(0))],
  ['shiftMatrix of an odd dModel', 'shiftMatrix', (pe) => pe.shiftMatrix({ dModel: 5, k: 1 })],
  ['shiftMatrix angle beyond double', 'shiftMatrix', (pe) => pe.shiftMatrix({ dModel: 4, base: 1e-300, k: 1e200 })],
  ['distances beyond float32', 'nearestDistances', (pe) => pe.nearestDistances(T([2, 1], (i) => (i ? -3e38 : 3e38)))],
  // angles
  ['an angle beyond double', 'sinusoidal', (pe) => pe.sinusoidal({ positions: [1e300], dModel: 4, base: 1e-300 })],
  // attention
  ['scale beyond float32', 'attention', (pe) => pe.attention({ q: T([2, 4]), k: T([2, 4]), v: T([2, 4]), scale: 1e39 })],
  ['q holding NaN', 'attention', (pe) => pe.attention({ q: filled([2, 4], NaN), k: T([2, 4]), v: T([2, 4]) })],
  ['k holding Infinity', 'attention', (pe) => pe.attention({ q: T([2, 4]), k: filled([2, 4], Infinity), v: T([2, 4]) })],
  ['v holding NaN', 'attention', (pe) => pe.attention({ q: T([2, 4]), k: T([2, 4]), v: filled([2, 4], NaN) })],
  ['bias holding NaN', 'attention', (pe) => pe.attention({ q: T([2, 4]), k: T([2, 4]), v: T([2, 4]), bias: filled([2, 2], NaN) })],
  // lab
  ['a sentence without words', 'permutationLab', (pe) => pe.permutationLab({ sentence: '' })],
  ['a sentence past 512 tokens', 'permutationLab', (pe) => pe.permutationLab({ sentence: 'a '.repeat(513) })],
  ['an odd lab dModel', 'scoreTerms', (pe) => pe.scoreTerms({ dModel: 5 })],
  ['a permutation too short', 'permutationLab', (pe) => pe.permutationLab({ permutation: [0] })],
  ['a permutation past the last word', 'permutationLab', (pe) => pe.permutationLab({ permutation: [6, 1, 2, 3, 4, 5] })],
  ['a permutation repeating an index', 'permutationLab', (pe) => pe.permutationLab({ permutation: [0, 0, 1, 2, 3, 4] })],
  ['score terms of a rotary encoding', 'scoreTerms', (pe) => pe.scoreTerms({ encoding: 'rope' })],
  // learned
  ['a learned table of 0 rows', 'learned', (pe) => pe.learned({ maxLength: 0, dModel: 4 })],
  ['a learned table of 0 columns', 'learned', (pe) => pe.learned({ maxLength: 4, dModel: 0 })],
  ['a negative std', 'learned', (pe) => pe.learned({ maxLength: 4, dModel: 4, std: -1 })],
  ['a learned table past 2^28 values', 'learned', (pe) => pe.learned({ maxLength: 2 ** 15, dModel: 2 ** 14, init: 'zeros' })],
  ['resize to 0 rows', 'LearnedEmbedding.resize', (pe) => pe.learned({ maxLength: 4, dModel: 2 }).resize(0)],
  ['resize past 2^28 values', 'LearnedEmbedding.resize', (pe) => pe.learned({ maxLength: 4, dModel: 2 }).resize(2 ** 28)],
  ['x + p beyond float32', 'addPositional', (pe) => pe.addPositional(filled([2, 2], 3e38), filled([2, 2], 3e38))],
  // relative
  ['t5 keyLength below queryLength', 't5Buckets', (pe) => pe.t5Buckets({ queryLength: 5, keyLength: 3 })],
  ['alibi keyLength below queryLength', 'alibiBias', (pe) => pe.alibiBias({ numHeads: 2, queryLength: 5, keyLength: 3 })],
  ['more than 4096 buckets', 't5Buckets', (pe) => pe.t5Buckets({ queryLength: 3, numBuckets: 8192 })],
  ['2 buckets, bidirectional', 't5Buckets', (pe) => pe.t5Buckets({ queryLength: 3, numBuckets: 2 })],
  ['1 bucket, causal', 't5Buckets', (pe) => pe.t5Buckets({ queryLength: 3, numBuckets: 1, bidirectional: false })],
  ['maxDistance within the exact buckets', 't5Buckets', (pe) => pe.t5Buckets({ queryLength: 3, maxDistance: 8 })],
  ['no ALiBi heads (slopes)', 'alibiSlopes', (pe) => pe.alibiSlopes(0)],
  ['no ALiBi heads (bias)', 'alibiBias', (pe) => pe.alibiBias({ numHeads: 0, queryLength: 2 })],
  ['no ALiBi heads (masked bias)', 'alibiBias', (pe) => pe.alibiBias({ numHeads: 0, attentionMask: [1, 1, 0] })],
  ['a relative position past 2^53', 't5Buckets', (pe) => pe.t5Buckets({ relativePositions: [0, 2 ** 60] })],
  ['maxRelative past 2^30', 'relativePositions', (pe) => pe.relativePositions({ length: 2, maxRelative: 2 ** 31 - 1 })],
  // rope: scalings
  ['a linear factor below 1', 'ropeFrequencies', rope32({ type: 'linear', factor: 0.5 })],
  ['yarn without originalMaxPositions', 'ropeFrequencies', rope32({ type: 'yarn', factor: 4, originalMaxPositions: 0 })],
  ['NTK at dim 2', 'ropeFrequencies', (pe) => pe.ropeFrequencies({ dim: 2, scaling: { type: 'ntk', factor: 2 } })],
  ['yarn at base 1', 'ropeFrequencies', rope32({ type: 'yarn', factor: 4, originalMaxPositions: 64 }, { base: 1 })],
  ['yarn betaFast 0', 'ropeFrequencies', rope32({ type: 'yarn', factor: 4, originalMaxPositions: 64, betaFast: 0 })],
  ['yarn betaSlow 0', 'ropeFrequencies', rope32({ type: 'yarn', factor: 4, originalMaxPositions: 64, betaSlow: 0 })],
  ['yarn betaFast below betaSlow', 'ropeFrequencies', rope32({ type: 'yarn', factor: 4, originalMaxPositions: 64, betaFast: 1, betaSlow: 2 })],
  ['llama3 lowFreqFactor 0', 'ropeFrequencies', rope32({ type: 'llama3', factor: 8, originalMaxPositions: 64, lowFreqFactor: 0 })],
  [
    'llama3 highFreqFactor below lowFreqFactor',
    'ropeFrequencies',
    rope32({ type: 'llama3', factor: 8, originalMaxPositions: 64, lowFreqFactor: 4, highFreqFactor: 1 }),
  ],
  [
    'longrope shortFactor of the wrong length',
    'ropeFrequencies',
    rope32({ type: 'longrope', factor: 4, originalMaxPositions: 64, shortFactor: [1], longFactor: new Array(16).fill(1) }),
  ],
  [
    'longrope longFactor holding 0',
    'ropeFrequencies',
    rope32({ type: 'longrope', factor: 4, originalMaxPositions: 64, shortFactor: new Array(16).fill(1), longFactor: new Array(16).fill(0) }),
  ],
  [
    'longrope longMscale 0',
    'ropeFrequencies',
    rope32({
      type: 'longrope',
      factor: 4,
      originalMaxPositions: 64,
      seqLength: 128,
      shortFactor: new Array(16).fill(1),
      longFactor: new Array(16).fill(1),
      longMscale: 0,
    }),
  ],
  ['an odd rotary dimension', 'ropeFrequencies', (pe) => pe.ropeFrequencies({ dim: 5 })],
  ['a base of 0', 'ropeFrequencies', (pe) => pe.ropeFrequencies({ dim: 4, base: 0 })],
  ['a sinusoidal base past 1e300', 'sinusoidal', (pe) => pe.sinusoidal({ length: 2, dModel: 4, base: 1e301 })],
  ['a negative seqLength', 'ropeFrequencies', rope32({ type: 'dynamic', factor: 2, seqLength: -1 })],
  ['a negative originalMaxPositions', 'ropeFrequencies', rope32({ type: 'linear', factor: 2, originalMaxPositions: -1 })],
  ['dynamic at seqLength 0', 'ropeFrequencies', rope32({ type: 'dynamic', factor: 2, originalMaxPositions: 64, seqLength: 0 })],
  ['an attentionFactor of 0', 'ropeFrequencies', rope32({ type: 'linear', factor: 2, attentionFactor: 0 })],
  [
    'a yarn attention factor beyond float32',
    'ropeFrequencies',
    rope32({ type: 'yarn', factor: 4, originalMaxPositions: 64, mscale: 1e300, mscaleAllDim: 1 }),
  ],
  ['frequencies beyond float32', 'ropeFrequencies', (pe) => pe.ropeFrequencies({ dim: 4, base: 1e-300, scaling: { type: 'linear', factor: 1 } })],
  // rope: rotation
  ['a rotation beyond float32', 'rope', (pe) => pe.rope(filled([1, 2], 3e38), { positions: [1] })],
  ['an xPos scale beyond float32', 'rope', (pe) => pe.rope(T([2, 4]), { positions: [0, 1e6], xpos: { scaleBase: 1, center: 0 }, role: 'key' })],
  ['rotaryDim past the head', 'rope', (pe) => pe.rope(T([2, 4]), { rotaryDim: 6 })],
  ['xpos.scaleBase 0', 'rope', (pe) => pe.rope(T([2, 4]), { xpos: { scaleBase: 0 }, role: 'query' })],
  [
    'mropeSection not summing to rotaryDim/2',
    'rope',
    (pe) =>
      pe.rope(T([2, 8]), {
        mropeSection: [1, 1, 1],
        positions: [
          [0, 1],
          [0, 1],
          [0, 1],
        ],
      }),
  ],
  // sinusoidal
  ['a 2-D table of dModel 6', 'sinusoidal2d', (pe) => pe.sinusoidal2d({ height: 2, width: 2, dModel: 6 })],
  ['a 2-D table of height 0', 'sinusoidal2d', (pe) => pe.sinusoidal2d({ height: 0, width: 2, dModel: 4 })],
  ['a 2-D table of width 0', 'sinusoidal2d', (pe) => pe.sinusoidal2d({ height: 2, width: 0, dModel: 4 })],
  ['wavelengths of dModel 0', 'wavelengths', (pe) => pe.wavelengths({ dModel: 0 })],
  // toy
  ['a toy model past its length limit', 'trainToy', (pe) => pe.trainToy({ task: 'before', length: 40 })],
  ['a toy model of 8 heads', 'trainToy', (pe) => pe.trainToy({ task: 'before', heads: 8 })],
  ['a toy dModel not a multiple of 2 * heads', 'trainToy', (pe) => pe.trainToy({ task: 'before', dModel: 12, heads: 4 })],
  ['a toy learning rate of 0', 'trainToy', (pe) => pe.trainToy({ task: 'before', learningRate: 0 })],
  ['a toy evaluation past its length limit', 'trainToy.evaluate', toy({}, (t) => t.evaluate({ length: 200 }))],
  ['a learned toy evaluated past its table', 'trainToy.evaluate', toy({ encoding: 'learned' }, (t) => t.evaluate({ length: 16 }))],
  ['a toy baseline past its length limit', 'trainToy.baseline', toy({}, (t) => t.baseline({ length: 2 }))],
];

// Rules no public call reaches, by the start of their key ('file: call'), each with the reason. The
// test fails when one of them becomes reachable (move it to CASES) or disappears.
const UNREACHED = {
  // JS checks the ids first: the core does not know whether a table holds positions or token ids, the
  // JS message names the argument (positions, ids) and its limit (maxLength, vocabSize)
  'learned.cpp: fail("position ", ids[k]': 'shadowed by embedding.js _lookup',
};
const unreachedKey = (r) => Object.keys(UNREACHED).find((k) => r.key.startsWith(k));

const rules = coreRules();
const pe = await loadLab();

// Counts the reads of the core's (and the lab's) message buffer: an error built from it was the core's.
let coreReads = 0;
for (const mod of [pe._mod, pe._lab]) {
  const read = mod._errorMessage;
  mod._errorMessage = (...a) => (coreReads++, read(...a));
}

// What each case threw: { error, fromCore }.
const outcomes = new Map();
for (const [what, , call] of CASES) {
  const before = coreReads;
  let error;
  try {
    const r = call(pe);
    r?.dispose?.();
  } catch (e) {
    error = e;
  }
  outcomes.set(what, { error, fromCore: coreReads > before });
}

// POSENC_RULES_DEBUG=1 prints what each case threw, and where it came from
if (process.env.POSENC_RULES_DEBUG) for (const [what, o] of outcomes) console.log(what, '->', o.fromCore ? 'core' : 'JS', o.error?.message);

describe('every rule of the core is reachable from the API', () => {
  test('the rules are read from the sources', () => {
    assert.ok(rules.length > 100, `only ${rules.length} rules found in src/core`);
    for (const r of rules) assert.ok(r.patterns.length > 0, `${r.at}: no message pattern in ${r.source}`);
  });

  for (const [what, fn] of CASES)
    test(what, () => {
      const { error, fromCore } = outcomes.get(what);
      assert.ok(error, 'the call did not throw');
      assert.ok(error instanceof RangeError, `${error.name}: ${error.message}`);
      const prefix = `posenc.${fn}: `;
      assert.ok(error.message.startsWith(prefix), `"${error.message}" does not start with "${prefix}"`);
      assert.ok(fromCore, `not the core's message (a JS check fired first): ${error.message}`);
      const text = error.message.slice(prefix.length);
      assert.ok(
        rules.some((r) => r.patterns.some((p) => p.test(text))),
        `"${text}" is no rule's message in src/core`,
      );
    });

  test('every rule has an API case or is marked an invariant', () => {
    const texts = [...outcomes.values()].filter((o) => o.error && o.fromCore).map((o) => o.error.message.replace(/^posenc\.[\w.]+: /, ''));
    const missing = [];
    const reached = [];
    for (const r of rules) {
      if (r.invariant) continue;
      const hit = texts.some((t) => r.patterns.some((p) => p.test(t)));
      if (unreachedKey(r) !== undefined) {
        if (hit) reached.push(`${r.at} (${r.key}) is reached now: move it from UNREACHED to CASES`);
      } else if (!hit) missing.push(`rule at ${r.at} has no API case: ${r.source}`);
    }
    for (const k of Object.keys(UNREACHED)) if (!rules.some((r) => r.key.startsWith(k))) reached.push(`UNREACHED names no rule: ${k}`);
    assert.deepEqual([...missing, ...reached], []);
  });

  test('rules sharing one message are met by as many cases', () => {
    // Sites with the same message pattern cannot be told apart by their text: each needs its own case.
    const groups = new Map();
    for (const r of rules) if (!r.invariant && !unreachedKey(r)) groups.set(r.patterns.join('|'), [...(groups.get(r.patterns.join('|')) ?? []), r]);
    const texts = [...outcomes.values()].filter((o) => o.error && o.fromCore).map((o) => o.error.message.replace(/^posenc\.[\w.]+: /, ''));
    const short = [];
    for (const group of groups.values()) {
      if (group.length < 2) continue;
      const n = texts.filter((t) => group[0].patterns.some((p) => p.test(t))).length;
      if (n < group.length) short.push(`${group.map((r) => r.at).join(', ')} share "${group[0].source}": ${n} case(s)`);
    }
    assert.deepEqual(short, []);
  });

  test('each invariant says why', () => {
    for (const r of rules.filter((r) => r.invariant))
      assert.match(r.invariant, /^invariant(?: \(next \d+\))?: \S/, `${r.at}: say why after "// invariant:"`);
  });
});
