// RoPE and the relative position schemes: ALiBi, T5 buckets, Shaw et al.
import { DEFAULTS, ENUMS, LIMITS, SCALING_FIELDS } from './contract.js';
import { positionsOption } from './absolute.js';
import { produce, produceRows, scope } from './heap.js';
import { Checker, describe } from './validate.js';

// RoPE's blocks: its kernel sets up frequencies and angle tables per call, so blocks are twice
// the sinusoidal table's (measured best of 128 KiB to 4 MiB on [2048, 32, 128]), still in L2.
const ROPE_BLOCK_BYTES = 1 << 18;

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
// Every key a scaling object may hold; mrope_section (Qwen2-VL's config) is read by rope, not here.
const SCALING_ALLOWED = [...new Set([...Object.keys(SCALING_KEYS), ...Object.keys(FROM_HF), 'mrope_section'])];
// Hugging Face type names that are not posenc's: 'default' and 'mrope' (Qwen2-VL: M-RoPE is in
// rope's mropeSection, its frequencies are the default ones) are no scaling, 'su' LongRoPE's first name.
const HF_TYPES = { default: 'none', mrope: 'none', su: 'longrope' };
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
function scalingOf(c, s, extra = {}, force = {}) {
  if (s === undefined || s === null) return undefined;
  if (typeof s !== 'object' || Array.isArray(s) || ArrayBuffer.isView(s)) throw c.type(`scaling must be an object, got ${describe(s)}`);
  c.keys('scaling', s, SCALING_ALLOWED);
  // each key read once; HF's type and rope_type may both be present (transformers copies one into the
  // other): they must agree, and rope_type is the one HF reads
  const given = {};
  for (const key of Object.keys(s)) given[key] = s[key];
  const v = { ...extra };
  for (const [key, value] of Object.entries(given)) {
    const k = FROM_HF[key] ?? key;
    if (key === 'mrope_section' || value === undefined || (value === null && k !== 'type')) continue;
    if (k === 'type' && 'type' in v && !('type' in extra)) {
      if (hfType(v.type) !== hfType(value)) throw c.type(`scaling has type ${describe(v.type)} and rope_type ${describe(value)}: they must agree`);
      if (key !== 'rope_type') continue;
    } else if (k in v && !(k in extra)) throw c.type(`scaling has both ${SCALING_KEYS[k] === key ? k : SCALING_KEYS[k]} and ${key}: pass one`);
    v[k] = value;
  }
  Object.assign(v, force);
  const type = c.oneOf('scaling.type', hfType(v.type), SCALING_TYPES);
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

// posenc's name for a Hugging Face scaling type ('default' and 'mrope' are no scaling of the
// frequencies, 'su' was LongRoPE's first name); other values pass through to be checked.
function hfType(t) {
  return typeof t === 'string' && Object.hasOwn(HF_TYPES, t) ? HF_TYPES[t] : t;
}

// The keys of config.json that RoPE depends on, each read once.
const CONFIG_KEYS = [
  'qk_rope_head_dim',
  'head_dim',
  'hidden_size',
  'num_attention_heads',
  'partial_rotary_factor',
  'rope_theta',
  'rope_scaling',
  'max_position_embeddings',
  'original_max_position_embeddings',
];

// The rotary dimension, base and scaling of a whole Hugging Face config.json, as HF reads them
// (modeling_rope_utils.py): head_dim (DeepSeek: qk_rope_head_dim; 0 or null: hidden_size /
// num_attention_heads), times partial_rotary_factor; rope_theta; rope_scaling. Where the original
// context length lives outside rope_scaling it is taken from there; for LongRoPE with a top-level
// original_max_position_embeddings (Phi-3), HF's factor is max_position_embeddings / that.
function fromConfig(c, config) {
  if (typeof config !== 'object' || config === null || Array.isArray(config))
    throw c.type(`config must be a config.json object, got ${describe(config)}`);
  const cfg = {};
  for (const k of CONFIG_KEYS) cfg[k] = config[k];
  const headKey = cfg.qk_rope_head_dim ? 'qk_rope_head_dim' : 'head_dim';
  let head = cfg[headKey];
  if (!head) {
    const hidden = c.int('config.hidden_size', cfg.hidden_size, { min: 1 });
    const heads = c.int('config.num_attention_heads', cfg.num_attention_heads, { min: 1 });
    if (hidden % heads)
      throw c.range(`config.hidden_size (${hidden}) is not a multiple of config.num_attention_heads (${heads}); give config.head_dim`);
    head = hidden / heads;
  }
  head = c.int(`config.${headKey}`, head, { min: 2, max: MAX_DIM });
  const partial = c.number('config.partial_rotary_factor', cfg.partial_rotary_factor ?? undefined, { def: 1, min: 0, max: 1, minExclusive: true });
  const dim = Math.floor(head * partial);
  if (dim < 2 || dim % 2) throw c.range(`the rotary dimension head_dim * partial_rotary_factor = ${dim} must be an even integer >= 2`);
  const base = c.base(cfg.rope_theta ?? undefined, 'config.rope_theta');
  let rs = cfg.rope_scaling;
  const { max_position_embeddings: maxPositions, original_max_position_embeddings: topOriginal } = cfg;
  const extra = {};
  const force = {};
  if (rs && typeof rs === 'object' && !Array.isArray(rs)) {
    rs = Object.fromEntries(Object.keys(rs).map((k) => [k, rs[k]])); // read once
    const type = hfType(rs.rope_type ?? rs.type);
    if (type === 'longrope' && typeof topOriginal === 'number' && typeof maxPositions === 'number') {
      force.originalMaxPositions = topOriginal;
      force.factor = maxPositions / topOriginal;
    } else if ((type === 'yarn' || type === 'dynamic' || type === 'longrope') && typeof maxPositions === 'number') {
      extra.originalMaxPositions = topOriginal ?? maxPositions;
    }
    if (type === 'dynamic' && typeof maxPositions === 'number') extra.seqLength = maxPositions;
  }
  return { dim, base, scaling: scalingOf(c, rs, extra, force) };
}

// M-RoPE sections [t, h, w]: non-negative integers summing to rotaryDim / 2.
function mropeSectionOf(c, v, rotaryDim) {
  const sec = c.numbers('mropeSection', v, { integer: true, min: 0, max: MAX_DIM });
  if (sec.length !== 3) throw c.range(`mropeSection must hold 3 values [t, h, w], got ${sec.length}`);
  const sum = sec[0] + sec[1] + sec[2];
  if (sum !== rotaryDim / 2) throw c.range(`mropeSection [${Array.from(sec)}] must sum to rotaryDim / 2 = ${rotaryDim / 2}, got ${sum}`);
  return Array.from(sec);
}

// M-RoPE positions: { data, shape: [3, seq] } (as mropePositions returns) or three arrays of seq
// positions -> a Float64Array of 3 * seq.
function streamsOf(c, v, seq) {
  if (v === undefined) throw c.type('mropeSection needs positions: [3, seq], e.g. from pe.mropePositions');
  if (Array.isArray(v)) {
    if (v.length !== 3) throw c.range(`positions must hold 3 streams (temporal, height, width), got ${v.length}`);
    const out = new Float64Array(3 * seq);
    for (let k = 0; k < 3; k++) {
      const stream = c.numbers(`positions[${k}]`, v[k]);
      if (stream.length !== seq) throw c.range(`positions[${k}] has ${stream.length} values but the sequence length of x is ${seq}`);
      out.set(stream, k * seq);
    }
    return out;
  }
  if (v && typeof v === 'object' && 'data' in v) {
    c.keys('positions', v, ['data', 'shape']);
    const shape = c.shape('positions.shape', v.shape);
    if (shape.length !== 2 || shape[0] !== 3 || shape[1] !== seq) throw c.range(`positions must have shape [3, ${seq}], got [${shape}]`);
    const data = c.numbers('positions.data', v.data);
    if (data.length !== 3 * seq) throw c.range(`positions.shape [3, ${seq}] holds ${3 * seq} values but data has ${data.length}`);
    return data;
  }
  throw c.type(`positions must be [3, seq]: a tensor { data, shape } or three arrays, got ${describe(v)}`);
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
  // `out` (which may be x's own data: in place) the result is written there. `mropeSection` with
  // positions [3, seq]: Qwen2-VL's multimodal RoPE; `xpos` with `role`: torchscale's xPos.
  rope(x, options) {
    const c = new Checker('rope');
    const o = c.options(options, ['positions', 'offset', 'base', 'layout', 'rotaryDim', 'scaling', 'mropeSection', 'xpos', 'role', 'shape', 'out']);
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
    let positions;
    let section;
    if (o.mropeSection !== undefined) {
      section = mropeSectionOf(c, o.mropeSection, rotaryDim);
      if (layout !== 'half') throw c.range(`mropeSection rotates in the 'half' layout (as Qwen2-VL), got layout '${layout}'`);
      if (o.xpos !== undefined) throw c.type('pass either mropeSection or xpos, not both');
      if (o.offset !== undefined) throw c.type('mropeSection takes positions [3, seq], not offset');
      positions = streamsOf(c, o.positions, seq);
    } else positions = positionsOption(c, o, seq, 'the sequence length of x');
    let xpos = [0, 0, 0];
    if (o.xpos !== undefined) {
      const xo = c.options(o.xpos, ['scaleBase', 'center'], 'xpos');
      const role = c.oneOf('role', o.role, ['query', 'key']);
      const scaleBase = c.number('xpos.scaleBase', xo.scaleBase, { def: 512, min: 0, minExclusive: true });
      // torchscale centres N positions 0 .. N-1 at ceil(N / 2), N = the largest position + 1
      const last = positions ? positions.reduce((m, p) => Math.max(m, p), -Infinity) : offset + seq - 1;
      const center = c.number('xpos.center', xo.center, { def: Math.ceil((last + 1) / 2) });
      xpos = [role === 'query' ? 1 : 2, scaleBase, center];
    } else if (o.role !== undefined) throw c.type('role (query or key) goes with xpos; without xpos it has no effect');
    const out = c.out(o.out, Float32Array, t.length);
    const mod = this._mod;
    if (section) {
      const data = scope(mod, 'rope', (s) => {
        const p = s.put(t);
        const pos = s.put(positions);
        const sc = putScaling(s, scaling);
        // each batch entry is one [seq, heads, headDim] call, rotated in place in wasm memory
        for (let b = 0; b < batch; b++)
          s.check(mod._ropeMrope(p + b * seq * heads * headDim * 4, seq, heads, headDim, rotaryDim, pos, ...section, base, ...sc));
        return s.get(Float32Array, p, t.length, out);
      });
      return { data, shape: t.shape };
    }
    // Blocks of positions (rows of heads x headDim values, never across a batch entry's end): each is
    // copied into wasm memory, rotated in place and copied out while it is still in cache. x itself is
    // the call's snapshot (validate.js tensor()), read block by block with no user code in between; a
    // block is read before the same block of `out` is written, so out = x.data rotates in place.
    const rowValues = heads * headDim;
    let pos, sc;
    const data = produceRows(
      mod,
      'rope',
      Float32Array,
      batch * seq,
      rowValues,
      (p, r0, k, s) => {
        if (pos === undefined) {
          pos = positions ? s.put(positions) : 0;
          sc = putScaling(s, scaling);
        }
        s.putInto(p, { ...t, byteOffset: t.byteOffset + r0 * rowValues * 4, byteLength: k * rowValues * 4 });
        for (let r = r0; r < r0 + k;) {
          const i = r % seq; // position index within its batch entry
          const n = Math.min(r0 + k - r, seq - i);
          const code = mod._rope(
            p + (r - r0) * rowValues * 4,
            p + (r - r0) * rowValues * 4,
            n,
            heads,
            headDim,
            rotaryDim,
            offset + i,
            pos && pos + i * 8,
            positions ? n : 0,
            base,
            LAYOUTS.indexOf(layout),
            ...sc,
            ...xpos,
          );
          if (code) return code;
          r += n;
        }
        return 0;
      },
      out,
      ROPE_BLOCK_BYTES,
    );
    return { data, shape: t.shape };
  },

  // Qwen2-VL's position ids for a sequence of text and vision segments (HF get_rope_index): [3, seq]
  // Int32 (temporal, height, width). Every segment starts at the largest id so far + 1 (0 first):
  // text counts up on all three streams, an image or video [t, h, w] (its grid after spatial merging)
  // runs row-major over t, h, w, each stream offset by that start.
  mropePositions(segments, options) {
    const c = new Checker('mropePositions');
    const o = c.options(options, ['out']);
    if (!Array.isArray(segments)) throw c.type(`segments must be an array like [{ text: 3 }, { image: [1, 4, 6] }], got ${describe(segments)}`);
    const parts = [];
    let length = 0;
    for (let i = 0; i < segments.length; i++) {
      const seg = c.options(segments[i], ['text', 'image', 'video'], `segments[${i}]`);
      const kinds = Object.keys(seg);
      if (kinds.length !== 1) throw c.type(`segments[${i}] must have exactly one of text, image or video, got ${kinds.join(', ') || 'none'}`);
      const kind = kinds[0];
      if (kind === 'text') {
        const n = c.int(`segments[${i}].text`, seg.text, { min: 0 });
        parts.push([n]);
        length += n;
      } else {
        const grid = c.numbers(`segments[${i}].${kind}`, seg[kind], { integer: true, min: 0, max: 2 ** 31 - 1 });
        if (grid.length !== 3) throw c.range(`segments[${i}].${kind} must be [t, h, w] (the grid after merging), got ${grid.length} values`);
        parts.push(Array.from(grid));
        length += grid[0] * grid[1] * grid[2];
      }
      c.size('the position ids', 3, length);
    }
    const n = c.size('the position ids', 3, length);
    const out = c.out(o.out, Int32Array, n) ?? new Int32Array(n);
    let at = 0;
    let next = 0; // the largest id so far + 1
    for (const part of parts) {
      const start = next;
      if (part.length === 1) {
        for (let k = 0; k < part[0]; k++, at++) out[at] = out[length + at] = out[2 * length + at] = start + k;
        if (part[0]) next = start + part[0];
        continue;
      }
      const [gt, gh, gw] = part;
      for (let a = 0; a < gt; a++)
        for (let b = 0; b < gh; b++)
          for (let d = 0; d < gw; d++, at++) [out[at], out[length + at], out[2 * length + at]] = [start + a, start + b, start + d];
      if (gt * gh * gw) next = start + Math.max(gt, gh, gw);
    }
    if (next > 2 ** 31 - 1) throw c.range(`the position ids reach ${next}, beyond Int32`);
    return { data: out, shape: [3, length] };
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
