// What the binding files share: spans over wasm memory addresses, status codes as ints, and the
// entry points every module has. Every raw entry point takes addresses the JS layer allocated and filled
// (src/js/heap.js), writes its results there and returns a posenc::Code; on failure the message is
// read with _errorMessage.
#pragma once
#include <emscripten/bind.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "simd.hpp"
#include "status.hpp"

namespace posenc::bindings {

template <class T>
std::span<T> view(std::uintptr_t address, std::size_t n) {
  return {reinterpret_cast<T*>(address), n};
}

inline int code(Status s) {
  return static_cast<int>(s.code());
}

// The latest failure's message: its address and length in wasm memory (no allocation).
inline std::uintptr_t error_message() {
  return reinterpret_cast<std::uintptr_t>(message().data());
}
inline std::size_t error_length() {
  return message().size();
}
// The instruction set the kernels were compiled for (the loader checks the build it was given).
inline std::string simd_arch() {
  return simd::arch_name();
}

// Registers what every module has (in its EMSCRIPTEN_BINDINGS block).
inline void register_common() {
  emscripten::function("_simdArch", &simd_arch);
  emscripten::function("_errorMessage", &error_message);
  emscripten::function("_errorLength", &error_length);
  emscripten::function("_heapCanHold", &heap_can_hold);
}

}  // namespace posenc::bindings
