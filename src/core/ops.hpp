// Element-wise SIMD kernels shared by the families (batch body + scalar tail, written once).
#pragma once
#include <cstddef>
#include <cstdint>
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

// Half floats as their 16 bits: IEEE binary16 (float16) or bfloat16 (the top half of a float32).
// to_half rounds to nearest even (a float16 overflow gives Infinity, NaN a quiet NaN); from_half is
// exact. out.size() == a.size().
void to_half(std::span<const float> a, std::span<std::uint16_t> out, bool bfloat);
void from_half(std::span<const std::uint16_t> a, std::span<float> out, bool bfloat);

}  // namespace posenc::ops
