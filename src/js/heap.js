// Scoped wasm allocations: everything allocated inside scope() is freed when it returns or throws,
// so memory does not grow across calls. Reads always go through the current memory buffer (a view
// taken before a call that grows memory would be stale).

export function scope(mod, fn) {
  const pointers = [];
  const s = {
    alloc(bytes) {
      const p = mod._malloc(Math.max(bytes, 8));
      if (!p) throw new RangeError(`posenc: cannot allocate ${bytes} bytes of wasm memory`);
      pointers.push(p);
      return p;
    },
    // Copies a typed array into fresh wasm memory and returns its address.
    put(array) {
      const p = s.alloc(array.byteLength);
      mod.HEAPU8.set(new Uint8Array(array.buffer, array.byteOffset, array.byteLength), p);
      return p;
    },
    // Copies n elements of type Type out of wasm memory into a new array the caller owns.
    get(Type, p, n) {
      return new Type(mod.HEAPU8.buffer.slice(p, p + n * Type.BYTES_PER_ELEMENT));
    },
  };
  try {
    return fn(s);
  } finally {
    for (const p of pointers) mod._free(p);
  }
}
