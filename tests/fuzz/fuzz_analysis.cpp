// Analyses: stats, similarity (dot / cosine), the shift matrix and nearest distances, against
// long-double references. Checks: stats ordered and finite for finite input, all NaN when a value is
// NaN; similarity is the exact dot product / cosine to within float32 rounding (the core accumulates
// in double), and a dot product beyond float32 is refused; cosines in [-1, 1]; M_k is block-diagonal
// with 2x2 rotations (and refused when an angle k * w overflows double); nearest distances are the
// exact ones to float32 rounding (no overflow or underflow of the squares), and a distance beyond
// float32 is refused.
#include <algorithm>
#include <cmath>
#include <limits>

#include "analysis.hpp"
#include "fuzz.hpp"

namespace an = posenc::analysis;

namespace {

void check_stats(fuzz::Input& in) {
  auto v = in.floats(in.in<std::size_t>(0, 300), float(in.real(0.0, 1e6)));
  an::Stats s{};
  const bool ok = fuzz::accepted([&] { return an::stats(v, s); });
  FUZZ_CHECK(ok == !v.empty());
  if (ok && std::any_of(v.begin(), v.end(), [](float x) { return std::isnan(x); }))
    FUZZ_CHECK(std::isnan(s.min) && std::isnan(s.max) && std::isnan(s.mean) && std::isnan(s.std));
  if (!ok || !fuzz::all_finite(v)) return;
  FUZZ_CHECK(std::isfinite(s.mean) && std::isfinite(s.std) && s.std >= 0);
  FUZZ_CHECK(s.min == *std::min_element(v.begin(), v.end()) && s.max == *std::max_element(v.begin(), v.end()));
  const double slack = 1e-12 * std::max(std::fabs(s.min), std::fabs(s.max));
  FUZZ_CHECK(s.min - slack <= s.mean && s.mean <= s.max + slack);
  FUZZ_CHECK(s.std <= (s.max - s.min) + slack);
}

void check_shift(fuzz::Input& in) {
  const std::size_t d = in.rarely(8) ? in.size(0, 70) : 2 * in.in<std::size_t>(1, 32);
  const double base = in.number(1.0, 1e6, 8), k = in.flag() ? in.position(-3e9, 3e9) : in.any_double();
  std::vector<float> m(in.buffer(fuzz::product(d, d)), -7.0f);
  const bool ok = fuzz::accepted([&] { return an::shift_matrix(d, base, k, m); });
  bool valid = d >= 2 && d % 2 == 0 && base >= 1e-300 && base <= 1e300 && std::isfinite(k) && m.size() == fuzz::product(d, d);
  for (std::size_t i = 0; valid && i < d / 2; ++i)  // an angle k * w_i beyond double's range is refused
    valid = std::isfinite(k * std::pow(base, -2.0 * double(i) / double(d)));
  FUZZ_CHECK_MSG(ok == valid, "accepted " + std::to_string(ok) + " d " + std::to_string(d) + " base " + fuzz::str(base) + " k " +
                                  fuzz::str(k));
  if (!ok) return;
  FUZZ_CHECK(fuzz::all_finite(m));
  for (std::size_t r = 0; r < d; ++r)
    for (std::size_t c = 0; c < d; ++c)
      if (r / 2 != c / 2) FUZZ_CHECK(m[r * d + c] == 0.0f);
  for (std::size_t i = 0; i < d; i += 2) {
    const float c = m[i * d + i], s = m[i * d + i + 1];
    FUZZ_CHECK(m[(i + 1) * d + i] == -s && m[(i + 1) * d + i + 1] == c);
    FUZZ_CHECK_MSG(std::fabs(double(c) * c + double(s) * s - 1) <= 1e-6, fuzz::str(c) + ", " + fuzz::str(s));
  }
}

}  // namespace

FUZZ_TARGET(analysis) {
  fuzz::Input in(data, size);
  switch (in.in<int>(0, 3)) {
    case 0:
      check_stats(in);
      return 0;
    case 1:
      check_shift(in);
      return 0;
    default:
      break;
  }
  const bool nearest = in.flag();
  const std::size_t rows = in.size(0, 24), dim = in.size(0, 20);
  const float mag = in.flag() ? 2.0f : float(in.real(0.0, 1e15));
  auto t = in.floats(in.buffer(fuzz::product(rows, dim)), mag);
  if (in.rarely(4) && dim > 0 && t.size() / 2 >= dim) std::copy(t.begin(), t.begin() + dim, t.begin() + dim);  // a duplicate row
  const bool finite = fuzz::all_finite(t);
  const bool table_ok = dim >= 1 && t.size() == fuzz::product(rows, dim) && finite;

  constexpr long double kFloatMax = 3.4028234663852886e38L;
  if (nearest) {
    std::vector<float> out(in.buffer(rows), -7.0f);
    const bool ok = fuzz::accepted([&] { return an::nearest_distances(t, rows, dim, out); });
    const bool args_ok = table_ok && rows >= 2 && out.size() == rows;
    if (!args_ok) {
      FUZZ_CHECK(!ok);
      return 0;
    }
    // Exact distances: the squares of float differences are exact in long double.
    std::vector<long double> best(rows, INFINITY);
    for (std::size_t i = 0; i < rows; ++i)
      for (std::size_t j = 0; j < rows; ++j) {
        if (j == i) continue;
        long double s = 0;
        for (std::size_t c = 0; c < dim; ++c) {
          const long double e = (long double)t[i * dim + c] - (long double)t[j * dim + c];
          s += e * e;
        }
        best[i] = std::min(best[i], std::sqrt(s));
      }
    bool beyond = false, borderline = false;
    for (long double b : best) {
      beyond = beyond || b > kFloatMax * (1 + 1e-12L);
      borderline = borderline || std::fabs(b - kFloatMax) <= kFloatMax * 1e-12L;
    }
    if (!borderline) FUZZ_CHECK_MSG(ok == !beyond, "accepted " + std::to_string(ok) + ": " + fuzz::message());
    if (!ok) return 0;
    for (std::size_t i = 0; i < rows; ++i) {
      FUZZ_CHECK(std::isfinite(out[i]) && out[i] >= 0);
      FUZZ_CHECK_MSG(std::fabs((long double)out[i] - best[i]) <= 1.2e-7L * best[i] + 1.5e-45L,
                     fuzz::str(out[i]) + " vs " + fuzz::str(double(best[i])));
    }
    return 0;
  }

  const int metric_raw = in.rarely(32) ? in.in<int>(-1, 4) : in.in<int>(0, 1);
  const auto metric = static_cast<an::Metric>(metric_raw);
  std::vector<float> out(in.buffer(fuzz::product(rows, rows)), -7.0f);
  const bool ok = fuzz::accepted([&] { return an::similarity(t, rows, dim, metric, out); });
  const bool args_ok = table_ok && rows >= 1 && (metric_raw == 0 || metric_raw == 1) && out.size() == fuzz::product(rows, rows);
  if (!args_ok) {
    FUZZ_CHECK(!ok);
    return 0;
  }
  // Exact dot products (float products are exact in long double), and whether one is beyond float32.
  std::vector<long double> dots(rows * rows), mags(rows * rows);
  bool beyond = false, borderline = false;
  for (std::size_t i = 0; i < rows; ++i)
    for (std::size_t j = 0; j < rows; ++j) {
      long double dot = 0, mag = 0;
      for (std::size_t c = 0; c < dim; ++c) {
        const long double p = (long double)t[i * dim + c] * (long double)t[j * dim + c];
        dot += p;
        mag += std::fabs(p);
      }
      dots[i * rows + j] = dot;
      mags[i * rows + j] = mag;
      const long double err = 1e-13L * mag;  // the double accumulation's error
      beyond = beyond || std::fabs(dot) - err > kFloatMax;
      borderline = borderline || std::fabs(std::fabs(dot) - kFloatMax) <= err + kFloatMax * 1e-15L;
    }
  if (metric == an::Metric::cosine)
    FUZZ_CHECK_MSG(ok, "cosine refused: " + fuzz::message());
  else if (!borderline)
    FUZZ_CHECK_MSG(ok == !beyond, "accepted " + std::to_string(ok) + ": " + fuzz::message());
  if (!ok) return 0;
  for (std::size_t i = 0; i < rows; ++i)
    for (std::size_t j = 0; j < rows; ++j) {
      const float got = out[i * rows + j];
      FUZZ_CHECK(std::isfinite(got));
      const long double dot = dots[i * rows + j], mag = mags[i * rows + j];
      if (metric == an::Metric::dot) {
        FUZZ_CHECK_MSG(std::fabs((long double)got - dot) <= 6e-8L * std::fabs(dot) + 1e-13L * mag + 1e-45L,
                       fuzz::str(got) + " vs " + fuzz::str(double(dot)));
      } else {
        FUZZ_CHECK_MSG(got >= -1 && got <= 1, fuzz::str(got));
        const long double ni = dots[i * rows + i], nj = dots[j * rows + j];
        const long double want = ni > 0 && nj > 0 ? dot / std::sqrt(ni * nj) : 0.0L;
        // rows are normalised in double first: ~1e-15 relative to the magnitudes of the terms
        const long double tol = ni > 0 && nj > 0 ? 1e-13L * mag / std::sqrt(ni * nj) : 0.0L;
        FUZZ_CHECK_MSG(std::fabs((long double)got - want) <= 6e-8L + tol, fuzz::str(got) + " vs " + fuzz::str(double(want)));
      }
    }
  return 0;
}
