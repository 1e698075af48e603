#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "analysis.hpp"
#include "learned.hpp"
#include "rng.hpp"
#include "sinusoidal.hpp"
#include "status_check.hpp"

using posenc::learned::Init;
using posenc::learned::Resize;
using posenc::learned::Table;

namespace {

Table make(std::size_t rows, std::size_t dim, Init init, double std, std::uint64_t seed) {
  Table t;
  REQUIRE_OK(Table::make(t, rows, dim, init, std, seed));
  return t;
}

// A table holding the given values. The core makes tables only from an init; the bindings write a
// user's values into a zeros table's storage (through its data pointer), and so does this.
Table from(std::size_t rows, std::size_t dim, const std::vector<float>& values) {
  REQUIRE(values.size() == rows * dim);
  Table t = make(rows, dim, Init::zeros, 0, 0);
  std::copy(values.begin(), values.end(), const_cast<float*>(t.data().data()));
  return t;
}

Table resized(const Table& t, std::size_t rows, Resize method) {
  Table out;
  REQUIRE_OK(t.resized(rows, method, out));
  return out;
}

posenc::analysis::Stats stats(std::span<const float> v) {
  posenc::analysis::Stats s{};
  REQUIRE_OK(posenc::analysis::stats(v, s));
  return s;
}

std::vector<float> values(const Table& t) {
  return {t.data().begin(), t.data().end()};
}

}  // namespace

TEST_CASE("SplitMix64 matches the published sequence for seed 0") {
  posenc::rng::SplitMix64 g(0);
  CHECK(g.next() == 0xE220A8397B1DCDAFull);
  CHECK(g.next() == 0x6E789E6AA1B965F4ull);
  CHECK(g.next() == 0x06C45D188009454Full);
}

TEST_CASE("the deterministic log and sincos agree with libm") {
  for (double x : {1e-300, 1e-10, 0.3, 0.5, 0.7071, 1.0, 1.5, 2.0, 1e10})
    CHECK(posenc::rng::det_log(x) == Approx(std::log(x)).epsilon(1e-14));
  for (int k = 0; k < 1000; ++k) {
    const double u = k / 1000.0 + 1e-4;
    double s, c;
    posenc::rng::det_sincos_2pi(u, s, c);
    REQUIRE(std::fabs(s - std::sin(2 * M_PI * u)) < 1e-14);
    REQUIRE(std::fabs(c - std::cos(2 * M_PI * u)) < 1e-14);
  }
}

TEST_CASE("seeded initialisation: pinned first values (identical on every backend)") {
  // Pinned from this generator's definition (SplitMix64 + Box-Muller, see rng.hpp). The same test
  // runs natively and under wasm, so the builds are bit-identical to each other.
  const Table t = make(512, 768, Init::normal, 0.02, 0);
  const float first[4] = {t.data()[0], t.data()[1], t.data()[2], t.data()[3]};
  std::uint32_t bits[4];
  std::memcpy(bits, first, sizeof bits);
  INFO(first[0] << " " << first[1] << " " << first[2] << " " << first[3]);
  CHECK(bits[0] == 0x3d1078d7u);
  CHECK(bits[1] == 0x3d186026u);
  CHECK(bits[2] == 0x3c3588ccu);
  CHECK(bits[3] == 0x3c3b7328u);
}

TEST_CASE("normal and xavier initialisation have the documented distribution") {
  const Table n = make(512, 768, Init::normal, 0.02, 7);
  const auto s = stats(n.data());
  CHECK(std::fabs(s.mean) < 2e-4);
  CHECK(s.std == Approx(0.02).epsilon(0.01));
  const Table x = make(512, 768, Init::xavier, 0, 7);
  const double a = std::sqrt(6.0 / (512 + 768));
  const auto sx = stats(x.data());
  CHECK(sx.min >= -a);
  CHECK(sx.max <= a);
  CHECK(sx.std == Approx(a / std::sqrt(3.0)).epsilon(0.01));  // U(-a, a) has std a/sqrt(3)
  CHECK(make(4, 4, Init::normal, 0.02, 1).data()[0] != make(4, 4, Init::normal, 0.02, 2).data()[0]);
  const Table z = make(8, 8, Init::zeros, 0, 0);
  for (float v : z.data()) REQUIRE(v == 0.f);
}

TEST_CASE("sinusoidal initialisation is the sinusoidal table") {
  const Table t = make(10, 6, Init::sinusoidal, 0, 0);
  std::vector<float> want(60);
  REQUIRE_OK(posenc::sinusoidal::table({0, 10, {}}, 6, 10000, posenc::sinusoidal::Layout::interleaved, want));
  CHECK(values(t) == want);
}

TEST_CASE("lookup copies rows, scales, and rejects out-of-range positions") {
  std::vector<float> data = {1, 2, 3, 4, 5, 6};  // 3 rows x 2
  const Table t = from(3, 2, data);
  std::vector<std::int32_t> ids = {2, 0, 2};
  std::vector<float> out(6);
  REQUIRE_OK(t.lookup(ids, out, 2.f));
  CHECK(out == std::vector<float>{10, 12, 2, 4, 10, 12});
  std::vector<std::int32_t> bad = {3};
  std::vector<float> o2(2);
  CHECK_RANGE_WITH(t.lookup(bad, o2), Catch::Contains("position 3"));
  bad[0] = -1;
  CHECK_RANGE_WITH(t.lookup(bad, o2), Catch::Contains("position -1"));
  std::vector<float> o3(3);
  CHECK_RANGE(t.lookup(ids, o3));  // 3 ids need 6 values
}

TEST_CASE("resize: linear interpolation with half-pixel centres, and tiling") {
  const Table t = from(2, 1, {0.f, 1.f});
  const auto up = resized(t, 4, Resize::interpolate);
  // torch.nn.functional.interpolate([0, 1], size=4, mode='linear') == [0, 0.25, 0.75, 1]
  CHECK(values(up) == std::vector<float>{0.f, 0.25f, 0.75f, 1.f});
  const Table t3 = from(3, 1, {0.f, 10.f, 20.f});
  const auto same = resized(t3, 3, Resize::interpolate);
  CHECK(values(same) == std::vector<float>{0.f, 10.f, 20.f});
  const auto down = resized(t3, 2, Resize::interpolate);  // src = (j+0.5)*1.5-0.5 = 0.25, 1.75
  CHECK(down.data()[0] == Approx(2.5f));
  CHECK(down.data()[1] == Approx(17.5f));
  const auto tiled = resized(t3, 7, Resize::tile);
  CHECK(values(tiled) == std::vector<float>{0, 10, 20, 0, 10, 20, 0});
}

TEST_CASE("token table: Xavier-uniform on its own stream") {
  Table tok;
  REQUIRE_OK(posenc::learned::token_table(tok, 1000, 64, 0));
  const double a = std::sqrt(6.0 / (1000 + 64));
  const auto s = stats(tok.data());
  CHECK(s.max <= a);
  CHECK(s.min >= -a);
  CHECK(tok.data()[0] != make(1000, 64, Init::xavier, 0, 0).data()[0]);
}

TEST_CASE("add_positional broadcasts the table over the batch and uses its first seq rows") {
  std::vector<float> x = {1, 1, 1, 1, 2, 2, 2, 2};  // [2, 2, 2]
  std::vector<float> p = {0, 1, 2, 3, 99, 99};      // 3 rows of 2
  std::vector<float> out(8);
  REQUIRE_OK(posenc::learned::add_positional(x, 2, 2, 2, p, out));
  CHECK(out == std::vector<float>{1, 2, 3, 4, 2, 3, 4, 5});
  CHECK_RANGE_WITH(posenc::learned::add_positional(x, 2, 2, 2, std::span<const float>(p).first(2), out),
                   Catch::Contains("p holds"));
}

TEST_CASE("add_positional refuses a sum of finite values that overflows float32, and propagates NaN and Infinity") {
  constexpr float big = 3.4e38f, inf = std::numeric_limits<float>::infinity();
  // 5000 values per row: the overflow sits in the second 4096-value chunk of the second batch row
  std::vector<float> x(2 * 5000, 1.f), p(5000, 2.f), out(x.size());
  x[5000 + 4100] = big;
  p[4100] = big;
  CHECK_RANGE_WITH(posenc::learned::add_positional(x, 2, 1, 5000, p, out), Catch::Contains("overflows float32 at x[9100]"));
  x[5000 + 4100] = -big;  // big - big: finite
  REQUIRE_OK(posenc::learned::add_positional(x, 2, 1, 5000, p, out));
  CHECK(out[9100] == 0.f);
  CHECK(out[0] == 3.f);
  x[7] = inf;  // IEEE: Infinity + 2 = Infinity, not an error
  x[8] = std::numeric_limits<float>::quiet_NaN();
  REQUIRE_OK(posenc::learned::add_positional(x, 2, 1, 5000, p, out));
  CHECK(out[7] == inf);
  CHECK(std::isnan(out[8]));
}

TEST_CASE("stats: min, max, mean and population std") {
  const std::vector<float> v = {1, 2, 3, 4};
  const auto s = stats(v);
  CHECK(s.min == 1);
  CHECK(s.max == 4);
  CHECK(s.mean == 2.5);
  CHECK(s.std == Approx(std::sqrt(1.25)));
  posenc::analysis::Stats none{};
  CHECK_RANGE(posenc::analysis::stats(std::span<const float>(), none));
}

TEST_CASE("learned tables reject bad arguments with a range failure naming the argument") {
  using Catch::Contains;
  Table t;
  CHECK_RANGE_WITH(Table::make(t, 0, 4, Init::normal, 0.02, 0), Contains("maxLength"));
  CHECK_RANGE_WITH(Table::make(t, 4, 0, Init::normal, 0.02, 0), Contains("dModel"));
  CHECK_RANGE_WITH(Table::make(t, 4, 4, static_cast<Init>(4), 0.02, 0), Contains("init"));
  CHECK_RANGE_WITH(Table::make(t, 4, 4, Init::normal, -1, 0), Contains("std"));
  CHECK_RANGE_WITH(Table::make(t, 4, 4, Init::normal, 1e31, 0), Contains("std"));
  CHECK_RANGE_WITH(Table::make(t, std::size_t(1) << 20, std::size_t(1) << 20, Init::zeros, 0, 0), Contains("elements"));
  const Table ok = make(3, 2, Init::normal, 0.02, 0);
  Table r;
  CHECK_RANGE_WITH(ok.resized(0, Resize::tile, r), Contains("newMaxLength"));
  CHECK_RANGE_WITH(ok.resized(4, static_cast<Resize>(2), r), Contains("method"));
  CHECK_RANGE(posenc::learned::token_table(r, 0, 4, 0));
}
