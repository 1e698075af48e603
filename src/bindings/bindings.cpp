// embind registration only. Raw entry points take addresses in wasm memory and plain numbers; the
// JavaScript layer (src/js/api.js) validates options, allocates, copies in and out, and gives them
// friendly names. Core errors (posenc::range_error) become JavaScript RangeErrors, thrown by the JS layer
// (src/js/heap.js) from the message guarded() leaves behind.
#include <emscripten/bind.h>
#include <emscripten/val.h>
#include <malloc.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <new>
#include <span>
#include <string>
#include <type_traits>

#include "analysis.hpp"
#include "attention.hpp"
#include "lab.hpp"
#include "learned.hpp"
#include "relative.hpp"
#include "rope.hpp"
#include "simd.hpp"
#include "sinusoidal.hpp"

using emscripten::val;

namespace {

template <class T>
std::span<T> view(std::uintptr_t address, std::size_t n) {
  return {reinterpret_cast<T*>(address), n};
}

// A copy of a vector as a JS typed array (Float32Array for float, Int32Array for int32).
template <class T>
val copy_out(const std::vector<T>& v) {
  return val(emscripten::typed_memory_view(v.size(), v.data())).call<val>("slice");
}

// The message of the last core error, until the JS layer takes it (_takeError) and throws it as a
// RangeError. Errors are never thrown from C++ into JS: a JS exception unwinds the wasm frames
// without running their destructors, so every such call leaked the embind handles alive in them
// (the error object itself and any val argument, e.g. RoPE's scaling). Its capacity is reserved
// up front, so that recording "out of wasm memory" cannot itself need memory.
constexpr std::size_t kMaxMessage = 4095;
std::string pending_error = [] {
  std::string s;
  s.reserve(kMaxMessage + 1);
  return s;
}();

void set_error(const char* message) {
  pending_error.assign(message, std::min(std::strlen(message), kMaxMessage));
}

// Calls f; a C++ exception becomes the pending error and f's result type's empty value is returned.
template <class F>
auto guarded(F&& f) -> decltype(f()) {
  using R = decltype(f());
  try {
    return f();
  } catch (const std::bad_alloc&) {
    set_error("out of wasm memory");
  } catch (const std::exception& e) {
    set_error(e.what()[0] ? e.what() : "error");
  } catch (...) {
    set_error("unknown error");
  }
  if constexpr (std::is_same_v<R, val>)
    return val::undefined();
  else if constexpr (!std::is_void_v<R>)
    return R{};
}

bool has_error() {
  return !pending_error.empty();
}
std::string take_error() {
  std::string message = pending_error;
  pending_error.clear();  // keeps the reserved capacity
  return message;
}

posenc::angles::Positions positions(double offset, std::size_t rows, std::uintptr_t values, std::size_t n) {
  if (values == 0) return {offset, rows, {}};
  return {0, n, view<const double>(values, n)};
}

void sinusoidal(std::uintptr_t out, std::size_t rows, std::size_t d_model, double base, int layout, double offset,
                std::uintptr_t position_values, std::size_t n_positions) {
  guarded([&] {
    const auto pos = positions(offset, rows, position_values, n_positions);
    posenc::sinusoidal::table(pos, d_model, base, static_cast<posenc::sinusoidal::Layout>(layout),
                              view<float>(out, pos.size() * d_model));
  });
}

void wavelengths(std::uintptr_t out, std::size_t d_model, double base) {
  guarded([&] { posenc::sinusoidal::wavelengths(d_model, base, view<double>(out, (d_model + 1) / 2)); });
}

val stats(std::uintptr_t data, std::size_t n) {
  return guarded([&] {
    const auto s = posenc::analysis::stats(view<const float>(data, n));
    val out = val::object();
    out.set("min", s.min);
    out.set("max", s.max);
    out.set("mean", s.mean);
    out.set("std", s.std);
    return out;
  });
}

void add_positional(std::uintptr_t x, std::size_t batch, std::size_t seq, std::size_t dim, std::uintptr_t p, std::size_t p_rows,
                    std::uintptr_t out) {
  guarded([&] {
    posenc::learned::add_positional(view<const float>(x, batch * seq * dim), batch, seq, dim, view<const float>(p, p_rows * dim),
                                    view<float>(out, batch * seq * dim));
  });
}

using Table = posenc::learned::Table;

Table* make_table(std::size_t rows, std::size_t dim, int init, double std, double seed) {
  return guarded(
      [&] { return new Table(rows, dim, static_cast<posenc::learned::Init>(init), std, static_cast<std::uint64_t>(seed)); });
}

Table* make_token_table(std::size_t vocab, std::size_t dim, double seed) {
  return guarded([&] { return new Table(posenc::learned::token_table(vocab, dim, static_cast<std::uint64_t>(seed))); });
}

void table_lookup(const Table& t, std::uintptr_t ids, std::size_t n, std::uintptr_t out, float scale) {
  guarded([&] { t.lookup(view<const std::int32_t>(ids, n), view<float>(out, n * t.dim()), scale); });
}

Table* table_resized(const Table& t, std::size_t rows, int method) {
  return guarded([&] { return new Table(t.resized(rows, static_cast<posenc::learned::Resize>(method))); });
}

std::uintptr_t table_data(const Table& t) {
  return reinterpret_cast<std::uintptr_t>(t.data().data());
}

// ---- RoPE -----------------------------------------------------------------------------------------
// `scaling` is the object the JS layer validated: { type (index), and any of the camelCase fields }.
posenc::rope::Scaling to_scaling(const val& s) {
  posenc::rope::Scaling out;
  if (s.isUndefined() || s.isNull()) return out;
  out.type = static_cast<posenc::rope::ScalingType>(s["type"].as<int>());
  auto number = [&](const char* key, double& field) {
    if (!s[key].isUndefined()) field = s[key].as<double>();
  };
  number("factor", out.factor);
  number("originalMaxPositions", out.original_max_positions);
  number("betaFast", out.beta_fast);
  number("betaSlow", out.beta_slow);
  number("lowFreqFactor", out.low_freq_factor);
  number("highFreqFactor", out.high_freq_factor);
  number("seqLength", out.seq_length);
  number("attentionFactor", out.attention_factor);
  number("mscale", out.mscale);
  number("mscaleAllDim", out.mscale_all_dim);
  if (!s["truncate"].isUndefined()) out.truncate = s["truncate"].as<bool>();
  if (!s["shortFactor"].isUndefined()) out.short_factor = emscripten::vecFromJSArray<double>(s["shortFactor"]);
  if (!s["longFactor"].isUndefined()) out.long_factor = emscripten::vecFromJSArray<double>(s["longFactor"]);
  return out;
}

val rope_frequencies(std::size_t dim, double base, val scaling) {
  return guarded([&] {
    const auto f = posenc::rope::frequencies(dim, base, to_scaling(scaling));
    val out = val::object();
    out.set("invFreq", copy_out(std::vector<float>(f.inv_freq.begin(), f.inv_freq.end())));
    out.set("attentionFactor", f.attention_factor);
    return out;
  });
}

// Rotates x in place: [seq, heads, head_dim] at `data`.
void rope(std::uintptr_t data, std::size_t seq, std::size_t heads, std::size_t head_dim, std::size_t rotary_dim, double offset,
          std::uintptr_t position_values, std::size_t n_positions, double base, int layout, val scaling) {
  guarded([&] {
    const auto freqs = posenc::rope::frequencies(rotary_dim, base, to_scaling(scaling));
    const auto x = view<float>(data, seq * heads * head_dim);
    posenc::rope::apply(x, seq, heads, head_dim, rotary_dim, positions(offset, seq, position_values, n_positions), freqs,
                        static_cast<posenc::rope::Layout>(layout), x);
  });
}

// ---- relative positions -----------------------------------------------------------------------------
void alibi_slopes(std::uintptr_t out, std::size_t heads) {
  guarded([&] { posenc::relative::alibi_slopes(heads, view<float>(out, heads)); });
}
void alibi_bias(std::uintptr_t out, std::size_t heads, std::size_t q, std::size_t k, bool symmetric) {
  guarded([&] { posenc::relative::alibi_bias(heads, q, k, symmetric, view<float>(out, heads * q * k)); });
}
void t5_buckets(std::uintptr_t out, std::size_t q, std::size_t k, std::size_t buckets, std::size_t max_distance,
                bool bidirectional) {
  guarded([&] { posenc::relative::t5_buckets(q, k, buckets, max_distance, bidirectional, view<std::int32_t>(out, q * k)); });
}
void relative_positions(std::uintptr_t out, std::size_t length, std::size_t max_relative) {
  guarded([&] { posenc::relative::relative_positions(length, max_relative, view<std::int32_t>(out, length * length)); });
}

// ---- attention and the lab --------------------------------------------------------------------------
void attention(std::uintptr_t q, std::uintptr_t k, std::uintptr_t v, std::size_t seq_q, std::size_t seq_k, std::size_t heads,
               std::size_t d, std::size_t dv, std::uintptr_t bias, std::size_t bias_size, bool causal, double scale,
               std::uintptr_t out, std::uintptr_t weights) {
  guarded([&] {
    const posenc::attention::Shape shape{seq_q, seq_k, heads, d, dv};
    posenc::attention::attention(view<const float>(q, seq_q * heads * d), view<const float>(k, seq_k * heads * d),
                                 view<const float>(v, seq_k * heads * dv), shape,
                                 bias ? view<const float>(bias, bias_size) : std::span<const float>(), causal, scale,
                                 view<float>(out, seq_q * heads * dv), view<float>(weights, heads * seq_q * seq_k));
  });
}

val permutation_lab(val tokens, std::uintptr_t permutation, std::size_t n_permutation, int encoding, std::size_t d_model,
                    double seed) {
  return guarded([&] {
    const auto words = emscripten::vecFromJSArray<std::string>(tokens);
    const auto r =
        posenc::lab::permutation_lab(words, view<const std::int32_t>(permutation, n_permutation),
                                     static_cast<posenc::lab::Encoding>(encoding), d_model, static_cast<std::uint64_t>(seed));
    val out = val::object();
    out.set("permutation", copy_out(r.permutation));
    out.set("output", copy_out(r.output));
    out.set("permutedOutput", copy_out(r.permuted_output));
    out.set("weights", copy_out(r.weights));
    out.set("permutedWeights", copy_out(r.permuted_weights));
    out.set("heads", r.heads);
    out.set("equivarianceError", r.equivariance_error);
    out.set("pooledDifference", r.pooled_difference);
    return out;
  });
}

val score_terms(val tokens, int encoding, std::size_t d_model, double seed) {
  return guarded([&] {
    const auto words = emscripten::vecFromJSArray<std::string>(tokens);
    const auto t =
        posenc::lab::score_terms(words, static_cast<posenc::lab::Encoding>(encoding), d_model, static_cast<std::uint64_t>(seed));
    val out = val::object();
    out.set("contentContent", copy_out(t.content_content));
    out.set("contentPosition", copy_out(t.content_position));
    out.set("positionContent", copy_out(t.position_content));
    out.set("positionPosition", copy_out(t.position_position));
    out.set("total", copy_out(t.total));
    return out;
  });
}

// ---- analyses ---------------------------------------------------------------------------------------
void similarity(std::uintptr_t t, std::size_t rows, std::size_t dim, int metric, std::uintptr_t out) {
  guarded([&] {
    posenc::analysis::similarity(view<const float>(t, rows * dim), rows, dim, static_cast<posenc::analysis::Metric>(metric),
                                 view<float>(out, rows * rows));
  });
}
void shift_matrix(std::uintptr_t out, std::size_t d_model, double base, double k) {
  guarded([&] { posenc::analysis::shift_matrix(d_model, base, k, view<float>(out, d_model * d_model)); });
}
void nearest_distances(std::uintptr_t t, std::size_t rows, std::size_t dim, std::uintptr_t out) {
  guarded([&] { posenc::analysis::nearest_distances(view<const float>(t, rows * dim), rows, dim, view<float>(out, rows)); });
}

std::string simd_arch() {
  return posenc::simd::arch_name();
}

// Bytes currently malloc'd (dlmalloc's mallinfo): the memory tests check that calls leave it unchanged.
double heap_in_use() {
  return double(mallinfo().uordblks);
}

}  // namespace

EMSCRIPTEN_BINDINGS(posenc) {
  using namespace emscripten;
  function("_simdArch", &simd_arch);
  function("_heapInUse", &heap_in_use);
  function("_hasError", &has_error);
  function("_takeError", &take_error);
  function("_sinusoidal", &sinusoidal);
  function("_wavelengths", &wavelengths);
  function("_stats", &stats);
  function("_addPositional", &add_positional);
  function("_makeTable", &make_table, allow_raw_pointers());
  function("_makeTokenTable", &make_token_table, allow_raw_pointers());
  function("_ropeFrequencies", &rope_frequencies);
  function("_rope", &rope);
  function("_alibiSlopes", &alibi_slopes);
  function("_alibiBias", &alibi_bias);
  function("_t5Buckets", &t5_buckets);
  function("_relativePositions", &relative_positions);
  function("_attention", &attention);
  function("_permutationLab", &permutation_lab);
  function("_scoreTerms", &score_terms);
  function("_similarity", &similarity);
  function("_shiftMatrix", &shift_matrix);
  function("_nearestDistances", &nearest_distances);
  class_<Table>("_Table")
      .function("rows", &Table::rows)
      .function("dim", &Table::dim)
      .function("dataAddress", &table_data)
      .function("lookup", &table_lookup)
      .function("resized", &table_resized, allow_raw_pointers());
}

// ---- _bench*: kernel-only timing for scripts/bench (not part of the public API) ------------------
// Each runs one core kernel `reps` times on buffers the caller allocated and returns the elapsed
// milliseconds (emscripten_get_now), so the figure leaves out embind, the JS layer and copies. A core
// error becomes the pending error (_hasError / _takeError) like in every other entry point.
// (The memory.copy / memory.fill baselines run in a tiny module scripts/bench builds on this one's memory.)
#include <emscripten/emscripten.h>

#include <cmath>

namespace bench {

// Keeps the compiler from merging or dropping the repeated identical kernel calls.
inline void clobber() {
  __asm__ __volatile__("" ::: "memory");
}

template <class F>
double timed(std::size_t reps, F&& kernel) {
  return guarded([&] {
    const double t0 = emscripten_get_now();
    for (std::size_t i = 0; i < reps; ++i) {
      kernel();
      clobber();
    }
    return emscripten_get_now() - t0;
  });
}

double sinusoidal(std::uintptr_t out, std::size_t rows, std::size_t d_model, int layout, std::size_t reps) {
  const posenc::angles::Positions pos{0, rows, {}};
  return timed(reps, [&] {
    posenc::sinusoidal::table(pos, d_model, 10000, static_cast<posenc::sinusoidal::Layout>(layout),
                              view<float>(out, rows * d_model));
  });
}

// x -> out ([seq, heads, head_dim], full rotary dim, base 10000); in place when x == out.
double rope(std::uintptr_t x, std::uintptr_t out, std::size_t seq, std::size_t heads, std::size_t head_dim, int layout,
            std::size_t reps) {
  const auto freqs = guarded([&] { return posenc::rope::frequencies(head_dim, 10000, {}); });
  const std::size_t n = seq * heads * head_dim;
  return timed(reps, [&] {
    posenc::rope::apply(view<const float>(x, n), seq, heads, head_dim, head_dim, {0, seq, {}}, freqs,
                        static_cast<posenc::rope::Layout>(layout), view<float>(out, n));
  });
}

double alibi(std::uintptr_t out, std::size_t heads, std::size_t q, std::size_t k, std::size_t reps) {
  return timed(reps, [&] { posenc::relative::alibi_bias(heads, q, k, false, view<float>(out, heads * q * k)); });
}

double t5(std::uintptr_t out, std::size_t q, std::size_t k, std::size_t reps) {
  return timed(reps, [&] { posenc::relative::t5_buckets(q, k, 32, 128, true, view<std::int32_t>(out, q * k)); });
}

// One head, seq x seq, d = dv, no bias, not causal, scale 1/sqrt(d).
double attention(std::uintptr_t q, std::uintptr_t k, std::uintptr_t v, std::uintptr_t out, std::uintptr_t weights,
                 std::size_t seq, std::size_t d, std::size_t reps) {
  const std::size_t n = seq * d;
  return timed(reps, [&] {
    posenc::attention::attention(view<const float>(q, n), view<const float>(k, n), view<const float>(v, n), {seq, seq, 1, d, d},
                                 {}, false, 1.0 / std::sqrt(double(d)), view<float>(out, n), view<float>(weights, seq * seq));
  });
}

}  // namespace bench

EMSCRIPTEN_BINDINGS(posenc_bench) {
  using namespace emscripten;
  function("_benchSinusoidal", &bench::sinusoidal);
  function("_benchRope", &bench::rope);
  function("_benchAlibi", &bench::alibi);
  function("_benchT5", &bench::t5);
  function("_benchAttention", &bench::attention);
}
