#include "ops.hpp"

#include <algorithm>
#include <cmath>

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

}  // namespace posenc::ops
