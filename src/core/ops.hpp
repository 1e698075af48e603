// Element-wise SIMD kernels shared by the families (batch body + scalar tail, written once).
#pragma once
#include <cstddef>
#include <span>

#include "simd.hpp"

namespace posenc::ops {

// out[i] = a[i] + b[i]
void add(std::span<const float> a, std::span<const float> b, std::span<float> out);
// out[i] = s * a[i]
void scale(std::span<const float> a, float s, std::span<float> out);
// out[i] = wa * a[i] + wb * b[i]
void blend(std::span<const float> a, float wa, std::span<const float> b, float wb, std::span<float> out);

// true when every a[i] is finite (no NaN or Infinity)
bool all_finite(std::span<const float> a);

// max |a[i]| (0 for an empty span)
float max_abs(std::span<const float> a);

}  // namespace posenc::ops
