#include "sinusoidal.hpp"

#include <algorithm>
#include <cmath>

#include "status.hpp"

namespace posenc::sinusoidal {

POSENC_COLD Status require_base(double base) {
  // [kMinBase, kMaxBase] keeps every frequency base^(-2i/d) < 1/base and wavelength 2 pi base^(2i/d) finite.
  if (!(base >= kMinBase && base <= kMaxBase))
    return fail("base must be a number in [" POSENC_LIMIT_MIN_BASE ", " POSENC_LIMIT_MAX_BASE "], got ", base);
  return {};
}

Status check_args(std::size_t d_model, double base) {
  POSENC_TRY(require_positive(d_model, "dModel"));
  return require_base(base);
}

std::size_t frequency_count(std::size_t d_model, Layout layout) {
  return layout == Layout::interleaved ? (d_model + 1) / 2 : d_model / 2;
}

namespace {
// The exponent step of w_i = base^(-i * step): 2/d (Vaswani) or 1/(h-1) (tensor2tensor).
POSENC_COLD Status spacing_step(double& step, std::size_t d_model, Spacing spacing) {
  if (spacing == Spacing::vaswani) {
    step = 2.0 / double(d_model);
    return {};
  }
  // invariant: validate.js maps the option's names to these indices
  if (spacing != Spacing::tensor2tensor)
    return fail("spacing ", static_cast<int>(spacing), " is unknown; allowed: ", contract::kSinusoidalSpacingList);
  const std::size_t h = d_model / 2;
  step = 1.0 / double(h > 1 ? h - 1 : 1);
  return {};
}
}  // namespace

Status inv_frequencies(std::size_t d_model, double base, std::size_t count, Buffer<double>& w, Spacing spacing) {
  double step = 0;
  POSENC_TRY(spacing_step(step, d_model, spacing));
  POSENC_TRY(w.allocate(count, "the frequencies"));
  for (std::size_t i = 0; i < count; ++i) w[i] = std::pow(base, -step * double(i));
  return {};
}

POSENC_COLD Status wavelengths(std::size_t d_model, double base, std::span<double> out, Spacing spacing) {
  POSENC_TRY(check_args(d_model, base));
  double step = 0;
  POSENC_TRY(spacing_step(step, d_model, spacing));
  // invariant: the wrapper allocates the output at this size
  if (out.size() != (d_model + 1) / 2) return fail("the output holds ", out.size(), " values, expected ", (d_model + 1) / 2);
  const double two_pi = 6.283185307179586;
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = two_pi * std::pow(base, step * double(i));
  return {};
}

Status table(const angles::Positions& positions, std::size_t d_model, double base, Layout layout, std::span<float> out,
             Spacing spacing) {
  Table t;
  POSENC_TRY(t.init(positions, d_model, base, layout, spacing));
  const std::size_t total = t.size();
  // invariant: the wrapper allocates the output at this size
  if (out.size() != total) return fail("the output holds ", out.size(), " values, expected ", total);
  return t.write(0, out);
}

Status Table::init(const angles::Positions& positions, std::size_t d_model, double base, Layout layout, Spacing spacing) {
  POSENC_TRY(check_args(d_model, base));
  // invariant: validate.js maps the option's names to these indices
  if (layout != Layout::interleaved && layout != Layout::split)
    return fail("layout ", static_cast<int>(layout), " is unknown; allowed: ", contract::kSinusoidalLayoutList);
  std::size_t total = 0;
  // invariant: the wrapper refuses this size (validate.js size()) before allocating the output
  POSENC_TRY(checked_size(total, positions.size(), d_model, "the table"));
  // invariant: validate.js reads only finite numbers
  for (std::size_t r = 0; r < positions.values.size(); ++r)
    if (!std::isfinite(positions.values[r])) return fail("positions[", r, "] must be a finite number, got ", positions.values[r]);
  POSENC_TRY(require_finite(positions.offset, "offset"));  // invariant: validate.js reads only finite numbers
  rows_ = positions.size(), d_model_ = d_model, size_ = total, layout_ = layout, n_ = frequency_count(d_model, layout);
  if (rows_ == 0) return {};
  POSENC_TRY(inv_frequencies(d_model, base, n_, w_, spacing));
  return source_.init(positions, w_);
}

Status Table::write(std::size_t r0, std::span<float> out) {
  const std::size_t d_model = d_model_, n = n_, rows = d_model ? out.size() / d_model : 0;
  // invariant: absolute.js asks for blocks of rows within the table
  if (d_model == 0 || out.size() % d_model || r0 > rows_ || rows > rows_ - r0)
    return fail("rows [", r0, ", ", r0 + rows, ") of ", d_model, " values are not in the table of ", rows_, " rows");
  constexpr std::size_t W = simd::floats;
  const bool split = layout_ == Layout::split;
  // Frequencies written a whole batch at a time; the last ones (at most W) go through a small buffer.
  const std::size_t body = split ? n - n % W : d_model / (2 * W) * W;
  source_.for_range(r0, r0 + rows, [&](std::size_t r, const angles::RowSource::Row& row) {
    float* o = out.data() + (r - r0) * d_model;
    std::size_t i = 0;
    for (; i < body; i += W) {
      const auto [s, c] = row.at(i);
      if (split) {
        s.store_unaligned(o + i);
        c.store_unaligned(o + n + i);
      } else {  // zip (s0 s1 ..) and (c0 c1 ..) into s0 c0 s1 c1 ..
        xsimd::zip_lo(s, c).store_unaligned(o + 2 * i);
        xsimd::zip_hi(s, c).store_unaligned(o + 2 * i + W);
      }
    }
    if (i < n) {
      alignas(64) float st[W], ct[W];
      const auto [s, c] = row.at(i);
      s.store_aligned(st);
      c.store_aligned(ct);
      for (std::size_t j = i; j < n; ++j) {
        const std::size_t sin_col = split ? j : 2 * j, cos_col = split ? n + j : 2 * j + 1;
        o[sin_col] = st[j - i];
        if (cos_col < d_model) o[cos_col] = ct[j - i];  // odd d_model, interleaved: no last cosine
      }
    }
    if (split && d_model % 2) o[d_model - 1] = 0.f;
  });
  return {};
}

POSENC_COLD Status table_2d(std::size_t height, std::size_t width, std::size_t d_model, double base, bool cls_token,
                            std::span<float> out) {
  POSENC_TRY(check_args(d_model, base));
  if (d_model % 4) return fail("dModel must be a multiple of 4 (two halves of sin | cos pairs), got ", d_model);
  POSENC_TRY(require_positive(height, "height"));
  POSENC_TRY(require_positive(width, "width"));
  std::size_t patches = 0, total = 0;
  // invariant: the wrapper refuses this size (validate.js size()) before allocating the output
  POSENC_TRY(checked_size(patches, height, width, "the grid"));
  // invariant: the wrapper refuses this size (validate.js size()) before allocating the output
  POSENC_TRY(checked_size(total, patches + (cls_token ? 1 : 0), d_model, "the table"));
  // invariant: the wrapper allocates the output at this size
  if (out.size() != total) return fail("the output holds ", out.size(), " values, expected ", total);
  const std::size_t half = d_model / 2;
  // The 1-D tables of the columns and the rows, then each patch row is [column table | row table].
  Buffer<float> columns, rows;
  POSENC_TRY(columns.allocate(width * half, "the column table"));
  POSENC_TRY(rows.allocate(height * half, "the row table"));
  POSENC_TRY(table(angles::Positions{0, width, {}}, half, base, Layout::split, columns));
  POSENC_TRY(table(angles::Positions{0, height, {}}, half, base, Layout::split, rows));
  float* o = out.data();
  if (cls_token) {
    std::fill(o, o + d_model, 0.f);
    o += d_model;
  }
  for (std::size_t r = 0; r < height; ++r)
    for (std::size_t c = 0; c < width; ++c, o += d_model) {
      std::copy(columns.data() + c * half, columns.data() + (c + 1) * half, o);
      std::copy(rows.data() + r * half, rows.data() + (r + 1) * half, o + half);
    }
  return {};
}

}  // namespace posenc::sinusoidal
