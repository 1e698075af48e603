// Scoped wasm allocations: everything allocated inside scope() is freed when it returns or throws,
// so memory does not grow across calls. Reads always go through the current memory buffer (a view
// taken before a call that grows memory would be stale). A RangeError raised by the core is
// re-labelled with the public function's name.

export function scope(mod, name, fn) {
  const pointers = [];
  const s = {
    alloc(bytes) {
      const p = mod._malloc(Math.max(bytes, 8));
      if (!p) throw new RangeError(`posenc.${name}: cannot allocate ${bytes} bytes of wasm memory`);
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
  } catch (e) {
    throw relabel(name, e);
  } finally {
    for (const p of pointers) mod._free(p);
  }
}

// The common shape of a call: allocate an output of n elements of Type, let fill(out, s) write it
// (s can put inputs), and return the copy.
export function produce(mod, name, Type, n, fill) {
  return scope(mod, name, (s) => {
    const out = s.alloc(n * Type.BYTES_PER_ELEMENT);
    fill(out, s);
    return s.get(Type, out, n);
  });
}

// Runs a single core call (no allocations) with the same error labelling.
export function guard(name, fn) {
  try {
    return fn();
  } catch (e) {
    throw relabel(name, e);
  }
}

function relabel(name, e) {
  if (e instanceof RangeError && !e.message.startsWith('posenc.')) return new RangeError(`posenc.${name}: ${e.message}`);
  return e;
}
