#include "analysis.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include "angles.hpp"
#include "attention.hpp"
#include "buffer.hpp"
#include "simd.hpp"
#include "sinusoidal.hpp"
#include "status.hpp"

namespace posenc::analysis {
namespace {

Status check_table(std::span<const float> t, std::size_t rows, std::size_t dim, std::size_t min_rows) {
  if (rows < min_rows) return fail("t must have at least ", min_rows, " row", min_rows > 1 ? "s" : "", ", got ", rows);
  POSENC_TRY(require_positive(dim, "dim"));
  std::size_t n = 0;
  POSENC_TRY(checked_size(n, rows, dim, "t"));
  if (t.size() != n) return fail("t holds ", t.size(), " values; expected rows * dim = ", n);
  for (std::size_t i = 0; i < t.size(); ++i)
    if (!std::isfinite(t[i])) return fail("t[", i, "] must be finite, got ", t[i]);
  return {};
}

// sum_c (a[c] - b[c])^2 in double (float32 squares overflow beyond 1.8e19 and underflow below 1e-19),
// SIMD body + scalar tail.
double squared_distance(const double* a, const double* b, std::size_t n) {
  using bd = simd::batch<double>;
  constexpr std::size_t W = simd::doubles;
  bd acc(0.0);
  std::size_t c = 0;
  for (; c + W <= n; c += W) {
    const bd e = bd::load_unaligned(a + c) - bd::load_unaligned(b + c);
    acc += e * e;
  }
  double sum = xsimd::reduce_add(acc);
  for (; c < n; ++c) sum += (a[c] - b[c]) * (a[c] - b[c]);
  return sum;
}

// t as double.
Status widen(std::span<const float> t, Buffer<double>& out) {
  POSENC_TRY(out.allocate(t.size(), "t in double"));
  for (std::size_t i = 0; i < t.size(); ++i) out[i] = t[i];
  return {};
}

}  // namespace

Status stats(std::span<const float> values, Stats& out) {
  if (values.empty()) return fail("t must hold at least one value");
  double lo = values[0], hi = values[0], sum = 0.0;
  for (float v : values) {
    lo = std::min<double>(lo, v);
    hi = std::max<double>(hi, v);
    sum += v;
  }
  const double mean = sum / double(values.size());
  double sq = 0.0;  // two-pass variance: no cancellation
  for (float v : values) sq += (v - mean) * (v - mean);
  out = {lo, hi, mean, std::sqrt(sq / double(values.size()))};
  return {};
}

Status similarity(std::span<const float> t, std::size_t rows, std::size_t dim, Metric metric, std::span<float> out) {
  if (metric != Metric::dot && metric != Metric::cosine)
    return fail("metric ", int(metric), " is unknown; allowed: ", contract::kMetricList);
  POSENC_TRY(check_table(t, rows, dim, 1));
  std::size_t n = 0;
  POSENC_TRY(checked_size(n, rows, rows, "the similarity matrix"));
  if (out.size() != n) return fail("the output holds ", out.size(), " values; expected rows * rows = ", n);
  Buffer<double> x, dots;
  POSENC_TRY(widen(t, x));
  POSENC_TRY(dots.allocate(n, "the similarity matrix in double"));
  if (metric == Metric::cosine) {  // normalise the rows, then the same dot product
    for (std::size_t r = 0; r < rows; ++r) {
      double* row = x.data() + r * dim;
      double sq = 0;
      for (std::size_t c = 0; c < dim; ++c) sq += row[c] * row[c];
      const double norm = std::sqrt(sq);
      for (std::size_t c = 0; c < dim; ++c) row[c] = sq > 0 ? row[c] / norm : 0.0;
    }
  }
  const attention::MatrixOf<double> m{x.data(), rows, dim, dim};
  POSENC_TRY(attention::matmul(m, m, true, 1.0, dots.data(), rows));
  for (std::size_t i = 0; i < n; ++i) {
    const double v = metric == Metric::cosine ? std::clamp(dots[i], -1.0, 1.0) : dots[i];
    if (!(std::fabs(v) <= contract::kFloat32Max))
      return fail("the dot product of rows ", i / rows, " and ", i % rows, " of t is ", v,
                  ", beyond float32; use metric 'cosine' or scale t down");
    out[i] = float(v);
  }
  return {};
}

Status shift_matrix(std::size_t d_model, double base, double k, std::span<float> out) {
  POSENC_TRY(sinusoidal::check_args(d_model, base));
  if (d_model % 2) return fail("dModel must be even for the shift matrix (an odd last column has no cos partner), got ", d_model);
  POSENC_TRY(require_finite(k, "k"));
  std::size_t total = 0;
  POSENC_TRY(checked_size(total, d_model, d_model, "the shift matrix"));
  if (out.size() != total) return fail("the output holds ", out.size(), " values; expected dModel * dModel = ", total);
  const std::size_t n = d_model / 2;
  Buffer<double> w, rows;
  POSENC_TRY(sinusoidal::inv_frequencies(d_model, base, n, w));
  for (std::size_t i = 0; i < n; ++i)  // an angle beyond double's range has no defined sine
    if (!std::isfinite(k * w[i]))
      return fail("the angle of k = ", k, " at frequency ", w[i], " (index ", i, ", base ", base,
                  ") is beyond double's range (|k * frequency| must be below 1.8e308); use a smaller k or a larger base");
  POSENC_TRY(rows.allocate(2 * n + angles::exact_row_scratch(n), "the sin/cos row"));
  double *s = rows.data(), *c = s + n;
  angles::exact_row(k, w, s, c, c + n);
  std::fill(out.begin(), out.end(), 0.f);
  for (std::size_t i = 0; i < n; ++i) {
    float* r0 = out.data() + (2 * i) * d_model + 2 * i;  // row of sin((p+k) w_i)
    float* r1 = r0 + d_model;                            // row of cos((p+k) w_i)
    r0[0] = float(c[i]);
    r0[1] = float(s[i]);
    r1[0] = float(-s[i]);
    r1[1] = float(c[i]);
  }
  return {};
}

Status nearest_distances(std::span<const float> t, std::size_t rows, std::size_t dim, std::span<float> out) {
  POSENC_TRY(check_table(t, rows, dim, 2));
  if (out.size() != rows) return fail("the output holds ", out.size(), " values; expected rows = ", rows);
  Buffer<double> x, best;
  POSENC_TRY(widen(t, x));
  POSENC_TRY(best.assign(rows, std::numeric_limits<double>::infinity(), "the distances"));
  for (std::size_t i = 0; i < rows; ++i) {
    for (std::size_t j = i + 1; j < rows; ++j) {
      const double d2 = squared_distance(x.data() + i * dim, x.data() + j * dim, dim);
      best[i] = std::min(best[i], d2);
      best[j] = std::min(best[j], d2);
    }
  }
  // |a - b| <= 2 * 3.4e38 for float32 rows of one dimension; more dimensions can exceed float32.
  for (std::size_t i = 0; i < rows; ++i) {
    const double d = std::sqrt(best[i]);
    if (!(d <= contract::kFloat32Max))
      return fail("the distance from row ", i, " of t to its nearest row is ", d, ", beyond float32; scale t down");
    out[i] = float(d);
  }
  return {};
}

}  // namespace posenc::analysis
