#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "relative.hpp"
#include "status_check.hpp"

namespace rel = posenc::relative;

namespace {

// The ALiBi paper's reference get_slopes (Press et al., attention_with_linear_biases), in long double.
std::vector<long double> paper_slopes(std::size_t n) {
  const auto power_of_2 = [](std::size_t m) {
    const long double start = std::pow(2.0L, -std::pow(2.0L, -(std::log2((long double)m) - 3)));
    std::vector<long double> r;
    for (std::size_t i = 0; i < m; ++i) r.push_back(start * std::pow(start, (long double)i));
    return r;
  };
  const long double l = std::log2((long double)n);
  if (l == std::floor(l)) return power_of_2(n);
  const auto closest = std::size_t(1) << std::size_t(std::floor(l));
  auto slopes = power_of_2(closest);
  const auto more = paper_slopes(2 * closest);
  for (std::size_t i = 0; slopes.size() < n; i += 2) slopes.push_back(more[i]);  // [0::2][:n - closest]
  return slopes;
}

std::vector<float> slopes(std::size_t n) {
  std::vector<float> out(n);
  REQUIRE_OK(rel::alibi_slopes(n, out));
  return out;
}

std::int32_t bucket(std::int64_t relative_position, std::size_t num_buckets, std::size_t max_distance, bool bidirectional) {
  std::int32_t out = -1;
  REQUIRE_OK(rel::t5_bucket(out, relative_position, num_buckets, max_distance, bidirectional));
  return out;
}

using u128 = unsigned __int128;
u128 ipow(u128 a, std::size_t e) {
  u128 r = 1;
  while (e--) r *= a;
  return r;
}

// T5 bucket by brute force in exact integers: the largest k with (n/me)^E >= (md/me)^k, i.e.
// n^E >= md^k me^(E-k), is floor(E log(n/me) / log(md/me)). Needs md^E < 2^128.
std::int32_t brute_bucket(std::int64_t rel_pos, std::size_t num_buckets, std::size_t md, bool bidirectional) {
  std::int64_t result = 0, n;
  std::size_t b = num_buckets;
  if (bidirectional) {
    b /= 2;
    if (rel_pos > 0) result += std::int64_t(b);
    n = rel_pos < 0 ? -rel_pos : rel_pos;
  } else {
    n = rel_pos < 0 ? -rel_pos : 0;
  }
  const std::size_t me = b / 2, e = b - me;
  if (n < std::int64_t(me)) return std::int32_t(result + n);
  const u128 nn = u128(std::min<std::int64_t>(n, std::int64_t(md)));  // the formula is capped at b - 1 from md on
  std::size_t k = 0;
  while (k + 1 < e && ipow(nn, e) >= ipow(md, k + 1) * ipow(me, e - k - 1)) ++k;
  return std::int32_t(result + std::int64_t(me + k));
}

}  // namespace

TEST_CASE("ALiBi slopes follow the paper's rule for 1..64 heads") {
  for (std::size_t h = 1; h <= 64; ++h) {
    const auto got = slopes(h);
    const auto want = paper_slopes(h);
    REQUIRE(want.size() == h);
    for (std::size_t i = 0; i < h; ++i) {
      INFO("heads " << h << ", head " << i);
      REQUIRE(got[i] == Approx(double(want[i])).epsilon(1e-7));  // float rounding of the exact value
    }
  }
  const auto eight = slopes(8);
  for (std::size_t i = 0; i < 8; ++i) CHECK(eight[i] == std::ldexp(1.0f, -int(i) - 1));  // 1/2, 1/4, ..., 1/256
  const auto twelve = slopes(12);  // 8 heads of 1/2..1/256, then 2^-0.5, 2^-1.5, 2^-2.5, 2^-3.5
  for (std::size_t i = 0; i < 4; ++i) CHECK(twelve[8 + i] == float(std::exp2(-0.5 - double(i))));
  CHECK(slopes(1)[0] == 0.00390625f);  // n = 1: 2^-8
  CHECK(slopes(16)[0] == float(std::sqrt(0.5)));
}

TEST_CASE("ALiBi bias, causal and symmetric, with queries at the last positions") {
  const std::size_t heads = 3, q = 4, k = 7;
  const auto m = slopes(heads);
  for (bool symmetric : {false, true}) {
    std::vector<float> b(heads * q * k);
    REQUIRE_OK(rel::alibi_bias(heads, q, k, symmetric, b));
    for (std::size_t h = 0; h < heads; ++h)
      for (std::size_t i = 0; i < q; ++i)
        for (std::size_t j = 0; j < k; ++j) {
          const double d = double(i + (k - q)) - double(j);
          const double want = -double(m[h]) * (symmetric ? std::fabs(d) : d);
          REQUIRE(b[(h * q + i) * k + j] == float(want));
        }
    // last query at the last key: zero (+0, not -0); one step back: -m
    CHECK(b[(0 * q + 3) * k + 6] == 0.f);
    CHECK_FALSE(std::signbit(b[(0 * q + 3) * k + 6]));
    CHECK(b[(0 * q + 3) * k + 5] == -m[0]);
  }
  std::vector<float> sq(2 * 3 * 3);
  REQUIRE_OK(rel::alibi_bias(2, 3, 3, false, sq));
  const float m2 = slopes(2)[1];        // 1/16
  CHECK(sq[9 + 2 * 3 + 0] == -2 * m2);  // head 1, i = 2, j = 0
  CHECK(sq[9 + 0 * 3 + 2] == 2 * m2);   // future key: same formula, masked later by the attention
}

TEST_CASE("T5 buckets match exact-integer brute force for every rel in -300..300") {
  struct Config {
    std::size_t buckets, max_distance;
  };
  for (Config c : {Config{32, 128}, Config{33, 100}, Config{16, 64}, Config{24, 50}, Config{6, 9}, Config{8, 20}}) {
    for (bool bidirectional : {true, false}) {
      for (std::int64_t r = -300; r <= 300; ++r) {
        INFO("buckets " << c.buckets << ", maxDistance " << c.max_distance << ", bidirectional " << bidirectional << ", rel "
                        << r);
        REQUIRE(bucket(r, c.buckets, c.max_distance, bidirectional) == brute_bucket(r, c.buckets, c.max_distance, bidirectional));
      }
    }
  }
}

TEST_CASE("T5 buckets at the boundaries where the log ratio is an integer") {
  // 32 buckets / 128, bidirectional: n = 16, 32, 64 give 8 + 2, 8 + 4, 8 + 6 exactly; key > query adds 16.
  const auto bi = [](std::int64_t r) { return bucket(r, 32, 128, true); };
  CHECK(bi(0) == 0);
  CHECK(bi(-1) == 1);
  CHECK(bi(1) == 17);
  CHECK(bi(-7) == 7);
  CHECK(bi(-8) == 8);
  CHECK(bi(-15) == 9);
  CHECK(bi(-16) == 10);
  CHECK(bi(16) == 26);
  CHECK(bi(-17) == 10);
  CHECK(bi(-31) == 11);
  CHECK(bi(-32) == 12);
  CHECK(bi(32) == 28);
  CHECK(bi(-63) == 13);
  CHECK(bi(-64) == 14);
  CHECK(bi(64) == 30);
  CHECK(bi(-127) == 15);
  CHECK(bi(-128) == 15);
  CHECK(bi(128) == 31);
  CHECK(bi(1000000) == 31);
  CHECK(bi(std::numeric_limits<std::int64_t>::min()) == 15);
  CHECK(bi(std::numeric_limits<std::int64_t>::max()) == 31);
  // causal (decoder): only key <= query counts, 16 exact buckets, log buckets 16..31
  const auto causal = [](std::int64_t r) { return bucket(r, 32, 128, false); };
  CHECK(causal(5) == 0);
  CHECK(causal(-5) == 5);
  CHECK(causal(-16) == 16);
  CHECK(causal(-32) == 21);  // 16 + floor(16/3)
  CHECK(causal(-64) == 26);  // 16 + floor(32/3)
  CHECK(causal(-128) == 31);
  CHECK(causal(std::numeric_limits<std::int64_t>::min()) == 31);
  // 6 buckets / 9 bidirectional: 3 buckets, 1 exact; n = 3 sits exactly on bucket 1 + 1
  CHECK(bucket(-3, 6, 9, true) == 2);
  CHECK(bucket(-2, 6, 9, true) == 1);
}

TEST_CASE("t5Buckets is the bucket of key - query with queries at the last positions") {
  for (auto [q, k] : {std::pair<std::size_t, std::size_t>{5, 9}, {40, 40}, {1, 1}, {1, 300}}) {
    for (bool bidirectional : {true, false}) {
      std::vector<std::int32_t> out(q * k);
      REQUIRE_OK(rel::t5_buckets(q, k, 32, 128, bidirectional, out));
      for (std::size_t i = 0; i < q; ++i)
        for (std::size_t j = 0; j < k; ++j)
          REQUIRE(out[i * k + j] == bucket(std::int64_t(j) - std::int64_t(i + k - q), 32, 128, bidirectional));
    }
  }
  std::vector<std::int32_t> empty;
  CHECK_OK(rel::t5_buckets(0, 0, 32, 128, true, empty));
}

TEST_CASE("ALiBi at explicit positions: -m (q_i - k_j), -Infinity at masked keys, the queries the last keys") {
  const std::vector<double> queries = {3, 4}, keys = {0, 0, 1, 2, 3, 4};
  const std::vector<std::uint8_t> masked = {1, 0, 0, 0, 0, 0};
  std::vector<float> slopes(2), out(2 * 2 * 6), sym(2 * 2 * 6);
  REQUIRE_OK(posenc::relative::alibi_slopes(2, slopes));
  REQUIRE_OK(posenc::relative::alibi_bias_at(2, 2, keys, masked, false, out));
  REQUIRE_OK(posenc::relative::alibi_bias_at(2, 2, keys, masked, true, sym));
  for (std::size_t h = 0; h < 2; ++h)
    for (std::size_t i = 0; i < 2; ++i)
      for (std::size_t j = 0; j < 6; ++j) {
        const float v = out[(h * 2 + i) * 6 + j], w = sym[(h * 2 + i) * 6 + j];
        if (j == 0) {
          CHECK(v == -INFINITY);
          CHECK(w == -INFINITY);
          continue;
        }
        const double d = queries[i] - keys[j];
        CHECK(v == float(-double(slopes[h]) * d));
        CHECK(w == float(-double(slopes[h]) * std::fabs(d)));
      }
  const std::vector<double> fractional = {0, 0, 1, 2, 3, 4.5};
  CHECK_RANGE(posenc::relative::alibi_bias_at(2, 2, fractional, masked, false, out));
  CHECK_RANGE_WITH(posenc::relative::alibi_bias_at(2, 7, keys, masked, false, out),
                   Catch::Contains("keyLength must be >= queryLength"));
}

TEST_CASE("T5 buckets of given relative positions equal the brute-force buckets") {
  using Catch::Contains;
  std::vector<double> rel;
  for (int r = -300; r <= 300; ++r) rel.push_back(r);
  rel.push_back(-9007199254740991.0);
  rel.push_back(9007199254740991.0);
  for (const bool bidirectional : {true, false}) {
    std::vector<std::int32_t> out(rel.size());
    REQUIRE_OK(posenc::relative::t5_buckets_of(rel, 32, 128, bidirectional, out));
    for (std::size_t i = 0; i < rel.size(); ++i) CHECK(out[i] == brute_bucket(std::int64_t(rel[i]), 32, 128, bidirectional));
  }
  std::vector<std::int32_t> one(1);
  const std::vector<double> bad = {1.5};
  CHECK_RANGE_WITH(posenc::relative::t5_buckets_of(bad, 32, 128, true, one), Contains("relativePositions[0]"));
}

TEST_CASE("Shaw relative positions are clip(j - i, -k, k) + k") {
  std::vector<std::int32_t> out(6 * 6);
  REQUIRE_OK(rel::relative_positions(6, 2, out));
  for (std::size_t i = 0; i < 6; ++i)
    for (std::size_t j = 0; j < 6; ++j) {
      const long d = long(j) - long(i);
      REQUIRE(out[i * 6 + j] == std::max(-2L, std::min(2L, d)) + 2);
    }
  CHECK(out[0 * 6 + 5] == 4);  // clipped at +k
  CHECK(out[5 * 6 + 0] == 0);  // clipped at -k
  CHECK(out[3 * 6 + 3] == 2);  // diagonal: k
  REQUIRE_OK(rel::relative_positions(6, 0, out));
  for (auto v : out) REQUIRE(v == 0);
  REQUIRE_OK(rel::relative_positions(6, 10, out));  // no clipping: j - i + 10
  CHECK(out[0 * 6 + 5] == 15);
  CHECK(out[5 * 6 + 0] == 5);
}

TEST_CASE("relative encodings reject bad arguments with a range failure naming the argument") {
  using Catch::Contains;
  std::vector<float> f(12);
  CHECK_RANGE_WITH(rel::alibi_slopes(0, f), Contains("numHeads"));
  CHECK_RANGE(rel::alibi_slopes(3, f));
  CHECK_RANGE_WITH(rel::alibi_bias(0, 2, 2, false, f), Contains("numHeads"));
  CHECK_RANGE_WITH(rel::alibi_bias(1, 4, 3, false, f), Contains("keyLength"));
  CHECK_RANGE(rel::alibi_bias(1, 3, 3, false, f));  // 9 != 12
  std::vector<std::int32_t> b(4);
  std::int32_t one = -1;
  CHECK_RANGE_WITH(rel::t5_bucket(one, 0, 3, 128, true), Contains("numBuckets"));
  CHECK_RANGE_WITH(rel::t5_bucket(one, 0, 1, 128, false), Contains("numBuckets"));
  CHECK_RANGE_WITH(rel::t5_bucket(one, 0, 8192, 128, true), Contains("numBuckets"));
  CHECK_RANGE_WITH(rel::t5_bucket(one, 0, 32, 8, true), Contains("maxDistance"));
  CHECK_RANGE_WITH(rel::t5_bucket(one, 0, 32, std::size_t(1) << 31, true), Contains("maxDistance"));
  CHECK_RANGE_WITH(rel::t5_buckets(3, 2, 32, 128, true, b), Contains("keyLength"));
  CHECK_RANGE(rel::t5_buckets(2, 3, 32, 128, true, b));  // 6 != 4
  CHECK_RANGE_WITH(rel::relative_positions(2, (std::size_t(1) << 30) + 1, b), Contains("maxRelative"));
  CHECK_RANGE(rel::relative_positions(3, 1, b));
}
