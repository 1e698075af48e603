// embind registration only: one raw entry point per core function, bound under an _underscored
// name, taking one struct of named fields (raw.hpp) and returning the core's status code (0 = ok).
// Nothing here throws or allocates on a failure path: the message of a failed call sits in the core's
// fixed buffer until the JS layer (src/js/heap.js) reads it with _errorMessage and throws its
// RangeError, after the call has returned (the code: contract.js CODES, ok, range or outOfMemory). A
// factory of a handle (a learned table, the sinusoidal block writer: embind objects) returns null
// instead of a code when it fails, its message in the same buffer.
#include <emscripten/bind.h>

#include <cmath>
#include <new>
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

using posenc::bindings::Address;
using posenc::bindings::Args;
using posenc::bindings::code;
using posenc::bindings::Count;
using posenc::bindings::Flag;
using posenc::bindings::Index;
using posenc::bindings::none;
using posenc::bindings::view;

namespace {

posenc::angles::Positions positions(double offset, Count rows, Address values, Count n) {
  if (values == 0) return {offset, rows, {}};
  return {0, n, view<const double>(values, n)};
}

// ---- the sinusoidal table (src/js/absolute.js) ---------------------------------------------------------
// A table that fits one block is written by one call (_sinusoidal); a larger one by a writer (an embind
// object) that one JS call opens, asks for blocks of rows and deletes before it returns.
using SinusoidalTable = posenc::sinusoidal::Table;

// positions: `rows` doubles, or 0 for rows counted from offset; out: the whole table, for _sinusoidal
// (0 for _sinusoidalOpen).
struct SinusoidalArgs : Args {
  Count rows, dModel;
  double base;
  Index layout;
  double offset;
  Address positions;
  Index spacing;
  Address out;
};
posenc::Status init(SinusoidalTable& table, const SinusoidalArgs& a) {
  return table.init(positions(a.offset, a.rows, a.positions, a.rows), a.dModel, a.base,
                    static_cast<posenc::sinusoidal::Layout>(a.layout), static_cast<posenc::sinusoidal::Spacing>(a.spacing));
}

int sinusoidal(const SinusoidalArgs& a) {
  SinusoidalTable table;
  const auto status = init(table, a);
  return code(status.ok() ? table.write(0, view<float>(a.out, a.rows * a.dModel)) : status);
}

// The writer, or null (its message for _errorMessage) when the arguments are refused or memory is short.
SinusoidalTable* sinusoidal_open(const SinusoidalArgs& a) {
  auto* table = new (std::nothrow) SinusoidalTable;
  if (!table) return none(posenc::out_of_memory("the sinusoidal table", sizeof(SinusoidalTable)));
  if (!init(*table, a).ok()) {
    delete table;
    return nullptr;
  }
  return table;
}

// Rows [first, first + rows) into out.
struct RowsArgs : Args {
  Address out;
  Count first, rows;
};
int sinusoidal_write(SinusoidalTable& table, const RowsArgs& a) {
  return code(table.write(a.first, view<float>(a.out, a.rows * table.d_model())));
}

struct Sinusoidal2dArgs : Args {
  Address out;
  Count height, width, dModel;
  double base;
  Flag clsToken;
};
int sinusoidal_2d(const Sinusoidal2dArgs& a) {
  const Count rows = a.height * a.width + (a.clsToken ? 1 : 0);
  return code(posenc::sinusoidal::table_2d(a.height, a.width, a.dModel, a.base, a.clsToken, view<float>(a.out, rows * a.dModel)));
}

// out: (dModel + 1) / 2 doubles.
struct WavelengthsArgs : Args {
  Address out;
  Count dModel;
  double base;
  Index spacing;
};
int wavelengths(const WavelengthsArgs& a) {
  return code(posenc::sinusoidal::wavelengths(a.dModel, a.base, view<double>(a.out, (a.dModel + 1) / 2),
                                              static_cast<posenc::sinusoidal::Spacing>(a.spacing)));
}

// Half floats: n values converted between float32 and 16-bit (float16 or bfloat16) bits.
struct HalfArgs : Args {
  Address from, to;
  Count n;
  Flag bfloat;
};
void to_half(const HalfArgs& a) {
  posenc::ops::to_half(view<const float>(a.from, a.n), view<std::uint16_t>(a.to, a.n), a.bfloat);
}
void from_half(const HalfArgs& a) {
  posenc::ops::from_half(view<const std::uint16_t>(a.from, a.n), view<float>(a.to, a.n), a.bfloat);
}

// x: rows x dim floats; out as each analysis says.
struct MatrixArgs : Args {
  Address x;
  Count rows, dim;
  Address out;
};

// out: 4 doubles, min, max, mean, std; x: rows * dim values.
int stats(const MatrixArgs& a) {
  posenc::analysis::Stats s{};
  const auto status = posenc::analysis::stats(view<const float>(a.x, a.rows * a.dim), s);
  if (status.ok()) {
    double* o = reinterpret_cast<double*>(a.out);
    o[0] = s.min, o[1] = s.max, o[2] = s.mean, o[3] = s.std;
  }
  return code(status);
}

// x [batch, seq, dim] + p [seq, dim] (its first seq rows) -> out.
struct AddPositionalArgs : Args {
  Address x;
  Count batch, seq, dim;
  Address p, out;
};
int add_positional(const AddPositionalArgs& a) {
  const Count n = a.batch * a.seq * a.dim;
  return code(posenc::learned::add_positional(view<const float>(a.x, n), a.batch, a.seq, a.dim,
                                              view<const float>(a.p, a.seq * a.dim), view<float>(a.out, n)));
}

// ---- learned tables: embind objects over posenc::learned::Table -------------------------------------
// Made by _makeTable, _makeTokenTable and a table's resized(), null on failure (the message for
// _errorMessage); src/js/embedding.js deletes each exactly once (dispose(), or its FinalizationRegistry).
using posenc::learned::Table;

// The made table moved to the heap, or null.
Table* publish(posenc::Status status, Table& made) {
  if (!status.ok()) return nullptr;
  auto* table = new (std::nothrow) Table(std::move(made));
  return table ? table : none(posenc::out_of_memory("a table handle", double(sizeof(Table))));
}

// seed: an integer below 2^53.
struct TableArgs : Args {
  Count rows, dim;
  Index init;
  double std, seed;
};
Table* make_table(const TableArgs& a) {
  Table t;
  return publish(
      Table::make(t, a.rows, a.dim, static_cast<posenc::learned::Init>(a.init), a.std, static_cast<std::uint64_t>(a.seed)), t);
}

struct TokenTableArgs : Args {
  Count vocab, dim;
  double seed;
};
Table* make_token_table(const TokenTableArgs& a) {
  Table t;
  return publish(posenc::learned::token_table(t, a.vocab, a.dim, static_cast<std::uint64_t>(a.seed)), t);
}

// A new table of `rows` rows from this one.
struct ResizeArgs : Args {
  Count rows;
  Index method;
};
Table* table_resized(const Table& table, const ResizeArgs& a) {
  Table t;
  return publish(table.resized(a.rows, static_cast<posenc::learned::Resize>(a.method), t), t);
}

Address table_data(const Table& table) {
  return reinterpret_cast<Address>(table.data().data());
}

// out[k, :] = scale * table[ids[k], :] for n int32 ids.
struct LookupArgs : Args {
  Address ids;
  Count n;
  Address out;
  float scale;
};
int table_lookup(const Table& table, const LookupArgs& a) {
  return code(table.lookup(view<const std::int32_t>(a.ids, a.n), view<float>(a.out, a.n * table.dim()), a.scale));
}

// ---- RoPE -----------------------------------------------------------------------------------------
// A scaling's fields (flat in the struct that derives this one), named as posenc's camelCase option
// (and contract.js SCALING_FIELDS): type is its index in
// ENUMS.scalingType (0 'none': no scaling); a number that is NaN was not given (the core's default
// applies); truncate is 0/1 or NaN; short/long factors: their address and count (0, 0 when not given).
struct ScalingArgs : Args {
  Index type;
  double factor, originalMaxPositions, betaFast, betaSlow, lowFreqFactor, highFreqFactor, seqLength, attentionFactor, mscale,
      mscaleAllDim, truncate, shortMscale, longMscale;
  Address shortFactor;
  Count nShort;
  Address longFactor;
  Count nLong;
};

posenc::rope::Scaling to_scaling(const ScalingArgs& a) {
  posenc::rope::Scaling s;
  if (a.type == 0) return s;
  s.type = static_cast<posenc::rope::ScalingType>(a.type);
  const std::pair<double*, double> numbers[] = {
      {&s.factor, a.factor},
      {&s.original_max_positions, a.originalMaxPositions},
      {&s.beta_fast, a.betaFast},
      {&s.beta_slow, a.betaSlow},
      {&s.low_freq_factor, a.lowFreqFactor},
      {&s.high_freq_factor, a.highFreqFactor},
      {&s.seq_length, a.seqLength},
      {&s.attention_factor, a.attentionFactor},
      {&s.mscale, a.mscale},
      {&s.mscale_all_dim, a.mscaleAllDim},
      {&s.short_mscale, a.shortMscale},
      {&s.long_mscale, a.longMscale},
  };
  for (const auto& [to, value] : numbers)
    if (!std::isnan(value)) *to = value;
  if (!std::isnan(a.truncate)) s.truncate = a.truncate != 0;
  s.short_factor = view<const double>(a.shortFactor, a.nShort);
  s.long_factor = view<const double>(a.longFactor, a.nLong);
  return s;
}

// The frequencies of a rotary dimension `dim` at `out`: its dim/2 inverse frequencies, then the
// attention factor (dim/2 + 1 doubles), as the rotations below take them. The scaling crosses here
// only: src/js/rope.js keeps the frequencies of its recent settings in wasm memory, so a rotation of a
// few rows does not pay for the scaling's fields (or for computing the frequencies) at every call.
struct FrequenciesArgs : ScalingArgs {
  Address out;
  Count dim;
  double base;
};
int rope_frequencies(const FrequenciesArgs& a) {
  posenc::rope::Frequencies f;
  const auto status = posenc::rope::frequencies(a.dim, a.base, to_scaling(a), f);
  if (!status.ok()) return code(status);
  double* out = reinterpret_cast<double*>(a.out);
  for (Count i = 0; i < f.inv_freq.size(); ++i) out[i] = f.inv_freq[i];
  out[f.inv_freq.size()] = f.attention_factor;
  return 0;
}
// The frequencies rope_frequencies wrote at `at` for the rotary dimension rotaryDim.
posenc::rope::FrequencyView frequencies_at(Address at, Count rotaryDim) {
  const auto* f = reinterpret_cast<const double*>(at);
  return {{f, rotaryDim / 2}, f[rotaryDim / 2]};
}

// Rotates x [seq, heads, headDim] in place (one block of rows: the hot call of small rotations, so it
// has as few fields as it can). positions: `seq` doubles, or 0 for rows counted from offset;
// frequencies: rope_frequencies' output for rotaryDim. xpos: 1 to apply xPos, with xposRole (its index
// in contract.js ENUMS.xposRole, checked by the core), xposScaleBase and xposCenter. firstRow:
// x's first row in the caller's tensor (for messages).
struct RopeArgs : Args {
  Address x;
  Count seq, heads, headDim, rotaryDim;
  double offset;
  Address positions, frequencies;
  Index layout;
  Flag xpos;
  Index xposRole;
  double xposScaleBase, xposCenter;
  Count firstRow;
};
int rope(const RopeArgs& a) {
  const Count n = a.seq * a.heads * a.headDim;
  const posenc::rope::XPos xpos{a.xposScaleBase, a.xposCenter, static_cast<posenc::rope::XposRole>(a.xposRole)};
  return code(posenc::rope::apply(view<const float>(a.x, n), a.seq, a.heads, a.headDim, a.rotaryDim,
                                  positions(a.offset, a.seq, a.positions, a.seq), frequencies_at(a.frequencies, a.rotaryDim),
                                  static_cast<posenc::rope::Layout>(a.layout), view<float>(a.x, n), a.xpos ? &xpos : nullptr,
                                  a.firstRow));
}

// The cos/sin caches of `rows` positions: [rows, width] each, width = rotaryDim / 2, or rotaryDim
// in the layout's order when `expand`.
// positions: `rows` doubles, or 0 for rows counted from offset; frequencies as for rope.
struct RopeCacheArgs : Args {
  Address cos, sin;
  Count rows;
  double offset;
  Address positions;
  Count rotaryDim;
  Address frequencies;
  Flag expand;
  Index layout;
};
int rope_cache(const RopeCacheArgs& a) {
  const Count n = a.rows * (a.expand ? a.rotaryDim : a.rotaryDim / 2);
  return code(posenc::rope::cache(positions(a.offset, a.rows, a.positions, a.rows), frequencies_at(a.frequencies, a.rotaryDim),
                                  a.expand, static_cast<posenc::rope::Layout>(a.layout), view<float>(a.cos, n),
                                  view<float>(a.sin, n)));
}

// M-RoPE in place on x [seq, heads, headDim]; positions: [3, seq] doubles; sections t, h, w;
// frequencies as for rope.
struct MropeArgs : Args {
  Address x;
  Count seq, heads, headDim, rotaryDim;
  Address positions;
  Count t, h, w;
  Address frequencies;
};
int rope_mrope(const MropeArgs& a) {
  const Count n = a.seq * a.heads * a.headDim;
  return code(posenc::rope::apply_mrope(view<const float>(a.x, n), a.seq, a.heads, a.headDim, a.rotaryDim,
                                        view<const double>(a.positions, 3 * a.seq), {a.t, a.h, a.w},
                                        frequencies_at(a.frequencies, a.rotaryDim), view<float>(a.x, n)));
}

// ---- relative positions -----------------------------------------------------------------------------
struct AlibiSlopesArgs : Args {
  Address out;
  Count heads;
};
int alibi_slopes(const AlibiSlopesArgs& a) {
  return code(posenc::relative::alibi_slopes(a.heads, view<float>(a.out, a.heads)));
}
struct AlibiBiasArgs : Args {
  Address out;
  Count heads, queryLength, keyLength;
  Flag symmetric;
};
int alibi_bias(const AlibiBiasArgs& a) {
  return code(posenc::relative::alibi_bias(a.heads, a.queryLength, a.keyLength, a.symmetric,
                                           view<float>(a.out, a.heads * a.queryLength * a.keyLength)));
}
// keyPositions: keyLength doubles; keyMasked: keyLength bytes, 1 = a padded key (-Infinity).
struct AlibiBiasAtArgs : Args {
  Address out;
  Count heads, queryLength;
  Address keyPositions, keyMasked;
  Count keyLength;
  Flag symmetric;
};
int alibi_bias_at(const AlibiBiasAtArgs& a) {
  return code(posenc::relative::alibi_bias_at(a.heads, a.queryLength, view<const double>(a.keyPositions, a.keyLength),
                                              view<const std::uint8_t>(a.keyMasked, a.keyLength), a.symmetric,
                                              view<float>(a.out, a.heads * a.queryLength * a.keyLength)));
}
// out: int32 buckets of n relative positions (doubles at `relative`), or of the queryLength x keyLength grid.
struct T5BucketsArgs : Args {
  Address out, relative;
  Count n, queryLength, keyLength, buckets, maxDistance;
  Flag bidirectional;
};
int t5_buckets_of(const T5BucketsArgs& a) {
  return code(posenc::relative::t5_buckets_of(view<const double>(a.relative, a.n), a.buckets, a.maxDistance, a.bidirectional,
                                              view<std::int32_t>(a.out, a.n)));
}
int t5_buckets(const T5BucketsArgs& a) {
  return code(posenc::relative::t5_buckets(a.queryLength, a.keyLength, a.buckets, a.maxDistance, a.bidirectional,
                                           view<std::int32_t>(a.out, a.queryLength * a.keyLength)));
}
struct RelativePositionsArgs : Args {
  Address out;
  Count length, maxRelative;
};
int relative_positions(const RelativePositionsArgs& a) {
  return code(posenc::relative::relative_positions(a.length, a.maxRelative, view<std::int32_t>(a.out, a.length * a.length)));
}

// ---- attention --------------------------------------------------------------------------------------
// q [batch, seqQ, heads, d], k [batch, seqK, kvHeads, d], v [batch, seqK, kvHeads, dv] -> out
// [batch, seqQ, heads, dv] (axes 1: seq and heads swapped in all four) and, unless `weights` is 0
// (streaming), weights [batch, heads, seqQ, seqK]. bias (0: none): [biasBatch, biasHeads, seqQ, seqK].
struct AttentionArgs : Args {
  Address q, k, v;
  Count batch, seqQ, seqK, heads, kvHeads, d, dv;
  Address bias;
  Count biasBatch, biasHeads;
  Flag causal;
  double scale;
  Index axes;
  Address out, weights;
};
int attention(const AttentionArgs& a) {
  const posenc::attention::Shape shape{a.seqQ,      a.seqK,     a.heads, a.d,
                                       a.dv,        a.kvHeads,  a.batch, static_cast<posenc::attention::Axes>(a.axes),
                                       a.biasBatch, a.biasHeads};
  const Count bq = a.batch * a.seqQ, bk = a.batch * a.seqK;
  return code(posenc::attention::attention(
      view<const float>(a.q, bq * a.heads * a.d), view<const float>(a.k, bk * a.kvHeads * a.d),
      view<const float>(a.v, bk * a.kvHeads * a.dv), shape,
      a.bias ? view<const float>(a.bias, a.biasBatch * a.biasHeads * a.seqQ * a.seqK) : std::span<const float>(), a.causal,
      a.scale, view<float>(a.out, bq * a.heads * a.dv),
      a.weights ? view<float>(a.weights, a.batch * a.heads * a.seqQ * a.seqK) : std::span<float>()));
}

// ---- analyses ---------------------------------------------------------------------------------------
struct SimilarityArgs : Args {
  Address x;
  Count rows, dim;
  Index metric;
  Address out;
};
int similarity(const SimilarityArgs& a) {
  return code(posenc::analysis::similarity(view<const float>(a.x, a.rows * a.dim), a.rows, a.dim,
                                           static_cast<posenc::analysis::Metric>(a.metric), view<float>(a.out, a.rows * a.rows)));
}
struct ShiftMatrixArgs : Args {
  Address out;
  Count dModel;
  double base, k;
};
int shift_matrix(const ShiftMatrixArgs& a) {
  return code(posenc::analysis::shift_matrix(a.dModel, a.base, a.k, view<float>(a.out, a.dModel * a.dModel)));
}
// out: rows floats.
int nearest_distances(const MatrixArgs& a) {
  return code(
      posenc::analysis::nearest_distances(view<const float>(a.x, a.rows * a.dim), a.rows, a.dim, view<float>(a.out, a.rows)));
}

}  // namespace

EMSCRIPTEN_BINDINGS(posenc) {
  using emscripten::allow_raw_pointers;
  using emscripten::class_;
  using emscripten::function;
  using posenc::bindings::args;
  posenc::bindings::register_common();

  {
    using S = SinusoidalArgs;
    args<S>("SinusoidalArgs") POSENC_FIELD(rows) POSENC_FIELD(dModel) POSENC_FIELD(base) POSENC_FIELD(layout) POSENC_FIELD(offset)
        POSENC_FIELD(positions) POSENC_FIELD(spacing) POSENC_FIELD(out);
  }
  {
    using S = RowsArgs;
    args<S>("RowsArgs") POSENC_FIELD(out) POSENC_FIELD(first) POSENC_FIELD(rows);
  }
  class_<SinusoidalTable>("SinusoidalTable").function("write", &sinusoidal_write);
  function("_sinusoidal", &sinusoidal);
  function("_sinusoidalOpen", &sinusoidal_open, allow_raw_pointers());
  {
    using S = Sinusoidal2dArgs;
    args<S>("Sinusoidal2dArgs") POSENC_FIELD(out) POSENC_FIELD(height) POSENC_FIELD(width) POSENC_FIELD(dModel) POSENC_FIELD(base)
        POSENC_FIELD(clsToken);
  }
  function("_sinusoidal2d", &sinusoidal_2d);
  {
    using S = WavelengthsArgs;
    args<S>("WavelengthsArgs") POSENC_FIELD(out) POSENC_FIELD(dModel) POSENC_FIELD(base) POSENC_FIELD(spacing);
  }
  function("_wavelengths", &wavelengths);
  {
    using S = HalfArgs;
    args<S>("HalfArgs") POSENC_FIELD(from) POSENC_FIELD(to) POSENC_FIELD(n) POSENC_FIELD(bfloat);
  }
  function("_toHalf", &to_half);
  function("_fromHalf", &from_half);
  {
    using S = MatrixArgs;
    args<S>("MatrixArgs") POSENC_FIELD(x) POSENC_FIELD(rows) POSENC_FIELD(dim) POSENC_FIELD(out);
  }
  function("_stats", &stats);
  {
    using S = AddPositionalArgs;
    args<S>("AddPositionalArgs") POSENC_FIELD(x) POSENC_FIELD(batch) POSENC_FIELD(seq) POSENC_FIELD(dim) POSENC_FIELD(p)
        POSENC_FIELD(out);
  }
  function("_addPositional", &add_positional);

  {
    using S = TableArgs;
    args<S>("TableArgs") POSENC_FIELD(rows) POSENC_FIELD(dim) POSENC_FIELD(init) POSENC_FIELD(std) POSENC_FIELD(seed);
  }
  {
    using S = TokenTableArgs;
    args<S>("TokenTableArgs") POSENC_FIELD(vocab) POSENC_FIELD(dim) POSENC_FIELD(seed);
  }
  {
    using S = ResizeArgs;
    args<S>("ResizeArgs") POSENC_FIELD(rows) POSENC_FIELD(method);
  }
  {
    using S = LookupArgs;
    args<S>("LookupArgs") POSENC_FIELD(ids) POSENC_FIELD(n) POSENC_FIELD(out) POSENC_FIELD(scale);
  }
  class_<Table>("Table")
      .function("data", &table_data)
      .function("lookup", &table_lookup)
      .function("resized", &table_resized, allow_raw_pointers());
  function("_makeTable", &make_table, allow_raw_pointers());
  function("_makeTokenTable", &make_token_table, allow_raw_pointers());

  {
    using S = FrequenciesArgs;
    args<S>("FrequenciesArgs") POSENC_FIELD(out) POSENC_FIELD(dim) POSENC_FIELD(base)
        // the scaling's fields, from ScalingArgs
        POSENC_FIELD(type) POSENC_FIELD(factor) POSENC_FIELD(originalMaxPositions) POSENC_FIELD(betaFast) POSENC_FIELD(betaSlow)
            POSENC_FIELD(lowFreqFactor) POSENC_FIELD(highFreqFactor) POSENC_FIELD(seqLength) POSENC_FIELD(attentionFactor)
                POSENC_FIELD(mscale) POSENC_FIELD(mscaleAllDim) POSENC_FIELD(truncate) POSENC_FIELD(shortMscale)
                    POSENC_FIELD(longMscale) POSENC_FIELD(shortFactor) POSENC_FIELD(nShort) POSENC_FIELD(longFactor)
                        POSENC_FIELD(nLong);
  }
  function("_ropeFrequencies", &rope_frequencies);
  {
    using S = RopeArgs;
    args<S>("RopeArgs") POSENC_FIELD(x) POSENC_FIELD(seq) POSENC_FIELD(heads) POSENC_FIELD(headDim) POSENC_FIELD(rotaryDim)
        POSENC_FIELD(offset) POSENC_FIELD(positions) POSENC_FIELD(frequencies) POSENC_FIELD(layout) POSENC_FIELD(xpos)
            POSENC_FIELD(xposRole) POSENC_FIELD(xposScaleBase) POSENC_FIELD(xposCenter) POSENC_FIELD(firstRow);
  }
  function("_rope", &rope);
  {
    using S = MropeArgs;
    args<S>("MropeArgs") POSENC_FIELD(x) POSENC_FIELD(seq) POSENC_FIELD(heads) POSENC_FIELD(headDim) POSENC_FIELD(rotaryDim)
        POSENC_FIELD(positions) POSENC_FIELD(t) POSENC_FIELD(h) POSENC_FIELD(w) POSENC_FIELD(frequencies);
  }
  function("_ropeMrope", &rope_mrope);
  {
    using S = RopeCacheArgs;
    args<S>("RopeCacheArgs") POSENC_FIELD(cos) POSENC_FIELD(sin) POSENC_FIELD(rows) POSENC_FIELD(offset) POSENC_FIELD(positions)
        POSENC_FIELD(rotaryDim) POSENC_FIELD(frequencies) POSENC_FIELD(expand) POSENC_FIELD(layout);
  }
  function("_ropeCache", &rope_cache);

  {
    using S = AlibiSlopesArgs;
    args<S>("AlibiSlopesArgs") POSENC_FIELD(out) POSENC_FIELD(heads);
  }
  function("_alibiSlopes", &alibi_slopes);
  {
    using S = AlibiBiasArgs;
    args<S>("AlibiBiasArgs") POSENC_FIELD(out) POSENC_FIELD(heads) POSENC_FIELD(queryLength) POSENC_FIELD(keyLength)
        POSENC_FIELD(symmetric);
  }
  function("_alibiBias", &alibi_bias);
  {
    using S = AlibiBiasAtArgs;
    args<S>("AlibiBiasAtArgs") POSENC_FIELD(out) POSENC_FIELD(heads) POSENC_FIELD(queryLength) POSENC_FIELD(keyPositions)
        POSENC_FIELD(keyMasked) POSENC_FIELD(keyLength) POSENC_FIELD(symmetric);
  }
  function("_alibiBiasAt", &alibi_bias_at);
  {
    using S = T5BucketsArgs;
    args<S>("T5BucketsArgs") POSENC_FIELD(out) POSENC_FIELD(relative) POSENC_FIELD(n) POSENC_FIELD(queryLength)
        POSENC_FIELD(keyLength) POSENC_FIELD(buckets) POSENC_FIELD(maxDistance) POSENC_FIELD(bidirectional);
  }
  function("_t5Buckets", &t5_buckets);
  function("_t5BucketsOf", &t5_buckets_of);
  {
    using S = RelativePositionsArgs;
    args<S>("RelativePositionsArgs") POSENC_FIELD(out) POSENC_FIELD(length) POSENC_FIELD(maxRelative);
  }
  function("_relativePositions", &relative_positions);

  {
    using S = AttentionArgs;
    args<S>("AttentionArgs") POSENC_FIELD(q) POSENC_FIELD(k) POSENC_FIELD(v) POSENC_FIELD(batch) POSENC_FIELD(seqQ)
        POSENC_FIELD(seqK) POSENC_FIELD(heads) POSENC_FIELD(kvHeads) POSENC_FIELD(d) POSENC_FIELD(dv) POSENC_FIELD(bias)
            POSENC_FIELD(biasBatch) POSENC_FIELD(biasHeads) POSENC_FIELD(causal) POSENC_FIELD(scale) POSENC_FIELD(axes)
                POSENC_FIELD(out) POSENC_FIELD(weights);
  }
  function("_attention", &attention);

  {
    using S = SimilarityArgs;
    args<S>("SimilarityArgs") POSENC_FIELD(x) POSENC_FIELD(rows) POSENC_FIELD(dim) POSENC_FIELD(metric) POSENC_FIELD(out);
  }
  function("_similarity", &similarity);
  {
    using S = ShiftMatrixArgs;
    args<S>("ShiftMatrixArgs") POSENC_FIELD(out) POSENC_FIELD(dModel) POSENC_FIELD(base) POSENC_FIELD(k);
  }
  function("_shiftMatrix", &shift_matrix);
  function("_nearestDistances", &nearest_distances);
}
