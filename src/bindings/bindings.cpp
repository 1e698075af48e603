// embind registration only: one raw entry point per core function, bound under an _underscored
// name. Each takes addresses in wasm memory and plain numbers, and returns the core's status code
// (0 = ok). Nothing here throws or allocates on a failure path: the message of a failed call sits in
// the core's fixed buffer until the JS layer (src/js/heap.js) reads it with _errorMessage and throws
// the RangeError/TypeError, after the call has returned. Enums arrive as their index in the lists of
// src/js/contract.js, from which contract.hpp is generated.
#include <emscripten/bind.h>

#include <cmath>
#include <cstdlib>
#include <new>
#include <string>
#include <string_view>
#include <utility>

#include "analysis.hpp"
#include "attention.hpp"
#include "learned.hpp"
#include "ops.hpp"
#include "raw.hpp"
#include "relative.hpp"
#include "rope.hpp"
#include "simd.hpp"
#include "sinusoidal.hpp"

using posenc::bindings::code;
using posenc::bindings::view;

namespace {

posenc::angles::Positions positions(double offset, std::size_t rows, std::uintptr_t values, std::size_t n) {
  if (values == 0) return {offset, rows, {}};
  return {0, n, view<const double>(values, n)};
}

// The sinusoidal table in blocks (src/js/absolute.js): open a posenc::sinusoidal::Table (its address
// goes to *handle, 0 when it cannot be allocated), write blocks of rows, close it.
int sinusoidal_open(std::uintptr_t handle, std::size_t rows, std::size_t d_model, double base, int layout, double offset,
                    std::uintptr_t position_values, std::size_t n_positions, int spacing) {
  using Table = posenc::sinusoidal::Table;
  void* memory = std::malloc(sizeof(Table));
  auto* table = memory ? new (memory) Table : nullptr;
  view<std::uintptr_t>(handle, 1)[0] = reinterpret_cast<std::uintptr_t>(table);
  if (!table) return code(posenc::out_of_memory("the sinusoidal table", sizeof(posenc::sinusoidal::Table)));
  return code(table->init(positions(offset, rows, position_values, n_positions), d_model, base,
                          static_cast<posenc::sinusoidal::Layout>(layout), static_cast<posenc::sinusoidal::Spacing>(spacing)));
}

int sinusoidal_rows(std::uintptr_t handle, std::uintptr_t out, std::size_t first_row, std::size_t rows) {
  auto* table = reinterpret_cast<posenc::sinusoidal::Table*>(handle);
  return code(table->write(first_row, view<float>(out, rows * table->d_model())));
}

void sinusoidal_close(std::uintptr_t handle) {
  auto* table = reinterpret_cast<posenc::sinusoidal::Table*>(handle);
  table->~Table();
  std::free(table);
}

int sinusoidal_2d(std::uintptr_t out, std::size_t height, std::size_t width, std::size_t d_model, double base, bool cls_token) {
  const std::size_t rows = height * width + (cls_token ? 1 : 0);
  return code(posenc::sinusoidal::table_2d(height, width, d_model, base, cls_token, view<float>(out, rows * d_model)));
}

int wavelengths(std::uintptr_t out, std::size_t d_model, double base, int spacing) {
  return code(posenc::sinusoidal::wavelengths(d_model, base, view<double>(out, (d_model + 1) / 2),
                                              static_cast<posenc::sinusoidal::Spacing>(spacing)));
}

// Half floats: n values converted between float32 and 16-bit (float16 or bfloat16) bits.
void to_half(std::uintptr_t from, std::uintptr_t to, std::size_t n, bool bfloat) {
  posenc::ops::to_half(view<const float>(from, n), view<std::uint16_t>(to, n), bfloat);
}
void from_half(std::uintptr_t from, std::uintptr_t to, std::size_t n, bool bfloat) {
  posenc::ops::from_half(view<const std::uint16_t>(from, n), view<float>(to, n), bfloat);
}

// out: 4 doubles, min, max, mean, std.
int stats(std::uintptr_t data, std::size_t n, std::uintptr_t out) {
  posenc::analysis::Stats s{};
  const auto status = posenc::analysis::stats(view<const float>(data, n), s);
  if (status.ok()) {
    double* o = reinterpret_cast<double*>(out);
    o[0] = s.min, o[1] = s.max, o[2] = s.mean, o[3] = s.std;
  }
  return code(status);
}

int add_positional(std::uintptr_t x, std::size_t batch, std::size_t seq, std::size_t dim, std::uintptr_t p, std::size_t p_rows,
                   std::uintptr_t out) {
  return code(posenc::learned::add_positional(view<const float>(x, batch * seq * dim), batch, seq, dim,
                                              view<const float>(p, p_rows * dim), view<float>(out, batch * seq * dim)));
}

// ---- learned tables: a handle is the address of a heap-allocated posenc::learned::Table ----------------
using posenc::learned::Table;

// Moves a made table to the heap and writes its address to *handle (0 when that allocation fails).
int publish(posenc::Status status, Table& made, std::uintptr_t handle) {
  auto* slot = reinterpret_cast<std::uintptr_t*>(handle);
  *slot = 0;
  if (!status.ok()) return code(status);
  void* memory = std::malloc(sizeof(Table));
  if (!memory) return code(posenc::out_of_memory("a table handle", double(sizeof(Table))));
  *slot = reinterpret_cast<std::uintptr_t>(new (memory) Table(std::move(made)));
  return 0;
}

int make_table(std::uintptr_t handle, std::size_t rows, std::size_t dim, int init, double std, double seed) {
  Table t;
  return publish(Table::make(t, rows, dim, static_cast<posenc::learned::Init>(init), std, static_cast<std::uint64_t>(seed)), t,
                 handle);
}

int make_token_table(std::uintptr_t handle, std::size_t vocab, std::size_t dim, double seed) {
  Table t;
  return publish(posenc::learned::token_table(t, vocab, dim, static_cast<std::uint64_t>(seed)), t, handle);
}

int table_resized(std::uintptr_t handle, std::uintptr_t table, std::size_t rows, int method) {
  Table t;
  return publish(reinterpret_cast<const Table*>(table)->resized(rows, static_cast<posenc::learned::Resize>(method), t), t,
                 handle);
}

void table_free(std::uintptr_t table) {
  auto* t = reinterpret_cast<Table*>(table);
  t->~Table();
  std::free(t);
}

std::size_t table_rows(std::uintptr_t table) {
  return reinterpret_cast<const Table*>(table)->rows();
}
std::size_t table_dim(std::uintptr_t table) {
  return reinterpret_cast<const Table*>(table)->dim();
}
std::uintptr_t table_data(std::uintptr_t table) {
  return reinterpret_cast<std::uintptr_t>(reinterpret_cast<const Table*>(table)->data().data());
}

int table_lookup(std::uintptr_t table, std::uintptr_t ids, std::size_t n, std::uintptr_t out, float scale) {
  const auto* t = reinterpret_cast<const Table*>(table);
  return code(t->lookup(view<const std::int32_t>(ids, n), view<float>(out, n * t->dim()), scale));
}

// ---- RoPE -----------------------------------------------------------------------------------------
// `fields`: contract::ScalingField::count doubles, NaN for a field not given (the core's default
// applies); short/long factors: their address and count (0, 0 when not given).
posenc::rope::Scaling to_scaling(std::uintptr_t fields, std::uintptr_t short_factor, std::size_t n_short,
                                 std::uintptr_t long_factor, std::size_t n_long) {
  posenc::rope::Scaling s;
  if (fields == 0) return s;
  const double* f = reinterpret_cast<const double*>(fields);
  using F = posenc::contract::ScalingField;
  const auto at = [f](F field) { return f[static_cast<int>(field)]; };
  s.type = static_cast<posenc::rope::ScalingType>(static_cast<int>(at(F::type)));
  const std::pair<double*, F> numbers[] = {
      {&s.factor, F::factor},
      {&s.original_max_positions, F::originalMaxPositions},
      {&s.beta_fast, F::betaFast},
      {&s.beta_slow, F::betaSlow},
      {&s.low_freq_factor, F::lowFreqFactor},
      {&s.high_freq_factor, F::highFreqFactor},
      {&s.seq_length, F::seqLength},
      {&s.attention_factor, F::attentionFactor},
      {&s.mscale, F::mscale},
      {&s.mscale_all_dim, F::mscaleAllDim},
      {&s.short_mscale, F::shortMscale},
      {&s.long_mscale, F::longMscale},
  };
  for (const auto& [to, field] : numbers)
    if (!std::isnan(at(field))) *to = at(field);
  if (!std::isnan(at(F::truncate))) s.truncate = at(F::truncate) != 0;
  s.short_factor = view<const double>(short_factor, n_short);
  s.long_factor = view<const double>(long_factor, n_long);
  return s;
}

// inv_freq: dim/2 floats; attention_factor: 1 double.
int rope_frequencies(std::uintptr_t inv_freq, std::uintptr_t attention_factor, std::size_t dim, double base,
                     std::uintptr_t fields, std::uintptr_t short_factor, std::size_t n_short, std::uintptr_t long_factor,
                     std::size_t n_long) {
  posenc::rope::Frequencies f;
  const auto status = posenc::rope::frequencies(dim, base, to_scaling(fields, short_factor, n_short, long_factor, n_long), f);
  if (!status.ok()) return code(status);
  float* out = reinterpret_cast<float*>(inv_freq);
  for (std::size_t i = 0; i < f.inv_freq.size(); ++i) out[i] = float(f.inv_freq[i]);
  *reinterpret_cast<double*>(attention_factor) = f.attention_factor;
  return 0;
}

// Rotates x [seq, heads, head_dim] into out (out == x: in place). xpos_role: 0 none, 1 query, 2 key.
// first_row: x's first row in the caller's tensor (for messages).
int rope(std::uintptr_t x, std::uintptr_t out, std::size_t seq, std::size_t heads, std::size_t head_dim, std::size_t rotary_dim,
         double offset, std::uintptr_t position_values, std::size_t n_positions, double base, int layout, std::uintptr_t fields,
         std::uintptr_t short_factor, std::size_t n_short, std::uintptr_t long_factor, std::size_t n_long, int xpos_role,
         double xpos_scale_base, double xpos_center, std::size_t first_row) {
  posenc::rope::Frequencies f;
  const auto status =
      posenc::rope::frequencies(rotary_dim, base, to_scaling(fields, short_factor, n_short, long_factor, n_long), f);
  if (!status.ok()) return code(status);
  const std::size_t n = seq * heads * head_dim;
  const posenc::rope::XPos xpos{xpos_scale_base, xpos_center, xpos_role == 2};
  return code(posenc::rope::apply(
      view<const float>(x, n), seq, heads, head_dim, rotary_dim, positions(offset, seq, position_values, n_positions), f,
      static_cast<posenc::rope::Layout>(layout), view<float>(out, n), xpos_role ? &xpos : nullptr, first_row));
}

// The cos/sin caches of `rows` positions: [rows, width] each, width = rotary_dim / 2, or rotary_dim
// in the layout's order when `expand`.
int rope_cache(std::uintptr_t cos, std::uintptr_t sin, std::size_t rows, double offset, std::uintptr_t position_values,
               std::size_t n_positions, std::size_t rotary_dim, double base, std::uintptr_t fields, std::uintptr_t short_factor,
               std::size_t n_short, std::uintptr_t long_factor, std::size_t n_long, bool expand, int layout) {
  posenc::rope::Frequencies f;
  const auto status =
      posenc::rope::frequencies(rotary_dim, base, to_scaling(fields, short_factor, n_short, long_factor, n_long), f);
  if (!status.ok()) return code(status);
  const std::size_t n = rows * (expand ? rotary_dim : rotary_dim / 2);
  return code(posenc::rope::cache(positions(offset, rows, position_values, n_positions), f, expand,
                                  static_cast<posenc::rope::Layout>(layout), view<float>(cos, n), view<float>(sin, n)));
}

// M-RoPE in place on x [seq, heads, head_dim]; positions: [3, seq] doubles.
int rope_mrope(std::uintptr_t x, std::size_t seq, std::size_t heads, std::size_t head_dim, std::size_t rotary_dim,
               std::uintptr_t position_values, std::size_t t, std::size_t h, std::size_t w, double base, std::uintptr_t fields,
               std::uintptr_t short_factor, std::size_t n_short, std::uintptr_t long_factor, std::size_t n_long) {
  posenc::rope::Frequencies f;
  const auto status =
      posenc::rope::frequencies(rotary_dim, base, to_scaling(fields, short_factor, n_short, long_factor, n_long), f);
  if (!status.ok()) return code(status);
  const std::size_t n = seq * heads * head_dim;
  return code(posenc::rope::apply_mrope(view<const float>(x, n), seq, heads, head_dim, rotary_dim,
                                        view<const double>(position_values, 3 * seq), {t, h, w}, f, view<float>(x, n)));
}

// ---- relative positions -----------------------------------------------------------------------------
int alibi_slopes(std::uintptr_t out, std::size_t heads) {
  return code(posenc::relative::alibi_slopes(heads, view<float>(out, heads)));
}
int alibi_bias(std::uintptr_t out, std::size_t heads, std::size_t q, std::size_t k, bool symmetric) {
  return code(posenc::relative::alibi_bias(heads, q, k, symmetric, view<float>(out, heads * q * k)));
}
// key_masked: key_length bytes, 1 = a padded key (-Infinity).
int alibi_bias_at(std::uintptr_t out, std::size_t heads, std::size_t q, std::uintptr_t key_positions, std::uintptr_t key_masked,
                  std::size_t k, bool symmetric) {
  return code(posenc::relative::alibi_bias_at(heads, q, view<const double>(key_positions, k),
                                              view<const std::uint8_t>(key_masked, k), symmetric,
                                              view<float>(out, heads * q * k)));
}
int t5_buckets_of(std::uintptr_t out, std::uintptr_t relative, std::size_t n, std::size_t buckets, std::size_t max_distance,
                  bool bidirectional) {
  return code(posenc::relative::t5_buckets_of(view<const double>(relative, n), buckets, max_distance, bidirectional,
                                              view<std::int32_t>(out, n)));
}
int t5_buckets(std::uintptr_t out, std::size_t q, std::size_t k, std::size_t buckets, std::size_t max_distance,
               bool bidirectional) {
  return code(posenc::relative::t5_buckets(q, k, buckets, max_distance, bidirectional, view<std::int32_t>(out, q * k)));
}
int relative_positions(std::uintptr_t out, std::size_t length, std::size_t max_relative) {
  return code(posenc::relative::relative_positions(length, max_relative, view<std::int32_t>(out, length * length)));
}

// ---- attention --------------------------------------------------------------------------------------
// q [batch, seq_q, heads, d], k [batch, seq_k, kv_heads, d], v [batch, seq_k, kv_heads, dv] -> out
// [batch, seq_q, heads, dv] (axes 1: seq and heads swapped in all four) and, unless `weights` is 0
// (streaming), weights [batch, heads, seq_q, seq_k]. bias: [bias_batch, bias_heads, seq_q, seq_k].
int attention(std::uintptr_t q, std::uintptr_t k, std::uintptr_t v, std::size_t batch, std::size_t seq_q, std::size_t seq_k,
              std::size_t heads, std::size_t kv_heads, std::size_t d, std::size_t dv, std::uintptr_t bias, std::size_t bias_size,
              std::size_t bias_batch, std::size_t bias_heads, bool causal, double scale, int axes, std::uintptr_t out,
              std::uintptr_t weights) {
  const posenc::attention::Shape shape{
      seq_q, seq_k, heads, d, dv, kv_heads, batch, static_cast<posenc::attention::Axes>(axes), bias_batch, bias_heads};
  const std::size_t bq = batch * seq_q, bk = batch * seq_k;
  return code(posenc::attention::attention(
      view<const float>(q, bq * heads * d), view<const float>(k, bk * kv_heads * d), view<const float>(v, bk * kv_heads * dv),
      shape, bias ? view<const float>(bias, bias_size) : std::span<const float>(), causal, scale,
      view<float>(out, bq * heads * dv), weights ? view<float>(weights, batch * heads * seq_q * seq_k) : std::span<float>()));
}

// ---- analyses ---------------------------------------------------------------------------------------
int similarity(std::uintptr_t t, std::size_t rows, std::size_t dim, int metric, std::uintptr_t out) {
  return code(posenc::analysis::similarity(view<const float>(t, rows * dim), rows, dim,
                                           static_cast<posenc::analysis::Metric>(metric), view<float>(out, rows * rows)));
}
int shift_matrix(std::uintptr_t out, std::size_t d_model, double base, double k) {
  return code(posenc::analysis::shift_matrix(d_model, base, k, view<float>(out, d_model * d_model)));
}
int nearest_distances(std::uintptr_t t, std::size_t rows, std::size_t dim, std::uintptr_t out) {
  return code(posenc::analysis::nearest_distances(view<const float>(t, rows * dim), rows, dim, view<float>(out, rows)));
}

}  // namespace

EMSCRIPTEN_BINDINGS(posenc) {
  using emscripten::function;
  posenc::bindings::register_common();
  function("_sinusoidalOpen", &sinusoidal_open);
  function("_sinusoidalRows", &sinusoidal_rows);
  function("_sinusoidalClose", &sinusoidal_close);
  function("_sinusoidal2d", &sinusoidal_2d);
  function("_wavelengths", &wavelengths);
  function("_toHalf", &to_half);
  function("_fromHalf", &from_half);
  function("_stats", &stats);
  function("_addPositional", &add_positional);
  function("_makeTable", &make_table);
  function("_makeTokenTable", &make_token_table);
  function("_tableResized", &table_resized);
  function("_tableFree", &table_free);
  function("_tableRows", &table_rows);
  function("_tableDim", &table_dim);
  function("_tableData", &table_data);
  function("_tableLookup", &table_lookup);
  function("_ropeFrequencies", &rope_frequencies);
  function("_rope", &rope);
  function("_ropeMrope", &rope_mrope);
  function("_ropeCache", &rope_cache);
  function("_alibiSlopes", &alibi_slopes);
  function("_alibiBias", &alibi_bias);
  function("_t5Buckets", &t5_buckets);
  function("_t5BucketsOf", &t5_buckets_of);
  function("_alibiBiasAt", &alibi_bias_at);
  function("_relativePositions", &relative_positions);
  function("_attention", &attention);
  function("_similarity", &similarity);
  function("_shiftMatrix", &shift_matrix);
  function("_nearestDistances", &nearest_distances);
}
