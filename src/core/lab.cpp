#include "lab.hpp"

#include <algorithm>
#include <cmath>

#include "attention.hpp"
#include "errors.hpp"
#include "learned.hpp"
#include "ops.hpp"
#include "relative.hpp"
#include "rng.hpp"
#include "rope.hpp"
#include "sinusoidal.hpp"

namespace posenc::lab {
namespace {

void check_args(const std::vector<std::string>& tokens, Encoding encoding, std::size_t d_model) {
  if (tokens.empty()) fail("sentence must contain at least one word, got none");
  if (int(encoding) < int(Encoding::none) || int(encoding) > int(Encoding::t5))
    fail("encoding ", int(encoding), " is unknown; allowed: none, sinusoidal, learned, rope, alibi, t5");
  if (d_model < 4 || d_model % 2) fail("dModel must be an even integer >= 4, got ", d_model);
  checked_size(checked_size(tokens.size(), tokens.size(), "the attention weights"), kHeads, "the attention weights");
  checked_size(tokens.size(), d_model, "the embeddings");
  checked_size(d_model, d_model, "each projection matrix");
}

// E: [L, d], one word_embedding row per token.
std::vector<float> embed(const std::vector<std::string>& tokens, std::size_t d, std::uint64_t seed) {
  std::vector<float> e(tokens.size() * d);
  for (std::size_t i = 0; i < tokens.size(); ++i) word_embedding(tokens[i], seed, std::span<float>(e).subspan(i * d, d));
  return e;
}

// The additive table P: [L, d] for sinusoidal and learned, empty otherwise.
std::vector<float> absolute_table(Encoding encoding, std::size_t length, std::size_t d, std::uint64_t seed) {
  if (encoding == Encoding::sinusoidal) {
    std::vector<float> p(length * d);
    sinusoidal::table(angles::Positions{0, length, {}}, d, kBase, sinusoidal::Layout::interleaved, p);
    return p;
  }
  if (encoding == Encoding::learned) {
    const learned::Table t(length, d, learned::Init::normal, kLearnedStd, seed);
    return {t.data().begin(), t.data().end()};
  }
  return {};
}

struct Model {
  std::size_t d;
  std::vector<float> wq, wk, wv, t5_bias;  // [d, d] x 3, [heads, buckets]
};

Model make_model(std::size_t d, std::uint64_t seed) {
  Model m{d, std::vector<float>(d * d), std::vector<float>(d * d), std::vector<float>(d * d),
          std::vector<float>(kHeads * kT5Buckets)};
  auto g = rng::make(seed, rng::Stream::projections);
  const double s = 1.0 / std::sqrt(double(d));
  rng::fill_normal(g, m.wq, 0.0, s);
  rng::fill_normal(g, m.wk, 0.0, s);
  rng::fill_normal(g, m.wv, 0.0, s);
  rng::fill_normal(g, m.t5_bias, 0.0, kT5BiasStd);
  return m;
}

// x W for x: [rows, d], W: [d, d].
std::vector<float> project(const std::vector<float>& x, const std::vector<float>& w, std::size_t d) {
  const std::size_t rows = x.size() / d;
  std::vector<float> out(rows * d);
  attention::matmul({x.data(), rows, d, d}, {w.data(), d, d, d}, false, 1.f, out.data(), d);
  return out;
}

// The attention bias [heads, L, L] of the relative encodings (empty for the others).
std::vector<float> relative_bias(Encoding encoding, const Model& m, std::size_t length) {
  std::vector<float> bias;
  if (encoding == Encoding::alibi) {
    bias.resize(kHeads * length * length);
    relative::alibi_bias(kHeads, length, length, /*symmetric=*/true, bias);
  } else if (encoding == Encoding::t5) {
    std::vector<std::int32_t> buckets(length * length);
    relative::t5_buckets(length, length, kT5Buckets, kT5MaxDistance, /*bidirectional=*/true, buckets);
    bias.resize(kHeads * length * length);
    for (std::size_t h = 0; h < kHeads; ++h)
      for (std::size_t ij = 0; ij < buckets.size(); ++ij)
        bias[h * buckets.size() + ij] = m.t5_bias[h * kT5Buckets + std::size_t(buckets[ij])];
  }
  return bias;
}

// One self-attention layer on x = E (+ P): output [L, d], weights [heads, L, L].
void forward(const std::vector<float>& x, Encoding encoding, const Model& m, std::span<const float> bias,
             std::vector<float>& output, std::vector<float>& weights) {
  const std::size_t d = m.d, length = x.size() / d, hd = d / kHeads;
  auto q = project(x, m.wq, d), k = project(x, m.wk, d);
  const auto v = project(x, m.wv, d);
  if (encoding == Encoding::rope) {  // [L, d] is [L, heads, hd]: rotate every head's q and k in place
    const std::size_t rot = hd - hd % 2;
    const auto freqs = rope::frequencies(rot, kBase, rope::Scaling{});
    const angles::Positions pos{0, length, {}};
    rope::apply(q, length, kHeads, hd, rot, pos, freqs, rope::Layout::half, q);
    rope::apply(k, length, kHeads, hd, rot, pos, freqs, rope::Layout::half, k);
  }
  output.assign(length * d, 0.f);
  weights.assign(kHeads * length * length, 0.f);
  attention::attention(q, k, v, {length, length, kHeads, hd, hd}, bias, false, 1.0 / std::sqrt(double(hd)), output, weights);
}

// Fisher-Yates (Durstenfeld) shuffles of 0..n-1 from rng::Stream::shuffle until accept(p) holds.
template <class Accept>
std::vector<std::int32_t> shuffle(std::size_t n, std::uint64_t seed, Accept accept) {
  if (n > std::size_t(INT32_MAX)) fail("the sentence length ", n, " exceeds ", INT32_MAX);
  std::vector<std::int32_t> p(n);
  auto g = rng::make(seed, rng::Stream::shuffle);
  do {
    for (std::size_t i = 0; i < n; ++i) p[i] = std::int32_t(i);
    for (std::size_t i = n; i > 1; --i) std::swap(p[i - 1], p[std::size_t(g.uniform() * double(i))]);  // j uniform in [0, i)
  } while (!accept(p));
  return p;
}

std::vector<float> add(std::vector<float> e, const std::vector<float>& p) {
  if (!p.empty()) ops::add(e, p, e);
  return e;
}

}  // namespace

std::uint64_t fnv1a64(std::string_view bytes) {
  std::uint64_t h = 0xcbf29ce484222325ull;  // FNV-1a 64 offset basis and prime (Fowler, Noll, Vo)
  for (unsigned char c : bytes) {
    h ^= c;
    h *= 0x100000001b3ull;
  }
  return h;
}

void word_embedding(std::string_view word, std::uint64_t seed, std::span<float> out) {
  auto g = rng::make(fnv1a64(word) ^ rng::SplitMix64(seed).next(), rng::Stream::words);
  rng::fill_normal(g, out, 0.0, 1.0);
}

const char* encoding_name(Encoding encoding) {
  switch (encoding) {
    case Encoding::none:
      return "none";
    case Encoding::sinusoidal:
      return "sinusoidal";
    case Encoding::learned:
      return "learned";
    case Encoding::rope:
      return "rope";
    case Encoding::alibi:
      return "alibi";
    case Encoding::t5:
      return "t5";
  }
  return "unknown";
}

std::vector<std::int32_t> default_permutation(std::size_t n, std::uint64_t seed) {
  return shuffle(n, seed, [](const std::vector<std::int32_t>& p) {
    for (std::size_t i = 0; i < p.size(); ++i)
      if (p[i] != std::int32_t(i)) return true;
    return p.size() <= 1;
  });
}

Result permutation_lab(const std::vector<std::string>& tokens, std::span<const std::int32_t> permutation, Encoding encoding,
                       std::size_t d_model, std::uint64_t seed) {
  check_args(tokens, encoding, d_model);
  const std::size_t length = tokens.size(), d = d_model;
  std::vector<std::int32_t> perm(permutation.begin(), permutation.end());
  if (perm.empty()) {  // the first shuffle that changes the sentence (one repeated word: that moves a word)
    const bool varied = std::any_of(tokens.begin(), tokens.end(), [&](const std::string& t) { return t != tokens[0]; });
    perm = shuffle(length, seed, [&](const std::vector<std::int32_t>& p) {
      for (std::size_t i = 0; i < length; ++i)
        if (varied ? tokens[std::size_t(p[i])] != tokens[i] : p[i] != std::int32_t(i)) return true;
      return length <= 1;
    });
  }
  if (perm.size() != length) fail("permutation holds ", perm.size(), " values; expected one per word, ", length);
  std::vector<bool> seen(length, false);
  for (std::size_t i = 0; i < length; ++i) {
    const std::int32_t p = perm[i];
    if (p < 0 || std::size_t(p) >= length) fail("permutation[", i, "] = ", p, " is out of range [0, ", length, ")");
    if (seen[std::size_t(p)]) fail("permutation must be a permutation of 0..", length - 1, ": ", p, " appears twice");
    seen[std::size_t(p)] = true;
  }

  std::vector<std::string> shuffled(length);
  for (std::size_t i = 0; i < length; ++i) shuffled[i] = tokens[std::size_t(perm[i])];
  const Model model = make_model(d, seed);
  const auto p = absolute_table(encoding, length, d, seed);  // positions stay put: row i is position i
  const auto bias = relative_bias(encoding, model, length);

  Result r;
  r.permutation = perm;
  r.heads = kHeads;
  forward(add(embed(tokens, d, seed), p), encoding, model, bias, r.output, r.weights);
  forward(add(embed(shuffled, d, seed), p), encoding, model, bias, r.permuted_output, r.permuted_weights);

  r.equivariance_error = 0;
  for (std::size_t i = 0; i < length; ++i)
    for (std::size_t c = 0; c < d; ++c)
      r.equivariance_error = std::max(r.equivariance_error,
                                      std::fabs(double(r.permuted_output[i * d + c]) - r.output[std::size_t(perm[i]) * d + c]));
  r.pooled_difference = 0;
  for (std::size_t c = 0; c < d; ++c) {
    double a = 0, b = 0;
    for (std::size_t i = 0; i < length; ++i) {
      a += r.output[i * d + c];
      b += r.permuted_output[i * d + c];
    }
    r.pooled_difference = std::max(r.pooled_difference, std::fabs(a - b) / double(length));
  }
  return r;
}

ScoreTerms score_terms(const std::vector<std::string>& tokens, Encoding encoding, std::size_t d_model, std::uint64_t seed) {
  check_args(tokens, encoding, d_model);
  if (encoding != Encoding::sinusoidal && encoding != Encoding::learned)
    fail("scoreTerms needs an additive encoding, 'sinusoidal' or 'learned'; got '", encoding_name(encoding), "'");
  const std::size_t length = tokens.size(), d = d_model;
  const Model m = make_model(d, seed);
  const auto e = embed(tokens, d, seed), p = absolute_table(encoding, length, d, seed), x = add(e, p);
  const auto qe = project(e, m.wq, d), ke = project(e, m.wk, d), qp = project(p, m.wq, d), kp = project(p, m.wk, d);
  const auto qx = project(x, m.wq, d), kx = project(x, m.wk, d);
  const float scale = float(1.0 / std::sqrt(double(d)));
  auto scores = [&](const std::vector<float>& a, const std::vector<float>& b) {  // a b^T / sqrt(d)
    std::vector<float> out(length * length);
    attention::matmul({a.data(), length, d, d}, {b.data(), length, d, d}, true, scale, out.data(), length);
    return out;
  };
  return {length, scores(qe, ke), scores(qe, kp), scores(qp, ke), scores(qp, kp), scores(qx, kx)};
}

}  // namespace posenc::lab
