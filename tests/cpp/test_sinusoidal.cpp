#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <span>
#include <vector>

#include "angles.hpp"
#include "reference.hpp"
#include "sinusoidal.hpp"
#include "status_check.hpp"

using posenc::angles::Positions;
using posenc::sinusoidal::Layout;

namespace {
std::vector<float> table(const Positions& p, std::size_t d, double base, Layout layout) {
  std::vector<float> out(p.size() * d);
  REQUIRE_OK(posenc::sinusoidal::table(p, d, base, layout, out));
  return out;
}

// Max |table - reference| over the checked rows (ref::checked_row), for the interleaved layout.
double max_error(const std::vector<float>& t, const std::vector<double>& positions, std::size_t d, double base) {
  double worst = 0;
  for (std::size_t r = 0; r < positions.size(); ++r) {
    if (!ref::checked_row(r, positions.size())) continue;
    const auto want = ref::sinusoidal_row(positions[r], d, base);
    for (std::size_t j = 0; j < d; ++j) worst = std::max(worst, std::fabs(double(t[r * d + j]) - want[j]));
  }
  return worst;
}
}  // namespace

TEST_CASE("the worked n=100, d=4 table for 'I am a robot' (A Gentle Introduction to Positional Encoding)") {
  const auto t = table({0, 4, {}}, 4, 100.0, Layout::interleaved);
  const double want[16] = {0,          1,           0,          1,          0.84147098, 0.54030231, 0.09983342, 0.99500417,
                           0.90929743, -0.41614684, 0.19866933, 0.98006658, 0.14112001, -0.9899925, 0.29552023, 0.95533649};
  for (int k = 0; k < 16; ++k) CHECK(t[k] == Approx(want[k]).margin(1e-7));
}

TEST_CASE("angle reduction is exact to ~1e-15 for positions up to 2^31 and beyond") {
  for (double x : {0.0, 1.0, 12345.678, 1e6, 2147483647.0, 2147483000.5}) {
    for (double w : {1.0, 0.7498942093324559, 1e-4, 3.0}) {
      const long double want = ref::angle(x, w);
      const double got = posenc::angles::reduce(x, w);
      CHECK(std::fabs(std::sin((long double)got) - std::sin(want)) < 1e-15L);
      CHECK(std::fabs(std::cos((long double)got) - std::cos(want)) < 1e-15L);
    }
  }
}

TEST_CASE("sinusoidal is within 1e-6 of the exact value, also near 2^31") {
  const double base = 10000;
  for (std::size_t d : {64u, 63u, 8u, 5u}) {
    SECTION("consecutive rows across blocks and re-anchoring, d=" + std::to_string(d)) {
      const double start = 2147483647.0 - 4300;  // 4300 rows: > 64 blocks of 64, ends at 2^31-1
      std::vector<double> pos(4300);
      for (std::size_t r = 0; r < pos.size(); ++r) pos[r] = start + double(r);
      CHECK(max_error(table({start, pos.size(), {}}, d, base, Layout::interleaved), pos, d, base) < 1e-6);
    }
    SECTION("explicit scattered and fractional positions, d=" + std::to_string(d)) {
      std::vector<double> pos = {0, 1, 1e6, 123456789, 2147483647, 1073741824.5, 3.25, 999999937, 17, 2147483000};
      CHECK(max_error(table({0, 0, pos}, d, base, Layout::interleaved), pos, d, base) < 1e-6);
    }
  }
  SECTION("at p = 1e6 posenc keeps the accuracy that float32 angles, as in the tutorials' PyTorch code, lose") {
    const auto want = ref::sinusoidal_row(1e6, 64, base);
    const float a = 1e6f * std::exp(-std::log(10000.f) * 2.f / 64.f);  // the tutorials' float32 angle for column 2
    REQUIRE(std::fabs(std::sin(double(a)) - want[2]) > 1e-3);
    const auto got = table({1e6, 1, {}}, 64, base, Layout::interleaved);
    for (std::size_t j = 0; j < 64; ++j) CHECK(std::fabs(double(got[j]) - want[j]) < 1e-6);
  }
}

TEST_CASE("offset and explicit consecutive positions give the same rows") {
  std::vector<double> pos(300);
  for (std::size_t r = 0; r < pos.size(); ++r) pos[r] = 1000.0 + double(r);
  CHECK(table({1000, 300, {}}, 32, 10000, Layout::interleaved) == table({0, 0, pos}, 32, 10000, Layout::interleaved));
}

TEST_CASE("a Table written in blocks gives the rows of one table() call, bit for bit") {
  // Blocks that split the 64-row anchor blocks anywhere, then a jump back (a fresh exact anchor).
  const std::size_t d = 36, rows = 300;
  for (const auto layout : {Layout::interleaved, Layout::split}) {
    const auto whole = table({5000, rows, {}}, d, 10000, layout);
    posenc::sinusoidal::Table t;
    REQUIRE_OK(t.init({5000, rows, {}}, d, 10000, layout));
    std::vector<float> blocks(rows * d);
    for (std::size_t r0 = 0, k = 1; r0 < rows; r0 += k, k = k * 3 % 97 + 1) {
      k = std::min(k, rows - r0);
      REQUIRE_OK(t.write(r0, std::span<float>(blocks).subspan(r0 * d, k * d)));
    }
    CHECK(blocks == whole);
    std::vector<float> again(10 * d);
    REQUIRE_OK(t.write(130, again));
    CHECK(std::equal(again.begin(), again.end(), whole.begin() + 130 * d));
  }
}

TEST_CASE("a Table refuses rows outside it") {
  using Catch::Contains;
  posenc::sinusoidal::Table t;
  REQUIRE_OK(t.init({0, 8, {}}, 4, 10000, Layout::interleaved));
  std::vector<float> out(3 * 4), ragged(5);
  CHECK_RANGE_WITH(t.write(6, out), Contains("[6, 9)") && Contains("8 rows"));
  CHECK_RANGE_WITH(t.write(0, ragged), Contains("not in the table"));
  CHECK_OK(t.write(5, out));
}

TEST_CASE("split layout is the interleaved columns regrouped, odd d pads split with zero") {
  for (std::size_t d : {16u, 7u}) {
    const auto inter = table({0, 50, {}}, d, 10000, Layout::interleaved);
    const auto split = table({0, 50, {}}, d, 10000, Layout::split);
    const std::size_t h = d / 2;
    for (std::size_t r = 0; r < 50; ++r) {
      for (std::size_t i = 0; i < h; ++i) {
        REQUIRE(split[r * d + i] == inter[r * d + 2 * i]);
        REQUIRE(split[r * d + h + i] == inter[r * d + 2 * i + 1]);
      }
      if (d % 2) {
        REQUIRE(split[r * d + d - 1] == 0.f);
        // interleaved odd d: the last column is the sin of frequency h
        REQUIRE(inter[r * d + d - 1] == Approx(std::sin(double(r) * std::pow(10000.0, -2.0 * h / d))).margin(1e-6));
      }
    }
  }
}

TEST_CASE("wavelengths run geometrically from 2 pi towards 2 pi base") {
  std::vector<double> w(32);
  REQUIRE_OK(posenc::sinusoidal::wavelengths(64, 10000, w));
  CHECK(w[0] == Approx(2 * M_PI));
  for (std::size_t i = 1; i < w.size(); ++i) CHECK(w[i] / w[i - 1] == Approx(std::pow(10000.0, 2.0 / 64)));
  CHECK(w.back() == Approx(2 * M_PI * std::pow(10000.0, 62.0 / 64)));
}

TEST_CASE("sinusoidal rejects bad arguments") {
  using Catch::Contains;
  std::vector<float> out(16);
  CHECK_RANGE_WITH(posenc::sinusoidal::table({0, 4, {}}, 0, 10000, Layout::interleaved, out), Contains("dModel"));
  CHECK_RANGE_WITH(posenc::sinusoidal::table({0, 4, {}}, 4, -1, Layout::interleaved, out), Contains("base") && Contains("-1"));
  CHECK_RANGE_WITH(posenc::sinusoidal::table({0, 4, {}}, 4, NAN, Layout::interleaved, out), Contains("base") && Contains("NaN"));
  CHECK_RANGE_WITH(posenc::sinusoidal::table({0, 5, {}}, 4, 10000, Layout::interleaved, out), Contains("output"));
  CHECK_RANGE_WITH(posenc::sinusoidal::table({INFINITY, 4, {}}, 4, 10000, Layout::interleaved, out),
                   Contains("offset") && Contains("Infinity"));
  CHECK_RANGE_WITH(posenc::sinusoidal::table({0, 4, {}}, 4, 10000, static_cast<Layout>(2), out), Contains("layout"));
  const std::vector<double> nan_pos = {0, 1, NAN, 3};
  CHECK_RANGE_WITH(posenc::sinusoidal::table({0, 0, nan_pos}, 4, 10000, Layout::interleaved, out), Contains("positions[2]"));
  std::vector<double> w(3);
  CHECK_RANGE(posenc::sinusoidal::wavelengths(4, 10000, w));  // 2 values expected
  CHECK_OK(posenc::sinusoidal::table({0, 4, {}}, 4, 10000, Layout::interleaved, out));
}
