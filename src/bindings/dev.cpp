// Hooks for the benchmarks and the memory tests, linked only into the dev module
// (build/wasm-*/dev/posenc-*-dev.mjs), never into the published package.
//  _heapInUse: bytes currently malloc'd (dlmalloc's mallinfo); the memory tests check that calls
//    leave it unchanged. _heapFootprint: bytes dlmalloc took from wasm memory (the peak, in a fresh module).
//  _bench*: run one core kernel `reps` times on buffers the caller allocated and return the elapsed
//    milliseconds (emscripten_get_now), leaving out embind, the JS layer and copies; a failure
//    returns -1 and leaves its message for _errorMessage.
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

double sinusoidal(std::uintptr_t out, std::size_t rows, std::size_t d_model, int layout, std::size_t reps) {
  const posenc::angles::Positions pos{0, rows, {}};
  return timed(reps, [&] {
    return posenc::sinusoidal::table(pos, d_model, posenc::contract::kDefaultBase,
                                     static_cast<posenc::sinusoidal::Layout>(layout), view<float>(out, rows * d_model));
  });
}

// x -> out ([seq, heads, head_dim], full rotary dim, the default base); in place when x == out.
double rope(std::uintptr_t x, std::uintptr_t out, std::size_t seq, std::size_t heads, std::size_t head_dim, int layout,
            std::size_t reps) {
  posenc::rope::Frequencies freqs;
  if (!posenc::rope::frequencies(head_dim, posenc::contract::kDefaultBase, {}, freqs).ok()) return -1;
  const std::size_t n = seq * heads * head_dim;
  return timed(reps, [&] {
    return posenc::rope::apply(view<const float>(x, n), seq, heads, head_dim, head_dim, {0, seq, {}}, freqs,
                               static_cast<posenc::rope::Layout>(layout), view<float>(out, n));
  });
}

double alibi(std::uintptr_t out, std::size_t heads, std::size_t q, std::size_t k, std::size_t reps) {
  return timed(reps, [&] { return posenc::relative::alibi_bias(heads, q, k, false, view<float>(out, heads * q * k)); });
}

double t5(std::uintptr_t out, std::size_t q, std::size_t k, std::size_t reps) {
  return timed(reps, [&] { return posenc::relative::t5_buckets(q, k, 32, 128, true, view<std::int32_t>(out, q * k)); });
}

// One head, seq x seq, d = dv, no bias, scale 1/sqrt(d); weights 0: streaming (no weights kept).
double attention(std::uintptr_t q, std::uintptr_t k, std::uintptr_t v, std::uintptr_t out, std::uintptr_t weights,
                 std::size_t seq, std::size_t d, std::size_t reps, bool causal) {
  const std::size_t n = seq * d;
  const auto w = weights ? view<float>(weights, seq * seq) : std::span<float>();
  return timed(reps, [&] {
    return posenc::attention::attention(view<const float>(q, n), view<const float>(k, n), view<const float>(v, n),
                                        {seq, seq, 1, d, d}, {}, causal, 1.0 / std::sqrt(double(d)), view<float>(out, n), w);
  });
}

}  // namespace

EMSCRIPTEN_BINDINGS(posenc_dev) {
  using emscripten::function;
  function("_heapInUse", &heap_in_use);
  function("_heapFootprint", &heap_footprint);
  function("_benchSinusoidal", &sinusoidal);
  function("_benchRope", &rope);
  function("_benchAlibi", &alibi);
  function("_benchT5", &t5);
  function("_benchAttention", &attention);
}
