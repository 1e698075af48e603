#include "learned.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "ops.hpp"
#include "sinusoidal.hpp"
#include "status.hpp"

namespace posenc::learned {

Status Table::make(Table& out, std::size_t rows, std::size_t dim, Init init, double std, std::uint64_t seed, rng::Stream stream) {
  POSENC_TRY(require_positive(rows, "maxLength"));
  POSENC_TRY(require_positive(dim, "dModel"));
  // invariant: validate.js maps the option's names to these indices
  if (int(init) < 0 || int(init) >= contract::kLearnedInitCount)
    return fail("init ", int(init), " is unknown; allowed: ", contract::kLearnedInitList);
  // |z| < 8.6 for every normal drawn (53-bit uniforms), so std <= LIMITS.maxStd (1e30) keeps the float32 table finite
  // (checked whatever the init, as the API documents std's range).
  if (!(std >= 0 && std <= contract::kMaxStd)) return fail("std must be a number in [0, " POSENC_LIMIT_MAX_STD "], got ", std);
  std::size_t n = 0;
  POSENC_TRY(checked_size(n, rows, dim, "the table"));
  Table t;
  POSENC_TRY(t.data_.allocate(n, "the table"));
  t.rows_ = rows;
  t.dim_ = dim;
  auto g = rng::make(seed, stream);
  switch (init) {
    case Init::normal:
      rng::fill_normal(g, t.data_, 0.0, std);
      break;
    case Init::xavier: {
      const double a = std::sqrt(6.0 / double(rows + dim));
      rng::fill_uniform(g, t.data_, -a, a);
      break;
    }
    case Init::sinusoidal:
      POSENC_TRY(sinusoidal::table(angles::Positions{0, rows, {}}, dim, contract::kDefaultBase, sinusoidal::Layout::interleaved,
                                   t.data_));
      break;
    case Init::zeros:
      break;
  }
  out = std::move(t);
  return {};
}

Status Table::lookup(std::span<const std::int32_t> ids, std::span<float> out, float scale) const {
  std::size_t n = 0;
  // invariant: the wrapper refuses this size (validate.js size()) before allocating the output
  POSENC_TRY(checked_size(n, ids.size(), dim_, "the lookup"));
  // invariant: the wrapper allocates the output at this size
  if (out.size() != n) return fail("the output holds ", out.size(), " values, expected ", n);
  for (std::size_t k = 0; k < ids.size(); ++k)
    if (ids[k] < 0 || std::size_t(ids[k]) >= rows_)
      return fail("position ", ids[k], " (at ", k, ") is out of range: the table has maxLength ", rows_, " rows (0 .. ",
                  rows_ - 1, ")");
  for (std::size_t k = 0; k < ids.size(); ++k) {
    const auto row = std::span<const float>(data_).subspan(std::size_t(ids[k]) * dim_, dim_);
    auto dst = out.subspan(k * dim_, dim_);
    if (scale == 1.f)
      std::copy(row.begin(), row.end(), dst.begin());
    else
      ops::scale(row, scale, dst);
  }
  return {};
}

Status Table::resized(std::size_t new_rows, Resize method, Table& result) const {
  POSENC_TRY(require_positive(new_rows, "newMaxLength"));
  // invariant: validate.js maps the option's names to these indices
  if (method != Resize::interpolate && method != Resize::tile)
    return fail("method ", int(method), " is unknown; allowed: ", contract::kResizeMethodList);
  std::size_t n = 0;
  POSENC_TRY(checked_size(n, new_rows, dim_, "the resized table"));
  Table made;
  POSENC_TRY(made.data_.allocate(n, "the resized table"));
  made.rows_ = new_rows;
  made.dim_ = dim_;
  auto& out = made.data_;
  const std::span<const float> src(data_);
  for (std::size_t j = 0; j < new_rows; ++j) {
    auto dst = std::span<float>(out).subspan(j * dim_, dim_);
    if (method == Resize::tile) {
      std::memcpy(dst.data(), src.data() + (j % rows_) * dim_, dim_ * sizeof(float));
      continue;
    }
    // torch.nn.functional.interpolate(mode='linear', align_corners=False): src = (j + 0.5) * rows/new - 0.5
    double x = (double(j) + 0.5) * double(rows_) / double(new_rows) - 0.5;
    if (x < 0) x = 0;
    const std::size_t i0 = std::size_t(x), i1 = i0 + 1 < rows_ ? i0 + 1 : i0;
    const float t = float(x - double(i0));
    ops::blend(src.subspan(i0 * dim_, dim_), 1.f - t, src.subspan(i1 * dim_, dim_), t, dst);
  }
  result = std::move(made);
  return {};
}

Status token_table(Table& out, std::size_t vocab_size, std::size_t dim, std::uint64_t seed) {
  return Table::make(out, vocab_size, dim, Init::xavier, 0.0, seed, rng::Stream::token);
}

Status add_positional(std::span<const float> x, std::size_t batch, std::size_t seq, std::size_t dim, std::span<const float> p,
                      std::span<float> out) {
  std::size_t per = 0, total = 0;
  POSENC_TRY(checked_size(per, seq, dim, "x"));      // invariant: validate.js tensor() refuses a tensor past LIMITS.maxElements
  POSENC_TRY(checked_size(total, batch, per, "x"));  // invariant: validate.js tensor() refuses a tensor past LIMITS.maxElements
  // invariant: the wrapper passes the tensor's own size
  if (x.size() != total || out.size() != x.size()) return fail("x holds ", x.size(), " values, expected ", total);
  // invariant: absolute.js checks p's rows against x's shape
  if (p.size() < per) return fail("p holds ", p.size() / (dim ? dim : 1), " rows, fewer than the sequence length ", seq, " of x");
  if (per == 0) return {};  // (batch may be huge when seq or dim is 0: loop over nothing)
  // In chunks checked while they are in L1: a sum of two finite values that overflows float32 is an
  // error (NaN and Infinity in the inputs propagate, as IEEE arithmetic does).
  constexpr std::size_t kChunk = 4096;
  for (std::size_t b = 0; b < batch; ++b)
    for (std::size_t i = 0; i < per; i += kChunk) {
      const std::size_t n = std::min(kChunk, per - i), at = b * per + i;
      const auto sum = out.subspan(at, n);
      ops::add(x.subspan(at, n), p.subspan(i, n), sum);
      if (ops::all_finite(sum)) continue;
      for (std::size_t j = 0; j < n; ++j)
        if (!std::isfinite(sum[j]) && std::isfinite(x[at + j]) && std::isfinite(p[i + j]))
          return fail("x + p overflows float32 at x[", at + j, "] = ", x[at + j], " and p[", i + j, "] = ", p[i + j]);
    }
  return {};
}

}  // namespace posenc::learned
