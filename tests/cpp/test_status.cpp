#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <string>

#include "buffer.hpp"
#include "status.hpp"
#include "status_check.hpp"

namespace {
std::string real(double x) {
  char buf[32];
  return {buf, posenc::detail::format_real(x, buf)};
}
std::string integer(long long v) {
  char buf[32];
  return {buf, posenc::detail::format_integer(v, buf)};
}
std::string printf_g10(double x) {
  char buf[64];
  const int n = std::snprintf(buf, sizeof buf, "%.10g", x);
  return {buf, std::size_t(n)};
}
}  // namespace

TEST_CASE("messages write doubles as printf's %.10g would, without printf") {
  for (double x : {0.0,
                   -0.0,
                   1.0,
                   -1.0,
                   0.5,
                   0.1,
                   2.5,
                   10000.0,
                   1e-300,
                   1e300,
                   1e-4,
                   9.99999e-5,
                   123456789.0,
                   1234567890.0,
                   12345678901.0,
                   9999999999.0,
                   99999999995.0,
                   3.4028234663852886e38,
                   2147483647.0,
                   4294967296.0,
                   6.283185307179586,
                   std::numeric_limits<double>::max(),
                   std::numeric_limits<double>::min(),
                   std::numeric_limits<double>::denorm_min(),
                   5e-324,
                   1.7976931348623157e308})
    CHECK(real(x) == printf_g10(x));
  // magnitudes across the whole range, digits of every kind (a fixed xorshift sequence)
  std::uint64_t s = 0x9e3779b97f4a7c15ull;
  int mismatches = 0;
  for (int i = 0; i < 200000; ++i) {
    s ^= s << 13, s ^= s >> 7, s ^= s << 17;
    const double mantissa = double(s >> 11) * 0x1p-53 * 10.0;  // [0, 10)
    const int exponent = int(s % 617) - 308;                   // 10^-308 .. 10^308
    const double x = (s & 1 ? -1 : 1) * mantissa * std::pow(10.0, exponent);
    if (!std::isfinite(x)) continue;
    if (real(x) != printf_g10(x) && ++mismatches <= 5) FAIL_CHECK(real(x) << " vs printf " << printf_g10(x) << " for " << x);
  }
  CHECK(mismatches == 0);
}

TEST_CASE("messages write integers in decimal") {
  CHECK(integer(0) == "0");
  CHECK(integer(-7) == "-7");
  CHECK(integer(4096) == "4096");
  CHECK(integer(std::numeric_limits<long long>::max()) == "9223372036854775807");
  CHECK(integer(std::numeric_limits<long long>::min()) == "-9223372036854775808");
}

TEST_CASE("a failure's message joins its parts, numbers as posenc's messages show them") {
  const auto st = posenc::fail("base must be a number in [1e-300, 1e300], got ", -1.5, " (", std::size_t(3), " values, ", NAN,
                               ", ", -INFINITY, ", ", true, ")");
  CHECK(st.code() == posenc::Code::range);
  CHECK(posenc::message() == "base must be a number in [1e-300, 1e300], got -1.5 (3 values, NaN, -Infinity, true)");
}

TEST_CASE("size products and sums are refused, not wrapped, past size_t") {
  using Catch::Matchers::Contains;
  constexpr std::size_t max = std::numeric_limits<std::size_t>::max();
  std::size_t n = 7;
  REQUIRE_OK(posenc::checked_product(n, {3, 5, 7}, "a workspace"));
  CHECK(n == 105);
  REQUIRE_OK(posenc::checked_product(n, {max, 1}, "a workspace"));
  CHECK(n == max);
  REQUIRE_OK(posenc::checked_product(n, {0, max, max}, "a workspace"));  // a zero factor first: no overflow
  CHECK(n == 0);
  CHECK_RANGE_WITH(posenc::checked_product(n, {max / 2 + 1, 2}, "a workspace"), Contains("a workspace"));
  CHECK_RANGE_WITH(
      posenc::checked_product(n, {std::size_t(1) << (4 * sizeof(std::size_t)), std::size_t(1) << (4 * sizeof(std::size_t))}, "x"),
      Contains("sizes allow"));
  REQUIRE_OK(posenc::checked_sum(n, {max - 2, 2}, "a workspace"));
  CHECK(n == max);
  CHECK_RANGE_WITH(posenc::checked_sum(n, {max - 2, 3}, "a workspace"), Contains("a workspace"));
}

TEST_CASE("a buffer sized by a product that overflows size_t is refused before allocating") {
  constexpr std::size_t max = std::numeric_limits<std::size_t>::max();
  posenc::Buffer<float> b;
  CHECK_RANGE(b.allocate({max / 64 + 1, 64}, "a block of queries"));  // would wrap to a small size
  CHECK(b.size() == 0);
  REQUIRE_OK(b.allocate({16, 4}, "a block of queries"));
  CHECK(b.size() == 64);
}
