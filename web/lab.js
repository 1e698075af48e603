// The shuffled-sentence lab: one toy self-attention layer on a sentence and on its shuffle.
import { fmt, heatmap, row } from './plots.js';
import { render } from './figure.js';
import { onChange, setParam, getParam, values } from './state.js';

const ENCODINGS = ['none', 'sinusoidal', 'learned', 'rope', 'alibi', 't5'];

function randomPermutation(n) {
  const p = [...Array(n).keys()];
  for (let i = n - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [p[i], p[j]] = [p[j], p[i]];
  }
  return p;
}

export function labFigures(pe) {
  let permutation = getParam('perm')?.split(',').map(Number) ?? null;
  const run = () => draw(pe, values('lab'), permutation);
  const retokenize = () => (permutation = null);

  document.querySelector('[data-action="shuffle"]').addEventListener('click', () => {
    const n = pe.permutationLab({ sentence: values('lab').sentence || ' ' }).tokens.length;
    let p;
    do p = randomPermutation(n);
    while (n > 1 && p.every((v, i) => v === i));
    permutation = p;
    setParam('perm', p.join(','));
    run();
  });
  document.querySelector('[data-action="reverse"]').addEventListener('click', () => {
    const n = pe.permutationLab({ sentence: values('lab').sentence || ' ' }).tokens.length;
    permutation = [...Array(n).keys()].reverse();
    setParam('perm', permutation.join(','));
    run();
  });
  document.querySelector('[data-control="sentence"]').addEventListener('input', () => {
    retokenize();
    setParam('perm', null);
  });
  onChange('lab', () => run());
}

function draw(pe, { sentence, encoding }, permutation) {
  const metric = document.querySelector('[data-metric="equivariance-error"]');
  let r;
  try {
    r = pe.permutationLab({ sentence, encoding, ...(permutation ? { permutation } : {}) });
  } catch (e) {
    if (permutation) return draw(pe, { sentence, encoding }, null); // the sentence changed length
    metric.textContent = '—';
    const p = document.createElement('p');
    p.className = 'error';
    p.textContent = `${e.constructor.name}: ${e.message}`;
    render('permutation-lab', { node: p, caption: 'The lab needs at least one word.' });
    return;
  }
  const L = r.tokens.length;
  const labels = r.tokens.map((t, i) => `${i}·${t}`);
  const plabels = r.permutedTokens.map((t, i) => `${i}·${t}`);

  metric.textContent = r.equivarianceError.toExponential(2);
  metric.dataset.value = String(r.equivarianceError);
  const broken = r.equivarianceError > 1e-4;

  const summary = document.createElement('div');
  summary.className = 'lab-summary';
  const line = (label, text, cls) => {
    const p = summary.appendChild(document.createElement('p'));
    p.appendChild(document.createElement('strong')).textContent = `${label} `;
    const span = p.appendChild(document.createElement('span'));
    span.textContent = text;
    if (cls) span.className = cls;
  };
  line('Original:', r.tokens.join(' '));
  line('Shuffled:', r.permutedTokens.join(' '));
  line('Encoding:', encoding);
  line('max |f(Px) − P f(x)| =', r.equivarianceError.toExponential(2));
  line('Mean-pooled outputs differ by', fmt(r.pooledDifference));
  line(
    'Verdict:',
    broken
      ? `with ${encoding} positions, shuffling changes what each word attends to: order is visible.`
      : 'the layer returns the same vectors, merely reordered: it cannot see word order (differences are float rounding).',
  );
  render('permutation-lab', {
    node: summary,
    caption: `Toy attention on "${r.tokens.join(' ')}" and its shuffle "${r.permutedTokens.join(' ')}" with encoding ${encoding}: equivariance error ${r.equivarianceError.toExponential(2)}, pooled difference ${r.pooledDifference.toExponential(2)}.`,
  });

  // Head 0 weights for both sentences, with token labels.
  const head = (t) => t.data.subarray(0, L * L);
  const opts = { diverging: false, scheme: 'Blues', domain: [0, 1], xLabel: 'key →', yLabel: 'query', width: 380 };
  render('attention-weights', {
    node: row(
      heatmap(head(r.weights), L, L, { ...opts, xLabels: labels, yLabels: labels, title: 'Original sentence (head 1)' }),
      heatmap(head(r.permutedWeights), L, L, { ...opts, xLabels: plabels, yLabels: plabels, title: 'Shuffled sentence (head 1)', legend: false }),
    ),
    caption: `Attention weights of head 1 (rows sum to 1). ${broken ? 'With positional information the shuffled sentence is attended differently, not just reordered.' : 'Without positional information the right map is the left one with rows and columns reordered.'}`,
    csv: [...head(r.weights)].map((w, i) => ({
      query: labels[Math.floor(i / L)],
      key: labels[i % L],
      original: w,
      shuffled: head(r.permutedWeights)[i],
    })),
  });

  // Outputs f(x) next to P^-1 f(Px): identical rows when attention cannot see order.
  const d = r.output.shape[1];
  const back = new Float32Array(L * d);
  r.permutation.forEach((orig, i) => back.set(r.permutedOutput.data.subarray(i * d, i * d + d), orig * d));
  render('lab-outputs', {
    node: row(
      heatmap(r.output.data, L, d, { yLabels: labels, xLabel: 'channel', width: 380, title: 'f(x): outputs per word' }),
      heatmap(back, L, d, { yLabels: labels, xLabel: 'channel', width: 380, title: 'f(Px), put back in the original order', legend: false }),
    ),
    caption: `Layer outputs for each word of the original sentence (left) and of the shuffled one, put back in the original word order (right). ${broken ? 'They differ: the encoding made outputs depend on position.' : 'They are identical: shuffling only reorders the outputs.'}`,
  });

  // The reversal blind spot, for this sentence.
  const reversal = [...Array(L).keys()].reverse();
  const rows = ENCODINGS.map((enc) => ({
    encoding: enc,
    reversal: L > 1 ? pe.permutationLab({ sentence, encoding: enc, permutation: reversal }).equivarianceError : 0,
  }));
  const table = document.createElement('table');
  table.className = 'values';
  const h = table.createTHead().insertRow();
  for (const t of ['encoding', 'error under reversal', 'tells the reverse apart?']) h.appendChild(document.createElement('th')).textContent = t;
  const body = table.createTBody();
  for (const x of rows) {
    const tr = body.insertRow();
    tr.insertCell().textContent = x.encoding;
    tr.insertCell().textContent = x.reversal.toExponential(2);
    tr.insertCell().textContent = x.reversal > 1e-4 ? 'yes' : 'no';
  }
  render('reversal', {
    node: table,
    caption: `Reversing "${r.tokens.join(' ')}": a symmetric relative bias such as bidirectional ALiBi depends only on |i − j|, which reversal preserves, so the layer is blind to it (error ~1e-7), while RoPE, T5's signed buckets and absolute encodings see it.`,
    csv: rows,
  });
}

export { ENCODINGS };
