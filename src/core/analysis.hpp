// Analyses of encodings and tensors: statistics, similarity between positions, the shift matrix,
// and how distinguishable positions stay.
#pragma once
#include <cstddef>
#include <span>

#include "contract.hpp"
#include "status.hpp"

namespace posenc::analysis {

struct Stats {
  double min, max, mean, std;  // std is the population standard deviation (divides by N, as NumPy)
};

// Computed in double. A NaN anywhere makes all four NaN, wherever it is (as NumPy's min and max);
// Infinity keeps IEEE semantics (mean of [1, inf] is inf, its std NaN). Needs at least one value.
Status stats(std::span<const float> values, Stats& out);

// dot:    <t_i, t_j>
// cosine: <t_i, t_j> / (|t_i| |t_j|), clamped to [-1, 1]; 0 when either row is all zeros
using Metric = contract::Metric;

// out[i, j] = metric(t_i, t_j) for the rows of t: [rows, dim] -> out: [rows, rows]. For a sinusoidal
// table with even d_model the dot metric depends only on the offset: sum_k cos((j - i) w_k).
// Accumulated in double, in blocks of rows and of dimensions (attention::matmul on each), rounded into
// out block by block: memory besides out is O(block) for any shape. A dot product beyond float32 is an
// error.
Status similarity(std::span<const float> t, std::size_t rows, std::size_t dim, Metric metric, std::span<float> out);

// The block-diagonal rotation M_k with PE(p + k) = M_k PE(p) for every p, for the interleaved
// sinusoidal layout (Vaswani et al. 3.5: "PE_{pos+k} can be represented as a linear function of
// PE_pos"). Pair i holds (sin(p w_i), cos(p w_i)), and by the angle-addition formulas
//     [sin((p+k) w)]   [ cos(k w)  sin(k w)] [sin(p w)]
//     [cos((p+k) w)] = [-sin(k w)  cos(k w)] [cos(p w)],   w_i = base^(-2i/d_model).
// d_model must be even (an odd d's last column has no cos partner); k is any finite number. The
// sin/cos of k w are reduced in double (angles::exact_row), so M_k is accurate at any k.
Status shift_matrix(std::size_t d_model, double base, double k, std::span<float> out);  // [d, d]

// out[i] = min over j != i of |t_i - t_j| (Euclidean): how far each position's encoding is from its
// nearest other position. Differences are taken directly (no |a|^2 + |b|^2 - 2ab cancellation), so
// near-duplicate rows are measured accurately, and accumulated in double (no overflow or underflow
// of the squares for any finite float32 rows). Each pair once, several pairs per SIMD batch (a panel
// of rows against every later row), so a small dim pays no per-pair overhead; memory besides out is
// one double per row and one block. rows >= 2.
Status nearest_distances(std::span<const float> t, std::size_t rows, std::size_t dim, std::span<float> out);

}  // namespace posenc::analysis
