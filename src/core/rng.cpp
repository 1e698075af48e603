#include "rng.hpp"

#include <cmath>

namespace posenc::rng {

SplitMix64 make(std::uint64_t seed, Stream stream) {
  SplitMix64 mix(seed ^ static_cast<std::uint64_t>(stream));
  return SplitMix64(mix.next());
}

double det_log(double x) {
  // x = m * 2^e with m in [sqrt(1/2), sqrt(2)); log m = 2 atanh(z), z = (m-1)/(m+1), |z| < 0.172.
  int e = 0;
  double m = std::frexp(x, &e);  // exact; m in [0.5, 1)
  if (m < 0.7071067811865476) {
    m *= 2.0;
    e -= 1;
  }
  const double z = (m - 1.0) / (m + 1.0), z2 = z * z;
  double term = z, sum = 0.0;
  for (int k = 1; k <= 41; k += 2) {  // |z|^43 < 1e-32: converged
    sum += term / k;
    term *= z2;
  }
  return 2.0 * sum + e * 0.6931471805599453;
}

void det_sincos_2pi(double u, double& s, double& c) {
  // Octant reduction of u in [0, 1), then Taylor series of sin/cos on [0, pi/4].
  const double q = u * 8.0;
  const int oct = static_cast<int>(q);
  double f = q - oct;  // in [0, 1)
  const bool odd = oct & 1;
  if (odd) f = 1.0 - f;  // reflect so the argument is in [0, pi/4]
  const double x = f * 0.7853981633974483, x2 = x * x;
  double sn = 0.0, cs = 0.0, ts = x, tc = 1.0;
  for (int k = 0; k < 12; ++k) {  // x^25/25! < 1e-30
    sn += ts;
    cs += tc;
    ts *= -x2 / ((2 * k + 2) * (2 * k + 3));
    tc *= -x2 / ((2 * k + 1) * (2 * k + 2));
  }
  // (sin, cos) of the octant angle from (sin, cos) of the reduced one.
  double a, b;  // sin and cos of the angle within the quadrant
  if (oct % 2 == 0) {
    a = sn;
    b = cs;
  } else {
    a = cs;
    b = sn;
  }
  switch (oct / 2) {  // quadrant
    case 0:
      s = a;
      c = b;
      break;
    case 1:
      s = b;
      c = -a;
      break;
    case 2:
      s = -a;
      c = -b;
      break;
    default:
      s = -b;
      c = a;
      break;
  }
}

double det_exp(double x) {
  // x = k ln 2 + r with |r| <= ln(2)/2 (fdlibm's two-part ln 2: k * kLn2Hi is exact for |k| < 2^11),
  // e^r by its Taylor series, then scaled by 2^k exactly.
  if (x != x) return x;
  if (x < -745.2) return 0.0;
  if (x > 709.78) return HUGE_VAL;
  constexpr double kLn2Hi = 6.93147180369123816490e-01, kLn2Lo = 1.90821492927058770002e-10;
  const double k = std::nearbyint(x * 1.4426950408889634);
  const double r = (x - k * kLn2Hi) - k * kLn2Lo;
  double sum = 1.0, term = 1.0;
  for (int n = 1; n <= 16; ++n) {  // 0.347^17 / 17! < 1e-24: converged
    term *= r / n;
    sum += term;
  }
  return std::ldexp(sum, int(k));
}

void fill_normal(SplitMix64& g, std::span<float> out, double mean, double std) {
  std::size_t i = 0;
  while (i < out.size()) {
    const double u1 = g.uniform(), u2 = g.uniform();
    const double r = std::sqrt(-2.0 * det_log(1.0 - u1));
    double s, c;
    det_sincos_2pi(u2, s, c);
    out[i++] = float(mean + std * (r * c));
    if (i < out.size()) out[i++] = float(mean + std * (r * s));
  }
}

void fill_uniform(SplitMix64& g, std::span<float> out, double lo, double hi) {
  for (auto& v : out) v = float(lo + (hi - lo) * g.uniform());
}

}  // namespace posenc::rng
