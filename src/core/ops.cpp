#include "ops.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace posenc::ops {
namespace {
using bf = simd::batch<float>;
constexpr std::size_t W = simd::floats;

template <class Vec, class Scalar>
void map2(std::span<const float> a, std::span<const float> b, std::span<float> out, Vec vec, Scalar scalar) {
  const std::size_t n = out.size(), nv = n - n % W;
  std::size_t i = 0;
  for (; i < nv; i += W) vec(bf::load_unaligned(a.data() + i), bf::load_unaligned(b.data() + i)).store_unaligned(out.data() + i);
  for (; i < n; ++i) out[i] = scalar(a[i], b[i]);
}
}  // namespace

void add(std::span<const float> a, std::span<const float> b, std::span<float> out) {
  map2(
      a, b, out, [](bf x, bf y) { return x + y; }, [](float x, float y) { return x + y; });
}

void scale(std::span<const float> a, float s, std::span<float> out) {
  map2(
      a, a, out, [s](bf x, bf) { return x * bf(s); }, [s](float x, float) { return x * s; });
}

void blend(std::span<const float> a, float wa, std::span<const float> b, float wb, std::span<float> out) {
  map2(
      a, b, out, [=](bf x, bf y) { return x * bf(wa) + y * bf(wb); }, [=](float x, float y) { return x * wa + y * wb; });
}

bool all_finite(std::span<const float> a) {
  // x * 0 is 0 for finite x and NaN for NaN or Infinity; the sum is NaN iff one was.
  const std::size_t n = a.size(), nv = n - n % W;
  bf acc(0.f);
  std::size_t i = 0;
  for (; i < nv; i += W) acc += bf::load_unaligned(a.data() + i) * bf(0.f);
  float sum = xsimd::reduce_add(acc);
  for (; i < n; ++i) sum += a[i] * 0.f;
  return sum == 0.f;
}

float max_abs(std::span<const float> a) {
  const std::size_t n = a.size(), nv = n - n % W;
  bf m(0.f);
  std::size_t i = 0;
  for (; i < nv; i += W) m = xsimd::max(m, xsimd::abs(bf::load_unaligned(a.data() + i)));
  float r = xsimd::reduce_max(m);
  for (; i < n; ++i) r = std::max(r, std::fabs(a[i]));
  return r;
}

namespace {
std::uint32_t bits(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
float from_bits(std::uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

// float32 -> binary16, round to nearest even (F. Giesen's float_to_half_fast3_rtne): the subnormal
// range is rounded by the FPU itself, by adding a magic number that aligns the result's last bit.
std::uint16_t to_float16(float f) {
  constexpr std::uint32_t f32_infinity = 255u << 23, f16_max = (127u + 16) << 23;
  constexpr std::uint32_t denorm_magic = ((127u - 15) + (23 - 10) + 1) << 23;
  std::uint32_t u = bits(f);
  const std::uint32_t sign = u & 0x80000000u;
  u ^= sign;
  std::uint32_t o;
  if (u >= f16_max) {
    o = u > f32_infinity ? 0x7e00u : 0x7c00u;  // NaN stays NaN (quiet), the rest overflows to Infinity
  } else if (u < (113u << 23)) {               // the result is subnormal or zero
    o = bits(from_bits(u) + from_bits(denorm_magic)) - denorm_magic;
  } else {
    const std::uint32_t odd = (u >> 13) & 1u;
    u += ((15u - 127u) << 23) + 0xfffu + odd;  // rebias the exponent and round to nearest even
    o = u >> 13;
  }
  return std::uint16_t(o | (sign >> 16));
}

float from_float16(std::uint16_t h) {
  const std::uint32_t sign = std::uint32_t(h & 0x8000u) << 16, exponent = (h >> 10) & 0x1fu, mantissa = h & 0x3ffu;
  if (exponent == 0) return from_bits(sign) + (sign ? -1.f : 1.f) * float(mantissa) * 0x1p-24f;  // zero, subnormal
  if (exponent == 31) return from_bits(sign | 0x7f800000u | (mantissa << 13));                   // Infinity, NaN
  return from_bits(sign | ((exponent + 112) << 23) | (mantissa << 13));
}

std::uint16_t to_bfloat16(float f) {
  const std::uint32_t u = bits(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return std::uint16_t((u >> 16) | 0x40u);  // NaN: keep it quiet
  return std::uint16_t((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}
}  // namespace

void to_half(std::span<const float> a, std::span<std::uint16_t> out, bool bfloat) {
  if (bfloat)
    for (std::size_t i = 0; i < a.size(); ++i) out[i] = to_bfloat16(a[i]);
  else
    for (std::size_t i = 0; i < a.size(); ++i) out[i] = to_float16(a[i]);
}

void from_half(std::span<const std::uint16_t> a, std::span<float> out, bool bfloat) {
  if (bfloat)
    for (std::size_t i = 0; i < a.size(); ++i) out[i] = from_bits(std::uint32_t(a[i]) << 16);
  else
    for (std::size_t i = 0; i < a.size(); ++i) out[i] = from_float16(a[i]);
}

}  // namespace posenc::ops
