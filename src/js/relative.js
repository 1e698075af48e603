// RoPE and the relative position schemes: ALiBi, T5 buckets, Shaw et al.
import { DEFAULTS, ENUMS, LIMITS, SCALING_FIELDS } from './contract.js';
import { positionsOption } from './absolute.js';
import { produce, scope } from './heap.js';
import { Checker, describe } from './validate.js';

const SCALING_TYPES = ENUMS.scalingType;
const LAYOUTS = ENUMS.ropeLayout;
const MAX_DIM = LIMITS.maxRotaryDim;

// posenc's camelCase scaling keys, and the Hugging Face config.json (rope_scaling) spelling of each.
const SCALING_KEYS = {
  type: 'rope_type',
  factor: 'factor',
  originalMaxPositions: 'original_max_position_embeddings',
  betaFast: 'beta_fast',
  betaSlow: 'beta_slow',
  lowFreqFactor: 'low_freq_factor',
  highFreqFactor: 'high_freq_factor',
  seqLength: 'seq_length',
  attentionFactor: 'attention_factor',
  mscale: 'mscale',
  mscaleAllDim: 'mscale_all_dim',
  truncate: 'truncate',
  shortFactor: 'short_factor',
  longFactor: 'long_factor',
};
const FROM_HF = Object.fromEntries(Object.entries(SCALING_KEYS).map(([k, hf]) => [hf, k]));
FROM_HF.type = 'type'; // HF wrote `type` before `rope_type`
// Hugging Face type names that are not posenc's: 'default' is no scaling, 'su' LongRoPE's first name.
const HF_TYPES = { default: 'none', su: 'longrope' };
// Defaults the core applies when a field is not given (NaN: derived by the core).
const SCALING_DEFAULTS = {
  type: 0,
  factor: 1,
  originalMaxPositions: 0,
  betaFast: 32,
  betaSlow: 1,
  lowFreqFactor: 1,
  highFreqFactor: 4,
  seqLength: 0,
  attentionFactor: NaN,
  mscale: NaN,
  mscaleAllDim: NaN,
  truncate: 1,
};

// A scaling object, in posenc's camelCase or exactly as config.json's rope_scaling (snake_case,
// `rope_type` or `type`, 'default' = none), read once -> { fields: Float64Array, shortFactor?,
// longFactor? } as the core reads them, or undefined for no scaling. `extra` supplies values taken
// from the rest of a config (e.g. originalMaxPositions), which the object's own keys override.
function scalingOf(c, s, extra = {}) {
  if (s === undefined || s === null) return undefined;
  if (typeof s !== 'object' || Array.isArray(s) || ArrayBuffer.isView(s)) throw c.type(`scaling must be an object, got ${describe(s)}`);
  const allowed = [...Object.keys(SCALING_KEYS), ...Object.keys(FROM_HF)];
  c.keys('scaling', s, [...new Set(allowed)]);
  const v = { ...extra };
  for (const key of Object.keys(s)) {
    const value = s[key];
    const k = FROM_HF[key] ?? key;
    if (value === undefined || (value === null && k !== 'type')) continue;
    if (k in v && !(k in extra)) throw c.type(`scaling has both ${SCALING_KEYS[k] === key ? k : SCALING_KEYS[k]} and ${key}: pass one`);
    v[k] = value;
  }
  let type = v.type;
  if (typeof type === 'string' && type in HF_TYPES) type = HF_TYPES[type];
  type = c.oneOf('scaling.type', type, SCALING_TYPES);
  if (type === 'none') return undefined;
  const fields = new Float64Array(SCALING_FIELDS.length);
  for (const [i, k] of SCALING_FIELDS.entries()) {
    if (k === 'type') fields[i] = SCALING_TYPES.indexOf(type);
    else if (k === 'truncate') fields[i] = Number(c.bool('scaling.truncate', v.truncate, true));
    else fields[i] = v[k] === undefined ? SCALING_DEFAULTS[k] : c.number(`scaling.${k}`, v[k]);
  }
  const out = { fields };
  for (const k of ['shortFactor', 'longFactor']) if (v[k] !== undefined) out[k] = c.numbers(`scaling.${k}`, v[k]);
  return out;
}

// The rotary dimension, base and scaling of a whole Hugging Face config.json, as HF reads them
// (modeling_rope_utils.py): head_dim (DeepSeek: qk_rope_head_dim) or hidden_size /
// num_attention_heads, times partial_rotary_factor; rope_theta; rope_scaling. Where the original
// context length lives outside rope_scaling (Phi-3's longrope, dynamic), it is taken from there.
function fromConfig(c, config) {
  if (typeof config !== 'object' || config === null || Array.isArray(config))
    throw c.type(`config must be a config.json object, got ${describe(config)}`);
  const get = (k) => config[k];
  let head = get('qk_rope_head_dim') ?? get('head_dim');
  if (head === undefined || head === null) {
    const hidden = c.int('config.hidden_size', get('hidden_size'), { min: 1 });
    const heads = c.int('config.num_attention_heads', get('num_attention_heads'), { min: 1 });
    if (hidden % heads)
      throw c.range(`config.hidden_size (${hidden}) is not a multiple of config.num_attention_heads (${heads}); give config.head_dim`);
    head = hidden / heads;
  }
  head = c.int(get('qk_rope_head_dim') !== undefined ? 'config.qk_rope_head_dim' : 'config.head_dim', head, { min: 2, max: MAX_DIM });
  const partial = c.number('config.partial_rotary_factor', get('partial_rotary_factor') ?? undefined, { def: 1, min: 0, max: 1, minExclusive: true });
  const dim = Math.floor(head * partial);
  if (dim < 2 || dim % 2) throw c.range(`the rotary dimension head_dim * partial_rotary_factor = ${dim} must be an even integer >= 2`);
  const base = c.base(get('rope_theta') ?? undefined, 'config.rope_theta');
  const rs = get('rope_scaling');
  const maxPositions = get('max_position_embeddings');
  const topOriginal = get('original_max_position_embeddings');
  const extra = {};
  if (rs && typeof rs === 'object') {
    const type = HF_TYPES[rs.rope_type ?? rs.type] ?? rs.rope_type ?? rs.type;
    if (type === 'longrope' && typeof topOriginal === 'number' && typeof maxPositions === 'number') {
      // HF: factor = max_position_embeddings / original_max_position_embeddings (Phi-3).
      extra.originalMaxPositions = topOriginal;
      extra.factor = maxPositions / topOriginal;
    } else if ((type === 'yarn' || type === 'dynamic' || type === 'longrope') && typeof maxPositions === 'number') {
      extra.originalMaxPositions = topOriginal ?? maxPositions;
    }
    if (type === 'dynamic' && typeof maxPositions === 'number') extra.seqLength = maxPositions;
  }
  return { dim, base, scaling: scalingOf(c, rs, extra) };
}

// Puts a scaling's arrays into wasm memory: the raw arguments [fields, shortFactor, its length,
// longFactor, its length] (0 = none).
function putScaling(s, scaling) {
  if (!scaling) return [0, 0, 0, 0, 0];
  const list = (a) => (a ? [s.put(a), a.length] : [0, 0]);
  return [s.put(scaling.fields), ...list(scaling.shortFactor), ...list(scaling.longFactor)];
}

export const relative = {
  // Inverse frequencies (dim/2 values) and the attention factor for a rotary dimension `dim`, or
  // for a whole Hugging Face config.json (`config`).
  ropeFrequencies(options) {
    const c = new Checker('ropeFrequencies');
    const o = c.options(options, ['dim', 'base', 'scaling', 'config', 'out']);
    let dim;
    let base;
    let scaling;
    if (o.config !== undefined) {
      for (const k of ['dim', 'base', 'scaling'])
        if (o[k] !== undefined) throw c.type(`pass either config or ${k}: the config gives the ${k === 'base' ? 'base (rope_theta)' : k}`);
      ({ dim, base, scaling } = fromConfig(c, o.config));
    } else {
      dim = c.int('dim', o.dim, { min: 2, max: MAX_DIM });
      if (dim % 2) throw c.range(`dim must be even (channels rotate in pairs), got ${dim}`);
      base = c.base(o.base);
      scaling = scalingOf(c, o.scaling);
    }
    const out = c.out(o.out, Float32Array, dim / 2);
    return scope(this._mod, 'ropeFrequencies', (s) => {
      const pf = s.alloc((dim / 2) * 4);
      const pa = s.alloc(8);
      s.check(this._mod._ropeFrequencies(pf, pa, dim, base, ...putScaling(s, scaling)));
      return { invFreq: s.get(Float32Array, pf, dim / 2, out), attentionFactor: new Float64Array(this._mod.HEAPU8.buffer, pa, 1)[0] };
    });
  },

  // A rotated copy of x: [seq, dim], [seq, heads, headDim] or [batch, seq, heads, headDim]; with
  // `out` (which may be x's own data: in place) the result is written there.
  rope(x, options) {
    const c = new Checker('rope');
    const o = c.options(options, ['positions', 'offset', 'base', 'layout', 'rotaryDim', 'scaling', 'shape', 'out']);
    const t = c.tensor('x', x, { ranks: [2, 3, 4], shape: o.shape === undefined ? undefined : c.shape('shape', o.shape) });
    const [batch, seq, heads, headDim] = t.shape.length === 4 ? t.shape : t.shape.length === 3 ? [1, ...t.shape] : [1, t.shape[0], 1, t.shape[1]];
    if (heads < 1 || headDim < 2) throw c.range(`x must have at least one head of at least 2 channels, got shape [${t.shape}]`);
    let rotaryDim = headDim;
    if (o.rotaryDim !== undefined) rotaryDim = c.int('rotaryDim', o.rotaryDim, { min: 2, max: Math.min(headDim, MAX_DIM) });
    else if (headDim > MAX_DIM) throw c.range(`the head dimension of x is ${headDim}; pass rotaryDim <= ${MAX_DIM}`);
    if (rotaryDim % 2) throw c.range(`rotaryDim must be even, got ${rotaryDim}${o.rotaryDim === undefined ? ' (the head dimension of x)' : ''}`);
    const base = c.base(o.base);
    const layout = c.oneOf('layout', o.layout, LAYOUTS, DEFAULTS.ropeLayout);
    const scaling = scalingOf(c, o.scaling);
    const offset = c.number('offset', o.offset, { def: 0 });
    const positions = positionsOption(c, o, seq, 'the sequence length of x');
    const out = c.out(o.out, Float32Array, t.length);
    const data = scope(this._mod, 'rope', (s) => {
      const p = s.put(t);
      const pos = positions ? s.put(positions) : 0;
      const sc = putScaling(s, scaling);
      const rowBytes = seq * heads * headDim * 4;
      // each batch entry is one [seq, heads, headDim] call, rotated in place in wasm memory
      for (let b = 0; b < batch; b++)
        s.check(
          this._mod._rope(
            p + b * rowBytes,
            p + b * rowBytes,
            seq,
            heads,
            headDim,
            rotaryDim,
            offset,
            pos,
            positions ? seq : 0,
            base,
            LAYOUTS.indexOf(layout),
            ...sc,
          ),
        );
      return s.get(Float32Array, p, t.length, out);
    });
    return { data, shape: t.shape };
  },

  alibiSlopes(numHeads, options) {
    const c = new Checker('alibiSlopes');
    const o = c.options(options, ['out']);
    const h = c.int('numHeads', numHeads, { min: 1, max: LIMITS.maxHeads });
    return produce(this._mod, 'alibiSlopes', Float32Array, h, (p) => this._mod._alibiSlopes(p, h), c.out(o.out, Float32Array, h));
  },

  alibiBias(options) {
    const c = new Checker('alibiBias');
    const o = c.options(options, ['numHeads', 'queryLength', 'keyLength', 'symmetric', 'out']);
    const numHeads = c.int('numHeads', o.numHeads, { min: 1, max: LIMITS.maxHeads });
    const queryLength = c.int('queryLength', o.queryLength, { min: 1 });
    const keyLength = c.int('keyLength', o.keyLength, { def: queryLength, min: 1 });
    if (keyLength < queryLength)
      throw c.range(`keyLength (${keyLength}) must be >= queryLength (${queryLength}): queries are the last keyLength positions`);
    const symmetric = c.bool('symmetric', o.symmetric, false);
    const n = c.size('the bias', numHeads, queryLength, keyLength);
    const out = c.out(o.out, Float32Array, n);
    const data = produce(this._mod, 'alibiBias', Float32Array, n, (p) => this._mod._alibiBias(p, numHeads, queryLength, keyLength, symmetric), out);
    return { data, shape: [numHeads, queryLength, keyLength] };
  },

  t5Buckets(options) {
    const c = new Checker('t5Buckets');
    const o = c.options(options, ['queryLength', 'keyLength', 'numBuckets', 'maxDistance', 'bidirectional', 'out']);
    const queryLength = c.int('queryLength', o.queryLength, { min: 1 });
    const keyLength = c.int('keyLength', o.keyLength, { def: queryLength, min: 1 });
    if (keyLength < queryLength) throw c.range(`keyLength (${keyLength}) must be >= queryLength (${queryLength})`);
    const numBuckets = c.int('numBuckets', o.numBuckets, { def: DEFAULTS.numBuckets, min: 2, max: LIMITS.maxBuckets });
    const maxDistance = c.int('maxDistance', o.maxDistance, { def: DEFAULTS.maxDistance, min: 1 });
    const bidirectional = c.bool('bidirectional', o.bidirectional, true);
    const n = c.size('the buckets', queryLength, keyLength);
    const out = c.out(o.out, Int32Array, n);
    const data = produce(
      this._mod,
      't5Buckets',
      Int32Array,
      n,
      (p) => this._mod._t5Buckets(p, queryLength, keyLength, numBuckets, maxDistance, bidirectional),
      out,
    );
    return { data, shape: [queryLength, keyLength] };
  },

  relativePositions(options) {
    const c = new Checker('relativePositions');
    const o = c.options(options, ['length', 'maxRelative', 'out']);
    const length = c.int('length', o.length, { min: 1 });
    const maxRelative = c.int('maxRelative', o.maxRelative, { min: 0, max: LIMITS.maxRelative });
    const n = c.size('the indices', length, length);
    const out = c.out(o.out, Int32Array, n);
    const data = produce(this._mod, 'relativePositions', Int32Array, n, (p) => this._mod._relativePositions(p, length, maxRelative), out);
    return { data, shape: [length, length] };
  },
};
