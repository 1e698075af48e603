// Analyses: stats, similarity (dot / cosine), the shift matrix and nearest distances, against
// double references. Checks: stats ordered and finite for finite input; similarity equals the
// double dot products / cosines (cosines in [-1, 1]); M_k is block-diagonal with 2x2 rotations;
// nearest distances match a brute-force double computation.
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
  const bool ok = fuzz::accepted([&] { s = an::stats(v); });
  FUZZ_CHECK(ok == !v.empty());
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
  const bool ok = fuzz::accepted([&] { an::shift_matrix(d, base, k, m); });
  const bool valid =
      d >= 2 && d % 2 == 0 && base >= 1e-300 && base <= 1e300 && std::isfinite(k) && m.size() == fuzz::product(d, d);
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

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
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

  if (nearest) {
    std::vector<float> out(in.buffer(rows), -7.0f);
    const bool ok = fuzz::accepted([&] { an::nearest_distances(t, rows, dim, out); });
    FUZZ_CHECK(ok == (table_ok && rows >= 2 && out.size() == rows));
    if (!ok) return 0;
    for (std::size_t i = 0; i < rows; ++i) {
      double best = std::numeric_limits<double>::infinity();
      for (std::size_t j = 0; j < rows; ++j) {
        if (j == i) continue;
        double s = 0;
        for (std::size_t c = 0; c < dim; ++c)
          s += (double(t[i * dim + c]) - t[j * dim + c]) * (double(t[i * dim + c]) - t[j * dim + c]);
        best = std::min(best, std::sqrt(s));
      }
      FUZZ_CHECK(out[i] >= 0);
      if (best > 1e18) continue;  // squared distances are summed in float32: beyond ~1e19 they overflow
      FUZZ_CHECK_MSG(std::fabs(out[i] - best) <= 1e-5 * best + 1e-30, fuzz::str(out[i]) + " vs " + fuzz::str(best));
    }
    return 0;
  }

  const int metric_raw = in.rarely(32) ? in.in<int>(-1, 4) : in.in<int>(0, 1);
  const auto metric = static_cast<an::Metric>(metric_raw);
  std::vector<float> out(in.buffer(fuzz::product(rows, rows)), -7.0f);
  const bool ok = fuzz::accepted([&] { an::similarity(t, rows, dim, metric, out); });
  FUZZ_CHECK(ok == (table_ok && rows >= 1 && (metric_raw == 0 || metric_raw == 1) && out.size() == fuzz::product(rows, rows)));
  if (!ok) return 0;
  for (std::size_t i = 0; i < rows; ++i)
    for (std::size_t j = 0; j < rows; ++j) {
      double dot = 0, mag_dot = 0, ni = 0, nj = 0;
      for (std::size_t c = 0; c < dim; ++c) {
        const double a = t[i * dim + c], b = t[j * dim + c];
        dot += a * b, mag_dot += std::fabs(a * b), ni += a * a, nj += b * b;
      }
      const float got = out[i * rows + j];
      if (metric == an::Metric::dot) {
        if (mag_dot < 1e37) FUZZ_CHECK(std::isfinite(got));
        FUZZ_CHECK_MSG(std::fabs(got - dot) <= 1e-5 * mag_dot + 1e-30 || !std::isfinite(got),
                       fuzz::str(got) + " vs " + fuzz::str(dot));
      } else {
        FUZZ_CHECK_MSG(std::isfinite(got) && got >= -1 && got <= 1, fuzz::str(got));
        const double want = ni > 0 && nj > 0 ? dot / std::sqrt(ni * nj) : 0.0;
        FUZZ_CHECK_MSG(std::fabs(got - want) <= 1e-5 * (mag_dot / std::sqrt(ni * nj + 1e-300)) + 1e-6,
                       fuzz::str(got) + " vs " + fuzz::str(want));
      }
    }
  return 0;
}
