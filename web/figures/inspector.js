// The RoPE config inspector: a Hugging Face config.json -> what its rope_scaling does to each
// frequency. The config is read by the package (ropeConfig, as every RoPE call reads it, the way
// transformers' modeling_rope_utils.py does) and the frequencies come from pe.ropeFrequencies; this
// file only compares and draws.
import * as Plot from '@observablehq/plot';
import { ropeConfig } from 'posenc';
import { CONFIGS } from './hf-configs.js';
import { SCALING_COLOURS } from './relative.js';
import { niceTicks } from './spec.js';

// The presets: published config.json files (web/figures/hf-configs.js, the RoPE fields as written there).
export const PRESETS = {
  'Llama 3.1 8B': CONFIGS['Llama 3.1 8B'],
  'Qwen2.5 7B (with the model card’s YaRN block)': CONFIGS['Qwen2.5 7B Instruct, YaRN (model card)'],
  'DeepSeek-V3': CONFIGS['DeepSeek-V3'],
  'Phi-3 mini 128k': CONFIGS['Phi-3 mini 128k'],
  'gpt-oss 20b': CONFIGS['gpt-oss 20b'],
};

// text (config.json as typed) -> { config } or { error } with a message for the reader.
export function parseConfig(text) {
  let config;
  try {
    config = JSON.parse(text);
  } catch (e) {
    return { error: `This is not valid JSON: ${e.message}` };
  }
  if (typeof config !== 'object' || config === null || Array.isArray(config)) return { error: 'A config.json is one JSON object ({ … }).' };
  return { config };
}

// Each band: interpolated (stretched by the full factor), extrapolated (unchanged) or blended.
export function classify(ratio, factor) {
  if (Math.abs(ratio - 1) < 1e-3) return 'extrapolated (unchanged)';
  if (factor > 1 && Math.abs(ratio / factor - 1) < 1e-3) return 'interpolated (×factor)';
  return 'blended';
}

const CLASS_COLOURS = { 'extrapolated (unchanged)': '#555555', 'interpolated (×factor)': '#4e79a7', blended: '#f28e2c' };

// A config the package reads but the page does not draw (its message is the reader's, as it is).
export class DrawingLimit extends Error {}
const MAX_DRAWN_DIM = 4096;

// Round distances on the q·k panel's log-like axis, written 0, 10, 100, 1k, 10k, 100k, 1M.
const DISTANCE_TICKS = [0, 10, 100, 1000, 10000, 100000, 1000000];
const distanceLabel = (v) => (v >= 1e6 ? `${v / 1e6}M` : v >= 1000 ? `${v / 1000}k` : String(v));

// What the inspector draws for a config. The package reads it (ropeConfig: transformers' 'default'
// and Qwen2-VL's 'mrope' are no scaling; a bad config throws the package's error, named as the config
// spells it); the display's own choices:
//  - "after" is the frequencies at the extended context: for dynamic NTK and LongRoPE that is the
//    sequence length they are computed at (dynamic NTK raises the base only once a sequence is longer
//    than the original context; LongRoPE switches to its long factors there);
//  - without max_position_embeddings the trained context is unknown, and said so.
export function inspectConfig(pe, config) {
  const read = ropeConfig(config);
  pe.ropeFrequencies({ config }); // the core's checks of the values, named as the config spells them
  // a figure's bound, not the package's: a head of 100000 dimensions took tasks of 650 ms to draw
  if (read.rotaryDim > MAX_DRAWN_DIM)
    throw new DrawingLimit(
      `the inspector draws rotary heads of up to ${MAX_DRAWN_DIM} dimensions (models use 64 to 256); this config's rotary dimension is ${read.rotaryDim}.`,
    );
  const s = read.scaling;
  const scaled = s !== null;
  const type = scaled ? s.type : 'default';
  const original = s?.originalMaxPositions ?? read.maxPositions;
  // The context the scaling reaches: the config's max_position_embeddings, or original × factor where
  // the file keeps the original length there (Qwen2.5's model card adds YaRN x4 to a config that still
  // says 32768).
  const extended = Math.max(read.maxPositions ?? 0, scaled && s.factor && original ? original * s.factor : 0) || original;
  const frequencies = (scaling) => pe.ropeFrequencies({ dim: read.rotaryDim, base: read.base, ...(scaling && { scaling }) });
  const atExtended = scaled && (type === 'longrope' || type === 'dynamic') && extended ? { ...s, seqLength: extended } : s;
  const scaledFreq = frequencies(atExtended);
  const plain = frequencies(null);
  const factor = scaled ? (s.factor ?? (original && extended ? extended / original : 1)) : 1;
  const dim = read.rotaryDim;
  const bands = Array.from(scaledFreq.invFreq, (w, i) => {
    const before = (2 * Math.PI) / plain.invFreq[i];
    const after = (2 * Math.PI) / w;
    return { i, before, after, ratio: after / before, kind: classify(after / before, factor) };
  });
  const count = (k) => bands.filter((b) => b.kind === k).length;
  const counts = Object.fromEntries(Object.keys(CLASS_COLOURS).map((k) => [k, count(k)]));
  // the bands in words, short and in full, the kinds with none left out (LongRoPE stretches each band by
  // a factor of its own)
  const own = type === 'longrope';
  const bandWords = [
    [counts['extrapolated (unchanged)'], 'fast bands kept', 'fast bands keep their wavelength (extrapolated)'],
    [counts['interpolated (×factor)'], `stretched ${factor}×`, `bands are stretched by the full factor ${factor} (interpolated)`],
    [
      counts.blended,
      own ? 'stretched by factors of their own' : 'blended',
      own ? 'bands are each stretched by a factor of their own' : 'bands are blended in between',
    ],
  ].filter(([n]) => n);
  const bandsShort = bandWords.map(([n, short]) => `${n} ${short}`).join(', ');
  const bandSentence = bandWords.map(([n, , full]) => `${n} ${full}`).join(', ') || 'no bands';
  const ignored = Object.keys(config).filter((k) => !read.fields.includes(k) && k !== 'text_config');

  // q·k for q = k = (1, …, 1) at distance Δ: attentionFactor² · mean_i cos(Δ θ_i) (Su et al.'s decay),
  // out to twice the extended context (or, when the config gives none, twice the longest wavelength).
  const span = extended ?? Math.min(1e6, Math.ceil(Math.max(...bands.map((b) => b.before))));
  const distances = [0, ...Array.from({ length: 240 }, (_, j) => Math.round(10 ** ((j / 239) * Math.log10(Math.max(2 * span, 16)))))].filter(
    (v, j, a) => a.indexOf(v) === j,
  );
  const decay = (inv, af) => distances.map((d) => (af * af * inv.reduce((s, w) => s + Math.cos(d * w), 0)) / inv.length);
  const label = scaled ? type : 'default';
  const [b, a] = [decay(plain.invFreq, 1), decay(scaledFreq.invFreq, scaledFreq.attentionFactor)];
  const curve = scaled
    ? distances.flatMap((d, j) => [
        { distance: d, score: b[j], rope: 'no scaling' },
        { distance: d, score: a[j], rope: label },
      ])
    : distances.map((d, j) => ({ distance: d, score: b[j], rope: 'no scaling' }));
  const colour = SCALING_COLOURS[type] ?? '#4e79a7';
  const rules = [original, extended].filter((v, j, arr) => v && arr.indexOf(v) === j);
  const theta = read.base;
  const mrope = read.mropeSection
    ? ` (M-RoPE: the sections [${read.mropeSection}] say which position stream each band of channels follows; the frequencies are the default ones)`
    : '';
  // transformers multiplies cos and sin (so q and k) by the attention factor: the logits by its square
  const af = scaledFreq.attentionFactor.toFixed(4);
  const af2 = (scaledFreq.attentionFactor ** 2).toFixed(4);
  // where the original context comes from: the scaling's own field (the pre-scaling, training length) or,
  // without one, max_position_embeddings (as transformers reads it then)
  const fromScaling = s?.originalMaxPositions !== undefined; // the scaling names its pre-scaling (training) context
  const originalFrom = !scaled || original === undefined ? '' : fromScaling ? ' (original_max_position_embeddings)' : ' (max_position_embeddings)';
  const summary = [
    ['Rotary dimension:', `${dim} (${dim / 2} frequencies), rope_theta ${theta}`],
    [
      'Pairs rotated:',
      read.layout === 'interleaved'
        ? "interleaved, (x0, x1), (x2, x3), … as GPT-J's code rotates them (pe.rope's layout 'interleaved', read from the config)"
        : "(x_i, x_i+d/2), transformers' rotate_half (pe.rope's layout 'half')",
    ],
    [
      'Scaling:',
      scaled
        ? `${type}, factor ${factor}, ${fromScaling ? 'original (pre-scaling, training) context' : 'original context'} ${original ?? 'not given'}${originalFrom}, ${extended ? `extended to ${extended}` : 'context length not given'}`
        : `none${mrope}`,
    ],
    ['Attention factor:', `${af} on cos and sin (so on q and k), hence the logits × ${af2} (its square)`],
    [
      'Bands:',
      Object.entries(counts)
        .map(([k, n]) => `${n} ${k}`)
        .join(', '),
    ],
  ];
  if (!scaled)
    summary.splice(2, 0, [
      'Context in the config (max_position_embeddings):',
      original
        ? `${original} positions: the longest the config allows, not necessarily the length the model was trained at`
        : 'not given: the config has no max_position_embeddings',
    ]);
  if (ignored.length)
    summary.push([
      'Not about RoPE (ignored):',
      `${ignored.length} field${ignored.length === 1 ? '' : 's'}: ${ignored.slice(0, 8).join(', ')}${ignored.length > 8 ? ', …' : ''}`,
      'note',
    ]);
  return {
    numbers: { dim, attentionFactor: scaledFreq.attentionFactor, counts, original, extended, factor },
    lines: summary,
    panels: [
      {
        title: 'wavelength of each frequency, before and after scaling',
        width: 900,
        height: 340,
        options: {
          marginRight: 20,
          x: { label: 'frequency index i →', ticks: niceTicks(dim / 2, 10), tickFormat: 'd' }, // whole indices, even for 4 pairs
          y: { type: 'log', label: '↑ wavelength (positions)', grid: true, tickFormat: '~s' },
          color: { legend: true, domain: Object.keys(CLASS_COLOURS), range: Object.values(CLASS_COLOURS) },
          marks: [
            Plot.ruleY(rules, { stroke: '#888', strokeDasharray: '4,4' }),
            Plot.text(rules, {
              x: 0,
              y: (d) => d,
              text: (d) => (!scaled ? `context in the config ${d}` : d === original ? `original context ${d}` : `extended context ${d}`),
              dy: -7,
              textAnchor: 'start',
              fill: '#555',
            }),
            Plot.line(bands, { x: 'i', y: 'before', stroke: '#999', strokeDasharray: '2,3' }),
            Plot.line(bands, { x: 'i', y: 'after', stroke: colour, strokeOpacity: 0.5 }),
            Plot.dot(bands, { x: 'i', y: 'after', fill: 'kind', r: 3 }),
          ],
        },
      },
      {
        title: 'q·k against distance for q = k = (1, …, 1), before and after',
        width: 900,
        height: 280,
        options: {
          marginRight: 20,
          x: {
            type: 'symlog',
            label: 'distance Δ (positions) →',
            ticks: DISTANCE_TICKS.filter((t) => t <= 2 * span),
            tickFormat: distanceLabel,
          },
          y: { label: '↑ q·k / dim', grid: true },
          color: { legend: true, domain: scaled ? ['no scaling', label] : ['no scaling'], range: scaled ? ['#999999', colour] : ['#999999'] },
          marks: [Plot.ruleX(rules, { stroke: '#888', strokeDasharray: '4,4' }), Plot.line(curve, { x: 'distance', y: 'score', stroke: 'rope' })],
        },
      },
    ],
    takeaway: scaled
      ? `${type}: ${bandsShort}; ${scaledFreq.attentionFactor === 1 ? 'cos and sin not rescaled' : `cos and sin × ${af}, so the logits × ${af2}`}.`
      : `No scaling: all ${dim / 2} frequencies keep their wavelengths${original ? `; the config allows ${original} positions (max_position_embeddings)` : ''}.`,
    caption: scaled
      ? `${type} scaling of a ${dim}-dimensional rotary head (rope_theta ${theta}) ${original ? `from ${original}${originalFrom} to ${extended} positions` : `by factor ${factor} (the config gives no context length: no max_position_embeddings)`}: ${bandSentence}. cos and sin (so q and k) are multiplied by the attention factor ${af}, so the attention logits by ${af}² = ${af2}.`
      : `No rope_scaling: all ${dim / 2} frequencies keep their wavelengths; ${original ? `the config allows ${original} positions (max_position_embeddings), which need not be the length the model was trained at` : 'the config has no max_position_embeddings, so it does not say how long a context the model takes'}.${mrope}`,
    alt: `Wavelengths per frequency before and after ${label} scaling; attention factor ${scaledFreq.attentionFactor.toFixed(4)}; ${counts['interpolated (×factor)']} bands interpolated.`,
    csv: bands,
  };
}

// LongRoPE's two lists for a model of CONFIGS (Phi-3): the wavelengths without scaling, with the
// short factors (sequences within the original window) and with the long ones (beyond it), as
// pe.ropeFrequencies computes them for a seqLength on either side of the original length.
export function longropeLists(pe, { model = 'Phi-3 mini 128k' } = {}) {
  const read = ropeConfig(CONFIGS[model]);
  const dim = read.rotaryDim;
  const base = read.base;
  const { invFreq: plain } = pe.ropeFrequencies({ dim, base });
  const original = read.scaling.originalMaxPositions;
  const extended = read.maxPositions;
  const at = (seqLength) => pe.ropeFrequencies({ dim, base, scaling: { ...read.scaling, seqLength } });
  const LISTS = ['no scaling', `seqLength ≤ ${original}: short_factor`, `seqLength > ${original}: long_factor`];
  const [short, long] = [at(original), at(extended)];
  const rows = [plain, short.invFreq, long.invFreq].flatMap((inv, n) =>
    Array.from(inv, (w, i) => ({ list: LISTS[n], i, wavelength: (2 * Math.PI) / w })),
  );
  const stretch = (inv) => Math.max(...Array.from(inv, (w, i) => plain[i] / w));
  return {
    numbers: { dim, base, original, extended, attentionFactor: long.attentionFactor, shortAttentionFactor: short.attentionFactor },
    panels: [
      {
        width: 760,
        height: 300,
        options: {
          x: { label: 'pair i →', ticks: niceTicks(dim / 2, 10), tickFormat: 'd' },
          y: { type: 'log', label: '↑ wavelength in positions (log scale)', tickFormat: '.0e' },
          color: { legend: true, domain: LISTS, range: ['#bbbbbb', '#4e79a7', '#e15759'] },
          marks: [
            Plot.ruleY([original, extended], { stroke: '#999', strokeDasharray: '4,3' }),
            Plot.text(
              [
                { y: original, t: `original ${original}` },
                { y: extended, t: `extended ${extended}` },
              ],
              { x: 1, y: 'y', text: 't', textAnchor: 'start', dy: -7, fill: '#666' },
            ),
            Plot.line(
              rows.filter((d) => d.list === LISTS[0]),
              { x: 'i', y: 'wavelength', stroke: 'list', strokeWidth: 6 },
            ),
            Plot.line(
              rows.filter((d) => d.list !== LISTS[0]),
              { x: 'i', y: 'wavelength', stroke: 'list', z: 'list', strokeWidth: 1.6 },
            ),
          ],
        },
      },
    ],
    caption: `${model}'s LongRoPE (head dim ${dim}, rope_theta ${base}, ${original} → ${extended} positions): one searched factor per pair divides its frequency, from the short list (at most ×${stretch(short.invFreq).toFixed(2)}) within the original window and from the long list (up to ×${stretch(long.invFreq).toFixed(2)}, on the slow pairs) beyond it. Both multiply cos and sin by ${long.attentionFactor.toFixed(4)}, so the logits by its square, ${(long.attentionFactor ** 2).toFixed(4)}.`,
    alt: `Wavelengths of the ${dim / 2} pairs of ${model}: unscaled, with the short factors and with the long factors.`,
    csv: rows,
  };
}
