#include "status.hpp"

#include <cstdint>
#ifdef __EMSCRIPTEN__
#include <malloc.h>
#include <unistd.h>
#endif

namespace posenc {
namespace {
thread_local char g_message[detail::kMessageCapacity + 1];
thread_local std::size_t g_length = 0;
}  // namespace

std::size_t detail::format_integer(long long v, char* out) {
  char digits[20];
  int n = 0;
  unsigned long long u = v < 0 ? 0ull - static_cast<unsigned long long>(v) : static_cast<unsigned long long>(v);
  do digits[n++] = char('0' + u % 10);
  while (u /= 10);
  char* p = out;
  if (v < 0) *p++ = '-';
  while (n) *p++ = digits[--n];
  return std::size_t(p - out);
}

std::size_t detail::format_real(double x, char* out) {
  char* p = out;
  if (std::signbit(x)) *p++ = '-', x = -x;
  if (x == 0) {
    *p++ = '0';
    return std::size_t(p - out);
  }
  // x = m * 10^(e - 9) with m an integer in [1e9, 1e10): the 10 digits, rounded half to even. The
  // scale goes in two factors so that neither overflows nor goes subnormal at the ends of the range.
  const auto digits_at = [x](int e) {
    const int k = 9 - e, k1 = k / 2;
    return std::nearbyint(x * std::pow(10.0, k1) * std::pow(10.0, k - k1));
  };
  int e = int(std::floor(std::log10(x)));
  double m = digits_at(e);
  if (m >= 1e10) m = digits_at(++e);
  if (m < 1e9) m = digits_at(--e);
  if (m >= 1e10) m = 1e9, ++e;  // 9.9999999999 rounds up to 10.00000000
  char d[10];
  auto u = static_cast<unsigned long long>(m);
  for (int i = 9; i >= 0; --i, u /= 10) d[i] = char('0' + u % 10);
  int n = 10;  // significant digits after dropping trailing zeros
  while (n > 1 && d[n - 1] == '0') --n;
  if (e < -4 || e >= 10) {  // d.ddde+XX
    *p++ = d[0];
    if (n > 1) *p++ = '.';
    for (int i = 1; i < n; ++i) *p++ = d[i];
    *p++ = 'e';
    *p++ = e < 0 ? '-' : '+';
    const int a = e < 0 ? -e : e;
    if (a >= 100) *p++ = char('0' + a / 100);
    *p++ = char('0' + a / 10 % 10);
    *p++ = char('0' + a % 10);
  } else if (e >= 0) {  // ddd.ddd
    for (int i = 0; i <= e; ++i) *p++ = d[i];
    if (n > e + 1) *p++ = '.';
    for (int i = e + 1; i < n; ++i) *p++ = d[i];
  } else {  // 0.000ddd
    *p++ = '0', *p++ = '.';
    for (int i = -1; i > e; --i) *p++ = '0';
    for (int i = 0; i < n; ++i) *p++ = d[i];
  }
  return std::size_t(p - out);
}

Status detail::fail_parts(Code code, std::initializer_list<Part> parts) {
  char* p = g_message;
  char* const end = g_message + kMessageCapacity;
  const auto put = [&](std::string_view v) {
    for (char ch : v)
      if (p < end) *p++ = ch;
  };
  for (const Part& part : parts) {
    char buf[32];
    std::size_t n = 0;
    switch (part.kind) {
      case Part::Kind::text:
        put(part.text);
        continue;
      case Part::Kind::boolean:
        put(part.integer ? "true" : "false");
        continue;
      case Part::Kind::integer:
        n = format_integer(part.integer, buf);
        break;
      case Part::Kind::real:
        if (std::isnan(part.real))
          put("NaN");
        else if (std::isinf(part.real))
          put(part.real < 0 ? "-Infinity" : "Infinity");
        else
          n = format_real(part.real, buf);
        break;
    }
    put(std::string_view(buf, n));
  }
  g_length = std::size_t(p - g_message);
  g_message[g_length] = '\0';
  return Status(code);
}

std::string_view message() {
  return {g_message, g_length};
}

bool heap_can_hold(std::size_t bytes) {
#ifdef __EMSCRIPTEN__
  constexpr std::size_t kLarge = std::size_t{1} << 20;         // smaller requests fit in the slack of a growth
  constexpr std::size_t kMaxHeap = contract::kMaxMemoryBytes;  // the module's memory limit (-sMAXIMUM_MEMORY)
  constexpr std::size_t kSlack = std::size_t{1} << 17;         // dlmalloc's bookkeeping and page rounding
  if (bytes < kLarge) return true;
  const struct mallinfo m = mallinfo();
  const auto top = static_cast<std::size_t>(m.keepcost);              // the free top chunk
  const auto free_bytes = static_cast<std::size_t>(m.fordblks);       // every free chunk
  const std::size_t below = free_bytes > top ? free_bytes - top : 0;  // free chunks below the top
  const auto brk = reinterpret_cast<std::uintptr_t>(sbrk(0));
  const std::size_t room = brk < kMaxHeap ? kMaxHeap - brk : 0;  // growth still possible
  return bytes + kSlack <= top + room || bytes <= below;
#else
  (void)bytes;
  return true;
#endif
}

Status out_of_memory(const char* what, double bytes) {
  return fail_with(Code::out_of_memory, "out of wasm memory: ", what, " needs ", bytes,
                   " bytes (a wasm module has at most " POSENC_LIMIT_MAX_MEMORY_BYTES "); use smaller arguments");
}

Status checked_product(std::size_t& n, std::initializer_list<std::size_t> factors, const char* what) {
  n = 1;
  for (std::size_t f : factors)
    if (__builtin_mul_overflow(n, f, &n)) return fail(what, " would hold more elements than this machine's sizes allow");
  return {};
}

Status checked_sum(std::size_t& n, std::initializer_list<std::size_t> terms, const char* what) {
  n = 0;
  for (std::size_t t : terms)
    if (__builtin_add_overflow(n, t, &n)) return fail(what, " would hold more elements than this machine's sizes allow");
  return {};
}

}  // namespace posenc
