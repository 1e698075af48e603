#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>
#include <vector>

#include "attention.hpp"
#include "status_check.hpp"

using posenc::attention::Shape;

namespace {

std::vector<float> random(std::size_t n, std::mt19937& g, float scale = 1.f) {
  std::normal_distribution<float> dist(0.f, scale);
  std::vector<float> x(n);
  for (auto& v : x) v = dist(g);
  return x;
}

struct Result {
  std::vector<float> out, weights;
};

Result run(const std::vector<float>& q, const std::vector<float>& k, const std::vector<float>& v, const Shape& s,
           const std::vector<float>& bias, bool causal, double scale) {
  Result r{std::vector<float>(s.seq_q * s.heads * s.dv), std::vector<float>(s.heads * s.seq_q * s.seq_k)};
  REQUIRE_OK(posenc::attention::attention(q, k, v, s, bias, causal, scale, r.out, r.weights));
  return r;
}

// Naive double-precision attention straight from softmax(q k^T * scale + bias) v.
Result naive(const std::vector<float>& q, const std::vector<float>& k, const std::vector<float>& v, const Shape& s,
             const std::vector<float>& bias, bool causal, double scale) {
  const std::size_t sq = s.seq_q, sk = s.seq_k, H = s.heads, d = s.d, dv = s.dv;
  Result r{std::vector<float>(sq * H * dv), std::vector<float>(H * sq * sk)};
  for (std::size_t h = 0; h < H; ++h) {
    for (std::size_t i = 0; i < sq; ++i) {
      std::vector<double> logit(sk);
      std::vector<bool> seen(sk);
      double mx = -INFINITY;
      for (std::size_t j = 0; j < sk; ++j) {
        double dot = 0;
        for (std::size_t c = 0; c < d; ++c) dot += double(q[(i * H + h) * d + c]) * double(k[(j * H + h) * d + c]);
        logit[j] = dot * scale;
        if (!bias.empty()) logit[j] += bias.size() == sq * sk ? bias[i * sk + j] : bias[(h * sq + i) * sk + j];
        seen[j] = !causal || double(j) <= double(i) + double(sk) - double(sq);
        if (seen[j]) mx = std::max(mx, logit[j]);
      }
      double sum = 0;
      std::vector<double> p(sk, 0.0);
      for (std::size_t j = 0; j < sk; ++j)
        if (seen[j] && mx > -INFINITY) sum += (p[j] = std::exp(logit[j] - mx));
      for (std::size_t j = 0; j < sk; ++j) {
        if (sum > 0) p[j] /= sum;
        r.weights[(h * sq + i) * sk + j] = float(p[j]);
      }
      for (std::size_t c = 0; c < dv; ++c) {
        double acc = 0;
        for (std::size_t j = 0; j < sk; ++j) acc += p[j] * double(v[(j * H + h) * dv + c]);
        r.out[(i * H + h) * dv + c] = float(acc);
      }
    }
  }
  return r;
}

double max_diff(const std::vector<float>& a, const std::vector<float>& b) {
  REQUIRE(a.size() == b.size());
  double m = 0;
  for (std::size_t i = 0; i < a.size(); ++i) m = std::max(m, std::fabs(double(a[i]) - double(b[i])));
  return m;
}

}  // namespace

TEST_CASE("matmul matches a naive double product, plain and transposed, strided, odd sizes") {
  std::mt19937 g(1);
  for (auto [m, kk, n] : {std::array<std::size_t, 3>{1, 1, 1}, {3, 5, 7}, {4, 8, 8}, {9, 17, 33}, {64, 64, 130}, {5, 200, 3}}) {
    for (bool transpose : {false, true}) {
      const std::size_t lda = kk + 3, ldb = (transpose ? kk : n) + 2, ldc = n + 1;
      const auto a = random(m * lda, g), b = random((transpose ? n : kk) * ldb, g);
      std::vector<float> c(m * ldc, 42.f);
      REQUIRE_OK(posenc::attention::matmul({a.data(), m, kk, lda}, {b.data(), transpose ? n : kk, transpose ? kk : n, ldb},
                                           transpose, 0.5f, c.data(), ldc));
      for (std::size_t r = 0; r < m; ++r) {
        for (std::size_t col = 0; col < n; ++col) {
          double want = 0;
          for (std::size_t i = 0; i < kk; ++i) want += double(a[r * lda + i]) * (transpose ? b[col * ldb + i] : b[i * ldb + col]);
          REQUIRE(c[r * ldc + col] == Approx(0.5 * want).margin(1e-4));
        }
        REQUIRE(c[r * ldc + n] == 42.f);  // the padding column between rows is untouched
      }
    }
  }
}

TEST_CASE("attention matches a naive double implementation") {
  std::mt19937 g(2);
  const Shape shapes[] = {{1, 1, 1, 1, 1},     {5, 7, 1, 3, 2},    {13, 9, 3, 8, 5},
                          {16, 16, 2, 64, 64}, {33, 40, 4, 17, 9}, {7, 3, 2, 4, 6}};
  for (const Shape& s : shapes) {
    const auto q = random(s.seq_q * s.heads * s.d, g), k = random(s.seq_k * s.heads * s.d, g),
               v = random(s.seq_k * s.heads * s.dv, g);
    const std::vector<float> none;
    const auto bias2 = random(s.seq_q * s.seq_k, g), bias3 = random(s.heads * s.seq_q * s.seq_k, g);
    for (const auto* bias : {&none, &bias2, &bias3}) {
      for (bool causal : {false, true}) {
        for (double scale : {1.0 / std::sqrt(double(s.d)), 1.0, 0.0, -0.7}) {
          INFO("shape " << s.seq_q << "x" << s.seq_k << " heads " << s.heads << " d " << s.d << " dv " << s.dv << " bias "
                        << bias->size() << " causal " << causal << " scale " << scale);
          const auto got = run(q, k, v, s, *bias, causal, scale), want = naive(q, k, v, s, *bias, causal, scale);
          CHECK(max_diff(got.weights, want.weights) < 1e-5);
          CHECK(max_diff(got.out, want.out) < 1e-5);
        }
      }
    }
  }
}

TEST_CASE("causal rows sum to one with exact zeros above the offset diagonal") {
  std::mt19937 g(3);
  for (auto [sq, sk] : {std::pair<std::size_t, std::size_t>{6, 6}, {3, 8}, {8, 3}}) {
    const Shape s{sq, sk, 2, 4, 4};
    const auto r = run(random(sq * 8, g), random(sk * 8, g), random(sk * 8, g), s, {}, true, 0.5);
    for (std::size_t h = 0; h < 2; ++h) {
      for (std::size_t i = 0; i < sq; ++i) {
        const std::ptrdiff_t last = std::ptrdiff_t(i + sk) - std::ptrdiff_t(sq);  // last visible key
        double sum = 0;
        for (std::size_t j = 0; j < sk; ++j) {
          const float w = r.weights[(h * sq + i) * sk + j];
          if (std::ptrdiff_t(j) > last)
            REQUIRE(w == 0.f);
          else
            REQUIRE(w > 0.f);
          sum += w;
        }
        if (last >= 0) {
          REQUIRE(sum == Approx(1.0).margin(1e-6));
        } else {  // sq > sk: the first queries see no key at all -> zero weights and a zero output
          REQUIRE(sum == 0.0);
          for (std::size_t c = 0; c < 4; ++c) REQUIRE(r.out[(i * 2 + h) * 4 + c] == 0.f);
        }
      }
    }
  }
}

TEST_CASE("huge logits stay finite, fully masked rows are zero, overflowed logits share the weight") {
  const Shape s{2, 3, 1, 1, 1};
  const std::vector<float> v = {1, 2, 3};
  // logits = q k: 1e30, -1e30, 5e29 on row 0 and 0, 0, 0 on row 1 (with k scaled to 1e15)
  auto r = run({1e15f, 0.f}, {1e15f, -1e15f, 5e14f}, v, s, {}, false, 1.0);
  for (float w : r.weights) REQUIRE(std::isfinite(w));
  CHECK(r.weights[0] == 1.f);
  CHECK(r.weights[1] == 0.f);
  CHECK(r.out[0] == 1.f);
  CHECK(r.out[1] == Approx(2.0));  // uniform over three equal logits
  // logits overflow to +Infinity (1e20 * 1e20 in float): equal shares among the overflowed keys
  r = run({1e20f, 1.f}, {1e20f, 1e20f, -1e20f}, v, s, {}, false, 1.0);
  CHECK(r.weights[0] == 0.5f);
  CHECK(r.weights[1] == 0.5f);
  CHECK(r.weights[2] == 0.f);
  CHECK(r.out[0] == 1.5f);
  // an all -Infinity bias row: zero weights and output; the other row is unaffected
  const float inf = std::numeric_limits<float>::infinity();
  r = run({1.f, 1.f}, {1.f, 2.f, 3.f}, v, s, {-inf, -inf, -inf, 0.f, -inf, 0.f}, false, 1.0);
  CHECK(r.weights[0] + r.weights[1] + r.weights[2] == 0.f);
  CHECK(r.out[0] == 0.f);
  CHECK(r.weights[4] == 0.f);
  CHECK(r.weights[3] + r.weights[5] == Approx(1.0));
}

TEST_CASE("attention without positions is permutation-equivariant (property test over random inputs)") {
  for (std::uint32_t seed = 0; seed < 60; ++seed) {
    std::mt19937 g(seed);
    const std::size_t L = 1 + g() % 40, H = 1 + g() % 4, d = 1 + g() % 20, dv = 1 + g() % 12;
    const Shape s{L, L, H, d, dv};
    const auto q = random(L * H * d, g, 2.f), k = random(L * H * d, g, 2.f), v = random(L * H * dv, g);
    std::vector<std::size_t> perm(L);
    std::iota(perm.begin(), perm.end(), 0);
    std::shuffle(perm.begin(), perm.end(), g);
    // row i of the permuted inputs is row perm[i] of the originals
    auto permute = [&](const std::vector<float>& x) {
      const std::size_t w = x.size() / L;
      std::vector<float> y(x.size());
      for (std::size_t i = 0; i < L; ++i) std::copy_n(x.begin() + perm[i] * w, w, y.begin() + i * w);
      return y;
    };
    const auto a = run(q, k, v, s, {}, false, 0.3), b = run(permute(q), permute(k), permute(v), s, {}, false, 0.3);
    INFO("seed " << seed << " L " << L << " heads " << H);
    CHECK(max_diff(b.out, permute(a.out)) < 1e-5);
    double werr = 0;
    for (std::size_t h = 0; h < H; ++h)
      for (std::size_t i = 0; i < L; ++i)
        for (std::size_t j = 0; j < L; ++j)
          werr = std::max(werr, std::fabs(double(b.weights[(h * L + i) * L + j]) - a.weights[(h * L + perm[i]) * L + perm[j]]));
    CHECK(werr < 1e-5);
  }
}

TEST_CASE("attention with heads first (bhsd) and a [batch, 1, q, k] bias equals the bshd layout per entry") {
  const std::size_t b = 2, sq = 3, sk = 5, h = 4, kvh = 2, d = 8;
  using Catch::Contains;
  std::mt19937 g(11);
  const auto q = random(b * sq * h * d, g), k = random(b * sk * kvh * d, g), v = random(b * sk * kvh * d, g);
  const auto bias = random(b * sq * sk, g);
  // [b, s, H, d] -> [b, H, s, d]
  const auto heads_first = [](const std::vector<float>& x, std::size_t n, std::size_t s, std::size_t H, std::size_t w) {
    std::vector<float> out(x.size());
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t r = 0; r < s; ++r)
        for (std::size_t j = 0; j < H; ++j)
          for (std::size_t c = 0; c < w; ++c) out[((i * H + j) * s + r) * w + c] = x[((i * s + r) * H + j) * w + c];
    return out;
  };
  Shape shape{sq, sk, h, d, d, kvh, b};
  shape.bias_batch = b;
  shape.bias_heads = 1;
  std::vector<float> out(b * sq * h * d), weights(b * h * sq * sk), out2(out.size()), weights2(weights.size());
  REQUIRE_OK(posenc::attention::attention(q, k, v, shape, bias, true, 0.5, out, weights));
  Shape swapped = shape;
  swapped.axes = posenc::attention::Axes::bhsd;
  REQUIRE_OK(posenc::attention::attention(heads_first(q, b, sq, h, d), heads_first(k, b, sk, kvh, d),
                                          heads_first(v, b, sk, kvh, d), swapped, bias, true, 0.5, out2, weights2));
  CHECK(heads_first(out, b, sq, h, d) == out2);
  CHECK(weights == weights2);
  // each entry alone, with its plane of the bias and the key/value heads repeated for its query heads
  for (std::size_t e = 0; e < b; ++e) {
    std::vector<float> qe(q.begin() + e * sq * h * d, q.begin() + (e + 1) * sq * h * d), ke(sk * h * d), ve(sk * h * d);
    for (std::size_t j = 0; j < sk; ++j)
      for (std::size_t hh = 0; hh < h; ++hh)
        for (std::size_t c = 0; c < d; ++c) {
          ke[(j * h + hh) * d + c] = k[((e * sk + j) * kvh + hh / 2) * d + c];
          ve[(j * h + hh) * d + c] = v[((e * sk + j) * kvh + hh / 2) * d + c];
        }
    const std::vector<float> be(bias.begin() + e * sq * sk, bias.begin() + (e + 1) * sq * sk);
    const auto want = naive(qe, ke, ve, {sq, sk, h, d, d}, be, true, 0.5);
    CHECK(max_diff(std::vector<float>(out.begin() + e * sq * h * d, out.begin() + (e + 1) * sq * h * d), want.out) < 1e-5);
  }
  shape.bias_batch = 3;  // neither 1 nor the batch
  CHECK_RANGE_WITH(posenc::attention::attention(q, k, v, shape, bias, true, 0.5, out, weights), Contains("leading dimensions"));
}

TEST_CASE("attention: a bias size compared with a product that wraps in 32 bits is refused, not read past its end") {
  // heads * seq_q * seq_k = 2^14 * (2^18 + 1) = 2^32 + 2^14: on wasm32 an unchecked product wraps to 2^14,
  // the size of this bias
  const std::size_t heads = std::size_t{1} << 14, sk = (std::size_t{1} << 18) + 1;
  const std::vector<float> q(heads), k(sk), v(sk), bias(heads);
  std::vector<float> out(heads);
  const Shape s{1, sk, heads, 1, 1, 1, 1};
  CHECK_RANGE_WITH(posenc::attention::attention(q, k, v, s, bias, false, 1.0, out, {}),
                   Catch::Contains("bias"));  // natively: its size; on wasm32: the product overflows
}

TEST_CASE("attention rejects bad input") {
  using Catch::Contains;
  const Shape s{2, 3, 1, 2, 2};
  std::vector<float> q(4), k(6), v(6), out(4), w(6), bias(6);
  auto call = [&](const Shape& sh, std::span<const float> b, double scale = 1.0) {
    return posenc::attention::attention(q, k, v, sh, b, false, scale, out, w);
  };
  CHECK_OK(call(s, bias));
  CHECK_RANGE(call({2, 3, 1, 3, 2}, {}));                         // q/k do not hold seq*heads*d
  CHECK_RANGE(call({2, 3, 2, 2, 2}, {}));                         // heads mismatch
  CHECK_RANGE_WITH(call({0, 3, 1, 2, 2}, {}), Contains("seqQ"));  // empty
  CHECK_RANGE_WITH(call(s, std::span<const float>(bias).first(5)), Contains("bias holds 5"));
  CHECK_RANGE_WITH(call(s, {}, NAN), Contains("scale"));
  CHECK_RANGE_WITH(call(s, {}, INFINITY), Contains("scale"));
  CHECK_RANGE_WITH(call(s, {}, 1e39), Contains("scale"));  // finite, but beyond float32
  bias[2] = NAN;
  CHECK_RANGE_WITH(call(s, bias), Contains("bias[2]"));
  bias[2] = INFINITY;
  CHECK_RANGE_WITH(call(s, bias), Contains("bias[2]"));
  bias[2] = -INFINITY;
  CHECK_OK(call(s, bias));
  q[1] = NAN;
  CHECK_RANGE_WITH(call(s, {}), Contains("q[1]"));
  q[1] = 0;
  std::vector<float> small(3);
  CHECK_RANGE(posenc::attention::attention(q, k, v, s, {}, false, 1.0, small, w));
  CHECK_RANGE(posenc::attention::attention(q, k, v, s, {}, false, 1.0, out, small));
  const auto failure = test::outcome(call({2, 3, 1, 3, 2}, {}));
  CHECK(failure.code == posenc::Code::range);
  CHECK_THAT(failure.message, Contains("q holds 4 values; expected") && Contains("seqQ * heads * d = 6"));
}

// ---- rows whose float32 logits overflow are recomputed in double -----------------------------------

namespace {

// softmax(q k^T * scale + bias) v for one head in long double (80-bit natively, 128-bit under wasm):
// the products of float32 values are exact there, so the logits of these small cases are exact.
struct Exact {
  std::vector<long double> weights, out;  // [seq_q, seq_k], [seq_q, dv]
};

Exact exact_attention(const std::vector<float>& q, const std::vector<float>& k, const std::vector<float>& v, std::size_t sq,
                      std::size_t sk, std::size_t d, std::size_t dv, const std::vector<float>& bias, long double scale) {
  Exact r{std::vector<long double>(sq * sk), std::vector<long double>(sq * dv)};
  for (std::size_t i = 0; i < sq; ++i) {
    std::vector<long double> logit(sk);
    long double mx = -INFINITY;
    for (std::size_t j = 0; j < sk; ++j) {
      long double dot = 0;
      for (std::size_t c = 0; c < d; ++c) dot += (long double)q[i * d + c] * (long double)k[j * d + c];
      logit[j] = scale * dot + (bias.empty() ? 0.0L : (long double)bias[i * sk + j]);
      mx = std::max(mx, logit[j]);
    }
    long double sum = 0;
    for (std::size_t j = 0; j < sk; ++j) sum += logit[j] == -INFINITY ? 0.0L : std::exp(logit[j] - mx);
    for (std::size_t j = 0; j < sk; ++j) {
      r.weights[i * sk + j] = logit[j] == -INFINITY ? 0.0L : std::exp(logit[j] - mx) / sum;
      for (std::size_t c = 0; c < dv; ++c) r.out[i * dv + c] += r.weights[i * sk + j] * (long double)v[j * dv + c];
    }
  }
  return r;
}

void check_exact(const std::vector<float>& q, const std::vector<float>& k, const std::vector<float>& v, std::size_t sq,
                 std::size_t sk, std::size_t d, std::size_t dv, const std::vector<float>& bias = {}, double scale = 1.0) {
  const auto got = run(q, k, v, {sq, sk, 1, d, dv}, bias, false, scale);
  const auto want = exact_attention(q, k, v, sq, sk, d, dv, bias, scale);
  for (std::size_t i = 0; i < sq * sk; ++i) {
    INFO("weight " << i << ": got " << got.weights[i] << ", exact " << double(want.weights[i]));
    CHECK(std::isfinite(got.weights[i]));
    CHECK(std::fabs(got.weights[i] - want.weights[i]) <= 1e-6L);
  }
  for (std::size_t i = 0; i < sq * dv; ++i) {
    INFO("output " << i << ": got " << got.out[i] << ", exact " << double(want.out[i]));
    CHECK(std::isfinite(got.out[i]));
    CHECK(std::fabs(got.out[i] - want.out[i]) <= 1e-6L * (1 + std::fabs(want.out[i])));
  }
}

}  // namespace

TEST_CASE("attention: rows whose float32 logits overflow match a long-double reference") {
  SECTION("q = 1e30, k = 1e30 and 2e30: logits 1e60 < 2e60 give weights [0, 1], not [0.5, 0.5]") {
    const auto r = run({1e30f}, {1e30f, 2e30f}, {1.f, 2.f}, {1, 2, 1, 1, 1}, {}, false, 1.0);
    CHECK(r.weights[0] == 0.f);
    CHECK(r.weights[1] == 1.f);
    CHECK(r.out[0] == 2.f);
    check_exact({1e30f}, {1e30f, 2e30f}, {1.f, 2.f}, 1, 2, 1, 1);
  }
  SECTION("ties among overflowed logits share the weight; smaller ones get none") {
    check_exact({1e20f}, {1e20f, 1e20f, -1e20f, 5e19f}, {1.f, 2.f, 3.f, 4.f}, 1, 4, 1, 1);
  }
  SECTION("Infinity - Infinity inside the float dot product (NaN) is an ordinary logit in double") {
    // logits: 1e60 - 1e60 = 0 and 2e30 (first row), 0 and -2e30 (second row)
    check_exact({1e30f, 1e30f}, {1e30f, -1e30f, 1.f, 1.f}, {5.f, 7.f}, 1, 2, 2, 1);
    check_exact({1e30f, 1e30f}, {1e30f, -1e30f, -1.f, -1.f}, {5.f, 7.f}, 1, 2, 2, 1);
  }
  SECTION("the scale brings overflowed dot products back into range") {
    // q k = 1e40 and 1.0000001e40 overflow float32; times 1e-38: 100 and 100.00001 -> near-equal weights
    check_exact({1e20f}, {1e20f, 1.0000001e20f}, {1.f, -1.f}, 1, 2, 1, 1, {}, 1e-38);
    check_exact({1e20f, 3e19f}, {1e20f, 2e19f, 1.0000001e20f, -2e19f, 9e19f, 0.f}, {1.f, 2.f, 3.f}, 1, 3, 2, 1, {}, 2e-39);
  }
  SECTION("a bias is added in double; a -Infinity bias still masks an overflowing key") {
    check_exact({1e30f}, {1e30f, 2e30f, 3e30f}, {1.f, 2.f, 3.f}, 1, 3, 1, 1, {0.f, 0.f, -INFINITY});
    check_exact({1e30f, 1.f}, {1e30f, 1.f, 2e30f}, {1.f, 2.f, 3.f}, 2, 3, 1, 1, {-INFINITY, 0.f, 0.f, 0.f, 0.f, 0.f});
  }
  SECTION("only the overflowing row goes through double; the other rows and heads stay exact") {
    // two heads: head 0 overflows on query 0, head 1 never does
    const Shape s{2, 3, 2, 2, 1};
    const std::vector<float> q = {1e30f, 1e30f, 0.3f, -0.2f, 0.5f, 0.1f, 0.7f, 0.4f};
    const std::vector<float> k = {1e30f, 2e30f, 0.1f, 0.9f, -1e30f, 0.f, -0.5f, 0.2f, 3e29f, 1e29f, 0.6f, 0.6f};
    const std::vector<float> v = {1.f, -1.f, 2.f, 0.5f, 3.f, 0.25f};
    const auto got = run(q, k, v, s, {}, false, 0.5);
    const auto want = naive(q, k, v, s, {}, false, 0.5);  // double: exact for these logits
    CHECK(max_diff(got.weights, want.weights) < 1e-6);
    CHECK(max_diff(got.out, want.out) < 1e-6);
    CHECK(got.weights[0] == 1.f);  // head 0, query 0, key 0: 1.5e60 is the largest logit
  }
  SECTION("q, k at float32's limit") {
    const float m = std::numeric_limits<float>::max();
    check_exact({m, m}, {m, m, m, -m, -m, m}, {1.f, 2.f, 3.f}, 1, 3, 2, 1);
    check_exact({-m}, {m, -m, 0.f}, {1.f, 2.f, 3.f}, 1, 3, 1, 1, {}, std::numeric_limits<float>::max());
  }
}

// A row whose every visible logit overflows to -Infinity in float32 is not a fully masked row: it is
// recomputed in double like any other overflow.
TEST_CASE("attention: logits that overflow to -Infinity are not a mask") {
  // logits -1e60 and -2e60: the first key has all the weight
  check_exact({1e30f}, {-1e30f, -2e30f}, {1.f, 2.f}, 1, 2, 1, 1);
  // the other key masked by the bias: the overflowed one still has all the weight
  check_exact({1e30f}, {-1e30f, 1.f}, {1.f, 2.f}, 1, 2, 1, 1, {0.f, -INFINITY});
}

// ---- without weights: the keys are streamed (online softmax) ------------------------------------------

namespace {
std::vector<float> streamed(const std::vector<float>& q, const std::vector<float>& k, const std::vector<float>& v, const Shape& s,
                            const std::vector<float>& bias, bool causal, double scale) {
  std::vector<float> out(s.seq_q * s.heads * s.dv, NAN);
  REQUIRE_OK(posenc::attention::attention(q, k, v, s, bias, causal, scale, out, {}));
  return out;
}
}  // namespace

TEST_CASE("attention without weights streams the keys and gives the same outputs") {
  std::mt19937 g(4);
  const Shape shapes[] = {{1, 1, 1, 1, 1}, {5, 7, 1, 3, 2}, {13, 300, 3, 8, 5}, {40, 40, 2, 16, 16}, {300, 70, 1, 4, 3}};
  for (const Shape& s : shapes) {
    const auto q = random(s.seq_q * s.heads * s.d, g), k = random(s.seq_k * s.heads * s.d, g),
               v = random(s.seq_k * s.heads * s.dv, g);
    auto bias = random(s.seq_q * s.seq_k, g, 3.f);
    for (std::size_t i = 0; i < bias.size(); i += 7) bias[i] = -INFINITY;
    for (const auto& b : {std::vector<float>{}, bias})
      for (bool causal : {false, true}) {
        INFO("shape " << s.seq_q << "x" << s.seq_k << " heads " << s.heads << " bias " << b.size() << " causal " << causal);
        const auto want = naive(q, k, v, s, b, causal, 0.4);
        CHECK(max_diff(streamed(q, k, v, s, b, causal, 0.4), want.out) < 1e-5);
      }
  }
  // overflowing logits: as with weights
  CHECK(streamed({1e30f}, {1e30f, 2e30f}, {1.f, 2.f}, {1, 2, 1, 1, 1}, {}, false, 1.0) == std::vector<float>{2.f});
}

// The streamed path sums exp(logit - max) * v before dividing, which overflows for v near float32's
// limit (v = [3e38, 3e38] with equal logits); such rows are computed again in double, like the
// weighted path's convex combination, which stays finite.
TEST_CASE("attention without weights: v near float32's limit stays finite") {
  CHECK(streamed({1.f}, {1.f, 1.f}, {3e38f, 3e38f}, {1, 2, 1, 1, 1}, {}, false, 1.0) == std::vector<float>{3e38f});
  const float m = std::numeric_limits<float>::max();
  const auto out = streamed({0.f}, {0.f, 0.f, 0.f}, {m, -m, m}, {1, 3, 1, 1, 1}, {}, false, 1.0);
  CHECK(std::isfinite(out[0]));
  CHECK(out[0] == Approx(m / 3).epsilon(1e-6));
}
