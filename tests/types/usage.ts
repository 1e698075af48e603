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
