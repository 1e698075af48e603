// Typed usage of the public API: `tsc -p tests/types` must accept it (and reject misuse below).
import { load, simdSupported, version, type Tensor, type Posenc } from 'posenc';

async function main(): Promise<void> {
  const pe: Posenc = await load();
  const backend: 'wasm-simd' | 'wasm-scalar' = pe.backend;
  const simd: boolean = simdSupported();
  const v: string = version;

  const table: Tensor = pe.sinusoidal({ length: 100, dModel: 128 });
  const split = pe.sinusoidal({ dModel: 8, positions: [0, 0.5, 1e6], layout: 'split', base: 100 });
  const wl: Float64Array = pe.wavelengths({ dModel: 64 });

  const learned = pe.learned({ maxLength: 512, dModel: 768, init: 'xavier', seed: 1 });
  const rows: Tensor = learned.lookup([0, 1, 2]);
  const longer = learned.resize(4096, 'tile');
  longer.dispose();
  learned[Symbol.dispose]();

  const tokens = pe.tokenEmbedding({ vocabSize: 1000, dModel: 128 });
  const x = tokens.lookup({ data: [1, 2, 3, 4], shape: [2, 2] });
  const y = pe.addPositional(x, table);
  const { mean, std } = pe.stats(y);

  // @ts-expect-error: dModel is required
  pe.sinusoidal({ length: 4 });
  // @ts-expect-error: unknown layout
  pe.sinusoidal({ length: 4, dModel: 4, layout: 'columns' });
  void [backend, simd, v, split, wl, rows, mean, std, tokens];
}
void main;

async function relative(pe: Posenc): Promise<void> {
  const q = pe.sinusoidal({ length: 16, dModel: 64 });
  const llama3 = { type: 'llama3', factor: 8, lowFreqFactor: 1, highFreqFactor: 4, originalMaxPositions: 8192 } as const;
  const { invFreq, attentionFactor } = pe.ropeFrequencies({ dim: 64, base: 500000, scaling: llama3 });
  const rq: Tensor = pe.rope(q, { base: 500000, scaling: llama3, offset: 4096, layout: 'interleaved' });
  const slopes: Float32Array = pe.alibiSlopes(12);
  const bias = pe.alibiBias({ numHeads: 4, queryLength: 16 });
  const buckets: Tensor<Int32Array> = pe.t5Buckets({ queryLength: 16, bidirectional: false });
  const shaw: Int32Array = pe.relativePositions({ length: 8, maxRelative: 2 }).data;
  const { output, weights } = pe.attention({ q, k: q, v: q, causal: true });
  const lab = pe.permutationLab({ encoding: 'rope', permutation: [5, 4, 3, 2, 1, 0] });
  const err: number = lab.equivarianceError;
  const terms = pe.scoreTerms({ encoding: 'learned' });
  const sim = pe.similarity(q, { metric: 'cosine' });
  const m = pe.shiftMatrix({ dModel: 64, k: 3 });
  const nd: Float32Array = pe.nearestDistances(q);
  // @ts-expect-error: unknown scaling type
  pe.ropeFrequencies({ dim: 8, scaling: { type: 'ntk-by-parts' } });
  // @ts-expect-error: the lab has no 'shaw' encoding
  pe.permutationLab({ encoding: 'shaw' });
  void [invFreq, attentionFactor, rq, slopes, bias, buckets, shaw, output, weights, err, terms, sim, m, nd];
}
void relative;
