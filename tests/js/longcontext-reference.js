// Train short, test long computed by hand from trainToy's own calls (run, clone, step, evaluate), one
// model at a time, as README's trainer section describes them: the reference that the page's experiment
// (web/figures/longcontext.js, in a Worker or in Node) must match bit for bit.
// rows: { key: [encoding, scaling type at test time or null, fine-tune ('none' | scaling type) or null] }
const ROWS = {
  none: ['none'],
  sinusoidal: ['sinusoidal'],
  rope: ['rope'],
  alibi: ['alibi'],
  t5: ['t5'],
  'rope+linear': ['rope', 'linear'],
  'rope+ntk': ['rope', 'ntk'],
  'rope+yarn': ['rope', 'yarn'],
  'rope+llama3': ['rope', 'llama3'],
  ft: ['rope', null, 'none'],
  'ft+linear': ['rope', 'linear', 'linear'],
  'ft+yarn': ['rope', 'yarn', 'yarn'],
};

// [{ key, seed, length, accuracy }] sorted by key, seed and length.
// Each encoding's model of each seed is trained once, for all the rows that start from it (eight rows
// start from RoPE's): asking a model (evaluate) leaves it unchanged, and a fine-tune works on a clone.
export async function byHand(lab, { length, steps, seeds, firstSeed = 0, tuneSteps, rows = Object.keys(ROWS), multiples = [2, 4, 8] }) {
  const out = [];
  const trained = new Map(); // `${encoding} ${seed}` -> its model, trained
  for (const key of rows) {
    const [encoding, atTest, fineTune] = ROWS[key];
    for (let seed = firstSeed; seed < firstSeed + seeds; seed++) {
      let base = trained.get(`${encoding} ${seed}`);
      if (!base) {
        base = lab.trainToy({ task: 'before', encoding, length, steps, seed });
        await base.run();
        trained.set(`${encoding} ${seed}`, base);
      }
      let model = base;
      if (fineTune) {
        model = base.clone();
        const options = { length: 2 * length };
        if (fineTune !== 'none') options.scaling = { type: fineTune, factor: 2 };
        model.step(tuneSteps, options);
      }
      for (const L of [length, ...multiples.map((m) => m * length)]) {
        if (L === length && fineTune && fineTune !== 'none') continue; // never ran there unscaled
        const options = { length: L };
        if (atTest && L !== length) options.scaling = { type: atTest, factor: L / length };
        out.push({ key, seed, length: L, accuracy: model.evaluate(options) });
      }
      if (model !== base) model.dispose();
    }
  }
  for (const model of trained.values()) model.dispose();
  return sortResults(out);
}

export const sortResults = (results) =>
  [...results].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0) || a.seed - b.seed || a.length - b.length);
