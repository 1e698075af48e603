// Attention: softmax(q k^T * scale + bias) v, multi-head, with the shapes and layouts of real models.
import { checkCost, estimateSeconds, MAX_CALL_SECONDS } from './cost.js';
import { scope } from './heap.js';
import { geometry } from './rope.js';
import { Checker } from './validate.js';

// The axes geometry() reads, by name (for messages).
const AXIS_NAMES = { b: 'batch', s: 'seq', h: 'heads', d: 'd' };

export const attention = {
  // softmax(q k^T * scale + bias) v per batch entry and head. q [seqQ, d], [seqQ, heads, d] or
  // [batch, seqQ, heads, d] (axes 'bhsd': [batch, heads, seqQ, d]); k and v alike with kvHeads
  // dividing heads (grouped- / multi-query). bias [seqQ, seqK], [heads, seqQ, seqK] or
  // [batch, heads, seqQ, seqK] (size-1 batch and heads broadcast, as ONNX Runtime's attention_bias).
  attention(options) {
    const c = new Checker('attention');
    // attention(q, k, v), as torch's scaled_dot_product_attention is called: a tensor where the options go
    if (options && typeof options === 'object' && !Array.isArray(options) && ('data' in options || 'dims' in options || 'dataSync' in options))
      throw c.type('options is a tensor: attention takes one object { q, k, v, ... }, so call attention({ q, k, v })');
    const o = c.options(options, ['q', 'k', 'v', 'bias', 'causal', 'scale', 'weights', 'axes', 'dtype', 'out']);
    const dtypeOption = o.dtype === undefined ? undefined : c.dtype(o.dtype);
    const q = c.tensor('q', o.q, { ranks: [2, 3, 4], half: dtypeOption });
    const rank = q.shape.length;
    const k = c.tensor('k', o.k, { half: dtypeOption });
    const v = c.tensor('v', o.v, { half: dtypeOption });
    const dtype = dtypeOption ?? (q.elem === 'float32' ? 'float32' : q.elem);
    for (const [name, t] of [
      ['k', k],
      ['v', v],
    ])
      if (t.shape.length !== rank) throw c.range(`${name} has shape [${t.shape}] but q has [${q.shape}]: q, k and v must have the same rank`);
    const gq = geometry(c, q.shape, o.axes, 'q');
    const { batch, seq: seqQ, heads, dim: d, headsFirst } = gq;
    const { batch: kBatch, seq: seqK, heads: kvHeads, dim: kd } = geometry(c, k.shape, o.axes, 'k');
    const { batch: vBatch, seq: seqV, heads: vHeads, dim: dv } = geometry(c, v.shape, o.axes, 'v');
    const layout = `[${[...gq.axes].map((a) => AXIS_NAMES[a]).join(', ')}]`;
    if (kBatch !== batch || kd !== d || kvHeads === 0 || heads % kvHeads)
      throw c.range(
        `k has shape [${k.shape}] but q has [${q.shape}] (${layout}): the batch and d must match, and the heads of q must be a multiple of those of k`,
      );
    if (vBatch !== batch || seqV !== seqK || vHeads !== kvHeads)
      throw c.range(`v has shape [${v.shape}]; it needs the batch, rows and heads of k [${k.shape}] (${layout})`);
    if (seqQ === 0 || seqK === 0 || d === 0 || dv === 0 || heads === 0 || batch === 0) throw c.range('q, k and v must be non-empty');
    let bias = null;
    let biasLead = [0, 0];
    if (o.bias !== undefined) {
      bias = c.tensor('bias', o.bias, { ranks: [2, 3, 4], half: dtypeOption });
      const bs = bias.shape;
      const [bb, bh] = bs.length === 4 ? bs : bs.length === 3 ? [1, bs[0]] : [1, 1];
      const [b1, b2] = bs.slice(-2);
      if (b1 !== seqQ || b2 !== seqK || (bb !== 1 && bb !== batch) || (bh !== 1 && bh !== heads))
        throw c.range(
          `bias has shape [${bs}]; expected [${seqQ}, ${seqK}], [${heads}, ${seqQ}, ${seqK}] or [${batch}, ${heads}, ${seqQ}, ${seqK}] (size-1 batch and heads broadcast)`,
        );
      biasLead = [bb, bh];
    }
    const causal = c.bool('causal', o.causal, false);
    const scale = c.number('scale', o.scale, { def: 1 / Math.sqrt(d) }); // float32's range: the core's rule
    const wantWeights = c.bool('weights', o.weights, true);
    const nOut = c.size('the output', batch, seqQ, heads, dv);
    const nW = wantWeights ? c.size('the weights', batch, heads, seqQ, seqK) : 0;
    // the logits computed: causal queries see seqK - seqQ + i + 1 keys (blocks of 64 queries compute
    // up to their last row's)
    let logits = seqQ * seqK;
    if (causal) {
      logits = 0;
      for (let i0 = 0; i0 < seqQ; i0 += 64) logits += Math.min(64, seqQ - i0) * Math.max(0, Math.min(seqK, seqK - seqQ + Math.min(i0 + 64, seqQ)));
    }
    const total = batch * heads * logits;
    const fixed = { attentionKey: batch * heads * seqK, inputValue: q.length + k.length + v.length + (bias?.length ?? 0) };
    let seconds = estimateSeconds(this.backend, {
      [wantWeights ? 'attentionWeight' : 'attentionLogit']: total,
      [wantWeights ? 'attentionMac' : 'attentionStreamMac']: total * (d + dv),
      ...fixed,
    });
    // Rows whose logits (or sums of exp * v) overflow float32 are computed again in double (the core's
    // exact rows), at far more per logit and multiply-add: inputs that can overflow are costed so. The
    // inputs are scanned only where that decides, for a call the budget accepts at float32's costs and
    // not at the exact rows'.
    if (seconds <= MAX_CALL_SECONDS) {
      const exact = estimateSeconds(this.backend, { attentionExactLogit: total, attentionExactMac: total * (d + dv), ...fixed });
      const overflows = () => maxAbs(q) * maxAbs(k) * d * Math.abs(scale) + maxAbs(bias) > 1e37 || maxAbs(v) * seqK > 1e37;
      if (exact > MAX_CALL_SECONDS && overflows()) seconds = exact;
    }
    checkCost(
      c,
      `attention over q [${q.shape}], k [${k.shape}], v [${v.shape}]${causal ? ' (causal)' : ''}`,
      seconds,
      'split it into calls over fewer queries (each call a block of the rows of q, with the same k and v), or fewer heads',
    );
    const out = c.out(o.out, Float32Array, nOut, dtype);
    // the output: q's shape with dv channels; the weights: q's batch and heads axes (those it has), then
    // [seqQ, seqK]
    const outShape = [...q.shape.slice(0, -1), dv];
    const weightShape = [...(gq.axes.includes('b') ? [batch] : []), ...(gq.axes.includes('h') ? [heads] : []), seqQ, seqK];
    return scope(this._mod, 'attention', (s) => {
      // one allocation for q, k and v (float32 each), one for the output and the weights
      const pq = s.alloc(4 * (q.length + k.length + v.length));
      const [pk, pv] = [pq + 4 * q.length, pq + 4 * (q.length + k.length)];
      [q, k, v].forEach((t, i) => s.putRange([pq, pk, pv][i], t));
      const pb = bias ? s.put(bias) : 0;
      const po = s.alloc(4 * (nOut + nW));
      const w = wantWeights ? po + 4 * nOut : 0;
      s.check(
        this._mod._attention({
          q: pq,
          k: pk,
          v: pv,
          batch,
          seqQ,
          seqK,
          heads,
          kvHeads,
          d,
          dv,
          bias: pb,
          biasBatch: biasLead[0],
          biasHeads: biasLead[1],
          causal,
          scale,
          axes: headsFirst ? 1 : 0,
          out: po,
          weights: w,
        }),
      );
      return {
        output: { data: s.get(Float32Array, po, nOut, out, dtype), shape: outShape },
        weights: wantWeights ? { data: s.get(Float32Array, w, nW, undefined, dtype), shape: weightShape } : null,
      };
    });
  },
};

// The largest finite |value| of a checked tensor (0 for none; a bias's -Infinity masks, it does not
// overflow): float32 and bfloat16 values can overflow a float32 logit, float16's (at most 65504) cannot.
function maxAbs(t) {
  if (!t) return 0;
  if (t.elem === 'float16') return 65504;
  if (t.elem === 'bfloat16') {
    const bits = new Uint16Array(t.buffer, t.byteOffset, t.length);
    let top = 0;
    for (let i = 0; i < bits.length; i++) if ((bits[i] & 0x7fff) < 0x7f80) top = Math.max(top, bits[i] & 0x7fff);
    return new Float32Array(Uint32Array.of(top << 16).buffer)[0];
  }
  const a = new Float32Array(t.buffer, t.byteOffset, t.length);
  let m = 0;
  // an indexed loop: for...of over a typed array was 4x slower (35 ms of a 340 ms call on 32 heads)
  for (let i = 0, n = a.length; i < n; i++) {
    const y = Math.abs(a[i]);
    if (y > m && y !== Infinity) m = y;
  }
  return m;
}
