// What the two binding files share: spans over wasm memory addresses, and status codes as ints.
// Every raw entry point takes addresses the JS layer allocated and filled (src/js/heap.js), writes
// its results there and returns a posenc::Code; on failure the message is read with _errorMessage.
#pragma once
#include <cstddef>
#include <cstdint>
#include <span>

#include "status.hpp"

namespace posenc::bindings {

template <class T>
std::span<T> view(std::uintptr_t address, std::size_t n) {
  return {reinterpret_cast<T*>(address), n};
}

inline int code(Status s) {
  return static_cast<int>(s.code());
}

}  // namespace posenc::bindings
