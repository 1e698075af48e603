#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "analysis.hpp"
#include "lab.hpp"
#include "reference.hpp"
#include "rng.hpp"
#include "status_check.hpp"

using posenc::lab::Encoding;
using Tokens = std::vector<std::string>;
using Perm = std::vector<std::int32_t>;

namespace {

constexpr Encoding kAll[] = {Encoding::none,  Encoding::sinusoidal, Encoding::learned, Encoding::rope,
                             Encoding::alibi, Encoding::t5,         Encoding::xpos};
static_assert(std::size(kAll) == posenc::contract::kLabEncodingCount);

Tokens words(const std::string& sentence) {
  std::istringstream in(sentence);
  Tokens t;
  for (std::string w; in >> w;) t.push_back(w);
  return t;
}

Perm reversal(std::size_t n) {
  Perm p(n);
  for (std::size_t i = 0; i < n; ++i) p[i] = std::int32_t(n - 1 - i);
  return p;
}

std::vector<std::string_view> views(const Tokens& t) {
  return {t.begin(), t.end()};
}

// What the lab writes (into caller-provided spans) and reports, gathered in one place.
struct LabResult {
  Perm permutation;
  std::vector<float> output, permuted_output, weights, permuted_weights;
  std::size_t heads = posenc::lab::kHeads;
  double equivariance_error = 0, pooled_difference = 0;
};

posenc::Status run_lab(const Tokens& t, const Perm& p, Encoding e, std::size_t d, std::uint64_t seed, LabResult& r) {
  const std::size_t L = t.size(), plane = r.heads * L * L;
  r.permutation.assign(L, -1);
  r.output.assign(L * d, NAN);
  r.permuted_output.assign(L * d, NAN);
  r.weights.assign(plane, NAN);
  r.permuted_weights.assign(plane, NAN);
  posenc::lab::Metrics m;
  const auto tokens = views(t);
  const posenc::Status status = posenc::lab::permutation_lab(
      tokens, p, e, d, seed, {r.permutation, r.output, r.permuted_output, r.weights, r.permuted_weights}, m);
  r.equivariance_error = m.equivariance_error;
  r.pooled_difference = m.pooled_difference;
  return status;
}

posenc::Status run_lab(const Tokens& t, const Perm& p, Encoding e, std::size_t d = 16, std::uint64_t seed = 0) {
  LabResult r;
  return run_lab(t, p, e, d, seed, r);
}

LabResult lab(const Tokens& t, const Perm& p, Encoding e, std::size_t d = 16, std::uint64_t seed = 0) {
  LabResult r;
  REQUIRE_OK(run_lab(t, p, e, d, seed, r));
  return r;
}

Perm default_permutation(std::size_t n, std::uint64_t seed) {
  Perm p(n, -1);
  posenc::lab::default_permutation(seed, p);
  return p;
}

struct Terms {
  std::size_t length = 0;
  std::vector<float> content_content, content_position, position_content, position_position, total;
};

posenc::Status run_score_terms(const Tokens& t, Encoding e, std::size_t d, std::uint64_t seed, Terms& r) {
  r.length = t.size();
  for (auto* v : {&r.content_content, &r.content_position, &r.position_content, &r.position_position, &r.total})
    v->assign(r.length * r.length, NAN);
  const auto tokens = views(t);
  return posenc::lab::score_terms(tokens, e, d, seed,
                                  {r.content_content, r.content_position, r.position_content, r.position_position, r.total});
}

posenc::Status run_score_terms(const Tokens& t, Encoding e, std::size_t d, std::uint64_t seed) {
  Terms r;
  return run_score_terms(t, e, d, seed, r);
}

// ---- an independent double-precision model, written from the documented recipe -------------------

using Mat = std::vector<double>;  // row-major

std::vector<float> draw(posenc::rng::SplitMix64& g, std::size_t n, double std) {
  std::vector<float> v(n);
  posenc::rng::fill_normal(g, v, 0.0, std);
  return v;
}

// HF T5Attention._relative_position_bucket, bidirectional, in double.
int t5_bucket(long rel, int buckets, int max_distance) {
  buckets /= 2;
  int b = rel > 0 ? buckets : 0;
  const long n = std::labs(rel);
  const int exact = buckets / 2;
  if (n < exact) return b + int(n);
  const int large = exact + int(std::log(double(n) / exact) / std::log(double(max_distance) / exact) * (buckets - exact));
  return b + std::min(large, buckets - 1);
}

// Output [L, d] of the lab's toy layer on `tokens`, every step in double.
Mat reference_output(const Tokens& tokens, Encoding enc, std::size_t d, std::uint64_t seed) {
  const std::size_t L = tokens.size(), H = 2, hd = d / 2;
  auto g = posenc::rng::make(seed, posenc::rng::Stream::projections);
  const auto wq = draw(g, d * d, 1 / std::sqrt(double(d))), wk = draw(g, d * d, 1 / std::sqrt(double(d))),
             wv = draw(g, d * d, 1 / std::sqrt(double(d))), t5 = draw(g, H * 32, 1.0);
  auto lg = posenc::rng::make(seed, posenc::rng::Stream::learned);
  const auto learned = draw(lg, L * d, std::sqrt(0.5));
  Mat x(L * d);
  for (std::size_t i = 0; i < L; ++i) {
    std::vector<float> e(d);
    posenc::lab::word_embedding(tokens[i], seed, e);
    const auto pe = ref::sinusoidal_row(double(i), d, 10000);
    for (std::size_t c = 0; c < d; ++c)
      x[i * d + c] = e[c] + (enc == Encoding::sinusoidal ? pe[c] : enc == Encoding::learned ? learned[i * d + c] : 0.0);
  }
  auto project = [&](const std::vector<float>& w) {
    Mat y(L * d, 0.0);
    for (std::size_t i = 0; i < L; ++i)
      for (std::size_t o = 0; o < d; ++o)
        for (std::size_t c = 0; c < d; ++c) y[i * d + o] += x[i * d + c] * w[c * d + o];
    return y;
  };
  Mat q = project(wq), k = project(wk), v = project(wv), out(L * d, 0.0);
  if (enc == Encoding::rope) {  // rotate_half pairs (a, a + hd/2) of every head by p * 10000^(-2a/hd)
    for (Mat* m : {&q, &k})
      for (std::size_t i = 0; i < L; ++i)
        for (std::size_t h = 0; h < H; ++h)
          for (std::size_t a = 0; a < hd / 2; ++a) {
            double& x1 = (*m)[i * d + h * hd + a];
            double& x2 = (*m)[i * d + h * hd + a + hd / 2];
            const double th = double(i) * std::pow(10000.0, -2.0 * double(a) / double(hd)), c = std::cos(th), s = std::sin(th);
            const double y1 = x1 * c - x2 * s, y2 = x2 * c + x1 * s;
            x1 = y1;
            x2 = y2;
          }
  }
  if (enc == Encoding::xpos) {  // torchscale XPOS: interleaved pairs (2a, 2a + 1), scaled by zeta_a^(+-(i - c)/512)
    const std::size_t rot = hd - hd % 2;
    const double center = std::ceil(double(L) / 2);
    for (Mat* m : {&q, &k})
      for (std::size_t i = 0; i < L; ++i)
        for (std::size_t h = 0; h < H; ++h)
          for (std::size_t a = 0; a < rot / 2; ++a) {
            double& x1 = (*m)[i * d + h * hd + 2 * a];
            double& x2 = (*m)[i * d + h * hd + 2 * a + 1];
            const double th = double(i) * std::pow(10000.0, -2.0 * double(a) / double(rot));
            const double zeta = (2.0 * double(a) + 0.4 * double(rot)) / (1.4 * double(rot));
            const double f = std::pow(zeta, (double(i) - center) / 512.0 * (m == &k ? -1.0 : 1.0));
            const double c = std::cos(th) * f, s = std::sin(th) * f;
            const double y1 = x1 * c - x2 * s, y2 = x2 * c + x1 * s;
            x1 = y1;
            x2 = y2;
          }
  }
  for (std::size_t h = 0; h < H; ++h) {
    const double slope = std::pow(2.0, -8.0 * double(h + 1) / double(H));  // ALiBi: 2^(-8/n), 2^(-16/n), ...
    for (std::size_t i = 0; i < L; ++i) {
      std::vector<double> s(L);
      for (std::size_t j = 0; j < L; ++j) {
        double dot = 0;
        for (std::size_t c = 0; c < hd; ++c) dot += q[i * d + h * hd + c] * k[j * d + h * hd + c];
        s[j] = dot / std::sqrt(double(hd));
        if (enc == Encoding::alibi) s[j] -= slope * std::fabs(double(i) - double(j));
        if (enc == Encoding::t5) s[j] += t5[h * 32 + t5_bucket(long(j) - long(i), 32, 128)];
      }
      const double mx = *std::max_element(s.begin(), s.end());
      double sum = 0;
      for (double& e : s) sum += (e = std::exp(e - mx));
      for (std::size_t j = 0; j < L; ++j)
        for (std::size_t c = 0; c < hd; ++c) out[i * d + h * hd + c] += s[j] / sum * v[j * d + h * hd + c];
    }
  }
  return out;
}

const std::string kCat = "the cat sat on the mat";
const std::string kOthers[] = {"artificial intelligence is transforming the world", "geoffrey loves exploring ai", "i am a robot",
                               "the quick brown fox jumps over the lazy dog"};

}  // namespace

TEST_CASE("FNV-1a 64 matches the published test vectors") {
  CHECK(posenc::lab::fnv1a64("") == 0xcbf29ce484222325ull);
  CHECK(posenc::lab::fnv1a64("a") == 0xaf63dc4c8601ec8cull);
  CHECK(posenc::lab::fnv1a64("foobar") == 0x85944171f73967e8ull);
}

TEST_CASE("word embeddings: deterministic per word and seed, N(0, 1), different words differ") {
  std::vector<float> a(64), b(64), c(64), d(64);
  posenc::lab::word_embedding("cat", 0, a);
  posenc::lab::word_embedding("cat", 0, b);
  posenc::lab::word_embedding("mat", 0, c);
  posenc::lab::word_embedding("cat", 1, d);
  CHECK(a == b);
  CHECK(a != c);
  CHECK(a != d);
  std::vector<float> many(2000 * 16);
  for (int w = 0; w < 2000; ++w)
    posenc::lab::word_embedding("w" + std::to_string(w), 3, std::span<float>(many).subspan(w * 16, 16));
  posenc::analysis::Stats s{};
  REQUIRE_OK(posenc::analysis::stats(many, s));
  CHECK(std::fabs(s.mean) < 0.02);
  CHECK(s.std == Approx(1.0).epsilon(0.02));
}

TEST_CASE("the lab's layer matches an independent double-precision model, every encoding") {
  for (std::size_t d : {4u, 6u, 16u}) {
    for (const std::string& sentence : {kCat, kOthers[3]}) {
      const auto t = words(sentence);
      for (Encoding e : kAll) {
        const auto r = lab(t, reversal(t.size()), e, d, 7);
        const auto want = reference_output(t, e, d, 7);
        Tokens rev(t.rbegin(), t.rend());
        const auto want_rev = reference_output(rev, e, d, 7);
        double err = 0;
        for (std::size_t i = 0; i < want.size(); ++i)
          err = std::max({err, std::fabs(r.output[i] - want[i]), std::fabs(r.permuted_output[i] - want_rev[i])});
        INFO(posenc::lab::encoding_name(e) << " d=" << d << " '" << sentence << "'");
        CHECK(err < 1e-4);
        CHECK(r.heads == 2);
        CHECK(r.weights.size() == 2 * t.size() * t.size());
        for (std::size_t row = 0; row < 2 * t.size(); ++row)
          CHECK(std::accumulate(r.weights.begin() + row * t.size(), r.weights.begin() + (row + 1) * t.size(), 0.0) ==
                Approx(1.0).margin(1e-5));
      }
    }
  }
}

TEST_CASE("without an encoding the layer is permutation-equivariant: error ~1e-7") {
  for (const std::string& s : {kCat, kOthers[0], kOthers[1], kOthers[2], kOthers[3]}) {
    const auto t = words(s);
    for (const Perm& p : {Perm{}, reversal(t.size())}) {
      const auto r = lab(t, p, Encoding::none);
      INFO(s);
      CHECK(r.equivariance_error < 1e-5);
      CHECK(r.pooled_difference < 1e-5);
      const std::size_t L = t.size();
      for (std::size_t h = 0; h < 2; ++h)  // the weights are permuted too: W'[i, j] = W[perm i, perm j]
        for (std::size_t i = 0; i < L; ++i)
          for (std::size_t j = 0; j < L; ++j)
            REQUIRE(r.permuted_weights[(h * L + i) * L + j] ==
                    Approx(r.weights[(h * L + r.permutation[i]) * L + r.permutation[j]]).margin(1e-6));
    }
  }
  // property test: random sentences, permutations, seeds and widths
  std::mt19937 g(11);
  for (int trial = 0; trial < 40; ++trial) {
    const std::size_t L = 1 + g() % 12, d = 4 + 2 * (g() % 15);
    Tokens t(L);
    for (auto& w : t) w = std::string(1, char('a' + g() % 5));
    Perm p(L);
    std::iota(p.begin(), p.end(), 0);
    std::shuffle(p.begin(), p.end(), g);
    CHECK(lab(t, p, Encoding::none, d, g()).equivariance_error < 1e-5);
  }
}

TEST_CASE("every encoding breaks equivariance: error >= 0.01 for the cat/mat sentence and others") {
  for (const std::string& s : {kCat, kOthers[0], kOthers[1], kOthers[2], kOthers[3]}) {
    const auto t = words(s);
    for (Encoding e : kAll) {
      if (e == Encoding::none) continue;
      INFO(posenc::lab::encoding_name(e) << " '" << s << "'");
      for (std::uint64_t seed : {0u, 1u, 2u}) CHECK(lab(t, {}, e, 16, seed).equivariance_error >= 0.01);
      if (e != Encoding::alibi) CHECK(lab(t, reversal(t.size()), e, 16).equivariance_error >= 0.01);
    }
  }
}

TEST_CASE("symmetric ALiBi cannot tell a sentence from its reverse, RoPE, T5 and absolute encodings can") {
  for (const std::string& s : {kCat, kOthers[0], kOthers[1], kOthers[2], kOthers[3]}) {
    const auto t = words(s);
    const auto rev = reversal(t.size());
    INFO(s);
    const auto alibi = lab(t, rev, Encoding::alibi);
    CHECK(alibi.equivariance_error < 1e-5);  // -m|i - j| is unchanged by i -> L-1-i
    CHECK(alibi.pooled_difference < 1e-5);
    CHECK(lab(t, {}, Encoding::alibi).equivariance_error >= 0.01);  // but any other shuffle shows
    for (Encoding e : {Encoding::rope, Encoding::xpos, Encoding::t5, Encoding::sinusoidal, Encoding::learned})
      CHECK(lab(t, rev, e).equivariance_error >= 0.01);
  }
}

TEST_CASE("xpos breaks equivariance like rope, and computes something else than rope") {
  const auto t = words(kCat);
  const auto rope = lab(t, {}, Encoding::rope), xpos = lab(t, {}, Encoding::xpos);
  CHECK(xpos.equivariance_error >= 0.01);
  double diff = 0;
  for (std::size_t i = 0; i < rope.output.size(); ++i) diff = std::max(diff, double(std::fabs(rope.output[i] - xpos.output[i])));
  CHECK(diff > 1e-4);
  // one token: no order to see
  CHECK(lab({"solo"}, {}, Encoding::xpos).equivariance_error == 0);
}

TEST_CASE("default permutation: deterministic Fisher-Yates, never the identity") {
  CHECK(default_permutation(0, 0).empty());
  CHECK(default_permutation(1, 0) == Perm{0});
  CHECK(default_permutation(2, 5) == Perm{1, 0});
  for (std::size_t n = 2; n < 12; ++n) {
    for (std::uint64_t seed = 0; seed < 50; ++seed) {
      const auto p = default_permutation(n, seed);
      CHECK(p == default_permutation(n, seed));
      Perm sorted = p;
      std::sort(sorted.begin(), sorted.end());
      Perm iota(n);
      std::iota(iota.begin(), iota.end(), 0);
      REQUIRE(sorted == iota);
      REQUIRE(p != iota);
    }
  }
  CHECK(default_permutation(20, 1) != default_permutation(20, 2));
  // the lab's default changes the sentence, not just the order of equal words, and is reported
  for (std::uint64_t seed = 0; seed < 100; ++seed) {
    const Tokens t = {"b", "a", "a"};
    const auto r = lab(t, {}, Encoding::none, 4, seed);
    REQUIRE((t[r.permutation[0]] != "b" || t[r.permutation[1]] != "a"));
  }
  const auto cat = lab(words(kCat), {}, Encoding::none);
  CHECK(cat.permutation == default_permutation(6, 0));  // no shuffle of 6 swaps only the two "the"s here
  CHECK(lab({"x", "x"}, {}, Encoding::none, 4, 0).permutation == Perm{1, 0});
  CHECK(lab({"solo"}, {}, Encoding::sinusoidal).permutation == Perm{0});
}

TEST_CASE("score terms sum to the logits and match a naive computation") {
  for (Encoding e : {Encoding::sinusoidal, Encoding::learned}) {
    const auto t = words(kCat);
    const std::size_t L = t.size(), d = 16;
    Terms st;
    REQUIRE_OK(run_score_terms(t, e, d, 3, st));
    REQUIRE(st.length == L);
    // naive: E, P, W_Q, W_K from their definitions, each term in double
    auto g = posenc::rng::make(3, posenc::rng::Stream::projections);
    const auto wq = draw(g, d * d, 0.25), wk = draw(g, d * d, 0.25);
    auto lg = posenc::rng::make(3, posenc::rng::Stream::learned);
    const auto learned = draw(lg, L * d, std::sqrt(0.5));
    Mat E(L * d), P(L * d);
    for (std::size_t i = 0; i < L; ++i) {
      std::vector<float> row(d);
      posenc::lab::word_embedding(t[i], 3, row);
      const auto pe = ref::sinusoidal_row(double(i), d, 10000);
      for (std::size_t c = 0; c < d; ++c) {
        E[i * d + c] = row[c];
        P[i * d + c] = e == Encoding::sinusoidal ? pe[c] : learned[i * d + c];
      }
    }
    auto term = [&](const Mat& a, const Mat& b, std::size_t i, std::size_t j) {  // a_i W_Q W_K^T b_j^T / sqrt(d)
      double s = 0;
      for (std::size_t o = 0; o < d; ++o) {
        double qa = 0, kb = 0;
        for (std::size_t c = 0; c < d; ++c) {
          qa += a[i * d + c] * wq[c * d + o];
          kb += b[j * d + c] * wk[c * d + o];
        }
        s += qa * kb;
      }
      return s / std::sqrt(double(d));
    };
    for (std::size_t i = 0; i < L; ++i) {
      for (std::size_t j = 0; j < L; ++j) {
        const std::size_t ij = i * L + j;
        const double cc = term(E, E, i, j), cp = term(E, P, i, j), pc = term(P, E, i, j), pp = term(P, P, i, j);
        CHECK(st.content_content[ij] == Approx(cc).margin(1e-5));
        CHECK(st.content_position[ij] == Approx(cp).margin(1e-5));
        CHECK(st.position_content[ij] == Approx(pc).margin(1e-5));
        CHECK(st.position_position[ij] == Approx(pp).margin(1e-5));
        CHECK(st.total[ij] == Approx(cc + cp + pc + pp).margin(1e-5));
        CHECK(double(st.content_content[ij]) + st.content_position[ij] + st.position_content[ij] + st.position_position[ij] ==
              Approx(st.total[ij]).margin(1e-5));
      }
    }
  }
}

TEST_CASE("the lab rejects bad input") {
  using Catch::Contains;
  const auto t = words(kCat);
  CHECK_RANGE_WITH(run_lab({}, {}, Encoding::none), Contains("sentence"));                            // empty sentence
  CHECK_RANGE_WITH(run_lab(t, Perm{0, 1, 2}, Encoding::none), Contains("permutation holds 3"));       // wrong length
  CHECK_RANGE_WITH(run_lab(t, Perm{0, 1, 2, 3, 4, 6}, Encoding::none), Contains("permutation[5]"));   // out of range
  CHECK_RANGE_WITH(run_lab(t, Perm{0, 1, 2, 3, 4, -1}, Encoding::none), Contains("permutation[5]"));  // negative
  CHECK_RANGE(run_lab(t, Perm{0, 1, 2, 3, 4, 4}, Encoding::none));                                    // repeated
  CHECK_RANGE_WITH(run_lab(t, {}, static_cast<Encoding>(posenc::contract::kLabEncodingCount)), Contains("encoding"));  // unknown
  CHECK_RANGE_WITH(run_lab(t, {}, static_cast<Encoding>(-1)), Contains("encoding"));
  for (std::size_t d : {0u, 2u, 5u, 17u}) CHECK_RANGE_WITH(run_lab(t, {}, Encoding::rope, d), Contains("dModel"));  // odd or < 4
  CHECK_OK(run_lab(t, Perm{0, 1, 2, 3, 4, 5}, Encoding::none));                       // the identity is allowed
  CHECK_RANGE_WITH(run_score_terms(t, Encoding::rope, 16, 0), Contains("encoding"));  // not additive
  for (Encoding e : {Encoding::none, Encoding::xpos, Encoding::alibi, Encoding::t5})
    CHECK_RANGE_WITH(run_score_terms(t, e, 16, 0), Contains("encoding"));
  CHECK_RANGE(run_score_terms({}, Encoding::sinusoidal, 16, 0));
  CHECK_RANGE_WITH(run_score_terms(t, Encoding::sinusoidal, 7, 0), Contains("dModel"));
  const auto failure = test::outcome(run_lab(t, Perm{0, 1, 2, 3, 4, 4}, Encoding::none));
  CHECK(failure.code == posenc::Code::range);
  CHECK(failure.message == "permutation must be a permutation of 0..5: 4 appears twice");
  // outputs of the wrong size are refused too
  LabResult r;
  REQUIRE_OK(run_lab(t, {}, Encoding::none, 16, 0, r));
  const auto tokens = views(t);
  posenc::lab::Metrics m;
  std::vector<float> short_output(r.output.size() - 1);
  CHECK_RANGE_WITH(
      posenc::lab::permutation_lab(tokens, {}, Encoding::none, 16, 0,
                                   {r.permutation, short_output, r.permuted_output, r.weights, r.permuted_weights}, m),
      Contains("output"));
  Perm short_perm(t.size() - 1);
  CHECK_RANGE_WITH(posenc::lab::permutation_lab(tokens, {}, Encoding::none, 16, 0,
                                                {short_perm, r.output, r.permuted_output, r.weights, r.permuted_weights}, m),
                   Contains("permutation"));
  std::vector<float> cc(36), small(35);
  CHECK_RANGE_WITH(posenc::lab::score_terms(tokens, Encoding::sinusoidal, 16, 0, {cc, cc, cc, cc, small}),
                   Contains("score term"));
}
