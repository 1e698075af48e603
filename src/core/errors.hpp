// Errors raised by the core. Every public core function checks its preconditions and throws
// `posenc::range_error` (an std::invalid_argument) naming the argument, the value and what is
// allowed. The wasm bindings turn it into a JavaScript RangeError; the JS wrapper validates first,
// so from JavaScript these are a second line of defence.
#pragma once
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>

namespace posenc {

struct range_error : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

namespace detail {
inline void append(std::string& s, std::string_view v) {
  s += v;
}
inline void append(std::string& s, const char* v) {
  s += v;
}
template <class T>
requires std::is_arithmetic_v<T>
void append(std::string& s, T v) {
  char buf[32];
  if constexpr (std::is_integral_v<T>)
    std::snprintf(buf, sizeof buf, "%lld", static_cast<long long>(v));
  else
    std::snprintf(buf, sizeof buf, "%.10g", static_cast<double>(v));
  s += buf;
}
}  // namespace detail

// Throws range_error with the parts concatenated (strings and numbers; no iostreams, which would
// bloat the wasm module).
template <class... Parts>
[[noreturn]] void fail(const Parts&... parts) {
  std::string message;
  (detail::append(message, parts), ...);
  throw range_error(message);
}

inline void require(bool ok, const char* what) {
  if (!ok) throw range_error(what);
}

inline void require_positive(std::size_t v, const char* name) {
  if (v == 0) fail(name, " must be a positive integer, got 0");
}

inline void require_finite(double v, const char* name) {
  if (!std::isfinite(v)) fail(name, " must be a finite number, got ", v);
}

// Largest element count of one tensor the core accepts (1 GiB of float32); larger requests are
// refused before anything is allocated.
inline constexpr std::size_t max_elements = std::size_t{1} << 28;

inline std::size_t checked_size(std::size_t a, std::size_t b, const char* what) {
  if (a != 0 && b > max_elements / a)
    fail(what, " would hold ", double(a) * double(b), " elements; at most ", max_elements, " are allowed");
  return a * b;
}

}  // namespace posenc
