// Relative position schemes: ALiBi biases (Press et al. 2022, "Train Short, Test Long"), T5 relative
// position buckets (Raffel et al. 2020, 2.1; HF `T5Attention._relative_position_bucket`) and Shaw et
// al. 2018 clipped relative positions ("Self-Attention with Relative Position Representations", 3.2).
//
// Query/key alignment (ALiBi and T5 alike): with key_length >= query_length, query i sits at absolute
// position i + (key_length - query_length), i.e. the queries are the last positions, as when decoding
// with a KV cache; with equal lengths it is simply position i. key_length < query_length is refused.
#pragma once
#include <cstddef>
#include <cstdint>
#include <span>

#include "contract.hpp"
#include "status.hpp"

namespace posenc::relative {

// Head slopes m_h (Press et al. 2022, 3, and their reference code; HF BLOOM build_alibi_tensor):
// n = 2^floor(log2 H); heads 1..n get 2^(-8h/n); the remaining H - n heads take every other slope of
// the 2n-head sequence, 2^(-4/n * (1, 3, 5, ..)). out holds num_heads values (num_heads > 0).
Status alibi_slopes(std::size_t num_heads, std::span<float> out);

// [num_heads, query_length, key_length] biases added to the attention logits. With
// pos_i = i + (key_length - query_length):
//   causal (symmetric = false): -m_h * (pos_i - j). Entries with j > pos_i (future keys) follow the
//     same formula (positive values); the causal mask is the attention's job.
//   symmetric:                  -m_h * |pos_i - j| (bidirectional/encoder variant).
// Computed as float(-double(m_h) * distance), m_h the float slopes above.
Status alibi_bias(std::size_t num_heads, std::size_t query_length, std::size_t key_length, bool symmetric, std::span<float> out);

// ALiBi at explicit key positions (BLOOM's build_alibi_tensor: a padded batch takes its key positions
// from the attention mask, cumsum(mask) - 1 on the real tokens), the queries being the last
// query_length keys as in alibi_bias: [num_heads, query_length, key_positions.size()] biases
// -m_h * (q_i - k_j) (symmetric: -m_h * |q_i - k_j|), and -Infinity for a masked key
// (key_masked[j] != 0), so the bias alone keeps attention off the padding. Positions are integers
// below 2^53 in magnitude; computed as float(-double(m_h) * distance).
Status alibi_bias_at(std::size_t num_heads, std::size_t query_length, std::span<const double> key_positions,
                     std::span<const std::uint8_t> key_masked, bool symmetric, std::span<float> out);

// T5's settings by default (contract.js DEFAULTS.numBuckets and maxDistance: T5's 32 buckets, 128).
inline constexpr auto kDefaultNumBuckets = static_cast<std::size_t>(contract::kDefaultNumBuckets);
inline constexpr auto kDefaultMaxDistance = static_cast<std::size_t>(contract::kDefaultMaxDistance);

// T5's bucket of relative_position = key - query, exactly as HF `_relative_position_bucket`:
// bidirectional halves num_buckets and adds num_buckets/2 for key > query; then n = |rel|
// (bidirectional) or max(-rel, 0) (causal); with B buckets left and max_exact = B/2,
//   bucket = n                                                                if n < max_exact,
//   bucket = min(max_exact + floor(log(n/max_exact) / log(max_distance/max_exact) * (B - max_exact)), B - 1)
// The floor is the exact-math value, also where the logarithm ratio is an integer (e.g. rel = +-16,
// +-32, +-64 for 32 buckets and max_distance 128), where float code can land one bucket low.
// Requires B >= 2 and max_exact < max_distance <= 2^31 - 1, num_buckets <= 4096.
Status t5_bucket(std::int32_t& out, std::int64_t relative_position, std::size_t num_buckets, std::size_t max_distance,
                 bool bidirectional);

// [query_length, key_length] buckets of (key position j) - (query position pos_i), pos_i as above.
Status t5_buckets(std::size_t query_length, std::size_t key_length, std::size_t num_buckets, std::size_t max_distance,
                  bool bidirectional, std::span<std::int32_t> out);

// The buckets of given relative positions (key - query, as T5's relative_position tensor), one per
// value: integers below 2^53 in magnitude.
Status t5_buckets_of(std::span<const double> relative_positions, std::size_t num_buckets, std::size_t max_distance,
                     bool bidirectional, std::span<std::int32_t> out);

// Shaw et al. 2018: [length, length] indices clip(j - i, -k, k) + k into a table of 2k + 1
// relative embeddings, k = max_relative (0 <= k <= 2^30).
Status relative_positions(std::size_t length, std::size_t max_relative, std::span<std::int32_t> out);

}  // namespace posenc::relative
