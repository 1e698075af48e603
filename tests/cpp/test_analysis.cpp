#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "analysis.hpp"
#include "reference.hpp"
#include "sinusoidal.hpp"
#include "status_check.hpp"

using posenc::analysis::Metric;

namespace {

std::vector<float> sinusoidal(double offset, std::size_t rows, std::size_t d) {
  std::vector<float> t(rows * d);
  REQUIRE_OK(posenc::sinusoidal::table({offset, rows, {}}, d, 10000, posenc::sinusoidal::Layout::interleaved, t));
  return t;
}

std::vector<float> similarity(const std::vector<float>& t, std::size_t rows, std::size_t dim, Metric m) {
  std::vector<float> out(rows * rows);
  REQUIRE_OK(posenc::analysis::similarity(t, rows, dim, m, out));
  return out;
}

std::vector<float> shift(std::size_t d, double k) {
  std::vector<float> m(d * d);
  REQUIRE_OK(posenc::analysis::shift_matrix(d, 10000, k, m));
  return m;
}

}  // namespace

TEST_CASE("dot similarity of a sinusoidal table depends only on the offset: sum_i cos(offset w_i)") {
  for (std::size_t d : {16u, 64u}) {
    for (double start : {0.0, 1e5}) {
      const std::size_t L = 60;
      const auto s = similarity(sinusoidal(start, L, d), L, d, Metric::dot);
      for (std::size_t i = 0; i < L; ++i) {
        for (std::size_t j = 0; j < L; ++j) {
          double want = 0;  // closed form in double, from the formula alone
          for (std::size_t f = 0; f < d / 2; ++f) want += std::cos((double(j) - double(i)) * ref::inv_freq(f, d, 10000));
          REQUIRE(s[i * L + j] == Approx(want).margin(1e-4));
          REQUIRE(s[i * L + j] == Approx(s[std::max(i, j) - std::min(i, j)]).margin(1e-4));  // row 0 at the offset
        }
      }
    }
  }
}

TEST_CASE("dot and cosine similarity match naive double loops, identical rows have cosine 1") {
  std::mt19937 g(5);
  std::normal_distribution<float> dist;
  const std::size_t rows = 23, dim = 13;
  std::vector<float> t(rows * dim);
  for (auto& v : t) v = dist(g);
  for (std::size_t c = 0; c < dim; ++c) {
    t[5 * dim + c] = t[2 * dim + c];         // row 5 == row 2
    t[7 * dim + c] = -3.f * t[2 * dim + c];  // row 7 == -3 row 2
    t[9 * dim + c] = 0.f;                    // row 9 is all zeros
  }
  const auto dot = similarity(t, rows, dim, Metric::dot), cos = similarity(t, rows, dim, Metric::cosine);
  for (std::size_t i = 0; i < rows; ++i) {
    for (std::size_t j = 0; j < rows; ++j) {
      double ab = 0, aa = 0, bb = 0;
      for (std::size_t c = 0; c < dim; ++c) {
        ab += double(t[i * dim + c]) * t[j * dim + c];
        aa += double(t[i * dim + c]) * t[i * dim + c];
        bb += double(t[j * dim + c]) * t[j * dim + c];
      }
      REQUIRE(dot[i * rows + j] == Approx(ab).margin(1e-4));
      REQUIRE(cos[i * rows + j] == Approx(aa > 0 && bb > 0 ? ab / std::sqrt(aa * bb) : 0.0).margin(1e-6));
    }
    if (i != 9) CHECK(cos[i * rows + i] == Approx(1.0).margin(1e-6));
  }
  CHECK(cos[2 * rows + 5] == Approx(1.0).margin(1e-6));
  CHECK(cos[2 * rows + 7] == Approx(-1.0).margin(1e-6));
  CHECK(cos[9 * rows + 9] == 0.f);
}

TEST_CASE("the shift matrix maps sinusoidal row p to row p + k, also at large p") {
  for (std::size_t d : {2u, 16u, 64u}) {
    for (double k : {0.0, 1.0, 5.0, -3.0, 0.5, 1000.0, 123456.0}) {
      const auto m = shift(d, k);
      for (double p : {0.0, 1.0, 17.0, 1e5, 1e6, 2147483000.0}) {
        const auto from = ref::sinusoidal_row(p, d, 10000), want = ref::sinusoidal_row(p + k, d, 10000);
        double err = 0;
        for (std::size_t r = 0; r < d; ++r) {
          double acc = 0;
          for (std::size_t c = 0; c < d; ++c) acc += double(m[r * d + c]) * from[c];
          err = std::max(err, std::fabs(acc - want[r]));
        }
        INFO("d " << d << " k " << k << " p " << p);
        CHECK(err < 1e-5);
      }
      // with the package's own float table as input, at consecutive large positions
      const auto t = sinusoidal(1e6, 2, d);
      if (k == 1.0) {
        for (std::size_t r = 0; r < d; ++r) {
          double acc = 0;
          for (std::size_t c = 0; c < d; ++c) acc += double(m[r * d + c]) * t[c];
          CHECK(acc == Approx(t[d + r]).margin(1e-5));
        }
      }
    }
  }
}

TEST_CASE("the shift matrix is block-diagonal and orthogonal, M_0 = I, M_a M_b = M_(a+b)") {
  const std::size_t d = 8;
  const auto m0 = shift(d, 0), ma = shift(d, 3), mb = shift(d, 4.5), mab = shift(d, 7.5);
  for (std::size_t r = 0; r < d; ++r) {
    for (std::size_t c = 0; c < d; ++c) {
      CHECK(m0[r * d + c] == (r == c ? 1.f : 0.f));
      if (r / 2 != c / 2) CHECK(ma[r * d + c] == 0.f);
      double prod = 0, gram = 0;
      for (std::size_t i = 0; i < d; ++i) {
        prod += double(ma[r * d + i]) * mb[i * d + c];
        gram += double(ma[r * d + i]) * ma[c * d + i];
      }
      CHECK(prod == Approx(mab[r * d + c]).margin(1e-6));
      CHECK(gram == Approx(r == c ? 1.0 : 0.0).margin(1e-6));
    }
  }
}

TEST_CASE("nearest distances match brute force") {
  std::mt19937 g(9);
  std::normal_distribution<float> dist;
  for (auto [rows, dim] : {std::pair<std::size_t, std::size_t>{2, 1}, {17, 5}, {40, 33}}) {
    std::vector<float> t(rows * dim);
    for (auto& v : t) v = dist(g);
    if (rows > 3)
      for (std::size_t c = 0; c < dim; ++c) t[3 * dim + c] = t[1 * dim + c] + (c == 0 ? 1e-3f : 0.f);  // a near-duplicate
    std::vector<float> out(rows);
    REQUIRE_OK(posenc::analysis::nearest_distances(t, rows, dim, out));
    for (std::size_t i = 0; i < rows; ++i) {
      double best = INFINITY;
      for (std::size_t j = 0; j < rows; ++j) {
        if (j == i) continue;
        double sq = 0;
        for (std::size_t c = 0; c < dim; ++c) sq += std::pow(double(t[i * dim + c]) - t[j * dim + c], 2);
        best = std::min(best, std::sqrt(sq));
      }
      REQUIRE(out[i] == Approx(best).epsilon(1e-5));
    }
  }
  // sinusoidal: adjacent positions are the nearest ones, at the same distance for every row
  const std::size_t L = 100, d = 32;
  std::vector<float> out(L);
  REQUIRE_OK(posenc::analysis::nearest_distances(sinusoidal(0, L, d), L, d, out));
  double want = 0;
  for (std::size_t f = 0; f < d / 2; ++f) want += 2 - 2 * std::cos(ref::inv_freq(f, d, 10000));
  for (float v : out) CHECK(v == Approx(std::sqrt(want)).epsilon(1e-4));
}

TEST_CASE("analysis rejects bad input") {
  using Catch::Contains;
  std::vector<float> t(12), out(16), m(9), near(1);
  CHECK_RANGE_WITH(posenc::analysis::similarity(t, 4, 4, Metric::dot, out), Contains("t holds 12"));  // t holds 12, not 16
  CHECK_RANGE_WITH(posenc::analysis::similarity(t, 4, 3, Metric::dot, m), Contains("output"));        // out too small
  CHECK_RANGE_WITH(posenc::analysis::similarity(t, 4, 3, static_cast<Metric>(7), out), Contains("metric"));
  t[3] = NAN;
  CHECK_RANGE_WITH(posenc::analysis::similarity(t, 4, 3, Metric::cosine, out), Contains("t[3]"));
  CHECK_RANGE_WITH(posenc::analysis::shift_matrix(3, 10000, 1, m), Contains("dModel"));  // odd d
  std::vector<float> m4(16);
  CHECK_OK(posenc::analysis::shift_matrix(4, 10000, 1, m4));
  CHECK_RANGE_WITH(posenc::analysis::shift_matrix(4, 10000, INFINITY, m4), Contains("k"));
  CHECK_RANGE_WITH(posenc::analysis::shift_matrix(4, 0, 1, m4), Contains("base"));
  CHECK_RANGE(posenc::analysis::shift_matrix(4, 10000, 1, m));
  CHECK_RANGE_WITH(posenc::analysis::shift_matrix(0, 10000, 1, m), Contains("dModel"));
  std::vector<float> one(3);
  CHECK_RANGE_WITH(posenc::analysis::nearest_distances(one, 1, 3, near), Contains("2 rows"));  // needs 2 rows
}

// ---- distances and similarities accumulate in double ---------------------------------------------

namespace {

using LD = long double;

std::vector<float> nearest(const std::vector<float>& t, std::size_t rows, std::size_t dim) {
  std::vector<float> out(rows);
  REQUIRE_OK(posenc::analysis::nearest_distances(t, rows, dim, out));
  return out;
}

// min over j != i of |t_i - t_j|, in long double (the squares of float32 differences are exact there).
std::vector<LD> exact_nearest(const std::vector<float>& t, std::size_t rows, std::size_t dim) {
  std::vector<LD> best(rows, INFINITY);
  for (std::size_t i = 0; i < rows; ++i)
    for (std::size_t j = 0; j < rows; ++j) {
      if (i == j) continue;
      LD sq = 0;
      for (std::size_t c = 0; c < dim; ++c) {
        const LD e = LD(t[i * dim + c]) - LD(t[j * dim + c]);
        sq += e * e;
      }
      best[i] = std::min(best[i], std::sqrt(sq));
    }
  return best;
}

LD exact_dot(const std::vector<float>& t, std::size_t dim, std::size_t i, std::size_t j) {
  LD s = 0;
  for (std::size_t c = 0; c < dim; ++c) s += LD(t[i * dim + c]) * LD(t[j * dim + c]);
  return s;
}

// |got - want| within one float32 rounding (and a little): the double accumulation is exact enough.
bool near_exact(float got, LD want) {
  return std::fabs(LD(got) - want) <= 1.2e-7L * std::fabs(want) + 1e-45L;
}

}  // namespace

TEST_CASE("nearest distances are accumulated in double: no overflow or underflow of the squares") {
  SECTION("[1e20] and [-1e20]: 2e20, not Infinity") {
    const auto d = nearest({1e20f, -1e20f}, 2, 1);
    CHECK(d[0] == float(2.0 * double(1e20f)));
    CHECK(d[1] == d[0]);
  }
  SECTION("[1e-30] and [2e-30]: 1e-30, not 0") {
    const std::vector<float> t = {1e-30f, 2e-30f};
    const auto d = nearest(t, 2, 1);
    CHECK(d[0] > 0.f);
    CHECK(near_exact(d[0], LD(2e-30f) - LD(1e-30f)));
    CHECK(d[1] == d[0]);
  }
  SECTION("many dimensions, huge and tiny rows against the long-double reference") {
    for (float scale : {1e30f, 1e19f, 1.f, 1e-25f, 1e-40f}) {
      std::mt19937 g(17);
      std::normal_distribution<float> dist;
      const std::size_t rows = 9, dim = 7;
      std::vector<float> t(rows * dim);
      for (auto& v : t) v = dist(g) * scale;
      for (std::size_t c = 0; c < dim; ++c) t[4 * dim + c] = t[2 * dim + c] * (1 + (c == 3 ? 1e-6f : 0.f));  // near-duplicate
      const auto got = nearest(t, rows, dim);
      const auto want = exact_nearest(t, rows, dim);
      for (std::size_t i = 0; i < rows; ++i) {
        INFO("scale " << scale << " row " << i << " got " << got[i] << " want " << double(want[i]));
        CHECK(std::isfinite(got[i]));
        // subnormal inputs (scale 1e-40) carry fewer bits: compare to the exact distance of what was stored
        CHECK(std::fabs(LD(got[i]) - want[i]) <= 1.2e-7L * want[i] + 1.5e-45L);
      }
    }
  }
  SECTION("rows at float32's limit: 2 * 3.4e38 in one dimension is beyond float32, a range failure") {
    const float m = std::numeric_limits<float>::max();
    CHECK(nearest({m, 0.f, -m}, 3, 1)[1] == m);  // from 0 to +-max: exactly max
    std::vector<float> out(2);
    CHECK_RANGE_WITH(posenc::analysis::nearest_distances(std::vector<float>{m, -m}, 2, 1, out),
                     Catch::Contains("beyond float32"));
    CHECK_RANGE(
        posenc::analysis::nearest_distances(std::vector<float>{2e38f, 2e38f, -2e38f, 0.f}, 2, 2, out));  // sqrt(16 + 4) e38
    CHECK_OK(posenc::analysis::nearest_distances(std::vector<float>{1e38f, 1e38f, -1e38f, -1e38f}, 2, 2, out));  // 2.83e38
    CHECK(near_exact(out[0], std::sqrt(8.0L) * LD(1e38f)));
  }
}

TEST_CASE("similarity is accumulated in double: huge and tiny rows, and a dot product beyond float32 fails") {
  SECTION("dot products of huge rows below float32's limit are exact to float rounding") {
    // squares up to 1e38, sums up to 2.1e38: within float32, and within one float rounding of exact
    const std::vector<float> t = {1e19f, -1e19f, 3e18f, 4e18f, 1e19f, 1e19f, 5e18f, 0.f, -1e19f};
    std::vector<float> out(9);
    REQUIRE_OK(posenc::analysis::similarity(t, 3, 3, Metric::dot, out));
    for (std::size_t i = 0; i < 3; ++i)
      for (std::size_t j = 0; j < 3; ++j) {
        INFO(i << ", " << j);
        CHECK(near_exact(out[i * 3 + j], exact_dot(t, 3, i, j)));
      }
  }
  SECTION("cosine of huge and of tiny rows: the norms do not overflow or underflow") {
    for (float scale : {1e30f, 1.f, 1e-30f, 1e-42f}) {
      const std::vector<float> t = {1 * scale, 2 * scale, 2 * scale, 1 * scale, -3 * scale, 0.f};
      std::vector<float> out(9);
      REQUIRE_OK(posenc::analysis::similarity(t, 3, 2, Metric::cosine, out));
      for (std::size_t i = 0; i < 3; ++i)
        for (std::size_t j = 0; j < 3; ++j) {
          const LD want = exact_dot(t, 2, i, j) / std::sqrt(exact_dot(t, 2, i, i) * exact_dot(t, 2, j, j));
          INFO("scale " << scale << " " << i << ", " << j << " got " << out[i * 3 + j] << " want " << double(want));
          CHECK(std::fabs(LD(out[i * 3 + j]) - want) <= 1e-6L);
        }
      if (scale >= 1e-30f) CHECK(out[0 * 3 + 1] == Approx(0.8).epsilon(1e-6));  // (1, 2) . (2, 1) / 5
    }
  }
  SECTION("[1e-30] and [2e-30]: the dot product 2e-60 is below float32 but the cosine is exactly 1") {
    const std::vector<float> t = {1e-30f, 2e-30f};
    std::vector<float> out(4);
    REQUIRE_OK(posenc::analysis::similarity(t, 2, 1, Metric::cosine, out));
    for (float v : out) CHECK(v == 1.f);
  }
  SECTION("a dot product beyond float32 is a range failure; cosine of the same rows is fine") {
    const std::vector<float> t = {1e20f, 1e18f};  // 1e40 on the diagonal
    std::vector<float> out(4);
    CHECK_RANGE_WITH(posenc::analysis::similarity(t, 2, 1, Metric::dot, out), Catch::Contains("beyond float32"));
    CHECK_OK(posenc::analysis::similarity(t, 2, 1, Metric::cosine, out));
    CHECK(out == std::vector<float>{1.f, 1.f, 1.f, 1.f});
    const std::vector<float> below = {1e19f, 1e18f};  // 1e38 at most: fine
    REQUIRE_OK(posenc::analysis::similarity(below, 2, 1, Metric::dot, out));
    CHECK(near_exact(out[0], LD(1e19f) * LD(1e19f)));
    CHECK(near_exact(out[1], LD(1e19f) * LD(1e18f)));
    const float m = std::numeric_limits<float>::max();
    CHECK_RANGE(posenc::analysis::similarity(std::vector<float>{m, m, 0.f, 0.f}, 2, 2, Metric::dot, out));  // 2 max^2
  }
}

TEST_CASE("similarity and nearest distances in blocks: every block shape matches the long-double reference") {
  // Shapes that cross the kernels' blocks: many row blocks (300 x 1, 130 x 2), dimensions in
  // several chunks (40 x 1300, and longer ones for few rows: 3 x 20000), the pair-at-a-time path of
  // many dimensions (5 x 3000, 3 x 20000), row counts
  // that are no multiple of a panel (17 x 3).
  for (auto [rows, dim] : {std::pair<std::size_t, std::size_t>{300, 1}, {130, 2}, {40, 1300}, {5, 3000}, {3, 20000}, {17, 3}}) {
    std::mt19937 g(unsigned(rows * 7 + dim));
    std::normal_distribution<float> dist;
    std::vector<float> t(rows * dim);
    for (auto& v : t) v = dist(g);
    for (std::size_t c = 0; c < dim; ++c) t[(rows - 1) * dim + c] = t[1 * dim + c] + (c == 0 ? 1e-3f : 0.f);  // near-duplicate
    INFO("rows " << rows << ", dim " << dim);
    const auto dot = similarity(t, rows, dim, Metric::dot), cos = similarity(t, rows, dim, Metric::cosine);
    bool all = true;
    for (std::size_t i = 0; i < rows; ++i)
      for (std::size_t j = 0; j < rows; ++j) {
        const LD ab = exact_dot(t, dim, i, j), aa = exact_dot(t, dim, i, i), bb = exact_dot(t, dim, j, j);
        all = all && std::fabs(LD(dot[i * rows + j]) - ab) <= 6e-8L * std::fabs(ab) + 1e-13L * std::sqrt(aa * bb);
        all = all && std::fabs(LD(cos[i * rows + j]) - ab / std::sqrt(aa * bb)) <= 1e-7L;
      }
    CHECK(all);
    const auto got = nearest(t, rows, dim);
    const auto want = exact_nearest(t, rows, dim);
    for (std::size_t i = 0; i < rows; ++i) CHECK(near_exact(got[i], want[i]));
  }
}

TEST_CASE("stats: NaN anywhere makes every statistic NaN, whatever the order; Infinity keeps IEEE semantics") {
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  const auto stats = [](std::vector<float> v) {
    posenc::analysis::Stats s{};
    REQUIRE_OK(posenc::analysis::stats(v, s));
    return s;
  };
  for (const auto& v : {std::vector<float>{1, nan}, {nan, 1}, {nan}, {1, nan, 2}, {inf, nan}, {nan, -inf}}) {
    const auto s = stats(v);
    CHECK((std::isnan(s.min) && std::isnan(s.max) && std::isnan(s.mean) && std::isnan(s.std)));
  }
  const auto a = stats({1, inf});  // NumPy: min 1, max inf, mean inf, std nan
  CHECK((a.min == 1 && a.max == inf && a.mean == inf && std::isnan(a.std)));
  const auto b = stats({-inf, inf});  // mean inf - inf
  CHECK((b.min == -inf && b.max == inf && std::isnan(b.mean) && std::isnan(b.std)));
  const auto c = stats({2, 4, 4, 4, 5, 5, 7, 9});
  CHECK((c.min == 2 && c.max == 9 && c.mean == 5 && c.std == 2));
}
