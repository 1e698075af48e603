// The permutation lab: the claim that attention alone cannot see order, made measurable. Self-attention alone is
// permutation-equivariant, f(Px) = P f(x), so "the cat sat on the mat" and "mat the on sat cat the"
// give the same per-word outputs, merely reordered; a positional encoding is what breaks that.
//
// The toy model (every choice here is deterministic and identical on every backend):
//  - Word embeddings E: each word's vector is N(0, 1) values from SplitMix64 keyed by FNV-1a 64 of
//    its UTF-8 bytes mixed with the seed (rng::Stream::words), so the same word gets the same vector
//    in every sentence and position. Tokens arrive already tokenised and case-folded.
//  - One bidirectional self-attention layer with `heads` = 2 heads of d_model/2 channels,
//    W_Q, W_K, W_V: [d, d] N(0, 1/d) from `seed` (rng::Stream::projections, drawn in that order),
//    logits scaled by 1/sqrt(d_model/2), output = the concatenated heads (no W_O: a per-row linear
//    map would not change equivariance).
//  - Encodings: none; sinusoidal (x = E + PE, base 10000, interleaved); learned (x = E + P with P
//    the first L rows of learned::Table(normal, std = kLearnedStd, seed)); rope (q and k of each
//    head rotated, layout half, base 10000, rotary dim = head dim rounded down to even); alibi
//    (relative::alibi_bias, symmetric: -m_h |i - j|, the bidirectional form); t5 (bidirectional
//    buckets, 32 buckets, max distance 128, with an N(0, kT5BiasStd^2) scalar per head and bucket
//    drawn from the projections stream after W_V); xpos (q and k rotated as for rope but in torchscale's interleaved layout, with
//    xPos's per-pair scale, rope::XPos: scale base kXPosScaleBase, centre ceil(L/2) as torchscale's XPOS, queries scaled by
//    zeta^((p - c)/512) and keys by its inverse).
#pragma once
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "contract.hpp"
#include "relative.hpp"
#include "status.hpp"

namespace posenc::lab {

using Encoding = contract::LabEncoding;

inline constexpr std::size_t kHeads = contract::kLabHeads;
// The package's defaults (contract.hpp, generated from src/js/contract.js) for the encodings' settings.
inline constexpr double kBase = contract::kDefaultBase;    // sinusoidal and RoPE
inline constexpr double kLearnedStd = 0.7071067811865476;  // sqrt(1/2): the RMS of a sinusoidal entry (the lab's and the toy's)
inline constexpr std::size_t kT5Buckets = relative::kDefaultNumBuckets;
inline constexpr std::size_t kT5MaxDistance = relative::kDefaultMaxDistance;
inline constexpr double kT5BiasStd = 1.0;
inline constexpr double kXPosScaleBase = contract::kDefaultXposScaleBase;  // torchscale's default

// What the lab writes: the permutation used (the default when none was given), the outputs
// [L, d_model] and the attention weights [heads, L, L] of the sentence and of its shuffled copy.
struct Outputs {
  std::span<std::int32_t> permutation;
  std::span<float> output, permuted_output, weights, permuted_weights;
};

struct Metrics {
  double equivariance_error = 0;  // max_i,c |permuted_output[i, c] - output[perm[i], c]|  (= max |f(Px) - P f(x)|)
  double pooled_difference = 0;   // max_c |mean_i output[i, c] - mean_i permuted_output[i, c]|
};

// permutation[i] = index in the original of the token at position i of the shuffled copy. An empty
// permutation means the default shuffle: the first Fisher-Yates draw from `seed` that changes the
// sentence (not just swaps equal words); for sentences of distinct words this is
// default_permutation(L, seed). d_model must be even and >= 4; at most kMaxTokens tokens.
// The lab's rules on its arguments (1 to kMaxTokens tokens, a known encoding, an even d_model in
// [kMinLabDModel, kMaxLabDModel]): permutation_lab and score_terms check them first; the JS layer
// asks before it allocates the outputs.
Status check_args(std::size_t n_tokens, Encoding encoding, std::size_t d_model);

Status permutation_lab(std::span<const std::string_view> tokens, std::span<const std::int32_t> permutation, Encoding encoding,
                       std::size_t d_model, std::uint64_t seed, const Outputs& out, Metrics& metrics);

// Fisher-Yates shuffle of 0..n-1 (n = out.size()) driven by rng::Stream::shuffle (Durstenfeld's form,
// j = floor(u * i)); redrawn, continuing the same generator, while it is the identity: never the
// identity when n > 1.
void default_permutation(std::uint64_t seed, std::span<std::int32_t> out);

// score(i, j) = (E_i + P_i) W_Q W_K^T (E_j + P_j)^T / sqrt(d) split into its four terms,
// E_i W_Q W_K^T E_j^T (content-content), E_i .. P_j (content-position), P_i .. E_j (position-content)
// and P_i .. P_j (position-position). Same embeddings, W_Q, W_K and tables as the lab, as one head
// spanning all d_model channels. `total` is computed from E + P directly, not as the sum.
struct ScoreTerms {
  std::span<float> content_content, content_position, position_content, position_position, total;  // each [L, L]
};
// encoding: sinusoidal or learned (the additive encodings); others fail.
Status score_terms(std::span<const std::string_view> tokens, Encoding encoding, std::size_t d_model, std::uint64_t seed,
                   const ScoreTerms& out);

// The building blocks, exposed for tests and the page.
std::uint64_t fnv1a64(std::string_view bytes);
void word_embedding(std::string_view word, std::uint64_t seed, std::span<float> out);  // out: [d_model]
const char* encoding_name(Encoding encoding);

}  // namespace posenc::lab
