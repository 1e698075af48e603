// Typed usage of the loading options and of posenc/inline: checked under every configuration of
// tests/types/tsconfig*.json (tests/js/types.test.js).
import { load, type LoadOptions, type PerBuild, type Posenc } from 'posenc';
import * as inline from 'posenc/inline';

export async function loading(bytes: Uint8Array, buffer: ArrayBuffer): Promise<Posenc[]> {
  const perBuild: PerBuild<string | URL> = { simd: '/assets/posenc-simd.wasm', scalar: new URL('https://example.org/s.wasm') };
  const options: LoadOptions[] = [
    { wasmURL: '/posenc-simd.wasm' },
    { wasmURL: perBuild },
    { simd: false, wasmBinary: bytes },
    { wasmBinary: { simd: bytes, scalar: buffer } },
  ];
  const fromInline: Posenc = await inline.load({ simd: false });
  const backend: 'wasm-simd' | 'wasm-scalar' = fromInline.backend;
  const learned = fromInline.learned({ maxLength: 8, dModel: 4 });
  learned[Symbol.dispose]();
  const v: string = inline.version;
  const s: boolean = inline.simdSupported();
  // @ts-expect-error: a build is 'simd' or 'scalar'
  await load({ wasmURL: { smid: 'x.wasm' } });
  // @ts-expect-error: bytes, not a string
  await load({ wasmBinary: { scalar: 'x.wasm' } });
  void [backend, v, s];
  return Promise.all(options.map((o) => load(o)));
}
