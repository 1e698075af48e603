// Relative family: ALiBi slopes and biases, T5 buckets (single and tables), Shaw relative positions.
// Checks: slopes in (0, 1]; biases follow -m (pos_i - j) (or -m |pos_i - j|); every T5 bucket is in
// [0, numBuckets), the table agrees with t5_bucket, buckets never decrease with distance on a side;
// Shaw indices are clip(j - i, -k, k) + k.
#include <algorithm>
#include <cmath>

#include "fuzz.hpp"
#include "relative.hpp"

namespace rel = posenc::relative;

FUZZ_TARGET(relative) {
  fuzz::Input in(data, size);
  const int which = in.in<int>(0, 3);

  if (which == 0) {  // ALiBi slopes and bias
    const std::size_t heads = in.size(1, 40), q = in.size(0, 24), k = in.flag() ? q : in.size(0, 24);
    const bool symmetric = in.flag();
    std::vector<float> slopes(in.buffer(heads));
    const bool ok = fuzz::accepted([&] { return rel::alibi_slopes(heads, slopes); });
    FUZZ_CHECK(ok == (heads >= 1 && slopes.size() == heads));
    if (ok)
      for (float m : slopes) FUZZ_CHECK(m > 0 && m <= 1);
    std::vector<float> bias(in.buffer(fuzz::product(heads, fuzz::product(q, k))));
    const bool valid = heads >= 1 && k >= q && bias.size() == fuzz::product(heads, fuzz::product(q, k));
    if (!fuzz::accepted([&] { return rel::alibi_bias(heads, q, k, symmetric, bias); })) {
      FUZZ_CHECK(!valid);
      return 0;
    }
    FUZZ_CHECK(valid);
    if (q == 0 || k == 0) return 0;
    if (!ok) {
      slopes.assign(heads, 0.f);
      fuzz::must_accept([&] { return rel::alibi_slopes(heads, slopes); }, "alibi slopes for a valid bias");
    }
    for (std::size_t h = 0; h < heads; ++h)
      for (std::size_t i = 0; i < q; ++i)
        for (std::size_t j = 0; j < k; ++j) {
          const double pos = double(i + k - q), dist = symmetric ? std::fabs(pos - double(j)) : pos - double(j);
          const float want = float(0.0 - double(slopes[h]) * dist);
          FUZZ_CHECK(bias[(h * q + i) * k + j] == want);
        }
    return 0;
  }

  // T5: bucket parameters, sometimes out of range.
  const std::size_t buckets = in.rarely(8) ? in.size(0, 5000) : in.in<std::size_t>(2, 64);
  const std::size_t max_distance = in.rarely(8) ? in.size(0, 1u << 31) : in.in<std::size_t>(1, in.flag() ? 300 : 100000);
  const bool bidirectional = in.flag();
  const std::size_t b = bidirectional ? buckets / 2 : buckets;
  const bool config_ok = buckets <= 4096 && b >= 2 && max_distance > b / 2 && max_distance <= 0x7fffffff;

  if (which == 1) {  // single buckets, including extreme relative positions
    std::int64_t r = in.flag() ? in.i64() : in.in<std::int64_t>(-100000, 100000);
    for (int t = 0; t < 8; ++t) {
      std::int32_t got = -1;
      const bool ok = fuzz::accepted([&] { return rel::t5_bucket(got, r, buckets, max_distance, bidirectional); });
      FUZZ_CHECK(ok == config_ok);
      if (!ok) return 0;
      FUZZ_CHECK_MSG(got >= 0 && std::size_t(got) < buckets, std::to_string(got));
      if (bidirectional)
        FUZZ_CHECK((r > 0) == (std::size_t(got) >= b));
      else if (r >= 0)
        FUZZ_CHECK(got == 0);
      // Monotone in distance on each side: one step further never lowers the bucket.
      if (r != INT64_MIN && r != INT64_MAX && r != 0) {
        const std::int64_t further = r > 0 ? r + 1 : r - 1;
        std::int32_t next = -1;
        fuzz::must_accept([&] { return rel::t5_bucket(next, further, buckets, max_distance, bidirectional); }, "t5_bucket");
        FUZZ_CHECK(next >= got);
      }
      r = in.i64() >> in.in<int>(0, 63);
    }
    return 0;
  }

  if (which == 2) {  // bucket tables agree with single buckets
    const std::size_t q = in.size(0, 40), k = in.flag() ? q : in.size(0, 40);
    std::vector<std::int32_t> out(in.buffer(fuzz::product(q, k)));
    const bool ok = fuzz::accepted([&] { return rel::t5_buckets(q, k, buckets, max_distance, bidirectional, out); });
    FUZZ_CHECK(ok == (config_ok && k >= q && out.size() == fuzz::product(q, k)));
    if (!ok) return 0;
    for (std::size_t i = 0; i < q; ++i)
      for (std::size_t j = 0; j < k; ++j) {
        const std::int64_t relpos = std::int64_t(j) - std::int64_t(i + k - q);
        std::int32_t want = -1;
        fuzz::must_accept([&] { return rel::t5_bucket(want, relpos, buckets, max_distance, bidirectional); }, "t5_bucket");
        FUZZ_CHECK(out[i * k + j] == want);
      }
    return 0;
  }

  // Shaw et al. relative positions.
  const std::size_t length = in.size(0, 64);
  const std::size_t kmax = in.rarely(8) ? in.size(0, std::size_t{1} << 31) : in.in<std::size_t>(0, 80);
  std::vector<std::int32_t> out(in.buffer(fuzz::product(length, length)));
  const bool ok = fuzz::accepted([&] { return rel::relative_positions(length, kmax, out); });
  FUZZ_CHECK(ok == (kmax <= (std::size_t{1} << 30) && out.size() == fuzz::product(length, length)));
  if (!ok) return 0;
  const auto kk = std::int64_t(kmax);
  for (std::size_t i = 0; i < length; ++i)
    for (std::size_t j = 0; j < length; ++j)
      FUZZ_CHECK(out[i * length + j] == std::clamp(std::int64_t(j) - std::int64_t(i), -kk, kk) + kk);
  return 0;
}
