// SIMD architecture selection. Every kernel is written once against `posenc::simd::batch<T>`.
// - Built with a SIMD instruction set (-msimd128, SSE, AVX): xsimd's best available arch.
// - Built with POSENC_SCALAR: xsimd's `emulated<128>` arch, i.e. the same source compiled to plain
//   scalar loops. The scalar wasm backend uses this, so both backends share one implementation.
#pragma once
#if defined(POSENC_SCALAR)
#define XSIMD_WITH_EMULATED 1
#include <xsimd/xsimd.hpp>
namespace posenc::simd {
using arch = xsimd::emulated<128>;
}
#else
#include <xsimd/xsimd.hpp>
namespace posenc::simd {
using arch = xsimd::default_arch;
}
#endif

#include <cstddef>

namespace posenc::simd {
template <class T>
using batch = xsimd::batch<T, arch>;

inline constexpr std::size_t floats = batch<float>::size;
inline constexpr std::size_t doubles = batch<double>::size;

// Name of the instruction set the kernels were compiled for ("wasm", "sse2", "avx2", "emulated").
inline const char* arch_name() {
  return arch::name();
}
}  // namespace posenc::simd
