// embind registration only. Raw entry points take addresses in wasm memory and plain numbers; the
// JavaScript layer (src/js/api.js) validates options, allocates, copies in and out, and gives them
// friendly names. Core errors (posenc::range_error) become JavaScript RangeErrors.
#include <emscripten/bind.h>
#include <emscripten/val.h>

#include <cstdint>
#include <new>
#include <span>
#include <string>

#include "analysis.hpp"
#include "learned.hpp"
#include "simd.hpp"
#include "sinusoidal.hpp"

using emscripten::val;

namespace {

template <class T>
std::span<T> view(std::uintptr_t address, std::size_t n) {
  return {reinterpret_cast<T*>(address), n};
}

// Calls f and turns a C++ exception into a JS RangeError. The JS error is built inside the catch
// and thrown after it: throwing from inside the catch block would leak the C++ exception object.
template <class F>
auto guarded(F&& f) -> decltype(f()) {
  val error = val::undefined();
  try {
    return f();
  } catch (const std::bad_alloc&) {
    error = val::global("RangeError").new_(std::string("posenc: out of wasm memory"));
  } catch (const std::exception& e) {
    error = val::global("RangeError").new_(std::string("posenc: ") + e.what());
  }
  error.throw_();
  __builtin_unreachable();
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

void add_positional(std::uintptr_t x, std::size_t batch, std::size_t seq, std::size_t dim, std::uintptr_t p,
                    std::size_t p_rows, std::uintptr_t out) {
  guarded([&] {
    posenc::learned::add_positional(view<const float>(x, batch * seq * dim), batch, seq, dim,
                                    view<const float>(p, p_rows * dim), view<float>(out, batch * seq * dim));
  });
}

using Table = posenc::learned::Table;

Table* make_table(std::size_t rows, std::size_t dim, int init, double std, double seed) {
  return guarded([&] {
    return new Table(rows, dim, static_cast<posenc::learned::Init>(init), std, static_cast<std::uint64_t>(seed));
  });
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

std::uintptr_t table_data(const Table& t) { return reinterpret_cast<std::uintptr_t>(t.data().data()); }

std::string simd_arch() { return posenc::simd::arch_name(); }

}  // namespace

EMSCRIPTEN_BINDINGS(posenc) {
  using namespace emscripten;
  function("_simdArch", &simd_arch);
  function("_sinusoidal", &sinusoidal);
  function("_wavelengths", &wavelengths);
  function("_stats", &stats);
  function("_addPositional", &add_positional);
  function("_makeTable", &make_table, allow_raw_pointers());
  function("_makeTokenTable", &make_token_table, allow_raw_pointers());
  class_<Table>("_Table")
      .function("rows", &Table::rows)
      .function("dim", &Table::dim)
      .function("dataAddress", &table_data)
      .function("lookup", &table_lookup)
      .function("resized", &table_resized, allow_raw_pointers());
}
