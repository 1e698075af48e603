#include "sinusoidal.hpp"

#include <cmath>

#include "errors.hpp"

namespace posenc::sinusoidal {

void check_args(std::size_t d_model, double base) {
  require_positive(d_model, "d_model");
  // [1e-300, 1e300] keeps every frequency base^(-2i/d) < 1/base and wavelength 2 pi base^(2i/d) finite.
  if (!(base >= kMinBase && base <= kMaxBase)) fail("base must be a number in [1e-300, 1e300], got ", base);
}

std::size_t frequency_count(std::size_t d_model, Layout layout) {
  return layout == Layout::interleaved ? (d_model + 1) / 2 : d_model / 2;
}

std::vector<double> inv_frequencies(std::size_t d_model, double base, std::size_t count) {
  std::vector<double> w(count);
  for (std::size_t i = 0; i < count; ++i) w[i] = std::pow(base, -2.0 * double(i) / double(d_model));
  return w;
}

void wavelengths(std::size_t d_model, double base, std::span<double> out) {
  check_args(d_model, base);
  if (out.size() != (d_model + 1) / 2) fail("wavelengths: output holds ", out.size(), " values, expected ", (d_model + 1) / 2);
  const double two_pi = 6.283185307179586;
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = two_pi * std::pow(base, 2.0 * double(i) / double(d_model));
}

void table(const angles::Positions& positions, std::size_t d_model, double base, Layout layout, std::span<float> out) {
  check_args(d_model, base);
  if (layout != Layout::interleaved && layout != Layout::split)
    fail("layout ", static_cast<int>(layout), " is unknown; allowed: interleaved, split");
  const std::size_t rows = positions.size();
  if (out.size() != checked_size(rows, d_model, "the table"))
    fail("sinusoidal: output holds ", out.size(), " values, expected ", rows * d_model);
  for (std::size_t r = 0; r < positions.values.size(); ++r) require_finite(positions.values[r], "positions[r]");
  require_finite(positions.offset, "offset");
  if (rows == 0) return;

  const std::size_t n = frequency_count(d_model, layout);
  const auto w = inv_frequencies(d_model, base, n);
  constexpr std::size_t W = simd::floats;
  const bool split = layout == Layout::split;
  // Frequencies written a whole batch at a time; the last ones (at most W) go through a small buffer.
  const std::size_t body = split ? n - n % W : d_model / (2 * W) * W;
  angles::RowSource source(positions, w);
  source.for_each([&](std::size_t r, const angles::RowSource::Row& row) {
    float* o = out.data() + r * d_model;
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
}

}  // namespace posenc::sinusoidal
