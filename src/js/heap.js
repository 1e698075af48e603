// Scoped wasm allocations: everything allocated inside scope() is freed when it returns or throws,
// so memory does not grow across calls. Reads always go through the current memory buffer (a view
// taken before a call that grows memory would be stale). A core error is left behind by the bindings
// as a message (C++ never throws into JS: that would skip destructors and leak embind handles); it is
// thrown here as a RangeError labelled with the public function's name, once the call has returned.

// wasm32 memory ends at 2 GiB (-sMAXIMUM_MEMORY); larger requests cannot succeed, and malloc's size_t
// argument would wrap around modulo 2^32 (a huge request could become a small one).
const MAX_BYTES = 2 ** 31;

export function scope(mod, name, fn) {
  clearStale(mod);
  const pointers = [];
  const s = {
    alloc(bytes) {
      const p = Number.isSafeInteger(bytes) && bytes >= 0 && bytes < MAX_BYTES ? mod._malloc(Math.max(bytes, 8)) : 0;
      if (!p) throw new RangeError(`posenc.${name}: cannot allocate ${bytes} bytes of wasm memory (at most 2 GiB in all); use smaller arguments`);
      pointers.push(p);
      return p;
    },
    // Copies a typed array into fresh wasm memory and returns its address.
    put(array) {
      const p = s.alloc(array.byteLength);
      mod.HEAPU8.set(new Uint8Array(array.buffer, array.byteOffset, array.byteLength), p);
      return p;
    },
    // Copies n elements of type Type out of wasm memory into a new array the caller owns (after a
    // failed call, throws its error instead of copying).
    get(Type, p, n) {
      rethrow(mod, name);
      return new Type(mod.HEAPU8.buffer.slice(p, p + n * Type.BYTES_PER_ELEMENT));
    },
  };
  try {
    const result = fn(s);
    rethrow(mod, name);
    return result;
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

// Runs a single core call (no allocations) with the same error handling.
export function guard(mod, name, fn) {
  clearStale(mod);
  try {
    const result = fn();
    rethrow(mod, name);
    return result;
  } catch (e) {
    throw relabel(name, e);
  }
}

// A pending error belongs to the call that raised it; never let it surface in a later one.
function clearStale(mod) {
  if (mod._hasError()) mod._takeError();
}

// Throws the core error the last call left behind, if any.
function rethrow(mod, name) {
  if (mod._hasError()) throw relabel(name, new RangeError(mod._takeError()));
}

function relabel(name, e) {
  if (e instanceof RangeError && !e.message.startsWith('posenc.')) {
    const hint = e.message === 'out of wasm memory' ? ' (a wasm module has at most 2 GiB); use smaller arguments' : '';
    return new RangeError(`posenc.${name}: ${e.message}${hint}`);
  }
  return e;
}
