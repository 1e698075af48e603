#include "lab.hpp"

#include <algorithm>
#include <cmath>

#include "attention.hpp"
#include "buffer.hpp"
#include "learned.hpp"
#include "ops.hpp"
#include "relative.hpp"
#include "rng.hpp"
#include "rope.hpp"
#include "sinusoidal.hpp"
#include "status.hpp"

namespace posenc::lab {
namespace {

using Floats = Buffer<float>;
using Tokens = std::span<const std::string_view>;

}  // namespace

Status check_args(std::size_t n_tokens, Encoding encoding, std::size_t d_model) {
  if (n_tokens == 0) return fail("sentence must contain at least one word, got none");
  if (n_tokens > contract::kMaxTokens)
    return fail("sentence has ", n_tokens, " tokens; at most ", contract::kMaxTokens, " are allowed");
  // invariant: validate.js maps the option's names to these indices
  if (int(encoding) < 0 || int(encoding) >= contract::kLabEncodingCount)
    return fail("encoding ", int(encoding), " is unknown; allowed: ", contract::kLabEncodingList);
  if (d_model < contract::kMinLabDModel || d_model > contract::kMaxLabDModel || d_model % 2)
    return fail("dModel must be an even integer in [", contract::kMinLabDModel, ", ", contract::kMaxLabDModel, "], got ",
                d_model);
  return {};
}

namespace {

// E: [L, d], one word_embedding row per token.
Status embed(Tokens tokens, std::size_t d, std::uint64_t seed, Floats& e) {
  POSENC_TRY(e.allocate({tokens.size(), d}, "the embeddings"));
  for (std::size_t i = 0; i < tokens.size(); ++i) word_embedding(tokens[i], seed, e.span().subspan(i * d, d));
  return {};
}

// The additive table P: [L, d] for sinusoidal and learned, zeros otherwise.
Status absolute_table(Encoding encoding, std::size_t length, std::size_t d, std::uint64_t seed, Floats& p) {
  POSENC_TRY(p.allocate({length, d}, "the position table"));
  if (encoding == Encoding::sinusoidal)
    return sinusoidal::table(angles::Positions{0, length, {}}, d, kBase, sinusoidal::Layout::interleaved, p);
  if (encoding == Encoding::learned) {
    learned::Table t;
    POSENC_TRY(learned::Table::make(t, length, d, learned::Init::normal, kLearnedStd, seed));
    return p.assign(t.data(), "the position table");
  }
  return {};
}

struct Model {
  std::size_t d = 0;
  Floats wq, wk, wv, t5_bias;  // [d, d] x 3, [heads, buckets]
};

Status make_model(std::size_t d, std::uint64_t seed, Model& m) {
  m.d = d;
  POSENC_TRY(m.wq.allocate({d, d}, "W_Q"));
  POSENC_TRY(m.wk.allocate({d, d}, "W_K"));
  POSENC_TRY(m.wv.allocate({d, d}, "W_V"));
  POSENC_TRY(m.t5_bias.allocate(kHeads * kT5Buckets, "the T5 bias"));
  auto g = rng::make(seed, rng::Stream::projections);
  const double s = 1.0 / std::sqrt(double(d));
  rng::fill_normal(g, m.wq, 0.0, s);
  rng::fill_normal(g, m.wk, 0.0, s);
  rng::fill_normal(g, m.wv, 0.0, s);
  rng::fill_normal(g, m.t5_bias, 0.0, kT5BiasStd);
  return {};
}

// out = x W for x: [rows, d], W: [d, d].
Status project(const Floats& x, const Floats& w, std::size_t d, Floats& out) {
  const std::size_t rows = x.size() / d;
  POSENC_TRY(out.allocate({rows, d}, "a projection"));
  return attention::matmul({x.data(), rows, d, d}, {w.data(), d, d, d}, false, 1.f, out.data(), d);
}

// The attention bias [heads, L, L] of the relative encodings (empty for the others).
Status relative_bias(Encoding encoding, const Model& m, std::size_t length, Floats& bias) {
  if (encoding == Encoding::alibi) {
    POSENC_TRY(bias.allocate({kHeads, length, length}, "the ALiBi bias"));
    return relative::alibi_bias(kHeads, length, length, /*symmetric=*/true, bias);
  }
  if (encoding == Encoding::t5) {
    Buffer<std::int32_t> buckets;
    POSENC_TRY(buckets.allocate({length, length}, "the T5 buckets"));
    POSENC_TRY(relative::t5_buckets(length, length, kT5Buckets, kT5MaxDistance, /*bidirectional=*/true, buckets));
    POSENC_TRY(bias.allocate({kHeads, length, length}, "the T5 bias"));
    for (std::size_t h = 0; h < kHeads; ++h)
      for (std::size_t ij = 0; ij < buckets.size(); ++ij)
        bias[h * buckets.size() + ij] = m.t5_bias[h * kT5Buckets + std::size_t(buckets[ij])];
  }
  return {};
}

// One self-attention layer on x = E (+ P): output [L, d], weights [heads, L, L].
Status forward(const Floats& x, Encoding encoding, const Model& m, std::span<const float> bias, std::span<float> output,
               std::span<float> weights) {
  const std::size_t d = m.d, length = x.size() / d, hd = d / kHeads;
  Floats q, k, v;
  POSENC_TRY(project(x, m.wq, d, q));
  POSENC_TRY(project(x, m.wk, d, k));
  POSENC_TRY(project(x, m.wv, d, v));
  if (encoding == Encoding::rope || encoding == Encoding::xpos) {  // [L, d] is [L, heads, hd]: rotate q and k in place
    const std::size_t rot = hd - hd % 2;
    rope::Frequencies freqs;
    POSENC_TRY(rope::frequencies(rot, kBase, rope::Scaling{}, freqs));
    const angles::Positions pos{0, length, {}};
    const bool xpos = encoding == Encoding::xpos;
    const auto layout = xpos ? rope::Layout::interleaved : rope::Layout::half;
    const double center = std::ceil(double(length) / 2);  // torchscale: -floor(-L/2)
    const rope::XPos query{kXPosScaleBase, center, rope::XposRole::query}, key{kXPosScaleBase, center, rope::XposRole::key};
    POSENC_TRY(rope::apply(q, length, kHeads, hd, rot, pos, freqs, layout, q, xpos ? &query : nullptr));
    POSENC_TRY(rope::apply(k, length, kHeads, hd, rot, pos, freqs, layout, k, xpos ? &key : nullptr));
  }
  return attention::attention(q, k, v, {length, length, kHeads, hd, hd}, bias, false, 1.0 / std::sqrt(double(hd)), output,
                              weights);
}

// Fisher-Yates (Durstenfeld) shuffles of 0..n-1 from rng::Stream::shuffle until accept(p) holds.
template <class Accept>
void shuffle(std::span<std::int32_t> p, std::uint64_t seed, Accept accept) {
  const std::size_t n = p.size();
  auto g = rng::make(seed, rng::Stream::shuffle);
  do {
    for (std::size_t i = 0; i < n; ++i) p[i] = std::int32_t(i);
    for (std::size_t i = n; i > 1; --i) std::swap(p[i - 1], p[std::size_t(g.uniform() * double(i))]);  // j uniform in [0, i)
  } while (!accept(p));
}

// x = E (+ P) for the tokens in the order `order` (order[i]: the token at position i).
Status inputs(Tokens tokens, std::span<const std::int32_t> order, std::uint64_t seed, const Floats& p, std::size_t d, Floats& x) {
  POSENC_TRY(x.allocate({tokens.size(), d}, "the inputs"));
  for (std::size_t i = 0; i < tokens.size(); ++i)
    word_embedding(tokens[order.empty() ? i : std::size_t(order[i])], seed, x.span().subspan(i * d, d));
  ops::add(x, p, x);
  return {};
}

Status check_output(std::span<const float> out, std::size_t n, const char* name) {
  return out.size() == n ? Status() : fail(name, " holds ", out.size(), " values, expected ", n);
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
  const auto i = static_cast<std::int32_t>(encoding);
  return i >= 0 && i < contract::kLabEncodingCount ? contract::kLabEncodingNames[i] : "unknown";
}

void default_permutation(std::uint64_t seed, std::span<std::int32_t> out) {
  shuffle(out, seed, [](std::span<const std::int32_t> p) {
    for (std::size_t i = 0; i < p.size(); ++i)
      if (p[i] != std::int32_t(i)) return true;
    return p.size() <= 1;
  });
}

Status permutation_lab(Tokens tokens, std::span<const std::int32_t> permutation, Encoding encoding, std::size_t d_model,
                       std::uint64_t seed, const Outputs& out, Metrics& metrics) {
  POSENC_TRY(check_args(tokens.size(), encoding, d_model));
  const std::size_t length = tokens.size(), d = d_model;
  // invariant: the wrapper allocates the output at this size
  if (out.permutation.size() != length) return fail("the permutation output holds ", out.permutation.size(), " values");
  POSENC_TRY(check_output(out.output, length * d, "the output"));  // invariant: the wrapper allocates the output at this size
  // invariant: the wrapper allocates the output at this size
  POSENC_TRY(check_output(out.permuted_output, length * d, "the permuted output"));
  // invariant: the wrapper allocates the output at this size
  POSENC_TRY(check_output(out.weights, kHeads * length * length, "the weights"));
  // invariant: the wrapper allocates the output at this size
  POSENC_TRY(check_output(out.permuted_weights, kHeads * length * length, "the permuted weights"));
  const auto perm = out.permutation;
  if (permutation.empty()) {  // the first shuffle that changes the sentence (one repeated word: that moves a word)
    const bool varied = std::any_of(tokens.begin(), tokens.end(), [&](std::string_view t) { return t != tokens[0]; });
    shuffle(perm, seed, [&](std::span<const std::int32_t> p) {
      for (std::size_t i = 0; i < length; ++i)
        if (varied ? tokens[std::size_t(p[i])] != tokens[i] : p[i] != std::int32_t(i)) return true;
      return length <= 1;
    });
  } else {
    if (permutation.size() != length)
      return fail("permutation holds ", permutation.size(), " values; expected one per word, ", length);
    bool seen[contract::kMaxTokens] = {};
    for (std::size_t i = 0; i < length; ++i) {
      const std::int32_t p = permutation[i];
      if (p < 0 || std::size_t(p) >= length) return fail("permutation[", i, "] = ", p, " is out of range [0, ", length, ")");
      if (seen[std::size_t(p)]) return fail("permutation must be a permutation of 0..", length - 1, ": ", p, " appears twice");
      seen[std::size_t(p)] = true;
      perm[i] = p;
    }
  }

  Model model;
  Floats p, bias, x, shuffled;
  POSENC_TRY(make_model(d, seed, model));
  POSENC_TRY(absolute_table(encoding, length, d, seed, p));  // positions stay put: row i is position i
  POSENC_TRY(relative_bias(encoding, model, length, bias));
  POSENC_TRY(inputs(tokens, {}, seed, p, d, x));
  POSENC_TRY(inputs(tokens, perm, seed, p, d, shuffled));
  POSENC_TRY(forward(x, encoding, model, bias, out.output, out.weights));
  POSENC_TRY(forward(shuffled, encoding, model, bias, out.permuted_output, out.permuted_weights));

  metrics.equivariance_error = 0;
  for (std::size_t i = 0; i < length; ++i)
    for (std::size_t c = 0; c < d; ++c)
      metrics.equivariance_error = std::max(metrics.equivariance_error, std::fabs(double(out.permuted_output[i * d + c]) -
                                                                                  out.output[std::size_t(perm[i]) * d + c]));
  metrics.pooled_difference = 0;
  for (std::size_t c = 0; c < d; ++c) {
    double a = 0, b = 0;
    for (std::size_t i = 0; i < length; ++i) {
      a += out.output[i * d + c];
      b += out.permuted_output[i * d + c];
    }
    metrics.pooled_difference = std::max(metrics.pooled_difference, std::fabs(a - b) / double(length));
  }
  return {};
}

Status score_terms(Tokens tokens, Encoding encoding, std::size_t d_model, std::uint64_t seed, const ScoreTerms& out) {
  POSENC_TRY(check_args(tokens.size(), encoding, d_model));
  if (encoding != Encoding::sinusoidal && encoding != Encoding::learned)
    return fail("encoding must be 'sinusoidal' or 'learned' (an additive encoding) for the score terms, got '",
                encoding_name(encoding), "'");
  const std::size_t length = tokens.size(), d = d_model;
  for (auto o : {out.content_content, out.content_position, out.position_content, out.position_position, out.total})
    POSENC_TRY(check_output(o, length * length, "a score term"));  // invariant: the wrapper allocates the output at this size
  Model m;
  Floats e, p, x, qe, ke, qp, kp, qx, kx;
  POSENC_TRY(make_model(d, seed, m));
  POSENC_TRY(absolute_table(encoding, length, d, seed, p));
  POSENC_TRY(embed(tokens, d, seed, e));
  POSENC_TRY(inputs(tokens, {}, seed, p, d, x));
  POSENC_TRY(project(e, m.wq, d, qe));
  POSENC_TRY(project(e, m.wk, d, ke));
  POSENC_TRY(project(p, m.wq, d, qp));
  POSENC_TRY(project(p, m.wk, d, kp));
  POSENC_TRY(project(x, m.wq, d, qx));
  POSENC_TRY(project(x, m.wk, d, kx));
  const float scale = float(1.0 / std::sqrt(double(d)));
  auto scores = [&](const Floats& a, const Floats& b, std::span<float> o) {  // a b^T / sqrt(d)
    return attention::matmul({a.data(), length, d, d}, {b.data(), length, d, d}, true, scale, o.data(), length);
  };
  POSENC_TRY(scores(qe, ke, out.content_content));
  POSENC_TRY(scores(qe, kp, out.content_position));
  POSENC_TRY(scores(qp, ke, out.position_content));
  POSENC_TRY(scores(qp, kp, out.position_position));
  return scores(qx, kx, out.total);
}

}  // namespace posenc::lab
