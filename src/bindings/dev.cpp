// Hooks for the benchmarks and the memory tests, linked only into the dev module
// (build/wasm-*/dev/posenc-*-dev.mjs), never into the published package.
//  _heapInUse: bytes currently malloc'd (dlmalloc's mallinfo); the memory tests check that calls
//    leave it unchanged. _heapFootprint: bytes dlmalloc took from wasm memory (the peak, in a fresh module).
//  _bench*: run one core kernel `reps` times on buffers the caller allocated and return the elapsed
//    milliseconds (emscripten_get_now), leaving out embind, the JS layer and copies; a failure
//    returns -1 and leaves its message for _errorMessage. Each takes one struct of named fields.
#include <emscripten/bind.h>
#include <emscripten/emscripten.h>
#include <malloc.h>

#include <cmath>

#include "attention.hpp"
#include "raw.hpp"
#include "relative.hpp"
#include "rope.hpp"
#include "sinusoidal.hpp"

using posenc::bindings::view;

namespace {

double heap_in_use() {
  return double(mallinfo().uordblks);
}

// Bytes dlmalloc has taken from wasm memory so far (it never gives them back): in a fresh module,
// the peak of a call's allocations.
double heap_footprint() {
  return double(mallinfo().arena);
}

// Keeps the compiler from merging or dropping the repeated identical kernel calls.
inline void clobber() {
  __asm__ __volatile__("" ::: "memory");
}

template <class F>
double timed(std::size_t reps, F&& kernel) {
  const double t0 = emscripten_get_now();
  for (std::size_t i = 0; i < reps; ++i) {
    if (!kernel().ok()) return -1;
    clobber();
  }
  return emscripten_get_now() - t0;
}

// The bench hooks take one struct of named fields, as the shipped calls do (raw.hpp); buffers are
// addresses, `reps` the kernel's repetitions.
using posenc::bindings::Address;
using posenc::bindings::Args;
using posenc::bindings::Count;
using posenc::bindings::Flag;
using posenc::bindings::Index;

// A [rows, dModel] sinusoidal table at out (the default base).
struct BenchSinusoidalArgs : Args {
  Address out;
  Count rows, dModel;
  Index layout;
  Count reps;
};
double sinusoidal(const BenchSinusoidalArgs& a) {
  const posenc::angles::Positions pos{0, a.rows, {}};
  return timed(a.reps, [&] {
    return posenc::sinusoidal::table(pos, a.dModel, posenc::contract::kDefaultBase,
                                     static_cast<posenc::sinusoidal::Layout>(a.layout), view<float>(a.out, a.rows * a.dModel));
  });
}

// x -> out ([seq, heads, headDim], full rotary dim, the default base); in place when x == out.
struct BenchRopeArgs : Args {
  Address x, out;
  Count seq, heads, headDim;
  Index layout;
  Count reps;
};
double rope(const BenchRopeArgs& a) {
  posenc::rope::Frequencies freqs;
  if (!posenc::rope::frequencies(a.headDim, posenc::contract::kDefaultBase, {}, freqs).ok()) return -1;
  const std::size_t n = a.seq * a.heads * a.headDim;
  return timed(a.reps, [&] {
    return posenc::rope::apply(view<const float>(a.x, n), a.seq, a.heads, a.headDim, a.headDim, {0, a.seq, {}}, freqs,
                               static_cast<posenc::rope::Layout>(a.layout), view<float>(a.out, n));
  });
}

// ALiBi's [heads, queryLength, keyLength] bias, or T5's [queryLength, keyLength] buckets (the
// package's defaults, contract.js DEFAULTS.numBuckets and maxDistance; heads unused), at out.
struct BenchRelativeArgs : Args {
  Address out;
  Count heads, queryLength, keyLength, reps;
};
double alibi(const BenchRelativeArgs& a) {
  return timed(a.reps, [&] {
    return posenc::relative::alibi_bias(a.heads, a.queryLength, a.keyLength, false,
                                        view<float>(a.out, a.heads * a.queryLength * a.keyLength));
  });
}
double t5(const BenchRelativeArgs& a) {
  return timed(a.reps, [&] {
    return posenc::relative::t5_buckets(a.queryLength, a.keyLength, posenc::relative::kDefaultNumBuckets,
                                        posenc::relative::kDefaultMaxDistance, true,
                                        view<std::int32_t>(a.out, a.queryLength * a.keyLength));
  });
}

// One head, seq x seq, d = dv, no bias, scale 1/sqrt(d); weights 0: streaming (no weights kept).
struct BenchAttentionArgs : Args {
  Address q, k, v, out, weights;
  Count seq, d, reps;
  Flag causal;
};
double attention(const BenchAttentionArgs& a) {
  const std::size_t n = a.seq * a.d;
  const auto w = a.weights ? view<float>(a.weights, a.seq * a.seq) : std::span<float>();
  return timed(a.reps, [&] {
    return posenc::attention::attention(view<const float>(a.q, n), view<const float>(a.k, n), view<const float>(a.v, n),
                                        {a.seq, a.seq, 1, a.d, a.d}, {}, a.causal, 1.0 / std::sqrt(double(a.d)),
                                        view<float>(a.out, n), w);
  });
}

}  // namespace

EMSCRIPTEN_BINDINGS(posenc_dev) {
  using emscripten::function;
  using posenc::bindings::args;
  {
    using S = BenchSinusoidalArgs;
    args<S>("BenchSinusoidalArgs") POSENC_FIELD(out) POSENC_FIELD(rows) POSENC_FIELD(dModel) POSENC_FIELD(layout)
        POSENC_FIELD(reps);
  }
  {
    using S = BenchRopeArgs;
    args<S>("BenchRopeArgs") POSENC_FIELD(x) POSENC_FIELD(out) POSENC_FIELD(seq) POSENC_FIELD(heads) POSENC_FIELD(headDim)
        POSENC_FIELD(layout) POSENC_FIELD(reps);
  }
  {
    using S = BenchRelativeArgs;
    args<S>("BenchRelativeArgs") POSENC_FIELD(out) POSENC_FIELD(heads) POSENC_FIELD(queryLength) POSENC_FIELD(keyLength)
        POSENC_FIELD(reps);
  }
  {
    using S = BenchAttentionArgs;
    args<S>("BenchAttentionArgs") POSENC_FIELD(q) POSENC_FIELD(k) POSENC_FIELD(v) POSENC_FIELD(out) POSENC_FIELD(weights)
        POSENC_FIELD(seq) POSENC_FIELD(d) POSENC_FIELD(reps) POSENC_FIELD(causal);
  }
  function("_heapInUse", &heap_in_use);
  function("_heapFootprint", &heap_footprint);
  function("_benchSinusoidal", &sinusoidal);
  function("_benchRope", &rope);
  function("_benchAlibi", &alibi);
  function("_benchT5", &t5);
  function("_benchAttention", &attention);
}
