// Learned absolute position embeddings (a trainable [max_length, d_model] table, as nn.Embedding in
// BERT/GPT-2), token embeddings scaled by sqrt(d_model) (Vaswani et al. 3.4), and x + PE.
#pragma once
#include <cstddef>
#include <cstdint>
#include <span>

#include "buffer.hpp"
#include "contract.hpp"
#include "rng.hpp"

namespace posenc::learned {

// normal:      N(0, std^2) (std 0.02 as BERT / GPT-2)
// xavier:      U(-a, a), a = sqrt(6 / (rows + d)) (Glorot & Bengio 2010; torch xavier_uniform_)
// sinusoidal:  the sinusoidal table (interleaved, base 10000)
// zeros
using Init = contract::LearnedInit;

// interpolate: linear resampling of rows, half-pixel centres (torch interpolate, align_corners=False), as ViT
// tile:        row j copies row j mod rows (Longformer's 512 -> 4096 copy)
using Resize = contract::ResizeMethod;

// A [rows, dim] table. Built by make() / token_table() / resized(), which fail (a Status) on bad
// arguments or when memory runs out; a default-constructed Table is empty.
class Table {
 public:
  Table() = default;
  static Status make(Table& out, std::size_t rows, std::size_t dim, Init init, double std, std::uint64_t seed,
                     rng::Stream stream = rng::Stream::learned);

  std::size_t rows() const { return rows_; }
  std::size_t dim() const { return dim_; }
  std::span<const float> data() const { return data_; }

  // out[k, :] = scale * table[ids[k], :]. Every id must be in [0, rows).
  Status lookup(std::span<const std::int32_t> ids, std::span<float> out, float scale = 1.f) const;
  Status resized(std::size_t new_rows, Resize method, Table& out) const;

 private:
  std::size_t rows_ = 0, dim_ = 0;
  Buffer<float> data_;
};

// Token embedding table: Xavier-uniform from `seed` on its own random stream.
Status token_table(Table& out, std::size_t vocab_size, std::size_t dim, std::uint64_t seed);

// out[b, s, :] = x[b, s, :] + p[s, :] for x of shape [batch, seq, dim]; p has at least seq rows.
// A sum of two finite values beyond float32 is a range failure (NaN and Infinity inputs propagate);
// out must not overlap x or p, whose values the check reads after the sum is written.
Status add_positional(std::span<const float> x, std::size_t batch, std::size_t seq, std::size_t dim, std::span<const float> p,
                      std::span<float> out);

}  // namespace posenc::learned
