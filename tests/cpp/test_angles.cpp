// angles::reduce against an exact reduction with big integers, at the hard cases of a reduction
// modulo 2*pi: huge products (2^53, 1e17, 1e22, 1e300, the largest double), products near multiples of
// pi, factors beyond the Veltkamp split's range, and both sides of the Cody-Waite threshold.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "angles.hpp"
#include "sinusoidal.hpp"
#include "status_check.hpp"

namespace {

// Non-negative big integers, 32-bit digits, least significant first: just what an exact reduction
// by long division needs. Shares nothing with the kernel under test.
using Big = std::vector<std::uint32_t>;

void trim(Big& a) {
  while (!a.empty() && a.back() == 0) a.pop_back();
}
int compare(const Big& a, const Big& b) {  // both trimmed
  if (a.size() != b.size()) return a.size() < b.size() ? -1 : 1;
  for (std::size_t i = a.size(); i-- > 0;)
    if (a[i] != b[i]) return a[i] < b[i] ? -1 : 1;
  return 0;
}
void add(Big& a, const Big& b) {
  a.resize(std::max(a.size(), b.size()) + 1, 0);
  std::uint64_t carry = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    carry += std::uint64_t(a[i]) + (i < b.size() ? b[i] : 0);
    a[i] = std::uint32_t(carry);
    carry >>= 32;
  }
  trim(a);
}
void subtract(Big& a, const Big& b) {  // a >= b
  std::int64_t borrow = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    std::int64_t v = std::int64_t(a[i]) - (i < b.size() ? b[i] : 0) - borrow;
    borrow = v < 0;
    a[i] = std::uint32_t(v + (borrow << 32));
  }
  trim(a);
}
Big divide(Big a, std::uint32_t d) {
  std::uint64_t rest = 0;
  for (std::size_t i = a.size(); i-- > 0;) {
    const std::uint64_t v = (rest << 32) | a[i];
    a[i] = std::uint32_t(v / d);
    rest = v % d;
  }
  trim(a);
  return a;
}
Big shift_left(const Big& a, int s) {
  Big r(std::size_t(s / 32), 0);
  std::uint32_t carry = 0;
  for (std::uint32_t v : a) {
    r.push_back(s % 32 ? (v << (s % 32)) | carry : v);
    carry = s % 32 ? v >> (32 - s % 32) : 0;
  }
  r.push_back(carry);
  trim(r);
  return r;
}
void shift_right_1(Big& a) {
  for (std::size_t i = 0; i < a.size(); ++i) a[i] = (a[i] >> 1) | (i + 1 < a.size() ? a[i + 1] << 31 : 0);
  trim(a);
}
int bits(const Big& a) {
  if (a.empty()) return 0;
  int b = 32 * int(a.size() - 1);
  for (std::uint32_t v = a.back(); v; v >>= 1) ++b;
  return b;
}
Big power_of_two(int k) {
  Big r(std::size_t(k / 32) + 1, 0);
  r.back() = 1u << (k % 32);
  return r;
}

constexpr int kFraction = 1200;  // fixed point: bits after the binary point

// atan(1/x) 2^g by its Taylor series.
Big arctan_inverse(std::uint32_t x, int g) {
  Big positive, negative, term = divide(power_of_two(g), x);
  for (std::uint32_t k = 0; !term.empty(); ++k) {
    add(k % 2 ? negative : positive, divide(term, 2 * k + 1));
    term = divide(term, x * x);
  }
  subtract(positive, negative);
  return positive;
}

// 2*pi 2^kFraction (to within 1), by Machin's formula pi = 16 atan(1/5) - 4 atan(1/239), with 32
// guard bits.
const Big& two_pi() {
  static const Big value = [] {
    const int g = kFraction + 32;
    Big a = arctan_inverse(5, g), b = arctan_inverse(239, g);
    Big pi = shift_left(a, 4), b4 = shift_left(b, 2);
    subtract(pi, b4);
    Big r = shift_left(pi, 1);  // 2 pi 2^g
    for (int i = 0; i < 32; ++i) shift_right_1(r);
    return r;
  }();
  return value;
}

// A finite double as m 2^e, m < 2^53 an integer.
void decompose(double v, std::uint64_t& m, int& e) {
  int ex = 0;
  const double f = std::frexp(std::fabs(v), &ex);
  m = std::uint64_t(std::ldexp(f, 53));
  e = ex - 53;
}

// The exact product x*w (two doubles, no rounding) reduced modulo 2*pi into (-pi, pi], in long
// double: |x w| 2^kFraction as a big integer, reduced by long division by 2*pi 2^kFraction.
long double exact_angle(double x, double w) {
  std::uint64_t mx = 0, mw = 0;
  int ex = 0, ew = 0;
  decompose(x, mx, ex);
  decompose(w, mw, ew);
  // mx * mw as a big integer (four 32-bit partial products)
  Big r(5, 0);
  const std::uint64_t xs[2] = {mx & 0xffffffffu, mx >> 32}, ws[2] = {mw & 0xffffffffu, mw >> 32};
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 2; ++j)
      add(r, shift_left(Big{std::uint32_t(xs[i] * ws[j]), std::uint32_t((xs[i] * ws[j]) >> 32)}, 32 * (i + j)));
  trim(r);
  const int s = ex + ew + kFraction;
  if (s >= 0) {
    r = shift_left(r, s);
  } else {
    for (int i = 0; i < -s && !r.empty(); ++i) shift_right_1(r);  // a product below 2^-kFraction: ~0
  }
  const Big& d0 = two_pi();
  if (bits(r) >= bits(d0)) {
    Big d = shift_left(d0, bits(r) - bits(d0));
    for (int k = bits(r) - bits(d0); k >= 0; --k) {
      if (compare(r, d) >= 0) subtract(r, d);
      shift_right_1(d);
    }
  }
  // into (-pi, pi]: r > pi becomes -(2 pi - r); then r / 2^kFraction in long double from its top 64 bits
  bool negative = (x < 0) != (w < 0);
  if (compare(shift_left(r, 1), d0) > 0) {
    Big rest = d0;
    subtract(rest, r);
    r = rest;
    negative = !negative;
  }
  long double a = 0;
  const int nb = bits(r);
  for (int i = std::max(0, nb - 64); i < nb; ++i)
    if (r[std::size_t(i / 32)] >> (i % 32) & 1) a += std::ldexp(1.0L, i - kFraction);
  return negative ? -a : a;
}

// |sin, cos of reduce(x, w) - sin, cos of the exact angle|
double error(double x, double w) {
  const long double want = exact_angle(x, w);
  const double got = posenc::angles::reduce(x, w);
  INFO("reduce " << got << ", exact " << double(want));
  REQUIRE(std::isfinite(got));
  CHECK(std::fabs(got) <= 3.1415926535897936);
  return double(
      std::max(std::fabs(std::sin((long double)got) - std::sin(want)), std::fabs(std::cos((long double)got) - std::cos(want))));
}

}  // namespace

TEST_CASE("the test's exact reduction agrees with known values") {
  // 2*pi to 20 digits, and sin(1e22) = -0.8522008497671888 (a classic hard case; e.g. Ng, "Argument
  // reduction for huge arguments", 1992)
  CHECK(double(exact_angle(1, 0x1.921fb54442d18p+2)) == Approx(-2.4492935982947064e-16).epsilon(1e-12));
  CHECK(std::sin(double(exact_angle(1e22, 1))) == Approx(-0.8522008497671888).epsilon(1e-15));
}

TEST_CASE("reduce is exact to ~1e-15 at huge and hard arguments") {
  const double hard[] = {0x1p53,
                         1e17,
                         -1e17,
                         1e22,
                         1e300,
                         DBL_MAX,
                         -DBL_MAX,
                         0x1.6ac5b262ca1ffp+849,  // 6381956970095103 * 2^797, the double nearest a multiple of pi/2
                         710,
                         491701844,  // 226 pi + 6e-5 and 2 * 245850922 ~ 156513558 pi (continued fractions of pi)
                         0x1p35,
                         0x1p35 + 0x1p-17,
                         34359738369.5,
                         1e11,
                         1e12,
                         1e15,
                         12345.678 * 0x1p100,
                         0.5,
                         1e-300,
                         0};
  for (double x : hard)
    for (double w : {1.0, 0.25, 1.0 / 3.0, 1e-4, 3.0}) {
      if (!std::isfinite(x * w)) continue;  // DBL_MAX * 3
      CAPTURE(x, w);
      CHECK(error(x, w) < 1e-15);
    }
  SECTION("the factors' own bits matter: (1 + 2^-52) 2^60 against 2^60") {
    CHECK(error(0x1.0000000000001p60, 1) < 1e-15);
    CHECK(std::fabs(posenc::angles::reduce(0x1.0000000000001p60, 1) - posenc::angles::reduce(0x1p60, 1)) > 0.1);
  }
}

TEST_CASE("reduce handles factors beyond the Veltkamp split's range exactly") {
  // |x| > 2^996: the split would overflow; the product is taken between the mantissas instead
  for (double x : {1e300, 1e308, DBL_MAX, 0x1.fffffffffffffp+996, -1.5e305})
    for (double w : {1e-300, 3.3e-301, 1e-290, 1e-10, 1e-5, 0.5}) {
      if (!std::isfinite(x * w)) continue;
      CAPTURE(x, w);
      CHECK(error(x, w) < 1e-15);
    }
  for (double w : {1e300, 1e308}) {
    CAPTURE(w);
    CHECK(error(1.5, w) < 1e-15);
  }
}

TEST_CASE("an angle that overflows double is NaN from reduce, and a named range failure from RowSource") {
  CHECK(std::isnan(posenc::angles::reduce(1e308, 1e150)));
  CHECK(std::isnan(posenc::angles::reduce(DBL_MAX, 2)));
  CHECK(std::isfinite(posenc::angles::reduce(DBL_MAX, 1)));
  const double w[] = {1, 1e150};
  const double p[] = {3, -1e200};
  CHECK_RANGE_WITH(posenc::angles::check_angles({0, 0, p}, w),
                   Catch::Contains("position -1e+200 at frequency 1e+150") && Catch::Contains("beyond double's range"));
  CHECK_RANGE_WITH(posenc::angles::check_angles({1e300, 5, {}}, w), Catch::Contains("position 1e+300"));
  CHECK_OK(posenc::angles::check_angles({1e150, 5, {}}, w));
  std::vector<float> out(2 * 4);
  CHECK_RANGE_WITH(posenc::sinusoidal::table({0, 0, p}, 4, 1e-300, posenc::sinusoidal::Layout::interleaved, out),
                   Catch::Contains("position -1e+200"));
}

TEST_CASE("consecutive rows are taken exactly: past 2^53, offset + r rounds as a double does") {
  using posenc::angles::Positions;
  CHECK(Positions{0x1p53 - 10, 10, {}}.consecutive());
  CHECK_FALSE(Positions{0x1p53 - 10, 12, {}}.consecutive());  // 2^53 + 1 is not a double
  const double same[] = {1e17, 1e17};                         // 1e17 + 1 rounds to 1e17: not consecutive
  CHECK_FALSE(Positions{0, 0, same}.consecutive());
  const double halves[] = {0.5, 1.5, 2.5};
  CHECK(Positions{0, 0, halves}.consecutive());
  CHECK_FALSE(Positions{0x1p52 - 0.5, 3, {}}.consecutive());  // 2^52 + 0.5 is not a double
  // A table across 2^53 (the per-row path) and the same rows as explicit positions
  const double start = 0x1p53 - 70;
  const std::size_t rows = 140, d = 6;
  std::vector<double> pos(rows);
  for (std::size_t r = 0; r < rows; ++r) pos[r] = start + double(r);  // rounds past 2^53
  std::vector<float> a(rows * d), b(rows * d);
  REQUIRE_OK(posenc::sinusoidal::table({start, rows, {}}, d, 10000, posenc::sinusoidal::Layout::interleaved, a));
  REQUIRE_OK(posenc::sinusoidal::table({0, 0, pos}, d, 10000, posenc::sinusoidal::Layout::interleaved, b));
  CHECK(a == b);
  const double w1 = std::pow(10000.0, -2.0 / 6.0);
  for (std::size_t r = 0; r < rows; r += 7) {
    CHECK(std::fabs(a[r * d] - std::sin(double(exact_angle(pos[r], 1)))) < 1e-6);
    CHECK(std::fabs(a[r * d + 3] - std::cos(double(exact_angle(pos[r], w1)))) < 1e-6);
  }
}
