// How the core reports failure, without C++ exceptions (the wasm module is built without them:
// exception support costs a third of its size and routes every call with cleanups through JS).
//
// A function that can fail returns a `Status`. On failure its message is formatted into one
// fixed buffer per thread (`message()`), never allocated, so that running out of memory is itself
// reportable. The bindings return the code (Code: ok, range, out_of_memory) and the JS layer throws a
// RangeError carrying the message once the call has returned. Messages name the argument, the value
// received and what is allowed, in the JS API's names.
#pragma once
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string_view>
#include <type_traits>

#include "contract.hpp"

namespace posenc {

// Setup, validation and error paths: optimised for size (the kernels keep -O3; the shipped wasm is
// budgeted at 60 KB gzip).
// (clang, which builds the wasm, needs minsize for that; cold alone only moves the code.)
#if defined(__clang__)
#define POSENC_COLD [[gnu::cold, clang::minsize]]
#else
#define POSENC_COLD [[gnu::cold]]
#endif

enum class Code : std::int32_t {
  ok = contract::kCodeOk,
  range = contract::kCodeRange,                // a value out of range: RangeError
  out_of_memory = contract::kCodeOutOfMemory,  // wasm memory exhausted: RangeError
};

class [[nodiscard]] Status {
 public:
  constexpr Status() = default;
  constexpr explicit Status(Code code) : code_(code) {}
  constexpr bool ok() const { return code_ == Code::ok; }
  constexpr Code code() const { return code_; }

 private:
  Code code_ = Code::ok;
};

// The message of the latest failure on this thread (empty after a success is not guaranteed:
// read it only right after a failed call).
std::string_view message();

namespace detail {
inline constexpr std::size_t kMessageCapacity = 1024;

// One piece of a message: text, an integer, a number or a boolean. Messages are assembled by one
// function (status.cpp) from a list of these, so each call site costs a few stores, not its own
// instantiation of the formatting code.
struct Part {
  enum class Kind : unsigned char { text, integer, real, boolean };
  Kind kind;
  std::string_view text{};
  long long integer = 0;
  double real = 0;
  Part(const char* v) : kind(Kind::text), text(v) {}
  Part(std::string_view v) : kind(Kind::text), text(v) {}
  Part(bool v) : kind(Kind::boolean), integer(v) {}
  template <class T>
  requires(std::is_integral_v<T> && !std::is_same_v<T, bool>) Part(T v)
      : kind(Kind::integer), integer(static_cast<long long>(v)) {}
  template <class T>
  requires std::is_floating_point_v<T> Part(T v) : kind(Kind::real), real(static_cast<double>(v)) {}
};

Status fail_parts(Code code, std::initializer_list<Part> parts);

// The numbers of the messages, without printf (whose formatter alone is ~4 KB of the gzipped wasm):
// an integer in decimal, and a finite double as printf's "%.10g" writes it (10 significant digits,
// trailing zeros dropped, exponent form below 1e-4 and from 1e10; the last digit can differ from
// printf's only for a value within ~1e-16 of halfway between two 10-digit numbers). Each writes at
// most 24 chars at out and returns how many.
std::size_t format_integer(long long v, char* out);
std::size_t format_real(double x, char* out);
}  // namespace detail

// Formats the parts (strings and numbers) into the message buffer and returns `code`.
template <class... Parts>
Status fail_with(Code code, const Parts&... parts) {
  return detail::fail_parts(code, {detail::Part(parts)...});
}

// A value out of range (the common failure).
template <class... Parts>
Status fail(const Parts&... parts) {
  return fail_with(Code::range, parts...);
}

// Allocation failure: `what` needs `bytes` bytes.
Status out_of_memory(const char* what, double bytes);

// Whether an allocation of `bytes` can succeed without a failed heap growth (always true outside wasm).
// Emscripten's dlmalloc, after one growth fails, stops extending its top chunk for good: every large
// request then needs its whole size beyond the current break, and the freed memory below is never
// reused for it. Large requests are refused before they can fail that way.
bool heap_can_hold(std::size_t bytes);

#define POSENC_TRY(expr)                                   \
  do {                                                     \
    if (::posenc::Status s_ = (expr); !s_.ok()) return s_; \
  } while (0)

inline Status require_positive(std::size_t v, const char* name) {
  return v == 0 ? fail(name, " must be a positive integer, got 0") : Status();
}

inline Status require_finite(double v, const char* name) {
  return std::isfinite(v) ? Status() : fail(name, " must be a finite number, got ", v);
}

// Largest element count of one tensor the core accepts (1 GiB of float32); larger requests are
// refused before anything is allocated.
inline constexpr std::size_t max_elements = contract::kMaxElements;

// n = a * b, refused only when the product overflows size_t (for sizes that are not allocated, such
// as the logical size of a streamed matrix).
inline Status checked_product(std::size_t& n, std::size_t a, std::size_t b, const char* what) {
  if (__builtin_mul_overflow(a, b, &n))
    return fail(what, " would hold ", double(a) * double(b), " elements, beyond this machine's sizes");
  return {};
}

// n = the product of any number of factors, and n = the sum of sizes, refused only when they overflow
// size_t (the parts of a workspace, each then allocated through Buffer::allocate's own checks).
// (Out of line, in status.cpp: one copy of the loop for every call site.)
Status checked_product(std::size_t& n, std::initializer_list<std::size_t> factors, const char* what);
Status checked_sum(std::size_t& n, std::initializer_list<std::size_t> terms, const char* what);

// n = a * b, refused when it exceeds max_elements (or would overflow).
inline Status checked_size(std::size_t& n, std::size_t a, std::size_t b, const char* what) {
  if (a != 0 && b > max_elements / a)
    return fail(what, " would hold ", double(a) * double(b), " elements; at most ", max_elements, " are allowed");
  n = a * b;
  return {};
}

}  // namespace posenc
