#include "learned.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "errors.hpp"
#include "ops.hpp"
#include "sinusoidal.hpp"

namespace posenc::learned {

Table::Table(std::size_t rows, std::size_t dim, Init init, double std, std::uint64_t seed, rng::Stream stream)
    : rows_(rows), dim_(dim) {
  require_positive(rows, "rows");
  require_positive(dim, "dim");
  if (int(init) < int(Init::normal) || int(init) > int(Init::zeros))
    fail("init ", int(init), " is unknown; allowed: normal, xavier, sinusoidal, zeros");
  data_.assign(checked_size(rows, dim, "the table"), 0.f);
  auto g = rng::make(seed, stream);
  switch (init) {
    case Init::normal:
      // |z| < 8.6 for every normal drawn (53-bit uniforms), so std <= 1e30 keeps the float32 table finite.
      if (!(std >= 0 && std <= 1e30)) fail("std must be a number in [0, 1e30], got ", std);
      rng::fill_normal(g, data_, 0.0, std);
      break;
    case Init::xavier: {
      const double a = std::sqrt(6.0 / double(rows + dim));
      rng::fill_uniform(g, data_, -a, a);
      break;
    }
    case Init::sinusoidal:
      sinusoidal::table(angles::Positions{0, rows, {}}, dim, 10000.0, sinusoidal::Layout::interleaved, data_);
      break;
    case Init::zeros:
      break;
  }
}

Table::Table(std::size_t rows, std::size_t dim, std::vector<float> data) : rows_(rows), dim_(dim), data_(std::move(data)) {
  require_positive(rows, "rows");
  require_positive(dim, "dim");
  if (data_.size() != checked_size(rows, dim, "the table"))
    fail("table data holds ", data_.size(), " values, expected ", rows * dim);
}

void Table::lookup(std::span<const std::int32_t> ids, std::span<float> out, float scale) const {
  if (out.size() != checked_size(ids.size(), dim_, "the lookup"))
    fail("lookup: output holds ", out.size(), " values, expected ", ids.size() * dim_);
  for (std::size_t k = 0; k < ids.size(); ++k)
    if (ids[k] < 0 || std::size_t(ids[k]) >= rows_) fail("index ", ids[k], " at ", k, " is out of range [0, ", rows_, ")");
  for (std::size_t k = 0; k < ids.size(); ++k) {
    const auto row = std::span<const float>(data_).subspan(std::size_t(ids[k]) * dim_, dim_);
    auto dst = out.subspan(k * dim_, dim_);
    if (scale == 1.f)
      std::copy(row.begin(), row.end(), dst.begin());
    else
      ops::scale(row, scale, dst);
  }
}

Table Table::resized(std::size_t new_rows, Resize method) const {
  require_positive(new_rows, "new_rows");
  if (method != Resize::interpolate && method != Resize::tile)
    fail("resize method ", int(method), " is unknown; allowed: interpolate, tile");
  std::vector<float> out(checked_size(new_rows, dim_, "the resized table"));
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
  return Table(new_rows, dim_, std::move(out));
}

Table token_table(std::size_t vocab_size, std::size_t dim, std::uint64_t seed) {
  return Table(vocab_size, dim, Init::xavier, 0.0, seed, rng::Stream::token);
}

void add_positional(std::span<const float> x, std::size_t batch, std::size_t seq, std::size_t dim, std::span<const float> p,
                    std::span<float> out) {
  const std::size_t per = checked_size(seq, dim, "x");
  if (x.size() != checked_size(batch, per, "x") || out.size() != x.size())
    fail("add_positional: x holds ", x.size(), " values, expected ", batch * per);
  if (p.size() < per)
    fail("add_positional: the positional table holds ", p.size() / (dim ? dim : 1), " rows, fewer than the sequence length ",
         seq);
  if (per == 0) return;  // (batch may be huge when seq or dim is 0: loop over nothing)
  for (std::size_t b = 0; b < batch; ++b) ops::add(x.subspan(b * per, per), p.first(per), out.subspan(b * per, per));
}

}  // namespace posenc::learned
