// Shared by the libFuzzer targets (one per kernel family, tests/fuzz/fuzz_<family>.cpp).
//
// Each target decodes the fuzzer's bytes into arguments for the core API: mostly small, well-formed
// ones (so the kernels really run), sometimes hostile ones (sizes near 2^28, 2^32 and SIZE_MAX, NaN,
// +-Infinity, denormals, enum values out of range, output buffers of the wrong size). The contract
// checked everywhere:
//   - every call returns a posenc::Status: ok, or a failure with code range (or out_of_memory) and a
//     non-empty message in posenc::message(); it never crashes (the core is built without exceptions);
//   - no sanitizer finding (the build uses -fsanitize=fuzzer,address,undefined, no recovery);
//   - arguments the contract calls valid are accepted (no spurious failure), and outputs are finite
//     and satisfy the family's identities (a rotation keeps norms, softmax rows sum to 1, ...).
// A failed check prints what and where, then aborts, so libFuzzer saves the input as a crash artifact.
//
// A target is FUZZ_TARGET(family) { ... } over `data` and `size`: it defines posenc_fuzz_<family>, and
// tests/fuzz/main.cpp links every target into one binary that runs the one its name selects.
#pragma once
#include <fuzzer/FuzzedDataProvider.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "status.hpp"

#define FUZZ_TARGET(family) extern "C" int posenc_fuzz_##family(const std::uint8_t* data, std::size_t size)

namespace fuzz {

[[noreturn]] inline void failed(const char* file, int line, const char* what, const std::string& detail) {
  std::fprintf(stderr, "\nfuzz check failed at %s:%d: %s %s\n", file, line, what, detail.c_str());
  std::abort();
}
#define FUZZ_CHECK(cond) ((cond) ? void(0) : ::fuzz::failed(__FILE__, __LINE__, #cond, ""))
#define FUZZ_CHECK_MSG(cond, detail) ((cond) ? void(0) : ::fuzz::failed(__FILE__, __LINE__, #cond, (detail)))

inline std::string str(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

// Runs call(), which returns a posenc::Status; true when it succeeded. A failure must carry the code
// range or out_of_memory and a message of its own (the message buffer is cleared before the call, so
// a stale message from an earlier failure does not count).
template <class F>
bool accepted(F&& call) {
  (void)posenc::fail_with(posenc::Code::range);  // empties posenc::message()
  const posenc::Status s = call();
  if (s.ok()) return true;
  const std::string_view message = posenc::message();
  if (s.code() != posenc::Code::range && s.code() != posenc::Code::out_of_memory)
    failed(__FILE__, __LINE__, "failure code", "got code " + std::to_string(int(s.code())) + ": " + std::string(message));
  if (message.empty()) failed(__FILE__, __LINE__, "failure message", "a failed Status without a message");
  return false;
}

// Runs call(), which the contract says must succeed; a failure is a finding.
template <class F>
void must_accept(F&& call, const char* what) {
  if (!accepted(call)) failed(__FILE__, __LINE__, what, "failed: " + std::string(posenc::message()));
}

// The message of the latest failure, as a string (for checks on what a refusal says).
inline std::string message() {
  return std::string(posenc::message());
}

inline bool all_finite(std::span<const float> v) {
  for (float x : v)
    if (!std::isfinite(x)) return false;
  return true;
}
inline bool all_finite(std::span<const double> v) {
  for (double x : v)
    if (!std::isfinite(x)) return false;
  return true;
}

inline constexpr std::size_t kMaxElements = posenc::max_elements;

class Input {
 public:
  Input(const std::uint8_t* data, std::size_t size) : p_(data, size) {}

  bool flag() { return p_.ConsumeBool(); }
  // True about once in `n` draws (when bytes remain).
  bool rarely(unsigned n = 16) { return p_.ConsumeIntegralInRange<unsigned>(0, n - 1) == 0; }
  template <class T>
  T in(T lo, T hi) {
    return p_.ConsumeIntegralInRange<T>(lo, hi);
  }
  std::uint64_t u64() { return p_.ConsumeIntegral<std::uint64_t>(); }
  std::int64_t i64() { return p_.ConsumeIntegral<std::int64_t>(); }
  double unit() { return p_.ConsumeProbability<double>(); }
  std::size_t remaining() { return p_.remaining_bytes(); }

  // A size: usually in [lo, typical], sometimes hostile (0, 2^15, just past the core's limit, 2^31,
  // 2^32 + 2 and 2^40 where size_t holds them (64-bit), SIZE_MAX / 2 + 1, SIZE_MAX; on wasm32 their products wrap). Apart from
  // 2^15 (whose square exceeds the limit), hostile values exceed kMaxElements with any factor >= 1, so the core must refuse them
  // before allocating. `medium = false` leaves 2^15 out (for sizes the core really allocates, to keep inputs fast).
  std::size_t size(std::size_t lo, std::size_t typical, bool medium = true) {
    if (rarely(24)) {
      static constexpr std::size_t hostile[] = {0,
                                                std::size_t{1} << 15,
                                                kMaxElements + 1,
                                                std::size_t{1} << 31,
                                                std::size_t(std::uint64_t{1} << 32) + 2,  // 2 on wasm32
                                                std::size_t(std::uint64_t{1} << 40),      // 0 on wasm32
                                                std::numeric_limits<std::size_t>::max() / 2 + 1,
                                                std::numeric_limits<std::size_t>::max()};
      const std::size_t v = p_.PickValueInArray(hostile);
      return v == hostile[1] && !medium ? hostile[2] : v;
    }
    return in<std::size_t>(lo, typical);
  }

  // Any double, weighted towards the interesting ones.
  double special() {
    static constexpr double values[] = {0.0,
                                        -0.0,
                                        1.0,
                                        -1.0,
                                        0.5,
                                        2.0,
                                        std::numeric_limits<double>::quiet_NaN(),
                                        std::numeric_limits<double>::infinity(),
                                        -std::numeric_limits<double>::infinity(),
                                        std::numeric_limits<double>::max(),
                                        -std::numeric_limits<double>::max(),
                                        std::numeric_limits<double>::min(),
                                        std::numeric_limits<double>::denorm_min(),
                                        1e-300,
                                        1e300,
                                        2147483647.0,
                                        2147483648.0,
                                        9007199254740992.0,
                                        3.4028234663852886e38,
                                        3.5e38,
                                        1e-45};
    return p_.PickValueInArray(values);
  }
  double any_double() {
    switch (in<int>(0, 3)) {
      case 0:
        return special();
      case 1:
        return p_.ConsumeFloatingPoint<double>();
      default:
        return p_.ConsumeFloatingPointInRange<double>(-1e4, 1e4);
    }
  }
  // A double in [lo, hi].
  double real(double lo, double hi) { return p_.ConsumeFloatingPointInRange<double>(lo, hi); }
  // A double in [lo, hi], sometimes (1 in `odds`) anything at all.
  double number(double lo, double hi, unsigned odds = 16) {
    if (rarely(odds)) return any_double();
    return p_.ConsumeFloatingPointInRange<double>(lo, hi);
  }
  // An integer-valued double in [lo, hi] (positions), sometimes fractional or anything.
  double position(double lo, double hi) {
    if (rarely(8)) return number(lo, hi);
    return std::nearbyint(p_.ConsumeFloatingPointInRange<double>(lo, hi));
  }

  // n floats of magnitude about `scale`, sometimes with a hostile value among them.
  std::vector<float> floats(std::size_t n, float scale, bool hostile_values = true) {
    std::vector<float> v(n);
    for (auto& x : v) x = float(p_.ConsumeFloatingPointInRange<double>(-1.0, 1.0) * scale);
    if (hostile_values && n > 0 && rarely(12)) v[in<std::size_t>(0, n - 1)] = float(any_double());
    return v;
  }

  // The size of an output buffer: usually `want`, sometimes off by one or empty (a caller's mistake
  // the core must refuse). When `want` is not a real size (hostile arguments), a small buffer.
  std::size_t buffer(std::size_t want, std::size_t cap = 1 << 16) {
    if (want > cap) return in<std::size_t>(0, 64);
    if (rarely(16)) return in<int>(0, 1) ? want + 1 : (want ? want - 1 : 1);
    return want;
  }

  std::string word(std::size_t max_length) { return p_.ConsumeRandomLengthString(max_length); }

 private:
  FuzzedDataProvider p_;
};

// a * b as the core's checked_size would compute it, or SIZE_MAX when over the limit.
inline std::size_t product(std::size_t a, std::size_t b) {
  if (a != 0 && b > kMaxElements / a) return std::numeric_limits<std::size_t>::max();
  return a * b;
}

}  // namespace fuzz
