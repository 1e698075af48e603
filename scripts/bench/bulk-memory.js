// The bandwidth baselines: a tiny hand-assembled wasm module that imports a posenc module's own
// memory and runs `memory.copy` / `memory.fill` on it, so the baseline moves the same bytes, in the
// same memory, with the same engine as the kernel it is compared with. Plain JS, no Node APIs, so the
// page can use it too.
//   (module (import "env" "memory" (memory 0))
//     (func (export "copy") (param dst src n reps) (loop ... memory.copy dst src n ...))
//     (func (export "fill") (param dst n reps)     (loop ... memory.fill dst 0 n ...)))

const leb = (n) => {
  const out = [];
  do {
    let b = n & 0x7f;
    n >>>= 7;
    if (n) b |= 0x80;
    out.push(b);
  } while (n);
  return out;
};
const section = (id, bytes) => [id, ...leb(bytes.length), ...bytes];
const str = (s) => [s.length, ...Array.from(s, (c) => c.charCodeAt(0))];
const I32 = 0x7f;
// while (reps != 0) { body; reps -= 1 }   (reps is local `r`)
const repeat = (r, body) => [
  0x02,
  0x40,
  0x03,
  0x40,
  0x20,
  r,
  0x45,
  0x0d,
  0x01,
  ...body,
  0x20,
  r,
  0x41,
  0x01,
  0x6b,
  0x21,
  r,
  0x0c,
  0x00,
  0x0b,
  0x0b,
  0x0b,
];
const func = (code) => [...leb(code.length + 1), 0x00, ...code];

const copyBody = repeat(3, [0x20, 0, 0x20, 1, 0x20, 2, 0xfc, 0x0a, 0x00, 0x00]); // memory.copy dst src n
const fillBody = repeat(2, [0x20, 0, 0x41, 0x00, 0x20, 1, 0xfc, 0x0b, 0x00]); // memory.fill dst 0 n

const BYTES = new Uint8Array([
  0x00,
  0x61,
  0x73,
  0x6d,
  0x01,
  0x00,
  0x00,
  0x00,
  ...section(1, [0x02, 0x60, 0x04, I32, I32, I32, I32, 0x00, 0x60, 0x03, I32, I32, I32, 0x00]),
  ...section(2, [0x01, ...str('env'), ...str('memory'), 0x02, 0x00, 0x00]),
  ...section(3, [0x02, 0x00, 0x01]),
  ...section(7, [0x02, ...str('copy'), 0x00, 0x00, ...str('fill'), 0x00, 0x01]),
  ...section(10, [0x02, ...func(copyBody), ...func(fillBody)]),
]);

// The WebAssembly.Memory of an Emscripten module (exported under a minified name in `asm`).
export function moduleMemory(mod) {
  const memory = Object.values(mod.asm ?? {}).find((x) => x instanceof WebAssembly.Memory);
  if (!memory) throw new Error('bench: cannot find the wasm memory of the posenc module');
  return memory;
}

// { copy(dst, src, bytes, reps), fill(dst, bytes, reps) } on that memory; addresses from mod._malloc.
export function bulkMemory(mod) {
  const instance = new WebAssembly.Instance(new WebAssembly.Module(BYTES), { env: { memory: moduleMemory(mod) } });
  return instance.exports;
}
