// The relative position schemes: ALiBi, T5 buckets, Shaw et al.
import { DEFAULTS, LIMITS } from './contract.js';
import { checkCost, estimateSeconds } from './cost.js';
import { produce } from './heap.js';
import { Checker } from './validate.js';

export const relative = {
  alibiSlopes(numHeads, options) {
    const c = new Checker('alibiSlopes');
    const o = c.options(options, ['dtype', 'out']);
    const h = c.int('numHeads', numHeads, { max: LIMITS.maxHeads });
    const dtype = c.dtype(o.dtype);
    return produce(
      this._mod,
      'alibiSlopes',
      Float32Array,
      h,
      (p) => this._mod._alibiSlopes({ out: p, heads: h }),
      c.out(o.out, Float32Array, h, dtype),
      dtype,
    );
  },

  // [heads, q, k] biases -m (pos_i - j) (or -m |pos_i - j|), the queries as the last positions; with
  // attentionMask [batch, keyLength] (BLOOM's build_alibi_tensor): [batch, heads, q, k], the positions
  // counting only the real tokens of each row, and -Infinity at its padded keys.
  alibiBias(options) {
    const c = new Checker('alibiBias');
    const o = c.options(options, ['numHeads', 'queryLength', 'keyLength', 'symmetric', 'attentionMask', 'dtype', 'out']);
    const numHeads = c.int('numHeads', o.numHeads, { max: LIMITS.maxHeads });
    let mask;
    if (o.attentionMask !== undefined) {
      mask = c.list('attentionMask', o.attentionMask, { integer: true, min: 0, max: 1 });
      if (mask.shape.length > 2 || mask.data.length === 0)
        throw c.range(`attentionMask must be [keyLength] or [batch, keyLength], got shape [${mask.shape}]`);
    }
    const maskKeys = mask ? mask.shape[mask.shape.length - 1] : undefined;
    const queryLength = c.int('queryLength', o.queryLength, { def: maskKeys, min: 1 });
    const keyLength = c.int('keyLength', o.keyLength, { def: maskKeys ?? queryLength, min: 1 });
    if (mask && keyLength !== maskKeys) throw c.range(`keyLength (${keyLength}) differs from the attentionMask's ${maskKeys} keys`);
    const symmetric = c.bool('symmetric', o.symmetric, false);
    const batch = mask ? mask.data.length / keyLength : 1;
    const n = c.size('the bias', batch, numHeads, queryLength, keyLength);
    if (mask)
      checkCost(
        c,
        `a bias of ${n} values`,
        estimateSeconds(this.backend, { alibiMaskedValue: n }),
        batch > 1 ? 'pass fewer rows of attentionMask per call' : 'use fewer heads or a shorter mask',
      );
    const dtype = c.dtype(o.dtype);
    const out = c.out(o.out, Float32Array, n, dtype);
    const mod = this._mod;
    if (!mask) {
      const data = produce(
        mod,
        'alibiBias',
        Float32Array,
        n,
        (p) => mod._alibiBias({ out: p, heads: numHeads, queryLength, keyLength, symmetric }),
        out,
        dtype,
      );
      return { data, shape: [numHeads, queryLength, keyLength] };
    }
    const data = produce(
      mod,
      'alibiBias',
      Float32Array,
      n,
      (p, s) => {
        // per row: key positions (cumsum(mask) - 1) * mask, as BLOOM; the queries are the last keys
        const keys = new Float64Array(keyLength);
        const masked = new Uint8Array(keyLength);
        const [pk, pm] = [s.alloc(keyLength * 8), s.alloc(keyLength)];
        for (let b = 0; b < batch; b++) {
          let count = 0;
          for (let j = 0; j < keyLength; j++) {
            const m = mask.data[b * keyLength + j];
            count += m;
            keys[j] = m ? count - 1 : 0;
            masked[j] = m ? 0 : 1;
          }
          new Float64Array(mod.HEAPU8.buffer, pk, keyLength).set(keys);
          mod.HEAPU8.set(masked, pm);
          const code = mod._alibiBiasAt({
            out: p + b * numHeads * queryLength * keyLength * 4,
            heads: numHeads,
            queryLength,
            keyPositions: pk,
            keyMasked: pm,
            keyLength,
            symmetric,
          });
          if (code) return code;
        }
        return 0;
      },
      out,
      dtype,
    );
    return { data, shape: [batch, numHeads, queryLength, keyLength] };
  },

  // T5's bucket of key - query for [queryLength, keyLength] (the queries as the last positions), or of
  // each value of relativePositions (T5's relative_position tensor, any shape: the result has it).
  t5Buckets(options) {
    const c = new Checker('t5Buckets');
    const o = c.options(options, ['queryLength', 'keyLength', 'relativePositions', 'numBuckets', 'maxDistance', 'bidirectional', 'out']);
    const numBuckets = c.int('numBuckets', o.numBuckets, { def: DEFAULTS.numBuckets });
    const maxDistance = c.int('maxDistance', o.maxDistance, { def: DEFAULTS.maxDistance }); // > the exact buckets: the core's rule
    const bidirectional = c.bool('bidirectional', o.bidirectional, true);
    if (o.relativePositions !== undefined) {
      for (const k of ['queryLength', 'keyLength']) if (o[k] !== undefined) throw c.type(`pass either relativePositions or ${k}`);
      const rel = c.list('relativePositions', o.relativePositions, { integer: true });
      checkCost(
        c,
        `${rel.data.length} buckets`,
        estimateSeconds(this.backend, { t5Bucket: rel.data.length }),
        'pass fewer relativePositions per call',
      );
      const out = c.out(o.out, Int32Array, rel.data.length);
      const data = produce(
        this._mod,
        't5Buckets',
        Int32Array,
        rel.data.length,
        (p, s) =>
          this._mod._t5BucketsOf({
            out: p,
            relative: s.put(rel.data),
            n: rel.data.length,
            queryLength: 0,
            keyLength: 0,
            buckets: numBuckets,
            maxDistance,
            bidirectional,
          }),
        out,
      );
      return { data, shape: rel.shape };
    }
    const queryLength = c.int('queryLength', o.queryLength, { min: 1 });
    const keyLength = c.int('keyLength', o.keyLength, { def: queryLength, min: 1 });
    const n = c.size('the buckets', queryLength, keyLength);
    const out = c.out(o.out, Int32Array, n);
    const data = produce(
      this._mod,
      't5Buckets',
      Int32Array,
      n,
      (p) => this._mod._t5Buckets({ out: p, relative: 0, n: 0, queryLength, keyLength, buckets: numBuckets, maxDistance, bidirectional }),
      out,
    );
    return { data, shape: [queryLength, keyLength] };
  },

  relativePositions(options) {
    const c = new Checker('relativePositions');
    const o = c.options(options, ['length', 'maxRelative', 'out']);
    const length = c.int('length', o.length, { min: 1 });
    const maxRelative = c.int('maxRelative', o.maxRelative);
    const n = c.size('the indices', length, length);
    const out = c.out(o.out, Int32Array, n);
    const data = produce(this._mod, 'relativePositions', Int32Array, n, (p) => this._mod._relativePositions({ out: p, length, maxRelative }), out);
    return { data, shape: [length, length] };
  },
};
