// The input pipeline of a transformer: token ids -> token embedding (Xavier uniform)
// -> × √d_model -> + positional encoding, with the statistics of each stage.
import { param } from './numeric.js';
import { diverging, fixed, heatmap, plural } from './spec.js';

export function inputPipeline(pe, { length = 32, dModel = 64, scale = true, vocabSize = 1000, seed = 0 } = {}) {
  param('inputPipeline', 'length', length, { min: 1, max: 1e5 });
  const ids = Array.from({ length }, (_, i) => (i * 7919 + 13) % vocabSize); // a fixed stand-in sentence
  const emb = pe.tokenEmbedding({ vocabSize, dModel, seed, scale });
  const x = emb.lookup(ids);
  emb.dispose();
  const p = pe.sinusoidal({ length, dModel });
  const y = pe.addPositional(x, p);
  const [sx, sp, sy] = [x, p, y].map((t) => pe.stats(t));
  const m = Math.max(...[sx, sp, sy].flatMap((s) => [Math.abs(s.min), Math.abs(s.max)]));
  const color = diverging(m);
  const ratio = sp.std / sx.std;
  const token = scale ? `token embedding × √${dModel}` : 'token embedding (no √d)';
  const dominant =
    ratio > 3
      ? `the positional term dominates: its spread is ${ratio.toFixed(1)}× the tokens'`
      : ratio < 1 / 3
        ? `the token term dominates (${(1 / ratio).toFixed(1)}×)`
        : `both terms are of a similar size (PE/token spread ${ratio.toFixed(2)})`;
  const fmt = (s) => `mean ${fixed(s.mean, 4)}, std ${fixed(s.std, 4)}, range [${fixed(s.min, 3)}, ${fixed(s.max, 3)}]`;
  const panel = (t, title, legend) =>
    heatmap(t.data, length, dModel, { xLabel: 'dimension →', yLabel: '↓ position', color, title, width: 290, legend });
  return {
    numbers: { token: sx, position: sp, sum: sy, ratio },
    lines: [
      [`${token}:`, fmt(sx)],
      ['positional encoding:', fmt(sp)],
      ['sum (the layer input):', fmt(sy)],
      ['So:', dominant + '.', 'note'],
    ],
    panels: [panel(x, token, true), panel(p, '+ positional encoding', false), panel(y, '= input to the first layer', false)],
    takeaway: `${scale ? 'With' : 'Without'} the √d_model scaling, ${ratio > 3 ? 'the positions drown the words' : ratio < 1 / 3 ? 'the positions are a small nudge on the words' : 'neither term drowns the other'} (position/token spread ${ratio.toFixed(2)}).`,
    caption: `${plural(length, 'token')}, d_model = ${dModel}, one colour scale for all three: ${scale ? 'scaled by √d_model, the token embeddings' : 'without the √d_model scaling, the Xavier-initialised token embeddings'} have std ${sx.std.toFixed(4)} against ${sp.std.toFixed(4)} for the positional encoding, so ${dominant}. The mean moves from ${fixed(sx.mean, 4)} to ${fixed(sy.mean, 4)} once positions are added (the cosine columns start at 1).`,
    alt: `Three heatmaps: token embeddings (std ${sx.std.toFixed(3)}), positional encoding (std ${sp.std.toFixed(3)}) and their sum (mean ${fixed(sy.mean, 3)}).`,
  };
}
