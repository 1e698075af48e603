#include "sinusoidal.hpp"

#include <cmath>
#include <cstring>

#include "errors.hpp"

namespace posenc::sinusoidal {

void check_args(std::size_t d_model, double base) {
  require_positive(d_model, "d_model");
  if (!(std::isfinite(base) && base > 0)) fail("base must be a finite number > 0, got ", base);
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
  const std::size_t rows = positions.size();
  if (out.size() != checked_size(rows, d_model, "the table")) fail("sinusoidal: output holds ", out.size(), " values, expected ", rows * d_model);
  for (std::size_t r = 0; r < positions.values.size(); ++r) require_finite(positions.values[r], "positions[r]");
  require_finite(positions.offset, "offset");
  if (rows == 0) return;

  const std::size_t n = frequency_count(d_model, layout);
  const auto w = inv_frequencies(d_model, base, n);
  using bf = simd::batch<float>;
  constexpr std::size_t W = simd::floats;
  angles::RowSource source(positions, w);
  source.for_each([&](std::size_t r, std::span<const float> s, std::span<const float> c) {
    float* o = out.data() + r * d_model;
    if (layout == Layout::split) {
      std::memcpy(o, s.data(), n * sizeof(float));
      std::memcpy(o + n, c.data(), n * sizeof(float));
      if (d_model % 2) o[d_model - 1] = 0.f;
      return;
    }
    std::size_t i = 0;
    for (; 2 * (i + W) <= d_model; i += W) {  // zip (s0 s1 ..) and (c0 c1 ..) into s0 c0 s1 c1 ..
      const bf sv = bf::load_unaligned(s.data() + i), cv = bf::load_unaligned(c.data() + i);
      xsimd::zip_lo(sv, cv).store_unaligned(o + 2 * i);
      xsimd::zip_hi(sv, cv).store_unaligned(o + 2 * i + W);
    }
    for (; 2 * i < d_model; ++i) {
      o[2 * i] = s[i];
      if (2 * i + 1 < d_model) o[2 * i + 1] = c[i];
    }
  });
}

}  // namespace posenc::sinusoidal
