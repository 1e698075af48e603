// The one way data crosses into and out of wasm memory. scope() runs a call with scoped allocations
// (everything allocated inside is freed when it returns or throws, so memory does not grow across
// calls); the raw entry points take one object of named fields (src/bindings/raw.hpp) and return the
// core's status code (contract.js CODES: ok, range, outOfMemory), and a failure is thrown here as a
// RangeError labelled with the public function's name, after the call has returned. The message is
// read from the core's fixed buffer, so even "out of memory" needs no allocation.
import { CODES, LIMITS } from './contract.js';
import { resultType, typedSet } from './validate.js';

// wasm memory ends at LIMITS.maxMemoryBytes (the modules' -sMAXIMUM_MEMORY); larger requests cannot
// succeed, and malloc's size_t argument would wrap around modulo 2^32 (a huge request could become a small one).
const MAX_BYTES = LIMITS.maxMemoryBytes;
const decoder = new TextDecoder();

// The core checks values, so its errors are RangeErrors (kinds and shapes are the JS layer's: TypeErrors).
function coreError(mod, name) {
  const p = mod._errorMessage();
  const text = decoder.decode(mod.HEAPU8.subarray(p, p + mod._errorLength())) || 'failed';
  return new RangeError(`posenc.${name}: ${text}`);
}

// Throws the core's error for a non-zero status code.
export function check(mod, name, code) {
  if (code !== CODES.ok) throw coreError(mod, name);
}

// What a raw factory returned (an address, or an embind object freed with .delete()), or the core's
// error when it returned 0 or null.
export function made(mod, name, handle) {
  if (!handle) throw coreError(mod, name);
  return handle;
}

function outOfMemory(name, bytes) {
  return new RangeError(
    `posenc.${name}: out of wasm memory: cannot allocate ${bytes} bytes (a wasm module has at most ${MAX_BYTES / 2 ** 30} GiB in all); use smaller arguments or dispose tables`,
  );
}

export function scope(mod, name, fn) {
  const pointers = [];
  const releases = [];
  const s = {
    alloc(bytes) {
      // a large request that would need a failed heap growth is refused before it is tried (heap_can_hold)
      const fits = Number.isSafeInteger(bytes) && bytes >= 0 && bytes < MAX_BYTES && (bytes < 2 ** 20 || mod._heapCanHold(bytes));
      const p = fits ? mod._malloc(Math.max(bytes, 8)) : 0;
      if (!p) throw outOfMemory(name, bytes);
      pointers.push(p);
      return p;
    },
    // Copies a tensor (validate.js tensor(): { buffer, byteOffset, byteLength, elem }) or a typed
    // array we own into fresh wasm memory and returns its address; half floats arrive as float32.
    // The view is taken here, inside the call, after every option and input was read.
    put(value) {
      const n = value.elem === 'float16' || value.elem === 'bfloat16' ? value.byteLength / 2 : value.byteLength;
      return s.putRange(s.alloc(value.elem === 'float16' || value.elem === 'bfloat16' ? 4 * n : n), value);
    },
    // Elements [first, first + count) of a tensor into wasm memory at p, which the caller allocated (a
    // block of a larger input): float32 values (half floats converted) or the raw bytes of the rest.
    putRange(p, value, first = 0, count) {
      const half = value.elem === 'float16' || value.elem === 'bfloat16';
      const size = half ? 2 : value.elem === 'float32' ? 4 : 1;
      const byteLength = count === undefined ? value.byteLength - first * size : count * size;
      let bytes;
      try {
        bytes = new Uint8Array(value.buffer, value.byteOffset + first * size, byteLength); // throws if the buffer shrank or was detached
      } catch {
        throw new TypeError(`posenc.${name}: ${value.name ?? 'an input'}'s buffer was detached or shrunk during the call`);
      }
      if (!half) {
        mod.HEAPU8.set(bytes, p);
        return p;
      }
      const bits = s.alloc(byteLength);
      mod.HEAPU8.set(bytes, bits);
      mod._fromHalf({ from: bits, to: p, n: byteLength / 2, bfloat: value.elem === 'bfloat16' });
      s.release(bits);
      return p;
    },
    // Copies n elements of Type at p out of wasm memory: into `out` when given (validated by
    // Checker.out), else into a new array the caller owns. Float32 results of a half dtype are
    // converted to 16-bit values first (Float16Array or Uint16Array, validate.js resultType).
    get(Type, p, n, out, dtype = 'float32') {
      if (Type === Float32Array && dtype !== 'float32') {
        const bits = s.alloc(2 * n);
        mod._toHalf({ from: p, to: bits, n, bfloat: dtype === 'bfloat16' });
        const target = out ?? new (resultType(dtype))(n);
        copyBits(target, new Uint16Array(mod.HEAPU8.buffer, bits, n), 0, name);
        s.release(bits);
        return target;
      }
      const target = out ?? new Type(n);
      try {
        typedSet(target, new Type(mod.HEAPU8.buffer, p, n));
      } catch {
        throw new TypeError(`posenc.${name}: out's buffer was detached or shrunk during the call`);
      }
      return target;
    },
    // Frees an allocation of this scope before the scope ends (scratch of a loop).
    release(p) {
      const i = pointers.lastIndexOf(p);
      if (i >= 0) pointers.splice(i, 1);
      mod._free(p);
    },
    // Keeps an allocation of this scope past its end: the caller owns it now (and frees it).
    keep(p) {
      const i = pointers.lastIndexOf(p);
      if (i >= 0) pointers.splice(i, 1);
    },
    // Runs a raw entry point and throws its error, if any.
    check(code) {
      check(mod, name, code);
    },
    // Runs release() when the call ends, before the scope's memory is freed (a core object's destructor).
    onExit(release) {
      releases.push(release);
    },
  };
  try {
    return fn(s);
  } finally {
    for (const release of releases) release();
    for (const p of pointers) mod._free(p);
  }
}

// Handles (embind objects) owned by a JS object (a table, a trainer): owns(owner, handle) deletes the
// handle when the owner is garbage collected, disown(owner, handle) deletes it now (dispose()).
export const disposeSymbol = Symbol.dispose ?? Symbol.for('Symbol.dispose');
const registry = new FinalizationRegistry((handle) => handle.delete());
export function owns(owner, handle) {
  registry.register(owner, handle, owner);
}
export function disown(owner, handle) {
  registry.unregister(owner);
  handle.delete();
}

// Copies 16-bit values into target at element `at` as bits (a Float16Array target is viewed as
// Uint16Array: set() would convert the numbers).
function copyBits(target, bits, at, name) {
  try {
    const view = target instanceof Uint16Array ? target : new Uint16Array(target.buffer, target.byteOffset, target.length);
    typedSet(view, bits, at);
  } catch {
    throw new TypeError(`posenc.${name}: out's buffer was detached or shrunk during the call`);
  }
}

// Row-blocked production, for results whose rows are computed in order (the sinusoidal table):
// fill(address, firstRow, rowCount, s) writes a block of rows into a scratch buffer, which is copied
// into the result (or `out`) while it is still in cache, before the next block; so a huge table needs
// one block of wasm memory besides the result. The producer keeps its state from block to block
// (src/core/sinusoidal.hpp, Table), so small blocks cost no more than one call for the whole table.
const BLOCK_BYTES = 1 << 17;
// Rows per block: as many as fit in blockBytes, at least one.
export function blockRowsOf(rows, rowLength, Type, blockBytes = BLOCK_BYTES) {
  return Math.max(1, Math.min(rows, Math.floor(blockBytes / (rowLength * Type.BYTES_PER_ELEMENT))));
}
// `blockBytes` trades the producer's per-call setup against cache residency (RoPE's kernel sets up its
// angle tables per call, from frequencies computed once per setting, so it takes larger blocks).
// Float32 rows of a half dtype are converted block by block, in wasm memory, before the copy.
export function produceRows(mod, name, Type, rows, rowLength, fill, out, blockBytes = BLOCK_BYTES, dtype = 'float32') {
  const half = Type === Float32Array && dtype !== 'float32';
  const target = out ?? new (half ? resultType(dtype) : Type)(rows * rowLength);
  if (rows * rowLength === 0) return target;
  const blockRows = blockRowsOf(rows, rowLength, Type, blockBytes);
  return scope(mod, name, (s) => {
    const p = s.alloc(blockRows * rowLength * Type.BYTES_PER_ELEMENT);
    const bits = half ? s.alloc(blockRows * rowLength * 2) : 0;
    const Out = half ? Uint16Array : Type;
    // One view of the block for the whole call (remade only if a fill grew wasm memory), copied
    // with set(view, offset): a block allocates nothing on the JS heap.
    let heap, block;
    for (let r0 = 0; r0 < rows; r0 += blockRows) {
      const k = Math.min(blockRows, rows - r0);
      s.check(fill(p, r0, k, s));
      if (half) mod._toHalf({ from: p, to: bits, n: k * rowLength, bfloat: dtype === 'bfloat16' });
      if (heap !== mod.HEAPU8.buffer) {
        heap = mod.HEAPU8.buffer;
        block = new Out(heap, half ? bits : p, blockRows * rowLength);
      }
      const values = k === blockRows ? block : block.subarray(0, k * rowLength);
      if (half) copyBits(target, values, r0 * rowLength, name);
      else
        try {
          typedSet(target, values, r0 * rowLength);
        } catch {
          throw new TypeError(`posenc.${name}: out's buffer was detached or shrunk during the call`);
        }
    }
    return target;
  });
}

// The common shape of a call: n elements of Type written by fill(address, s) (which returns the
// status code), copied into `out` or a new array (16-bit values for a half dtype).
export function produce(mod, name, Type, n, fill, out, dtype = 'float32') {
  return scope(mod, name, (s) => {
    const p = s.alloc(n * Type.BYTES_PER_ELEMENT);
    s.check(fill(p, s));
    return s.get(Type, p, n, out, dtype);
  });
}
