// Reading RoPE settings: a scaling object (posenc's camelCase, or a Hugging Face `rope_scaling` /
// `rope_parameters` object as config.json writes it) and a whole config.json, the way transformers
// reads them (modeling_rope_utils.py and the RoPE part of configuration_utils.py). Every entry point
// that takes a scaling or a config reads it here, once; `ropeConfig` exports the reading itself (the
// demo page's inspector shows what it returns).
import { ENUMS, LIMITS, SCALING_FIELDS } from './contract.js';
import { Checker, describe, guarded } from './validate.js';

// posenc's camelCase scaling keys, and the config.json (snake_case) spelling of each.
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
  shortMscale: 'short_mscale',
  longMscale: 'long_mscale',
  mropeSection: 'mrope_section',
};
const FROM_HF = Object.fromEntries(Object.entries(SCALING_KEYS).map(([k, hf]) => [hf, k]));
FROM_HF.type = 'type'; // transformers wrote `type` before `rope_type`
// Keys of transformers' newer rope_parameters that are not scaling settings: the base and the rotary
// fraction (read from a config; in a bare scaling object rope_theta stands for `base`).
const PARAMETER_KEYS = ['rope_theta', 'partial_rotary_factor'];
const SCALING_ALLOWED = [...new Set([...Object.keys(SCALING_KEYS), ...Object.keys(FROM_HF), ...PARAMETER_KEYS])];
// transformers' type names that are not posenc's: 'default' and 'mrope' (Qwen2-VL: its frequencies
// are the default ones; the sections go to rope's mropeSection) are no scaling, 'su' was LongRoPE's
// first name.
const HF_TYPES = { default: 'none', mrope: 'none', su: 'longrope' };
const TYPES = ENUMS.scalingType;
// What each type needs. transformers raises on a missing required key of config.json's rope_scaling;
// posenc's camelCase form has documented defaults for all but factor.
const REQUIRED = {
  linear: ['factor'],
  ntk: ['factor'],
  dynamic: ['factor'],
  yarn: ['factor', 'originalMaxPositions'],
  llama3: ['factor', 'originalMaxPositions'],
  longrope: ['shortFactor', 'longFactor', 'originalMaxPositions'],
};
const REQUIRED_HF = { ...REQUIRED, llama3: [...REQUIRED.llama3, 'lowFreqFactor', 'highFreqFactor'] };

// posenc's name for a transformers scaling type; other values pass through to be checked.
const posencType = (t) => (typeof t === 'string' && Object.hasOwn(HF_TYPES, t) ? HF_TYPES[t] : t);
const isSnake = (k) => k.includes('_');

function plainObject(c, name, v) {
  if (typeof v !== 'object' || v === null || Array.isArray(v) || ArrayBuffer.isView(v)) throw c.type(`${name} must be an object, got ${describe(v)}`);
  return Object.fromEntries(Object.keys(v).map((k) => [k, v[k]])); // each key read once
}

// A scaling object -> { type, ...camelCase values, base?, hf } with every key known, or null for no
// scaling. `name` names it in messages; `context` supplies values from the rest of a config
// ({ originalMaxPositions }), which the object's own keys override. Null values count as absent
// (config.json writes null for "not set").
export function readScaling(c, s, name = 'scaling', context = {}) {
  if (s === undefined || s === null) return null;
  const given = plainObject(c, name, s);
  c.keys(name, given, SCALING_ALLOWED);
  const hf = Object.keys(given).some((k) => isSnake(k));
  const v = {};
  for (const [key, value] of Object.entries(given)) {
    if (value === undefined || value === null || PARAMETER_KEYS.includes(key)) continue;
    const k = FROM_HF[key] ?? key;
    if (k === 'type' && 'type' in v) {
      // transformers copies rope_type into type: both may be there, and must agree
      if (posencType(v.type) !== posencType(value))
        throw c.type(`${name} has type ${describe(v.type)} and rope_type ${describe(value)}: they must agree`);
      continue;
    }
    if (k in v) throw c.type(`${name} has both ${k} and ${SCALING_KEYS[k]}: pass one`);
    v[k] = value;
  }
  if (given.partial_rotary_factor !== undefined && given.partial_rotary_factor !== null)
    throw c.type(`${name}.partial_rotary_factor changes the rotary dimension: pass the whole config as config, or rotaryDim`);
  const type = c.oneOf(`${name}.type`, posencType(v.type ?? (hf ? 'default' : undefined)), TYPES);
  const out = { type, hf, where: name };
  if (given.rope_theta !== undefined && given.rope_theta !== null) out.base = c.base(given.rope_theta, `${name}.rope_theta`);
  if (v.mropeSection !== undefined)
    out.mropeSection = Array.from(c.numbers(`${name}.mropeSection`, v.mropeSection, { integer: true, min: 0, max: LIMITS.maxRotaryDim }));
  if (type === 'none') {
    const extra = Object.keys(v).filter((k) => k !== 'type' && k !== 'mropeSection');
    if (extra.length) throw c.type(`${name} has no scaling type (or 'default') but sets ${extra.join(', ')}: give its type`);
    return out;
  }
  for (const [k, value] of Object.entries({ ...context, ...v })) {
    if (k === 'type' || k === 'mropeSection') continue;
    if (k === 'truncate') out.truncate = c.bool(`${name}.truncate`, value);
    else if (k === 'shortFactor' || k === 'longFactor') out[k] = c.numbers(`${name}.${k}`, value);
    else out[k] = c.number(`${name}.${hf && k in SCALING_KEYS ? SCALING_KEYS[k] : k}`, value);
  }
  for (const k of (hf ? REQUIRED_HF : REQUIRED)[type])
    if (out[k] === undefined) {
      const spelled = hf ? SCALING_KEYS[k] : k;
      throw c.type(`'${type}' scaling needs ${name}.${spelled}${Object.hasOwn(given, spelled) ? ` (got ${describe(given[spelled])})` : ''}`);
    }
  if (out.attentionFactor !== undefined && (out.shortMscale !== undefined || out.longMscale !== undefined))
    throw c.type(`${name} sets both attentionFactor and short/long mscale: pass one`);
  if ((out.shortMscale !== undefined || out.longMscale !== undefined) && type !== 'longrope')
    throw c.type(`${name}: shortMscale and longMscale belong to 'longrope' scaling, not '${type}'`);
  return out;
}

// Everything of a config.json that RoPE depends on, read as transformers reads it:
//   { headDim, rotaryDim, base, scaling (readScaling's form, or null), maxPositions, mropeSection }
// - the head: head_dim (DeepSeek's MLA: qk_rope_head_dim, the rotary part; 0 or null: hidden_size /
//   num_attention_heads), times the rotary fraction (partial_rotary_factor or a synonym, CONFIG_KEYS),
//   or rotary_dim (GPT-J, CodeGen: the rotary channels themselves);
// - the base: rope_theta or a synonym, 10000 when absent (transformers' default_theta);
// - the scaling: rope_scaling, or rope_parameters (transformers 5: one object with rope_type,
//   rope_theta, partial_rotary_factor and the scaling keys; or one such object per layer type, which
//   is refused: pick the layer type's object yourself);
// - the original context length of yarn, llama3, longrope and dynamic: the scaling's own, else the
//   top-level original_max_position_embeddings (Phi-3), else max_position_embeddings. For LongRoPE
//   with a top-level original length, transformers takes factor = max_position_embeddings / it.
// A multimodal config whose language model sits under text_config is read there. Values given in
// two places must agree; a key that changes the frequencies in a way posenc does not read (REFUSED)
// is a TypeError saying what to pass instead, never ignored.

// The top-level keys that set a RoPE setting, by the setting. The keys of one setting are its names in
// different model families, read as those models' code reads them; a config that gives two must give
// one value.
const SYNONYMS = {
  // GPT-NeoX, Pythia, Qwen (1), nomic-bert: rotary_emb_base; Phi-3-small: rope_embedding_base
  base: ['rope_theta', 'rotary_emb_base', 'rope_embedding_base'],
  // Qwen (1): kv_channels, the channels of each head
  head: ['head_dim', 'kv_channels'],
  // GPT-NeoX, Pythia, Qwen (1): rotary_pct; StableLM-epoch: rope_pct (each int(head * fraction), as
  // transformers' partial_rotary_factor); nomic-bert: rotary_emb_fraction (head * fraction, not rounded:
  // it must be a whole number of channels)
  fraction: ['partial_rotary_factor', 'rotary_pct', 'rope_pct', 'rotary_emb_fraction'],
  // GPT-2's names, which GPT-J, CodeGen, Falcon and nomic-bert keep (transformers' attribute_map)
  hidden: ['hidden_size', 'n_embd'],
  heads: ['num_attention_heads', 'n_head'],
};
const UNROUNDED_FRACTION = ['rotary_emb_fraction'];

// Keys that change the frequencies (or replace RoPE) in a way a config cannot pass to posenc: what
// each means, and what to pass instead (`at` is the config's name, e.g. 'config.text_config'; `dim`
// the option for the rotary dimension: `dim` for ropeFrequencies, `rotaryDim` elsewhere). A key
// with a value listed in `inert` (or null) changes nothing and is allowed.
const REFUSED = {
  rope_local_base_freq: {
    means: "is the base of Gemma 3's sliding-window layers (unscaled; rope_theta and rope_scaling are its full-attention layers')",
    instead: (at, dim) =>
      `for the sliding-window layers pass base: ${at}.rope_local_base_freq and ${dim} instead of config; for the full-attention layers pass config: { ...${at}, rope_local_base_freq: null }`,
  },
  global_rope_theta: {
    means: "is the base of ModernBERT's global-attention layers (local_rope_theta is its sliding-window layers')",
    instead: (at, dim) => `pass base: ${at}.global_rope_theta (or ${at}.local_rope_theta for the local layers) and ${dim} instead of config`,
  },
  local_rope_theta: {
    means: "is the base of ModernBERT's sliding-window layers (global_rope_theta is its global-attention layers')",
    instead: (at, dim) => `pass base: ${at}.local_rope_theta (or ${at}.global_rope_theta for the global layers) and ${dim} instead of config`,
  },
  rope_ratio: {
    means: "multiplies ChatGLM's base of 10000, and ChatGLM rotates the first half of each head, in interleaved pairs",
    instead: (at, dim) => `pass base: 10000 * ${at}.rope_ratio, ${dim}: ${at}.kv_channels / 2 and layout: 'interleaved' instead of config`,
  },
  original_rope: {
    means: 'marks ChatGLM, which rotates the first half of each head, in interleaved pairs, with base 10000 * rope_ratio',
    instead: (at, dim) => `pass base: 10000 * (${at}.rope_ratio ?? 1), ${dim}: ${at}.kv_channels / 2 and layout: 'interleaved' instead of config`,
  },
  use_dynamic_ntk: {
    inert: [false],
    means: "turns on Qwen's own dynamic NTK, which raises the base past seq_length (posenc has no such scaling)",
    instead: (at) => `for positions below ${at}.seq_length the frequencies are the unscaled ones: pass config: { ...${at}, use_dynamic_ntk: false }`,
  },
  rotary_scaling_factor: {
    means: "is nomic-bert's dynamic NTK scaling, which posenc does not have",
    instead: (at) =>
      `for positions below ${at}.max_trained_positions the frequencies are the unscaled ones: pass config: { ...${at}, rotary_scaling_factor: null }`,
  },
  rotary_emb_scale_base: {
    means: 'turns on xPos, which a config does not pass to posenc',
    instead: (at, dim) =>
      `pass base and ${dim} instead of config, with the xpos option (xpos: { scaleBase }, and role) after checking its centre against the model's`,
  },
  rope_position_scale: {
    inert: [1],
    means: "multiplies Phi-3-small's positions",
    instead: (at) => `pass positions multiplied by ${at}.rope_position_scale, with config: { ...${at}, rope_position_scale: 1 }`,
  },
  alibi: {
    inert: [false],
    means: 'says the model (Falcon) uses ALiBi, not RoPE',
    instead: () => 'use alibiSlopes / alibiBias instead of RoPE',
  },
};

// The pairs RoPE rotates are not in a config.json: the model's code picks them. These families'
// code (transformers' modeling files) rotates interleaved pairs (x0, x1), (x2, x3), … (rotate_every_two,
// or a rotate_half over x[..., 0::2] and x[..., 1::2]); every other family transformers ships rotates
// (x_i, x_{i+d/2}), posenc's 'half'. nomic-bert says it with rotary_emb_interleaved, DeepSeek-V3 with
// rope_interleave.
const INTERLEAVED_MODELS = ['gptj', 'codegen', 'cohere', 'cohere2', 'glm', 'glm4', 'helium'];
const LAYOUT_FLAGS = ['rotary_emb_interleaved', 'rope_interleave'];

// The config.json fields readConfig reads (at the top level, or under text_config), in this order.
const CONFIG_FIELDS = [
  ...SYNONYMS.head,
  'qk_rope_head_dim',
  ...SYNONYMS.hidden,
  ...SYNONYMS.heads,
  ...SYNONYMS.fraction,
  'rotary_dim',
  ...SYNONYMS.base,
  'rope_scaling',
  'rope_parameters',
  'layer_types',
  'max_position_embeddings',
  'original_max_position_embeddings',
  'model_type',
  ...LAYOUT_FLAGS,
  ...Object.keys(REFUSED),
];
// A config with none of these at its top level is read under its text_config, if it has one.
const TOP_LEVEL_ROPE = [...SYNONYMS.base, ...SYNONYMS.head, 'rope_scaling', 'rope_parameters', ...SYNONYMS.hidden, ...Object.keys(REFUSED)];

// headDim: the head size to use when the config gives none (rope's: x's channels per head).
export function readConfig(c, config, name = 'config', headDim = undefined) {
  let cfg = plainObject(c, name, config);
  const top = name;
  if (!TOP_LEVEL_ROPE.some((k) => cfg[k] !== undefined) && cfg.text_config && typeof cfg.text_config === 'object') {
    name = `${name}.text_config`;
    cfg = plainObject(c, name, cfg.text_config);
  }
  const at = (k) => (cfg[k] === null ? undefined : cfg[k]);
  for (const [k, { inert = [], means, instead }] of Object.entries(REFUSED)) {
    const v = at(k);
    if (v !== undefined && !inert.includes(v))
      throw c.type(`${name}.${k} (${describe(v)}) ${means}: ${instead(name, c.fn === 'ropeFrequencies' ? 'dim' : 'rotaryDim')}`);
  }
  let params = at('rope_parameters');
  const scalingObject = at('rope_scaling');
  if (params !== undefined) {
    params = plainObject(c, `${name}.rope_parameters`, params);
    const layerTypes = Array.isArray(cfg.layer_types) ? cfg.layer_types : [];
    const keys = Object.keys(params);
    if (keys.length && keys.every((k) => layerTypes.includes(k) || /_attention$/.test(k)))
      throw c.type(
        `${name}.rope_parameters holds one set per layer type (${keys.join(', ')}): pass the one you want, e.g. config: { ...config, rope_parameters: config.rope_parameters.${keys[0]} }`,
      );
    if (scalingObject !== undefined) throw c.type(`${name} has both rope_scaling and rope_parameters: pass one`);
  }
  // the first of a setting's keys that is given, after checking that the others given agree with it
  const one = (what, candidates) => {
    const found = candidates.filter(([, v]) => v !== undefined && v !== null);
    for (const [k, v] of found.slice(1))
      if (v !== found[0][1])
        throw c.type(`${name}.${found[0][0]} (${describe(found[0][1])}) and ${name}.${k} (${describe(v)}) disagree on the ${what}`);
    return found[0];
  };
  const topLevel = (setting) => SYNONYMS[setting].map((k) => [k, at(k)]);
  const [baseKey, baseValue] = one('base', [['rope_parameters.rope_theta', params?.rope_theta], ...topLevel('base')]) ?? ['rope_theta', undefined];
  const base = c.base(baseValue, `${name}.${baseKey}`);
  // the head and its rotary part
  const head = one(
    'head dimension',
    topLevel('head').filter(([, v]) => v !== 0),
  ); // head_dim 0: not set
  const headKey = at('qk_rope_head_dim') ? 'qk_rope_head_dim' : (head?.[0] ?? 'head_dim');
  const given = at('qk_rope_head_dim') || head?.[1];
  const hiddenGiven = given ? undefined : one('hidden size', topLevel('hidden'));
  const headsGiven = given ? undefined : one('number of heads', topLevel('heads'));
  if (given) headDim = given;
  else if (hiddenGiven || headsGiven) {
    const [hiddenKey, hiddenValue] = hiddenGiven ?? ['hidden_size'];
    const [headsKey, headsValue] = headsGiven ?? ['num_attention_heads'];
    const hidden = c.int(`${name}.${hiddenKey}`, hiddenValue, { min: 1 });
    const heads = c.int(`${name}.${headsKey}`, headsValue, { min: 1 });
    if (hidden % heads) throw c.range(`${name}.${hiddenKey} (${hidden}) is not a multiple of ${name}.${headsKey} (${heads}); give ${name}.head_dim`);
    headDim = hidden / heads;
  } else if (headDim === undefined) {
    // nothing gives the head size (a config of the RoPE fields alone), and no tensor does either
    const scalingKey = at('rope_parameters') !== undefined ? 'rope_parameters' : 'rope_scaling';
    const dim = { ropeFrequencies: 'dim', ropeCache: 'rotaryDim' }[c.fn];
    throw c.type(
      `${name} gives no head size: head_dim, or hidden_size and num_attention_heads` +
        (dim ? `; add them, or pass ${dim} with ${name}.rope_theta as base and ${name}.${scalingKey} as scaling instead of config` : '; add them'),
    );
  }
  headDim = c.int(`${name}.${headKey}`, headDim, { min: 2, max: LIMITS.maxRotaryDim });
  const partial = one('rotary fraction', [['rope_parameters.partial_rotary_factor', params?.partial_rotary_factor], ...topLevel('fraction')]);
  let rotaryDim;
  if (at('rotary_dim') !== undefined) {
    if (partial) throw c.type(`${name} has both rotary_dim and ${partial[0]}: pass one`);
    rotaryDim = c.int(`${name}.rotary_dim`, at('rotary_dim'), { min: 2, max: headDim });
  } else {
    const factor = partial ? c.number(`${name}.${partial[0]}`, partial[1], { min: 0, max: 1, minExclusive: true }) : 1;
    rotaryDim = Math.floor(headDim * factor);
    if (partial && UNROUNDED_FRACTION.includes(partial[0]) && rotaryDim !== headDim * factor)
      throw c.range(
        `${name}.${partial[0]} (${factor}) of the head ${headDim} is ${headDim * factor} channels, not a whole number: pass rotaryDim instead of config`,
      );
  }
  if (rotaryDim < 2 || rotaryDim % 2)
    throw c.range(`the rotary dimension of ${name} is ${rotaryDim} (head ${headDim}); it must be an even integer >= 2`);
  const maxPositions = at('max_position_embeddings');
  const topOriginal = at('original_max_position_embeddings');
  const rs = params ?? scalingObject;
  const rsName = `${name}.${params ? 'rope_parameters' : 'rope_scaling'}`;
  let scaling = null;
  let mropeSection;
  if (rs !== undefined) {
    const raw = plainObject(c, rsName, rs);
    delete raw.rope_theta; // read above, with the rotary fraction
    delete raw.partial_rotary_factor;
    const type = posencType(raw.rope_type ?? raw.type ?? 'default');
    const inner = raw.original_max_position_embeddings ?? raw.originalMaxPositions;
    const context = {};
    if (['yarn', 'llama3', 'longrope', 'dynamic'].includes(type)) {
      if (inner != null && topOriginal !== undefined && inner !== topOriginal)
        throw c.type(
          `${rsName}.original_max_position_embeddings (${inner}) and ${name}.original_max_position_embeddings (${topOriginal}) differ (transformers versions disagree on which wins): remove one`,
        );
      const original = topOriginal ?? (type === 'longrope' || type === 'dynamic' || type === 'yarn' ? maxPositions : undefined);
      if (original !== undefined) context.originalMaxPositions = original;
    }
    scaling = readScaling(c, raw, rsName, context);
    if (scaling.type === 'longrope' && topOriginal !== undefined && typeof maxPositions === 'number') {
      // transformers (Phi-3): the factor of the attention scale is the context extension itself
      scaling.factor = maxPositions / topOriginal;
      scaling.originalMaxPositions = topOriginal;
    }
    mropeSection = scaling.mropeSection;
    delete scaling.base;
    delete scaling.mropeSection;
    if (scaling.type === 'none') scaling = null;
  }
  const prefix = name === top ? '' : `${name.slice(top.length + 1)}.`; // 'text_config.' when read there
  // the pairs rotated: what model_type says, then each flag, which must agree with what came before
  let layout = INTERLEAVED_MODELS.includes(at('model_type')) ? 'interleaved' : undefined;
  let said = layout && `the pairs ${name}.model_type ('${at('model_type')}') rotates`;
  for (const k of LAYOUT_FLAGS) {
    const v = at(k);
    if (v === undefined) continue;
    if (typeof v !== 'boolean') throw c.type(`${name}.${k} must be true or false, got ${describe(v)}`);
    const flagged = v ? 'interleaved' : 'half';
    if (layout !== undefined && layout !== flagged) throw c.type(`${name}.${k} (${v}) contradicts ${said} (${layout}): remove one`);
    [layout, said] = [flagged, `${name}.${k} (${v})`];
  }
  return {
    headDim,
    rotaryDim,
    base,
    scaling,
    maxPositions: typeof maxPositions === 'number' ? maxPositions : undefined,
    ...(mropeSection ? { mropeSection } : {}),
    ...(layout ? { layout } : {}),
    fields: CONFIG_FIELDS.filter((k) => cfg[k] !== undefined).map((k) => prefix + k),
  };
}

// The core names a scaling's fields as posenc's camelCase option does (`scaling.shortFactor`); a
// scaling read from a config.json, or written in its spelling, is named as the user wrote it
// (`config.rope_scaling.short_factor`). Returns the error to throw.
export function nameScalingError(e, scaling) {
  if (!scaling?.where || !(e instanceof TypeError || e instanceof RangeError)) return e;
  const message = e.message.replace(/\bscaling\.([A-Za-z]+)/g, (_, k) => `${scaling.where}.${scaling.hf ? (SCALING_KEYS[k] ?? k) : k}`);
  return message === e.message ? e : new e.constructor(message);
}

// A read scaling as it crosses the boundary: { fields: { type, factor, ... } (SCALING_FIELDS, named as
// src/bindings/bindings.cpp ScalingArgs takes them), shortFactor?, longFactor? }, or undefined for none.
// The type is its index in ENUMS.scalingType; a field not given is NaN: the core applies its default
// (posenc::rope::Scaling). `seqLength` (the current length, for dynamic and longrope) applies unless
// the scaling sets its own.
export function packScaling(scaling, seqLength) {
  if (!scaling || scaling.type === 'none') return undefined;
  const fields = {};
  for (const k of SCALING_FIELDS) {
    if (k === 'type') fields[k] = TYPES.indexOf(scaling.type);
    else if (k === 'truncate') fields[k] = scaling.truncate === undefined ? NaN : +scaling.truncate;
    else if (k === 'seqLength') fields[k] = scaling.seqLength ?? seqLength ?? NaN;
    else fields[k] = scaling[k] ?? NaN;
  }
  return { fields, shortFactor: scaling.shortFactor, longFactor: scaling.longFactor };
}

// The public reading of a config: what posenc takes from it, with the scaling in camelCase.
export const ropeConfig = guarded('ropeConfig', function ropeConfig(config) {
  const c = new Checker('ropeConfig');
  const r = readConfig(c, config);
  if (r.scaling) {
    const scaling = { ...r.scaling };
    delete scaling.hf;
    delete scaling.where;
    for (const k of ['shortFactor', 'longFactor']) if (scaling[k]) scaling[k] = Array.from(scaling[k]);
    r.scaling = scaling;
  }
  return r;
});
