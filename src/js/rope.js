// RoPE: the frequencies, the rotation of queries and keys (with M-RoPE and xPos), the cos/sin caches
// other runtimes take, and Qwen2-VL's multimodal position ids.
import { DEFAULTS, ENUMS, LIMITS, SCALING_FIELDS } from './contract.js';
import { nameScalingError, packScaling, readConfig, readScaling } from './config.js';
import { angleTerms, checkCost, estimateSeconds, WIDE_FREQUENCIES } from './cost.js';
import { blockRowsOf, produceRows, scope } from './heap.js';
import { Checker, describe, overlaps, typedSet } from './validate.js';

// RoPE's blocks: each block is one _rope call, which sets up its angle tables (and xPos's scales)
// anew, so blocks are twice the sinusoidal table's (measured best of 128 KiB to 4 MiB on
// [2048, 32, 128]), still in L2. (The frequencies are computed once per setting: frequenciesAt.)
const ROPE_BLOCK_BYTES = 1 << 18;
const LAYOUTS = ENUMS.ropeLayout;
const MAX_DIM = LIMITS.maxRotaryDim;
const INT32_MAX = 2 ** 31 - 1;

// The geometry of a rope/attention tensor: rank 2 [seq, d]; rank 3 [seq, heads, d] ('shd') or
// [heads, seq, d] ('hsd'); rank 4 [batch, seq, heads, d] ('bshd', the default) or [batch, heads, seq, d]
// ('bhsd'). The three- and four-letter names are accepted for either rank (they name the order of seq
// and heads). 'bsd': rank 3 [batch, seq, d], one head per entry.
// -> { batch, seq, heads, dim, headsFirst, axes: the letters of the axes as read, one per dimension }
export function geometry(c, shape, axes, name = 'x') {
  const order = axes === undefined ? 'bshd' : c.oneOf('axes', axes, [...ENUMS.axes, 'shd', 'hsd', 'bsd']);
  if (order === 'bsd') {
    if (shape.length !== 3) throw c.range(`axes 'bsd' reads a rank-3 ${name} as [batch, seq, d], got shape [${shape}]`);
    return { batch: shape[0], seq: shape[1], heads: 1, dim: shape[2], headsFirst: false, axes: 'bsd' };
  }
  const headsFirst = order === 'bhsd' || order === 'hsd';
  if (shape.length === 2) return { batch: 1, seq: shape[0], heads: 1, dim: shape[1], headsFirst: false, axes: 'sd' };
  const [batch, a, b, dim] = shape.length === 4 ? shape : [1, ...shape];
  if (shape.length !== 3 && shape.length !== 4) throw c.range(`${name} must have rank 2, 3 or 4, got shape [${shape}]`);
  const read = `${shape.length === 4 ? 'b' : ''}${headsFirst ? 'hs' : 'sh'}d`;
  return headsFirst ? { batch, seq: b, heads: a, dim, headsFirst, axes: read } : { batch, seq: a, heads: b, dim, headsFirst, axes: read };
}

// base, rotaryDim, scaling and mropeSection from `config`, or from base / scaling / rotaryDim. A
// config.json scaling object (snake_case) needs its base: the config's rope_theta (as `base`, inside
// the object, or the whole config); posenc's camelCase form keeps the default base.
function settingsOf(c, o, headDim) {
  if (o.config !== undefined) {
    for (const k of ['base', 'scaling', 'rotaryDim'])
      if (o[k] !== undefined) throw c.type(`pass either config or ${k}: the config gives the ${k === 'base' ? 'base (rope_theta)' : k}`);
    const r = readConfig(c, o.config, 'config', headDim);
    if (headDim !== undefined && r.headDim !== headDim && r.rotaryDim !== headDim)
      throw c.range(`x has ${headDim} channels per head but the config's head dimension is ${r.headDim} (rotary ${r.rotaryDim})`);
    return {
      base: r.base,
      rotaryDim: headDim === undefined || r.headDim === headDim ? r.rotaryDim : headDim,
      scaling: r.scaling,
      mropeSection: r.mropeSection,
      maxPositions: r.maxPositions,
      layout: r.layout,
    };
  }
  const scaling = readScaling(c, o.scaling);
  let base = DEFAULTS.base;
  if (o.base !== undefined) {
    base = c.base(o.base);
    if (scaling?.base !== undefined && scaling.base !== base) throw c.type(`base (${base}) and scaling.rope_theta (${scaling.base}) disagree`);
  } else if (scaling?.base !== undefined) base = scaling.base;
  else if (scaling?.hf)
    throw c.type(
      `scaling is a config.json scaling object (snake_case keys): pass the config's rope_theta as base, or the whole config as config (without either, the base would be ${DEFAULTS.base})`,
    );
  return { base, scaling: scaling?.type === 'none' ? null : scaling, mropeSection: scaling?.mropeSection };
}

// Runs a call of the core with the settings `st`, its scaling's fields named as the user wrote them.
function scalingNamed(st, call) {
  try {
    return call();
  } catch (e) {
    throw nameScalingError(e, st.scaling);
  }
}

// Positions: undefined (offset .. offset + seq - 1), or one list of seq, or one row per batch entry
// ([batch, seq]; [1, seq] is every entry's). -> { values: Float64Array, rows } or undefined.
function positionsOf(c, o, batch, seq) {
  if (o.positions === undefined) return undefined;
  if (o.offset !== undefined) throw c.type('pass either positions or offset, not both');
  const { data, shape } = c.list('positions', o.positions);
  const rows = shape.length === 1 ? 1 : shape[0];
  if (shape.length > 2 || shape[shape.length - 1] !== seq || (rows !== 1 && rows !== batch))
    throw c.range(
      `positions must be [${seq}] or [${batch}, ${seq}] (one row per batch entry) for the sequence length ${seq} of x, got shape [${shape}]`,
    );
  return { values: data, rows };
}

// M-RoPE positions: [3, seq] or [3, batch, seq] (a tensor, as mropePositions returns, or three
// arrays) -> { values: Float64Array, rows } (stream k of row b at (k * rows + b) * seq).
function streamsOf(c, v, batch, seq) {
  if (v === undefined) throw c.type('M-RoPE needs positions [3, seq] or [3, batch, seq], e.g. from pe.mropePositions');
  if (Array.isArray(v) && v.length === 3 && v.every((s) => Array.isArray(s) || ArrayBuffer.isView(s))) {
    const out = new Float64Array(3 * seq);
    for (let k = 0; k < 3; k++) {
      const stream = c.numbers(`positions[${k}]`, v[k]);
      if (stream.length !== seq) throw c.range(`positions[${k}] has ${stream.length} values but the sequence length of x is ${seq}`);
      out.set(stream, k * seq);
    }
    return { values: out, rows: 1 };
  }
  const { data, shape } = c.list('positions', v);
  const rows = shape.length === 3 ? shape[1] : 1;
  if (shape[0] !== 3 || shape[shape.length - 1] !== seq || shape.length < 2 || shape.length > 3 || (rows !== 1 && rows !== batch))
    throw c.range(`M-RoPE positions must be [3, ${seq}] or [3, ${batch}, ${seq}] (temporal, height, width), got shape [${shape}]`);
  return { values: data, rows };
}

// M-RoPE sections [t, h, w]: three non-negative integers (that they sum to rotaryDim / 2 is the core's rule).
function sectionOf(c, v, rotaryDim, name = 'mropeSection') {
  const sec = c.numbers(name, v, { integer: true, min: 0, max: MAX_DIM });
  if (sec.length !== 3) throw c.range(`${name} must hold 3 values [t, h, w], got ${sec.length}`);
  return Array.from(sec);
}

// The current length transformers uses for dynamic and longrope scaling: the largest position + 1
// (0 when every position is negative: no text has been seen, so nothing is extended).
function seqLengthOf(values, offset, count) {
  let m = offset + count - 1;
  if (values) {
    m = -Infinity;
    for (const p of values) if (p > m) m = p;
  }
  return Math.max(0, m + 1);
}

// No scaling, as _ropeFrequencies takes it (src/bindings/bindings.cpp ScalingArgs: type 0 is 'none').
const NO_SCALING = Object.freeze({
  ...Object.fromEntries(SCALING_FIELDS.map((k) => [k, NaN])),
  type: 0,
  shortFactor: 0,
  nShort: 0,
  longFactor: 0,
  nLong: 0,
});

// A packed scaling (config.js packScaling) as _ropeFrequencies takes it, its factor lists put into wasm memory.
function putScaling(s, packed) {
  if (!packed) return NO_SCALING;
  const { shortFactor, longFactor } = packed;
  return {
    ...packed.fields,
    shortFactor: shortFactor ? s.put(shortFactor) : 0,
    nShort: shortFactor ? shortFactor.length : 0,
    longFactor: longFactor ? s.put(longFactor) : 0,
    nLong: longFactor ? longFactor.length : 0,
  };
}

// The frequencies of a rotary dimension, base and scaling (dim/2 inverse frequencies and the attention
// factor, as src/bindings/bindings.cpp rope_frequencies writes them) are computed once per setting and
// kept in wasm memory for the last few settings of each module: a rotation of a few rows then crosses
// into wasm with an address instead of the scaling's fields, and does not recompute them. Larger
// rotary dimensions are computed per call, in the call's memory.
const KEPT_SETTINGS = 8;
const KEPT_MAX_DIM = 4096; // 16 KiB of doubles at most per setting

// The kept frequencies of one module, the sole owner of their wasm memory: an entry is adopted from the
// scope that computed it (once the computation succeeded) and freed here when a newer setting evicts it,
// so at most KEPT_SETTINGS entries (128 KiB) live as long as the module.
class KeptFrequencies {
  #mod;
  #list = []; // [{ key: Float64Array, at }], the most recently used first
  constructor(mod) {
    this.#mod = mod;
  }
  // The address kept for `key`, or 0.
  find(key) {
    const list = this.#list;
    for (let i = 0; i < list.length; i++)
      if (sameKey(list[i].key, key)) {
        if (i) list.unshift(...list.splice(i, 1));
        return list[0].at;
      }
    return 0;
  }
  // Takes the allocation `at` of scope s (computed for `key`) out of the scope's hands into the cache's.
  adopt(s, key, at) {
    s.keep(at);
    this.#list.unshift({ key, at });
    if (this.#list.length > KEPT_SETTINGS) this.#mod._free(this.#list.pop().at);
  }
}
const kept = new WeakMap(); // module -> KeptFrequencies
const TYPE = Object.fromEntries(ENUMS.scalingType.map((t, i) => [t, i]));
let scratch = new Float64Array(64);

// What the frequencies depend on, as numbers: dim, base, the scaling's fields and factor lists. The
// sequence length counts only as far as the core reads it: 'dynamic' reads max(seqLength, orig),
// 'longrope' whether seqLength > orig, the others none of it (a value they would refuse is kept
// as it is, so that the refusal is not served from another setting).
function settingKey(dim, base, packed) {
  const f = packed?.fields;
  const lists = packed ? [packed.shortFactor ?? [], packed.longFactor ?? []] : [];
  const n = 2 + (f ? SCALING_FIELDS.length + 2 + lists[0].length + lists[1].length : 1);
  if (scratch.length < n) scratch = new Float64Array(2 * n);
  const key = scratch;
  key[0] = dim;
  key[1] = base;
  if (!f) {
    key[2] = 0;
    return key.subarray(0, n);
  }
  let i = 2;
  for (const k of SCALING_FIELDS) key[i++] = f[k];
  const at = 2 + SCALING_FIELDS.indexOf('seqLength');
  const length = key[at];
  const orig = f.originalMaxPositions;
  if (Number.isFinite(length) && length >= 0) {
    if (f.type === TYPE.dynamic) key[at] = length > 0 && length <= orig ? orig : length;
    else if (f.type === TYPE.longrope) key[at] = length > orig ? 1 : 0;
    else key[at] = 0;
  }
  for (const list of lists) {
    key[i++] = list.length;
    for (const v of list) key[i++] = v;
  }
  return key.subarray(0, n);
}

function sameKey(a, b) {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (!Object.is(a[i], b[i])) return false;
  return true;
}

// The address of the frequencies for rotary dimension dim, base and a packed scaling, in the scope s
// (its errors named by s's call).
function frequenciesAt(s, mod, dim, base, packed) {
  const bytes = (Math.floor(dim / 2) + 1) * 8; // (an odd dim is the core's error)
  if (dim > KEPT_MAX_DIM) return computeFrequencies(s, mod, s.alloc(bytes), dim, base, packed);
  const key = settingKey(dim, base, packed);
  let cache = kept.get(mod);
  if (!cache) kept.set(mod, (cache = new KeptFrequencies(mod)));
  const found = cache.find(key);
  if (found) return found;
  const own = key.slice(); // before any call into wasm
  const at = computeFrequencies(s, mod, s.alloc(bytes), dim, base, packed);
  cache.adopt(s, own, at);
  return at;
}

function computeFrequencies(s, mod, at, dim, base, packed) {
  s.check(mod._ropeFrequencies({ out: at, dim, base, ...putScaling(s, packed) }));
  return at;
}

export const rope = {
  // Inverse frequencies (dim/2 values) and the attention factor for a rotary dimension `dim`, or
  // for a whole Hugging Face config.json (`config`).
  ropeFrequencies(options) {
    const c = new Checker('ropeFrequencies');
    const o = c.options(options, ['dim', 'base', 'scaling', 'config', 'dtype', 'out']);
    let dim;
    let st;
    if (o.config !== undefined) {
      st = settingsOf(c, o); // a config without a head size says so first
      if (o.dim !== undefined) throw c.type('pass either config or dim: the config gives the rotary dimension');
      dim = st.rotaryDim;
    } else {
      dim = c.int('dim', o.dim, { max: MAX_DIM });
      st = settingsOf(c, o);
    }
    // as transformers at load time: dynamic at max_position_embeddings (no change), longrope short
    const packed = packScaling(st.scaling, st.scaling?.type === 'dynamic' ? st.maxPositions : undefined);
    const dtype = c.dtype(o.dtype);
    const out = c.out(o.out, Float32Array, dim / 2, dtype);
    const mod = this._mod;
    return scalingNamed(st, () =>
      scope(mod, 'ropeFrequencies', (s) => {
        const at = computeFrequencies(s, mod, s.alloc((dim / 2 + 1) * 8), dim, st.base, packed);
        const f = new Float64Array(mod.HEAPU8.buffer, at, dim / 2 + 1);
        const attentionFactor = f[dim / 2];
        const invFreq = Float32Array.from(f.subarray(0, dim / 2)); // rounded to nearest, as the core's float()
        return { invFreq: s.get(Float32Array, s.put(invFreq), dim / 2, out, dtype), attentionFactor };
      }),
    );
  },

  // A rotated copy of x: [seq, dim], [seq, heads, headDim] or [batch, seq, heads, headDim] (axes
  // 'bhsd': [batch, heads, seq, headDim]); with `out` (which may be x's own data: in place) the result
  // is written there. `mropeSection` (or a config's mrope_section) with positions [3, seq]: Qwen2-VL's
  // multimodal RoPE; `xpos` with `role`: torchscale's xPos.
  rope(x, options) {
    const c = new Checker('rope');
    const o = c.options(options, [
      'positions',
      'offset',
      'base',
      'layout',
      'rotaryDim',
      'scaling',
      'config',
      'axes',
      'mropeSection',
      'xpos',
      'role',
      'shape',
      'dtype',
      'out',
    ]);
    const dtypeOption = o.dtype === undefined ? undefined : c.dtype(o.dtype);
    const t = c.tensor('x', x, { ranks: [2, 3, 4], shape: o.shape === undefined ? undefined : c.shape('shape', o.shape), half: dtypeOption });
    const dtype = dtypeOption ?? (t.elem === 'float32' ? 'float32' : t.elem);
    const { batch, seq, heads, dim: headDim, headsFirst } = geometry(c, t.shape, o.axes);
    if (heads < 1 || headDim < 2) throw c.range(`x must have at least one head of at least 2 channels, got shape [${t.shape}]`);
    const st = settingsOf(c, o, headDim);
    let rotaryDim = st.rotaryDim ?? headDim;
    // (that rotaryDim is even and <= headDim are the core's rules)
    if (o.rotaryDim !== undefined) rotaryDim = c.int('rotaryDim', o.rotaryDim, { min: 2, max: MAX_DIM });
    else if (rotaryDim > MAX_DIM) throw c.range(`the head dimension of x is ${headDim}; pass rotaryDim <= ${MAX_DIM}`);
    const layout = c.oneOf('layout', o.layout, LAYOUTS, st.layout ?? DEFAULTS.ropeLayout);
    if (st.layout && layout !== st.layout)
      throw c.type(`layout '${layout}' contradicts the config, whose model rotates '${st.layout}' pairs: leave layout out`);
    const offset = c.number('offset', o.offset, { def: 0 });
    // M-RoPE: explicit sections, or a config's mrope_section when the positions are streams [3, ...]
    // (text-only positions [seq] give every stream the same ids, where M-RoPE is plain RoPE)
    let section;
    if (o.mropeSection !== undefined) section = sectionOf(c, o.mropeSection, rotaryDim);
    else if (st.mropeSection && o.positions !== undefined && !isFlat(o.positions))
      section = sectionOf(c, st.mropeSection, rotaryDim, "the config's mrope_section");
    let positions;
    if (section) {
      if (layout !== 'half') throw c.range(`M-RoPE rotates in the 'half' layout (as Qwen2-VL), got layout '${layout}'`);
      if (o.xpos !== undefined) throw c.type('pass either mropeSection or xpos, not both');
      if (o.offset !== undefined) throw c.type('M-RoPE takes positions [3, seq], not offset');
      positions = streamsOf(c, o.positions, batch, seq);
    } else positions = positionsOf(c, o, batch, seq);
    // Rows are rotated in blocks that each start at offset + i; past 2^53 that sum would round twice.
    // Row r is at offset + r as a double, as in sinusoidal: such offsets become explicit positions.
    if (!positions && !section && !(Math.abs(offset) + seq <= 2 ** 53))
      positions = { values: Float64Array.from({ length: seq }, (_, r) => offset + r), rows: 1 };
    let xpos = { xpos: false, xposRole: 0, xposScaleBase: 0, xposCenter: 0 };
    if (o.xpos !== undefined) {
      const xo = c.options(o.xpos, ['scaleBase', 'center'], 'xpos');
      const role = c.oneOf('role', o.role, ENUMS.xposRole);
      const scaleBase = c.number('xpos.scaleBase', xo.scaleBase, { def: DEFAULTS.xposScaleBase });
      // torchscale centres N positions 0 .. N-1 at ceil(N / 2), N = the largest position + 1
      const last = positions ? positions.values.reduce((m, p) => Math.max(m, p), -Infinity) : offset + seq - 1;
      const center = c.number('xpos.center', xo.center, { def: Math.ceil((last + 1) / 2) });
      xpos = { xpos: true, xposRole: ENUMS.xposRole.indexOf(role), xposScaleBase: scaleBase, xposCenter: center };
    } else if (o.role !== undefined) throw c.type('role (query or key) goes with xpos; without xpos it has no effect');
    const out = c.out(o.out, Float32Array, t.length, dtype);
    // dynamic and longrope follow the current length, as transformers does at each forward
    const packed = packScaling(st.scaling, section ? undefined : seqLengthOf(positions?.values, offset, seq));
    const mod = this._mod;
    // An output that shares memory with x (in place, or overlapping) is written only once the whole
    // result is computed: a failure leaves x unchanged, and no block of x is overwritten before it is read.
    const into = out && overlaps(out, t) ? undefined : out;
    // Rotation entries: a batch entry [seq, heads, headDim], or with heads first one head of one entry.
    const entries = headsFirst ? batch * heads : batch;
    const rowHeads = headsFirst ? 1 : heads;
    const positionRow = (e) => (positions && positions.rows > 1 ? (headsFirst ? Math.floor(e / heads) : e) : 0);
    // the core rotates a block of rows (one call per block and entry, each setting up its angle tables
    // from the kept frequencies); explicit positions reduce every angle of every entry, M-RoPE's from three streams
    const h = rotaryDim / 2;
    const calls = section
      ? entries
      : Math.ceil((entries * seq) / blockRowsOf(entries * seq, rowHeads * headDim, Float32Array, ROPE_BLOCK_BYTES)) + entries;
    const values = positions?.values;
    const streams = section ? 3 : 1;
    const terms = {
      [section ? 'ropeSectionValue' : 'ropeValue']: t.length,
      ropeBlockFrequency: calls * h,
      ...(values
        ? angleTerms(values.length, (r) => values[r], { base: st.base, step: 2 / rotaryDim, count: h }, entries / positions.rows / streams)
        : {}),
    };
    checkCost(c, 'this rotation', estimateSeconds(this.backend, terms), 'rotate fewer rows per call (split the batch or the sequence)');
    let data = scalingNamed(st, () => rotate());
    function rotate() {
      if (!section) return rotateRows();
      const n = seq * rowHeads * headDim;
      return scope(mod, 'rope', (s) => {
        const p = s.put(t);
        const freq = frequenciesAt(s, mod, rotaryDim, st.base, packed);
        const pos = s.alloc(3 * seq * 8);
        const streams = new Float64Array(3 * seq);
        for (let e = 0; e < entries; e++) {
          const b = positionRow(e);
          for (let k = 0; k < 3; k++)
            streams.set(positions.values.subarray((k * positions.rows + b) * seq, (k * positions.rows + b + 1) * seq), k * seq);
          new Float64Array(mod.HEAPU8.buffer, pos, 3 * seq).set(streams);
          s.check(
            mod._ropeMrope({
              x: p + e * n * 4,
              seq,
              heads: rowHeads,
              headDim,
              rotaryDim,
              positions: pos,
              t: section[0],
              h: section[1],
              w: section[2],
              frequencies: freq,
            }),
          );
        }
        return s.get(Float32Array, p, t.length, into, dtype);
      });
    }
    function rotateRows() {
      // Blocks of rows (one position of one entry: rowHeads x headDim values, never across an entry's
      // end): each is copied into wasm memory, rotated in place and copied out while it is in cache.
      const rowValues = rowHeads * headDim;
      const layoutIndex = LAYOUTS.indexOf(layout);
      let pos, freq;
      return produceRows(
        mod,
        'rope',
        Float32Array,
        entries * seq,
        rowValues,
        (p, r0, k, s) => {
          if (pos === undefined) {
            pos = positions ? s.put(positions.values) : 0;
            freq = frequenciesAt(s, mod, rotaryDim, st.base, packed);
          }
          s.putRange(p, t, r0 * rowValues, k * rowValues);
          for (let r = r0; r < r0 + k;) {
            const e = Math.floor(r / seq);
            const i = r % seq; // position index within its entry
            const n = Math.min(r0 + k - r, seq - i);
            const at = p + (r - r0) * rowValues * 4;
            const args = {
              x: at,
              seq: n,
              heads: rowHeads,
              headDim,
              rotaryDim,
              offset: offset + i,
              positions: pos && pos + (positionRow(e) * seq + i) * 8,
              frequencies: freq,
              layout: layoutIndex,
              ...xpos,
              firstRow: r,
            };
            const code = mod._rope(args);
            if (code) return code;
            r += n;
          }
          return 0;
        },
        into,
        ROPE_BLOCK_BYTES,
        dtype,
      );
    }
    if (out && !into) {
      copyInto(c, out, data);
      data = out;
    }
    return { data, shape: t.shape };
  },

  // The cos and sin of every position's angles, times the attention factor, as ONNX Runtime's
  // RotaryEmbedding, GroupQueryAttention and Attention take them: [rows, rotaryDim / 2] each; with
  // `layout`, [rows, rotaryDim] in that layout's order (transformers' cos and sin for 'half').
  ropeCache(options) {
    const c = new Checker('ropeCache');
    const o = c.options(options, ['config', 'base', 'scaling', 'rotaryDim', 'length', 'offset', 'positions', 'layout', 'dtype', 'out']);
    const st = settingsOf(c, o);
    const rotaryDim = st.rotaryDim ?? c.int('rotaryDim', o.rotaryDim, { min: 2, max: MAX_DIM });
    const layout = o.layout === undefined ? undefined : c.oneOf('layout', o.layout, LAYOUTS);
    const offset = c.number('offset', o.offset, { def: 0 });
    let rows;
    let positions;
    if (o.positions !== undefined) {
      if (o.offset !== undefined) throw c.type('pass either positions or offset, not both');
      positions = c.numbers('positions', o.positions);
      rows = positions.length;
      if (o.length !== undefined && c.int('length', o.length) !== rows) throw c.range(`length ${o.length} differs from the ${rows} positions`);
    } else if (o.length === undefined) throw c.type('give the rows: length (positions offset .. offset + length - 1) or positions');
    else rows = c.int('length', o.length);
    const width = layout ? rotaryDim : Math.floor(rotaryDim / 2); // (an odd rotaryDim is the core's error)
    const n = c.size('the cache', rows, width);
    const dtype = c.dtype(o.dtype);
    let outs = {};
    if (o.out !== undefined) {
      outs = c.options(o.out, ['cos', 'sin'], 'out');
      c.out(outs.cos, Float32Array, n, dtype);
      c.out(outs.sin, Float32Array, n, dtype);
    }
    const packed = packScaling(st.scaling, seqLengthOf(positions, offset, rows));
    const h = rotaryDim / 2;
    const terms = {
      [h > WIDE_FREQUENCIES ? 'ropeCacheWideValue' : 'ropeCacheValue']: 2 * n,
      ropeCacheFrequency: h,
      ...angleTerms(rows, positions ? (r) => positions[r] : (r) => offset + r, { base: st.base, step: 2 / rotaryDim, count: h }),
    };
    checkCost(c, 'this cache', estimateSeconds(this.backend, terms), 'compute it in blocks of rows (length and offset, or fewer positions per call)');
    const mod = this._mod;
    return scalingNamed(st, () =>
      scope(mod, 'ropeCache', (s) => {
        const [pc, ps] = [s.alloc(n * 4), s.alloc(n * 4)];
        const pp = positions ? s.put(positions) : 0;
        s.check(
          mod._ropeCache({
            cos: pc,
            sin: ps,
            rows,
            offset,
            positions: pp,
            rotaryDim,
            frequencies: frequenciesAt(s, mod, rotaryDim, st.base, packed),
            expand: !!layout,
            layout: LAYOUTS.indexOf(layout ?? 'half'),
          }),
        );
        return {
          cos: { data: s.get(Float32Array, pc, n, outs.cos, dtype), shape: [rows, width] },
          sin: { data: s.get(Float32Array, ps, n, outs.sin, dtype), shape: [rows, width] },
        };
      }),
    );
  },

  // Qwen2-VL's position ids (HF get_rope_index), in two forms:
  // - segments, e.g. [{ text: 3 }, { image: [1, 4, 6] }, { text: 2 }] (vision grids after spatial
  //   merging): [3, seq] Int32 (temporal, height, width). Every segment starts at the largest id so far
  //   + 1 (0 first): text counts up on all three streams, an image or video [t, h, w] runs row-major
  //   over t, h, w, each stream offset by that start.
  // - { inputIds [batch, seq], imageGridThw [n, 3], videoGridThw [n, 3], attentionMask, and the token ids
  //   and merge size (from config, or given) }: { positions [3, batch, seq], deltas [batch, 1] }, as
  //   get_rope_index returns them (padding gets id 1; deltas = the largest id + 1 - seq, which
  //   decoding adds to its positions).
  mropePositions(segments, options) {
    const c = new Checker('mropePositions');
    if (segments && typeof segments === 'object' && !Array.isArray(segments)) return ropeIndex(c, segments, options, this.backend);
    const o = c.options(options, ['out']);
    if (!Array.isArray(segments))
      throw c.type(
        `segments must be an array like [{ text: 3 }, { image: [1, 4, 6] }] or { inputIds, imageGridThw, ... }, got ${describe(segments)}`,
      );
    const parts = [];
    let length = 0;
    for (let i = 0; i < segments.length; i++) {
      const seg = c.options(segments[i], ['text', 'image', 'video'], `segments[${i}]`);
      const kinds = Object.keys(seg);
      if (kinds.length !== 1) throw c.type(`segments[${i}] must have exactly one of text, image or video, got ${kinds.join(', ') || 'none'}`);
      const kind = kinds[0];
      if (kind === 'text') {
        const n = c.int(`segments[${i}].text`, seg.text, { min: 0 });
        parts.push({ text: n });
        length += n;
      } else {
        const grid = c.numbers(`segments[${i}].${kind}`, seg[kind], { integer: true, min: 0, max: INT32_MAX });
        if (grid.length !== 3) throw c.range(`segments[${i}].${kind} must be [t, h, w] (the grid after merging), got ${grid.length} values`);
        parts.push({ grid: Array.from(grid) });
        length += grid[0] * grid[1] * grid[2];
      }
      c.size('the position ids', 3, length);
    }
    const n = c.size('the position ids', 3, length);
    const out = c.out(o.out, Int32Array, n) ?? new Int32Array(n);
    writeIds(c, parts, out, 0, length);
    return { data: out, shape: [3, length] };
  },
};

// True when rope positions are one id per token ([seq] or [batch, seq]) rather than M-RoPE streams
// ([3, seq] or [3, batch, seq], or three arrays).
function isFlat(v) {
  if (Array.isArray(v)) return !(v.length === 3 && v.every((s) => Array.isArray(s) || ArrayBuffer.isView(s)));
  if (ArrayBuffer.isView(v)) return true;
  const dims = v && typeof v === 'object' ? (v.dims ?? v.shape) : undefined;
  return !(dims && dims.length >= 2 && dims[0] === 3);
}

// Copies a finished result into `out` (16-bit values as bits).
function copyInto(c, out, data) {
  try {
    if (out.BYTES_PER_ELEMENT === 2)
      typedSet(new Uint16Array(out.buffer, out.byteOffset, out.length), new Uint16Array(data.buffer, data.byteOffset, data.length));
    else typedSet(out, data);
  } catch {
    throw c.type("out's buffer was detached or shrunk during the call");
  }
}

// The ids of `parts` (text runs and vision grids) into streams of `out` [3, stride] from index `at`.
function writeIds(c, parts, out, at, stride) {
  let next = 0; // the largest id so far + 1
  for (const part of parts) {
    const start = next;
    if (part.text !== undefined) {
      for (let k = 0; k < part.text; k++, at++) out[at] = out[stride + at] = out[2 * stride + at] = start + k;
      if (part.text) next = start + part.text;
      continue;
    }
    const [gt, gh, gw] = part.grid;
    for (let a = 0; a < gt; a++)
      for (let b = 0; b < gh; b++)
        for (let d = 0; d < gw; d++, at++) [out[at], out[stride + at], out[2 * stride + at]] = [start + a, start + b, start + d];
    if (gt * gh * gw) next = start + Math.max(gt, gh, gw);
  }
  if (next - 1 > INT32_MAX) throw c.range(`the position ids reach ${next - 1}, beyond Int32`);
  return next;
}

// HF get_rope_index for a batch: the vision segments of each row are found from its tokens (a
// vision-start token followed by an image or video token; the grids are taken in order across the
// batch), padding (attentionMask 0) is skipped and gets id 1.
function ropeIndex(c, args, options, backend) {
  if (options !== undefined) throw c.type('pass every option in the one object: mropePositions({ inputIds, ... })');
  const o = c.options(args, [
    'inputIds',
    'imageGridThw',
    'videoGridThw',
    'attentionMask',
    'config',
    'imageTokenId',
    'videoTokenId',
    'visionStartTokenId',
    'spatialMergeSize',
  ]);
  if (o.inputIds === undefined) throw c.type('mropePositions needs inputIds [batch, seq] (or segments: an array)');
  const ids = c.list('inputIds', o.inputIds, { integer: true });
  if (ids.shape.length > 2) throw c.range(`inputIds must be [seq] or [batch, seq], got shape [${ids.shape}]`);
  const [batch, seq] = ids.shape.length === 2 ? ids.shape : [1, ids.shape[0]];
  const grids = (key) => {
    if (o[key] === undefined || o[key] === null) return [];
    const g = c.list(key, o[key], { integer: true, min: 0, max: INT32_MAX });
    if (g.shape.length !== 2 || g.shape[1] !== 3) throw c.range(`${key} must be [count, 3] (t, h, w per image or video), got shape [${g.shape}]`);
    return Array.from({ length: g.shape[0] }, (_, i) => Array.from(g.data.subarray(3 * i, 3 * i + 3)));
  };
  const images = grids('imageGridThw');
  const videos = grids('videoGridThw');
  let mask;
  if (o.attentionMask !== undefined && o.attentionMask !== null) {
    mask = c.list('attentionMask', o.attentionMask, { integer: true, min: 0, max: 1 });
    if (mask.data.length !== batch * seq) throw c.range(`attentionMask has shape [${mask.shape}] but inputIds has [${ids.shape}]`);
    mask = mask.data;
  }
  // the token ids and merge size: given, or from the config (config.json's names)
  if (o.config !== undefined && (typeof o.config !== 'object' || o.config === null || Array.isArray(o.config)))
    throw c.type(`config must be a config.json object, got ${describe(o.config)}`);
  const cfg = o.config ?? {};
  const vision = cfg.vision_config && typeof cfg.vision_config === 'object' ? cfg.vision_config : {};
  const pick = (name, key, fallback) => {
    const v = o[name] ?? cfg[key] ?? fallback;
    return v === undefined ? undefined : c.int(o[name] !== undefined ? name : `config.${key}`, v, { min: 0, max: Number.MAX_SAFE_INTEGER });
  };
  const imageToken = pick('imageTokenId', 'image_token_id');
  const videoToken = pick('videoTokenId', 'video_token_id');
  const startToken = pick('visionStartTokenId', 'vision_start_token_id');
  const merge = pick('spatialMergeSize', 'spatial_merge_size', vision.spatial_merge_size) ?? (images.length || videos.length ? undefined : 1);
  const n = c.size('the position ids', 3, batch, seq);
  checkCost(c, `reading ${batch * seq} token ids`, estimateSeconds(backend, { ropeIndexId: batch * seq }), 'pass fewer rows of inputIds per call');
  const positions = new Int32Array(n);
  const deltas = new Int32Array(batch);
  const hasVision = images.length > 0 || videos.length > 0;
  if (hasVision) {
    for (const [k, v] of [
      ['imageTokenId (config.image_token_id)', imageToken],
      ['videoTokenId (config.video_token_id)', videoToken],
      ['visionStartTokenId (config.vision_start_token_id)', startToken],
      ['spatialMergeSize (config.vision_config.spatial_merge_size)', merge],
    ])
      if (v === undefined) throw c.type(`vision grids need ${k}: pass it or the model's config`);
    if (merge < 1) throw c.range(`spatialMergeSize must be >= 1, got ${merge}`);
  }
  let image = 0;
  let video = 0;
  for (let b = 0; b < batch; b++) {
    const rowIds = [];
    const where = [];
    for (let j = 0; j < seq; j++)
      if (!mask || mask[b * seq + j]) {
        rowIds.push(ids.data[b * seq + j]);
        where.push(j);
      }
    let largest;
    if (!hasVision) {
      // text only: positions count the real tokens; padding gets 1 (HF: cumsum(mask) - 1, filled)
      for (let j = 0, p = 0; j < seq; j++) {
        const id = mask && !mask[b * seq + j] ? 1 : p++;
        for (let k = 0; k < 3; k++) positions[(k * batch + b) * seq + j] = id;
      }
      largest = mask ? Math.max(...Array.from({ length: seq }, (_, j) => positions[b * seq + j])) : seq - 1;
      deltas[b] = mask ? largest + 1 - seq : 0;
      continue;
    }
    // the row's segments: text runs and, after each vision-start token, one image or video grid
    const parts = [];
    let st = 0;
    let count = 0;
    for (let j = 0; j + 1 < rowIds.length; j++)
      if (rowIds[j] === startToken && (rowIds[j + 1] === imageToken || rowIds[j + 1] === videoToken)) count++;
    const remaining = { image: rowIds.filter((t, j) => t === imageToken && rowIds[j - 1] === startToken).length };
    remaining.video = count - remaining.image;
    for (let v = 0; v < count; v++) {
      const nextOf = (token, left) => (left > 0 ? rowIds.indexOf(token, st) : -1);
      const ei = nextOf(imageToken, remaining.image);
      const ev = nextOf(videoToken, remaining.video);
      const isImage = ei >= 0 && (ev < 0 || ei < ev);
      const list = isImage ? images : videos;
      const index = isImage ? image++ : video++;
      if (index >= list.length)
        throw c.range(
          `inputIds row ${b} has more ${isImage ? 'images' : 'videos'} than ${isImage ? 'imageGridThw' : 'videoGridThw'} lists (${list.length})`,
        );
      const [t, h, w] = list[index];
      if (h % merge || w % merge) throw c.range(`the grid [${t}, ${h}, ${w}] is not divisible by spatialMergeSize ${merge}`);
      const ed = isImage ? ei : ev;
      isImage ? remaining.image-- : remaining.video--;
      parts.push({ text: ed - st }, { grid: [t, h / merge, w / merge] });
      st = ed + t * (h / merge) * (w / merge);
    }
    if (st < rowIds.length) parts.push({ text: rowIds.length - st });
    const rowOut = new Int32Array(3 * rowIds.length);
    const total = parts.reduce((a, p) => a + (p.text ?? p.grid[0] * p.grid[1] * p.grid[2]), 0);
    if (total !== rowIds.length)
      throw c.range(`inputIds row ${b} has ${rowIds.length} tokens but its text and vision grids make ${total}: check the grids and the token ids`);
    largest = writeIds(c, parts, rowOut, 0, rowIds.length) - 1;
    for (let k = 0; k < 3; k++) {
      for (let j = 0; j < seq; j++) positions[(k * batch + b) * seq + j] = 1;
      where.forEach((j, i) => (positions[(k * batch + b) * seq + j] = rowOut[k * rowIds.length + i]));
    }
    deltas[b] = largest + 1 - seq;
  }
  if (hasVision && (image !== images.length || video !== videos.length))
    throw c.range(`inputIds hold ${image} images and ${video} videos but the grids list ${images.length} and ${videos.length}`);
  return { positions: { data: positions, shape: [3, batch, seq] }, deltas: { data: deltas, shape: [batch, 1] } };
}
