// Independent reference values for the tests: long double (80-bit natively, 128-bit under wasm)
// straight from the papers' formulas, sharing no code with the kernels under test.
#pragma once
#include <cmath>
#include <cstddef>
#include <vector>

namespace ref {

constexpr long double kTwoPi = 6.283185307179586476925286766559005768394L;
// 2*pi minus its long double rounding, so that reductions keep ~1e-19 accuracy at k ~ 1e9.
#include <cfloat>
#if LDBL_MANT_DIG == 64
constexpr long double kTwoPiLo = -1.0033115225336664538847901e-19L;  // x87 80-bit
#elif LDBL_MANT_DIG == 113
constexpr long double kTwoPiLo = 1.7343620260247561182627352e-34L;  // IEEE quad (wasm)
#else
#error "reference.hpp needs an 80-bit or 128-bit long double"
#endif

// x*w mod 2*pi, exact to ~1e-17 for |x| < 2^33 and any double w: w is split into a 24-bit head and
// a 29-bit tail so that both partial products are exact in long double; the large one is reduced
// with fmal and a two-part 2*pi.
inline long double angle(double x, double w) {
  const double wh = double(float(w)), wl = w - wh;
  const long double a1 = (long double)x * wh, a2 = (long double)x * wl;
  const long double n = std::nearbyint(a1 / kTwoPi);
  const long double r = std::fma(-n, kTwoPi, a1) - n * kTwoPiLo;
  return r + a2;
}

// The rows of a long run of consecutive positions that a test compares with this (slow, long double)
// reference: every 5th row (5 is prime to the kernels' 64-row anchor blocks, so every offset within a
// block is checked, in different blocks) and every one of the last 300 (the run's end near 2^31 - 1,
// past the exact re-anchoring after 64 blocks). Short runs are checked whole.
inline bool checked_row(std::size_t r, std::size_t rows) {
  return r % 5 == 0 || r + 300 >= rows;
}

inline double inv_freq(std::size_t i, std::size_t d, double base) {
  return std::pow(base, -2.0 * double(i) / double(d));
}

// Vaswani's PE(pos, 2i) = sin(pos w_i), PE(pos, 2i+1) = cos(pos w_i), as a row of d values.
inline std::vector<double> sinusoidal_row(double pos, std::size_t d, double base) {
  std::vector<double> row(d);
  for (std::size_t j = 0; j < d; ++j) {
    const long double a = angle(pos, inv_freq(j / 2, d, base));
    row[j] = double(j % 2 == 0 ? std::sin(a) : std::cos(a));
  }
  return row;
}

}  // namespace ref
