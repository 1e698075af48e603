// RoPE and the relative position schemes: ALiBi, T5 buckets, Shaw et al.
import { produce, scope } from './heap.js';
import { Checker } from './validate.js';

const SCALING_TYPES = ['none', 'linear', 'ntk', 'dynamic', 'yarn', 'llama3', 'longrope'];
const SCALING_NUMBERS = [
  'factor',
  'originalMaxPositions',
  'betaFast',
  'betaSlow',
  'lowFreqFactor',
  'highFreqFactor',
  'seqLength',
  'attentionFactor',
  'mscale',
  'mscaleAllDim',
];
const SCALING_KEYS = new Set(['type', 'truncate', 'shortFactor', 'longFactor', ...SCALING_NUMBERS]);
// Hugging Face config keys (snake_case) -> posenc's camelCase, for the error hint.
const camel = (k) =>
  k === 'rope_type' ? 'type' : k.replace(/_([a-z])/g, (_, c) => c.toUpperCase()).replace('MaxPositionEmbeddings', 'MaxPositions');
const LAYOUTS = ['half', 'interleaved'];
// Rotary dimensions: far above any model's head size, small enough for the frequency tables.
const MAX_DIM = 2 ** 24;

// The scaling object as the bindings read it. Field requirements per type (which are needed,
// factor > 0, ...) are checked by the core, which knows the formulas.
function scalingOf(c, s) {
  if (s === undefined || s === null) return undefined;
  c.options(s, 'scaling');
  for (const key of Object.keys(s))
    if (!SCALING_KEYS.has(key)) {
      const hint = SCALING_KEYS.has(camel(key)) ? `; did you mean ${camel(key)}?` : '';
      throw c.type(`scaling.${key} is not a scaling option${hint} (options: ${[...SCALING_KEYS].join(', ')})`);
    }
  const out = { type: SCALING_TYPES.indexOf(c.oneOf('scaling.type', s.type, SCALING_TYPES)) };
  for (const k of SCALING_NUMBERS) if (s[k] !== undefined) out[k] = c.number(`scaling.${k}`, s[k]);
  if (s.truncate !== undefined) out.truncate = c.bool('scaling.truncate', s.truncate);
  for (const k of ['shortFactor', 'longFactor']) if (s[k] !== undefined) out[k] = Array.from(c.numbers(`scaling.${k}`, s[k]));
  return out;
}

export const relative = {
  // Inverse frequencies (dim/2 values) and the attention factor for a rotary dimension `dim`.
  ropeFrequencies(options) {
    const c = new Checker('ropeFrequencies');
    const o = c.options(options);
    const dim = c.int('dim', o.dim, { min: 2, max: MAX_DIM });
    if (dim % 2) throw c.range(`dim must be even (channels rotate in pairs), got ${dim}`);
    const base = c.base(o.base);
    const scaling = scalingOf(c, o.scaling);
    return scope(this._mod, 'ropeFrequencies', () => this._mod._ropeFrequencies(dim, base, scaling));
  },

  // A rotated copy of x: [seq, dim] or [seq, heads, headDim].
  rope(x, options) {
    const c = new Checker('rope');
    const o = c.options(options);
    const t = c.tensor('x', x, { ranks: [2, 3], shape: o.shape });
    const [seq, heads, headDim] = t.shape.length === 3 ? t.shape : [t.shape[0], 1, t.shape[1]];
    if (heads < 1 || headDim < 2) throw c.range(`x must have at least one head of at least 2 channels, got shape [${t.shape}]`);
    let rotaryDim = headDim;
    if (o.rotaryDim !== undefined) rotaryDim = c.int('rotaryDim', o.rotaryDim, { min: 2, max: Math.min(headDim, MAX_DIM) });
    else if (headDim > MAX_DIM) throw c.range(`the head dimension of x is ${headDim}; pass rotaryDim <= ${MAX_DIM}`);
    if (rotaryDim % 2) throw c.range(`rotaryDim must be even, got ${rotaryDim}${o.rotaryDim === undefined ? ' (the head dimension of x)' : ''}`);
    const base = c.base(o.base);
    const layout = c.oneOf('layout', o.layout, LAYOUTS, 'half');
    const scaling = scalingOf(c, o.scaling);
    let positions = null;
    const offset = c.number('offset', o.offset, { def: 0 });
    if (o.positions !== undefined) {
      positions = c.numbers('positions', o.positions);
      if (positions.length !== seq) throw c.range(`positions has ${positions.length} values but x has ${seq} rows`);
      if (o.offset !== undefined) throw c.type('pass either positions or offset, not both');
    }
    const data = scope(this._mod, 'rope', (s) => {
      const p = s.put(t.data);
      const pos = positions ? s.put(positions) : 0;
      this._mod._rope(p, seq, heads, headDim, rotaryDim, offset, pos, positions ? positions.length : 0, base, LAYOUTS.indexOf(layout), scaling);
      return s.get(Float32Array, p, t.data.length);
    });
    return { data, shape: t.shape };
  },

  alibiSlopes(numHeads) {
    const c = new Checker('alibiSlopes');
    const h = c.int('numHeads', numHeads, { min: 1, max: 4096 });
    return produce(this._mod, 'alibiSlopes', Float32Array, h, (out) => this._mod._alibiSlopes(out, h));
  },

  alibiBias(options) {
    const c = new Checker('alibiBias');
    const o = c.options(options);
    const numHeads = c.int('numHeads', o.numHeads, { min: 1, max: 4096 });
    const queryLength = c.int('queryLength', o.queryLength, { min: 1 });
    const keyLength = c.int('keyLength', o.keyLength, { def: queryLength, min: 1 });
    if (keyLength < queryLength)
      throw c.range(`keyLength (${keyLength}) must be >= queryLength (${queryLength}): queries are the last keyLength positions`);
    const symmetric = c.bool('symmetric', o.symmetric, false);
    const n = c.size('the bias', numHeads, queryLength, keyLength);
    const data = produce(this._mod, 'alibiBias', Float32Array, n, (out) => this._mod._alibiBias(out, numHeads, queryLength, keyLength, symmetric));
    return { data, shape: [numHeads, queryLength, keyLength] };
  },

  t5Buckets(options) {
    const c = new Checker('t5Buckets');
    const o = c.options(options);
    const queryLength = c.int('queryLength', o.queryLength, { min: 1 });
    const keyLength = c.int('keyLength', o.keyLength, { def: queryLength, min: 1 });
    if (keyLength < queryLength) throw c.range(`keyLength (${keyLength}) must be >= queryLength (${queryLength})`);
    const numBuckets = c.int('numBuckets', o.numBuckets, { def: 32, min: 2, max: 4096 });
    const maxDistance = c.int('maxDistance', o.maxDistance, { def: 128, min: 1 });
    const bidirectional = c.bool('bidirectional', o.bidirectional, true);
    const n = c.size('the buckets', queryLength, keyLength);
    const data = produce(this._mod, 't5Buckets', Int32Array, n, (out) =>
      this._mod._t5Buckets(out, queryLength, keyLength, numBuckets, maxDistance, bidirectional),
    );
    return { data, shape: [queryLength, keyLength] };
  },

  relativePositions(options) {
    const c = new Checker('relativePositions');
    const o = c.options(options);
    const length = c.int('length', o.length, { min: 1 });
    const maxRelative = c.int('maxRelative', o.maxRelative, { min: 0, max: 2 ** 30 });
    const n = c.size('the indices', length, length);
    const data = produce(this._mod, 'relativePositions', Int32Array, n, (out) => this._mod._relativePositions(out, length, maxRelative));
    return { data, shape: [length, length] };
  },
};
