#include "analysis.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "angles.hpp"
#include "attention.hpp"
#include "errors.hpp"
#include "simd.hpp"
#include "sinusoidal.hpp"

namespace posenc::analysis {
namespace {

void check_table(std::span<const float> t, std::size_t rows, std::size_t dim, std::size_t min_rows) {
  if (rows < min_rows) fail("t must have at least ", min_rows, " row", min_rows > 1 ? "s" : "", ", got ", rows);
  require_positive(dim, "dim");
  if (t.size() != checked_size(rows, dim, "t")) fail("t holds ", t.size(), " values; expected rows * dim = ", rows * dim);
  for (std::size_t i = 0; i < t.size(); ++i)
    if (!std::isfinite(t[i])) fail("t[", i, "] must be finite, got ", t[i]);
}

// sum_c (a[c] - b[c])^2, SIMD body + scalar tail.
float squared_distance(const float* a, const float* b, std::size_t n) {
  using bf = simd::batch<float>;
  constexpr std::size_t W = simd::floats;
  bf acc(0.f);
  std::size_t c = 0;
  for (; c + W <= n; c += W) {
    const bf e = bf::load_unaligned(a + c) - bf::load_unaligned(b + c);
    acc += e * e;
  }
  float sum = xsimd::reduce_add(acc);
  for (; c < n; ++c) sum += (a[c] - b[c]) * (a[c] - b[c]);
  return sum;
}

}  // namespace

Stats stats(std::span<const float> values) {
  if (values.empty()) fail("stats needs at least one value");
  double lo = values[0], hi = values[0], sum = 0.0;
  for (float v : values) {
    lo = std::min<double>(lo, v);
    hi = std::max<double>(hi, v);
    sum += v;
  }
  const double mean = sum / double(values.size());
  double sq = 0.0;  // two-pass variance: no cancellation
  for (float v : values) sq += (v - mean) * (v - mean);
  return {lo, hi, mean, std::sqrt(sq / double(values.size()))};
}

void similarity(std::span<const float> t, std::size_t rows, std::size_t dim, Metric metric, std::span<float> out) {
  if (metric != Metric::dot && metric != Metric::cosine) fail("metric must be 'dot' or 'cosine', got ", int(metric));
  check_table(t, rows, dim, 1);
  if (out.size() != checked_size(rows, rows, "the similarity matrix"))
    fail("similarity: output holds ", out.size(), " values; expected rows * rows = ", rows * rows);
  std::vector<float> unit;
  if (metric == Metric::cosine) {  // normalise the rows (norms in double), then the same dot product
    unit.assign(t.begin(), t.end());
    for (std::size_t r = 0; r < rows; ++r) {
      float* row = unit.data() + r * dim;
      double sq = 0;
      for (std::size_t c = 0; c < dim; ++c) sq += double(row[c]) * row[c];
      // Divided in double: 1/|row| overflows float32 for rows of subnormal values.
      const double norm = std::sqrt(sq);
      for (std::size_t c = 0; c < dim; ++c) row[c] = sq > 0 ? float(double(row[c]) / norm) : 0.f;
    }
    t = unit;
  }
  const attention::Matrix m{t.data(), rows, dim, dim};
  attention::matmul(m, m, true, 1.f, out.data(), rows);
  if (metric == Metric::cosine)
    for (float& v : out) v = std::clamp(v, -1.f, 1.f);
}

void shift_matrix(std::size_t d_model, double base, double k, std::span<float> out) {
  sinusoidal::check_args(d_model, base);
  if (d_model % 2) fail("dModel must be even for the shift matrix (an odd last column has no cos partner), got ", d_model);
  require_finite(k, "k");
  if (out.size() != checked_size(d_model, d_model, "the shift matrix"))
    fail("shiftMatrix: output holds ", out.size(), " values; expected dModel * dModel = ", d_model * d_model);
  const std::size_t n = d_model / 2;
  const auto w = sinusoidal::inv_frequencies(d_model, base, n);
  std::vector<double> s(n), c(n), scratch;
  angles::exact_row(k, w, s.data(), c.data(), scratch);
  std::fill(out.begin(), out.end(), 0.f);
  for (std::size_t i = 0; i < n; ++i) {
    float* r0 = out.data() + (2 * i) * d_model + 2 * i;  // row of sin((p+k) w_i)
    float* r1 = r0 + d_model;                            // row of cos((p+k) w_i)
    r0[0] = float(c[i]);
    r0[1] = float(s[i]);
    r1[0] = float(-s[i]);
    r1[1] = float(c[i]);
  }
}

void nearest_distances(std::span<const float> t, std::size_t rows, std::size_t dim, std::span<float> out) {
  check_table(t, rows, dim, 2);
  if (out.size() != rows) fail("nearestDistances: output holds ", out.size(), " values; expected rows = ", rows);
  std::vector<float> best(rows, std::numeric_limits<float>::infinity());
  for (std::size_t i = 0; i < rows; ++i) {
    for (std::size_t j = i + 1; j < rows; ++j) {
      const float d2 = squared_distance(t.data() + i * dim, t.data() + j * dim, dim);
      best[i] = std::min(best[i], d2);
      best[j] = std::min(best[j], d2);
    }
  }
  for (std::size_t i = 0; i < rows; ++i) out[i] = std::sqrt(best[i]);
}

}  // namespace posenc::analysis
