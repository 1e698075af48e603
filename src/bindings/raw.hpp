// What the binding files share: spans over wasm memory addresses, status codes as ints, the way
// arguments are named, and the entry points every module has. Every raw entry point takes addresses the
// JS layer allocated and filled (src/js/heap.js), writes its results there and returns a posenc::Code;
// on failure the message is read with _errorMessage.
//
// Arguments cross by name: each call family has one struct (bindings.cpp, lab.cpp), registered as an
// embind value_object, so JS passes a plain object and a missing field is embind's TypeError
// ("Missing field"), thrown before any C++ runs. The members are named as the JS fields (camelCase),
// so that POSENC_FIELD cannot misname one. Buffers are addresses next to their counts; enums are their
// index in the lists of src/js/contract.js, checked by the core (an unknown index is a RangeError that
// names the allowed values). A struct never holds another: embind's glue constructs a struct before
// it writes its fields, and a nested struct with a missing field throws after the outer one was
// constructed, which is then never destroyed (a slot of the pool below lost per refused call). Calls
// that share fields derive from a struct of them, registered flat. Objects that live across calls
// (tables, the sinusoidal block writer, the toy trainer) are embind classes: JS calls their methods
// and frees them with .delete().
#pragma once
#include <emscripten/bind.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>
#include <string>
#include <type_traits>

#include "simd.hpp"
#include "status.hpp"

// .field("name", &S::name) for the struct S in scope.
#define POSENC_FIELD(name) .field(#name, &S::name)

namespace posenc::bindings {

using Address = std::uintptr_t;
using Count = std::size_t;
// An enum: its index in the list of src/js/contract.js (the same wire type as a count: one field
// writer per struct fewer).
using Index = std::size_t;
// A yes/no field: JS passes a boolean, which crosses as 1 or 0 (the wire type of a count, for the
// same reason).
using Flag = std::size_t;

// The argument structs derive from Args. embind makes the value_object argument of a call for the
// length of the call; it comes from this fixed pool, not from the heap, so a call made when wasm
// memory is full still reaches the core, which reports out of memory by name (embind's plain `new`
// would abort). No struct holds another, so when a struct is made no other is in use: a slot still
// marked then was lost by a refused call (embind constructs the struct, then converts its fields, and
// a field it cannot convert, e.g. a BigInt, throws before the struct is destroyed). So a pool whose
// slots are all marked is free again.
struct Args {
  static constexpr std::size_t kSlots = 8, kBytes = 256;
  // Never null (no null check in embind's `new`): a slot, or the heap, or abort.
  static void* operator new(std::size_t size) {
    if (pool().used == (1u << kSlots) - 1) pool().used = 0;
    for (std::size_t i = 0; i < kSlots && size <= kBytes; ++i)
      if (!(pool().used >> i & 1u)) {
        pool().used |= 1u << i;
        return pool().slot[i];
      }
    void* p = std::malloc(size);  // a struct larger than a slot: never in posenc's calls
    if (!p) std::abort();
    return p;
  }
  static void operator delete(void* p) noexcept {
    const auto first = reinterpret_cast<std::uintptr_t>(&pool().slot[0][0]), at = reinterpret_cast<std::uintptr_t>(p);
    if (at - first < kSlots * kBytes)
      pool().used &= ~(1u << ((at - first) / kBytes));
    else
      std::free(p);
  }

 private:
  struct Pool {
    alignas(16) unsigned char slot[kSlots][kBytes]{};
    std::uint32_t used = 0;
  };
  static Pool& pool() {
    static constinit Pool p;
    return p;
  }
};

// embind's value_object for an argument struct S (which fits a slot of the pool).
template <class S>
emscripten::value_object<S> args(const char* name) {
  static_assert(std::is_base_of_v<Args, S> && sizeof(S) <= Args::kBytes);
  return emscripten::value_object<S>(name);
}

template <class T>
std::span<T> view(std::uintptr_t address, std::size_t n) {
  return {reinterpret_cast<T*>(address), n};
}

inline int code(Status s) {
  return static_cast<int>(s.code());
}

// A factory's failure (a handle that could not be made): null, the status's message left for _errorMessage.
inline std::nullptr_t none(Status) {
  return nullptr;
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
