#include <catch2/catch.hpp>

#include <cmath>
#include <random>
#include <vector>

#include "analysis.hpp"
#include "errors.hpp"
#include "reference.hpp"
#include "sinusoidal.hpp"

using posenc::analysis::Metric;

namespace {

std::vector<float> sinusoidal(double offset, std::size_t rows, std::size_t d) {
  std::vector<float> t(rows * d);
  posenc::sinusoidal::table({offset, rows, {}}, d, 10000, posenc::sinusoidal::Layout::interleaved, t);
  return t;
}

std::vector<float> similarity(const std::vector<float>& t, std::size_t rows, std::size_t dim, Metric m) {
  std::vector<float> out(rows * rows);
  posenc::analysis::similarity(t, rows, dim, m, out);
  return out;
}

std::vector<float> shift(std::size_t d, double k) {
  std::vector<float> m(d * d);
  posenc::analysis::shift_matrix(d, 10000, k, m);
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
    posenc::analysis::nearest_distances(t, rows, dim, out);
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
  posenc::analysis::nearest_distances(sinusoidal(0, L, d), L, d, out);
  double want = 0;
  for (std::size_t f = 0; f < d / 2; ++f) want += 2 - 2 * std::cos(ref::inv_freq(f, d, 10000));
  for (float v : out) CHECK(v == Approx(std::sqrt(want)).epsilon(1e-4));
}

TEST_CASE("analysis rejects bad input") {
  std::vector<float> t(12), out(16), m(9), near(1);
  CHECK_THROWS_AS(posenc::analysis::similarity(t, 4, 4, Metric::dot, out), posenc::range_error);  // t holds 12, not 16
  CHECK_THROWS_AS(posenc::analysis::similarity(t, 4, 3, Metric::dot, m), posenc::range_error);    // out too small
  CHECK_THROWS_AS(posenc::analysis::similarity(t, 4, 3, static_cast<Metric>(7), out), posenc::range_error);
  t[3] = NAN;
  CHECK_THROWS_AS(posenc::analysis::similarity(t, 4, 3, Metric::cosine, out), posenc::range_error);
  CHECK_THROWS_AS(posenc::analysis::shift_matrix(3, 10000, 1, m), posenc::range_error);  // odd d
  std::vector<float> m4(16);
  CHECK_NOTHROW(posenc::analysis::shift_matrix(4, 10000, 1, m4));
  CHECK_THROWS_AS(posenc::analysis::shift_matrix(4, 10000, INFINITY, m4), posenc::range_error);
  CHECK_THROWS_AS(posenc::analysis::shift_matrix(4, 0, 1, m4), posenc::range_error);
  CHECK_THROWS_AS(posenc::analysis::shift_matrix(4, 10000, 1, m), posenc::range_error);
  CHECK_THROWS_AS(posenc::analysis::shift_matrix(0, 10000, 1, m), posenc::range_error);
  std::vector<float> one(3);
  CHECK_THROWS_AS(posenc::analysis::nearest_distances(one, 1, 3, near), posenc::range_error);  // needs 2 rows
}
