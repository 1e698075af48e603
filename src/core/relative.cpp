#include "relative.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <limits>

#include "buffer.hpp"
#include "simd.hpp"
#include "status.hpp"

namespace posenc::relative {
namespace {

// Query i of query_length sits at position i + (key_length - query_length); see the header.
Status query_offset(std::size_t& offset, std::size_t query_length, std::size_t key_length) {
  if (key_length < query_length)
    return fail("keyLength must be >= queryLength (the queries are the last queryLength positions), got keyLength ", key_length,
                " and queryLength ", query_length);
  offset = key_length - query_length;
  return {};
}

// ---- T5 buckets --------------------------------------------------------------------------------

constexpr std::size_t kMaxBuckets = contract::kMaxBuckets;
constexpr std::size_t kMaxDistance = 0x7fffffff;

struct T5 {
  std::size_t buckets;  // B: num_buckets, halved when bidirectional
  std::size_t exact;    // max_exact = B / 2
  std::size_t max_distance;
  bool bidirectional;
  double log_range;  // log(max_distance / max_exact), the denominator of every logarithmic bucket
};

POSENC_COLD Status t5_config(T5& t, std::size_t num_buckets, std::size_t max_distance, bool bidirectional) {
  if (num_buckets > kMaxBuckets) return fail("numBuckets must be at most ", kMaxBuckets, ", got ", num_buckets);
  const std::size_t b = bidirectional ? num_buckets / 2 : num_buckets;
  if (b < 2)
    return fail("numBuckets must be >= ", bidirectional ? 4 : 2, bidirectional ? " when bidirectional" : " when causal", ", got ",
                num_buckets);
  const std::size_t exact = b / 2;
  if (max_distance <= exact || max_distance > kMaxDistance)
    return fail("maxDistance must be greater than the ", exact, " exact buckets (numBuckets/", bidirectional ? 4 : 2,
                ") and at most ", kMaxDistance, ", got ", max_distance);
  t = {b, exact, max_distance, bidirectional, std::log(double(max_distance) / double(exact))};
  return {};
}

// Non-negative integers as little-endian base-2^32 limbs, just enough to compare a^i * b^j exactly:
// the largest is n^E with n < 2^31 and E <= kMaxBuckets / 2, under 2^(31 * 2048) (fixed capacity, so
// nothing is allocated).
struct Big {
  std::array<std::uint32_t, 31 * kMaxBuckets / 2 / 32 + 2> limbs;
  std::size_t n = 0;
  std::uint32_t* begin() { return limbs.data(); }
  std::uint32_t* end() { return limbs.data() + n; }
  std::size_t size() const { return n; }
  void push_back(std::uint32_t v) { limbs[n++] = v; }
  auto rbegin() const { return std::make_reverse_iterator(limbs.data() + n); }
  auto rend() const { return std::make_reverse_iterator(limbs.data()); }
};

void power_product(Big& r, std::uint32_t a, std::size_t ea, std::uint32_t b, std::size_t eb) {
  r.n = 0;
  r.push_back(1);
  const auto times = [&r](std::uint32_t m, std::size_t count) {
    for (std::size_t t = 0; t < count; ++t) {
      std::uint64_t carry = 0;
      for (auto& limb : r) {
        const std::uint64_t v = std::uint64_t(limb) * m + carry;
        limb = std::uint32_t(v);
        carry = v >> 32;
      }
      if (carry) r.push_back(std::uint32_t(carry));  // factors are >= 1: no leading zero limbs
    }
  };
  times(a, ea);
  times(b, eb);
}

bool less(const Big& a, const Big& b) {
  if (a.size() != b.size()) return a.size() < b.size();
  return std::lexicographical_compare(a.rbegin(), a.rend(), b.rbegin(), b.rend());
}

// floor(E * log(n/me) / log(md/me)) for me <= n < md, E = B - me, me = max_exact, md = max_distance.
// The double value x is within ~1e-12 of the exact one (E <= 2048, log and division correctly rounded
// to ~1 ulp on every libm), so its floor is right unless x is within 1e-9 of an integer k. There,
// x >= k  <=>  (n/me)^E >= (md/me)^k  <=>  n^E >= md^k * me^(E-k), decided in exact integers. Such
// integer points are real, not rare: for 32 buckets / 128, n = 16, 32, 64 give x = 2, 4, 6 exactly,
// and float code (T5's tf.math.log, HF's float32 torch.log) can round x to 1.9999999 there.
POSENC_COLD std::size_t log_bucket(std::uint64_t n, const T5& t) {
  const std::size_t e = t.buckets - t.exact;
  const double x = double(e) * std::log(double(n) / double(t.exact)) / t.log_range;
  const double k = std::nearbyint(x);
  if (std::fabs(x - k) > 1e-9) return std::size_t(std::floor(x));
  const auto ki = std::size_t(k);  // 0 <= ki <= e
  static Big lhs, rhs;             // 8 KiB each: kept off the stack
  power_product(lhs, std::uint32_t(n), e, 1, 0);
  power_product(rhs, std::uint32_t(t.max_distance), ki, std::uint32_t(t.exact), e - ki);
  const bool below = less(lhs, rhs);
  return below ? ki - 1 : ki;  // n >= me makes ki = 0 never below
}

std::int32_t bucket(std::int64_t rel, const T5& t) {
  const std::uint64_t magnitude = rel < 0 ? 0 - std::uint64_t(rel) : std::uint64_t(rel);  // also for INT64_MIN
  std::size_t result = 0;
  std::uint64_t n;
  if (t.bidirectional) {
    if (rel > 0) result += t.buckets;
    n = magnitude;
  } else {
    n = rel < 0 ? magnitude : 0;
  }
  if (n < t.exact)
    result += std::size_t(n);
  else if (n >= t.max_distance)
    result += t.buckets - 1;  // the formula reaches >= B there: capped
  else
    result += t.exact + log_bucket(n, t);  // <= B - 1 since n < max_distance
  return std::int32_t(result);
}

}  // namespace

Status alibi_slopes(std::size_t num_heads, std::span<float> out) {
  POSENC_TRY(require_positive(num_heads, "numHeads"));
  // invariant: the wrapper allocates the output at this size
  if (out.size() != num_heads) return fail("the output holds ", out.size(), " values, expected numHeads = ", num_heads);
  std::size_t n = 1;  // closest power of two <= num_heads
  while (n <= num_heads / 2) n *= 2;
  for (std::size_t h = 0; h < num_heads; ++h) {
    // 2^(-8/n * (h+1)) for the first n heads, then 2^(-4/n * (1, 3, 5, ..)) = every other slope of 2n heads
    const double e = h < n ? -8.0 * double(h + 1) / double(n) : -4.0 * double(2 * (h - n) + 1) / double(n);
    out[h] = float(std::exp2(e));
  }
  return {};
}

Status alibi_bias(std::size_t num_heads, std::size_t query_length, std::size_t key_length, bool symmetric, std::span<float> out) {
  POSENC_TRY(require_positive(num_heads, "numHeads"));
  std::size_t offset = 0, plane = 0, total = 0;
  POSENC_TRY(query_offset(offset, query_length, key_length));
  // invariant: the wrapper refuses this size (validate.js size()) before allocating the output
  POSENC_TRY(checked_size(plane, num_heads, query_length, "the bias"));
  // invariant: the wrapper refuses this size (validate.js size()) before allocating the output
  POSENC_TRY(checked_size(total, plane, key_length, "the bias"));
  // invariant: the wrapper allocates the output at this size
  if (out.size() != total)
    return fail("the output holds ", out.size(), " values, expected numHeads*queryLength*keyLength = ", total);
  if (total == 0) return {};  // (num_heads may be huge when a length is 0: allocate and loop over nothing)
  Buffer<float> slopes;
  POSENC_TRY(slopes.allocate(num_heads, "the slopes"));
  POSENC_TRY(alibi_slopes(num_heads, slopes));
  using bf = simd::batch<float>;
  constexpr std::size_t W = simd::floats;
  static_assert(W <= 16);
  alignas(64) static constexpr float kIota[16] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};
  // Batch body in float: below 2^24 every position, key index and distance is an integer exact in
  // float, and the float product m * d (the exact product rounded once) equals float(m * d) computed
  // in double (a product of two 24-bit significands is exact in double), so it gives the same values
  // as the double formula of the scalar tail, which takes over from 2^24 on.
  const std::size_t body = key_length <= (std::size_t{1} << 24) ? key_length - key_length % W : 0;
  float* o = out.data();
  for (std::size_t h = 0; h < num_heads; ++h) {
    const double m = slopes[h];
    const bf mv{slopes[h]};
    for (std::size_t i = 0; i < query_length; ++i, o += key_length) {
      const double pos = double(i + offset);
      const bf posv{float(pos)};
      bf j = bf::load_aligned(kIota);
      std::size_t k = 0;
      for (; k < body; k += W, j += bf(float(W))) {
        const bf d = symmetric ? xsimd::abs(posv - j) : posv - j;
        (bf(0.f) - mv * d).store_unaligned(o + k);
      }
      for (; k < key_length; ++k) {
        const double d = symmetric ? std::fabs(pos - double(k)) : pos - double(k);
        o[k] = float(0.0 - m * d);  // 0 - x rather than -x: no -0 on the diagonal
      }
    }
  }
  return {};
}

Status alibi_bias_at(std::size_t num_heads, std::size_t query_length, std::span<const double> key_positions,
                     std::span<const std::uint8_t> key_masked, bool symmetric, std::span<float> out) {
  POSENC_TRY(require_positive(num_heads, "numHeads"));
  const std::size_t q = query_length, k = key_positions.size();
  std::size_t first = 0;
  POSENC_TRY(query_offset(first, q, k));
  const auto query_positions = key_positions.subspan(first);
  // invariant: relative.js builds the key mask from attentionMask
  if (key_masked.size() != k) return fail("the key mask holds ", key_masked.size(), " values, expected keyLength = ", k);
  std::size_t plane = 0, total = 0;
  // invariant: the wrapper refuses this size (validate.js size()) before allocating the output
  POSENC_TRY(checked_size(plane, num_heads, q, "the bias"));
  // invariant: the wrapper refuses this size (validate.js size()) before allocating the output
  POSENC_TRY(checked_size(total, plane, k, "the bias"));
  // invariant: the wrapper allocates the output at this size
  if (out.size() != total)
    return fail("the output holds ", out.size(), " values, expected numHeads*queryLength*keyLength = ", total);
  constexpr double kMaxPosition = 9007199254740991.0;  // 2^53 - 1: every integer exact in double
  // invariant: relative.js counts the positions from attentionMask
  for (const double p : key_positions)
    if (!(std::fabs(p) <= kMaxPosition) || p != std::trunc(p))
      return fail("position ", p, " must be an integer below 2^53 in magnitude");
  if (total == 0) return {};
  Buffer<float> slopes;
  POSENC_TRY(slopes.allocate(num_heads, "the slopes"));
  POSENC_TRY(alibi_slopes(num_heads, slopes));
  float* o = out.data();
  for (std::size_t h = 0; h < num_heads; ++h) {
    const double m = slopes[h];
    for (std::size_t i = 0; i < q; ++i, o += k)
      for (std::size_t j = 0; j < k; ++j) {
        const double d = query_positions[i] - key_positions[j];
        o[j] = key_masked[j] ? -std::numeric_limits<float>::infinity() : float(0.0 - m * (symmetric ? std::fabs(d) : d));
      }
  }
  return {};
}

Status t5_buckets_of(std::span<const double> relative_positions, std::size_t num_buckets, std::size_t max_distance,
                     bool bidirectional, std::span<std::int32_t> out) {
  T5 t;
  POSENC_TRY(t5_config(t, num_buckets, max_distance, bidirectional));
  // invariant: the wrapper allocates the output at this size
  if (out.size() != relative_positions.size())
    return fail("the output holds ", out.size(), " values, expected one per relative position = ", relative_positions.size());
  for (std::size_t i = 0; i < relative_positions.size(); ++i) {
    const double r = relative_positions[i];
    if (!(std::fabs(r) <= 9007199254740991.0) || r != std::trunc(r))
      return fail("relativePositions[", i, "] must be an integer below 2^53 in magnitude, got ", r);
    out[i] = bucket(std::int64_t(r), t);
  }
  return {};
}

Status t5_bucket(std::int32_t& out, std::int64_t relative_position, std::size_t num_buckets, std::size_t max_distance,
                 bool bidirectional) {
  T5 t;
  POSENC_TRY(t5_config(t, num_buckets, max_distance, bidirectional));
  out = bucket(relative_position, t);
  return {};
}

Status t5_buckets(std::size_t query_length, std::size_t key_length, std::size_t num_buckets, std::size_t max_distance,
                  bool bidirectional, std::span<std::int32_t> out) {
  T5 t;
  POSENC_TRY(t5_config(t, num_buckets, max_distance, bidirectional));
  std::size_t offset = 0, total = 0;
  POSENC_TRY(query_offset(offset, query_length, key_length));
  // invariant: the wrapper refuses this size (validate.js size()) before allocating the output
  POSENC_TRY(checked_size(total, query_length, key_length, "the buckets"));
  // invariant: the wrapper allocates the output at this size
  if (out.size() != total) return fail("the output holds ", out.size(), " values, expected queryLength*keyLength = ", total);
  if (total == 0) return {};
  // rel = j - (i + key_length - query_length) spans [-(key_length-1), query_length-1]; bucket each
  // once into table[rel + key_length - 1]. Row i is then the contiguous slice starting at query_length-1-i.
  Buffer<std::int32_t> table;
  POSENC_TRY(table.allocate(query_length + key_length - 1, "the bucket table"));
  for (std::size_t r = 0; r < table.size(); ++r) table[r] = bucket(std::int64_t(r) - std::int64_t(key_length - 1), t);
  for (std::size_t i = 0; i < query_length; ++i)
    std::memcpy(out.data() + i * key_length, table.data() + (query_length - 1 - i), key_length * sizeof(std::int32_t));
  return {};
}

Status relative_positions(std::size_t length, std::size_t max_relative, std::span<std::int32_t> out) {
  if (max_relative > contract::kMaxRelative)
    return fail("maxRelative must be at most " POSENC_LIMIT_MAX_RELATIVE ", got ", max_relative);
  std::size_t total = 0;
  // invariant: the wrapper refuses this size (validate.js size()) before allocating the output
  POSENC_TRY(checked_size(total, length, length, "the indices"));
  // invariant: the wrapper allocates the output at this size
  if (out.size() != total) return fail("the output holds ", out.size(), " values, expected length*length = ", total);
  const auto k = std::int64_t(max_relative);
  for (std::size_t i = 0; i < length; ++i)
    for (std::size_t j = 0; j < length; ++j)
      out[i * length + j] = std::int32_t(std::clamp(std::int64_t(j) - std::int64_t(i), -k, k) + k);
  return {};
}

}  // namespace posenc::relative
