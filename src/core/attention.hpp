// Scaled dot-product attention (Vaswani et al. 2017, eq. 1), multi-head, with an additive bias
// (ALiBi, T5 buckets) and a causal mask:
//     weights = softmax(q k^T * scale + bias),  out = weights v        (one softmax per query row)
// and the SIMD matrix product it is built on, shared with the analyses and the permutation lab.
#pragma once
#include <cstddef>
#include <span>

#include "contract.hpp"
#include "status.hpp"

namespace posenc::attention {

// Strided row-major matrix view: element (r, c) is data[r * stride + c].
template <class T>
struct MatrixOf {
  const T* data;
  std::size_t rows, cols, stride;
};
using Matrix = MatrixOf<float>;

// out(r, c) = alpha * sum_i a(r, i) * b(i, c)  (or b(c, i) when transpose_b: out = alpha * a b^T).
// out is a.rows x (transpose_b ? b.rows : b.cols) with row stride out_stride. Blocked SIMD kernel:
// b is packed into panels of 2 SIMD widths, each 4 x 2W output tile is accumulated in registers.
// Fails only when the panels cannot be allocated.
Status matmul(Matrix a, Matrix b, bool transpose_b, float alpha, float* out, std::size_t out_stride);
// The same kernel in double (the analyses' distances and similarities accumulate in double).
Status matmul(MatrixOf<double> a, MatrixOf<double> b, bool transpose_b, double alpha, double* out, std::size_t out_stride);

using Axes = contract::Axes;

struct Shape {
  std::size_t seq_q, seq_k, heads, d, dv;
  std::size_t kv_heads = 0;  // key/value heads; 0 = heads. Grouped-query: heads is a multiple of it (1: multi-query)
  std::size_t batch = 1;
  Axes axes = Axes::bshd;  // bshd: q is [batch, seq_q, heads, d]; bhsd: [batch, heads, seq_q, d] (k, v, out alike)
  // The bias's leading dimensions, [bias_batch, bias_heads, seq_q, seq_k], each 1 (broadcast) or the
  // full size; both 0: deduced from its size, [seq_q, seq_k] or [heads, seq_q, seq_k].
  std::size_t bias_batch = 0, bias_heads = 0;
};

// softmax(q k^T * scale + bias) v per batch entry and head.
//   q: [batch, seq_q, heads, d], k: [batch, seq_k, kv_heads, d], v: [batch, seq_k, kv_heads, dv]
//   (batch = 1, heads = 1 is the 2-D case); with Axes::bhsd the seq and heads axes are swapped in all
//   four (q [batch, heads, seq_q, d], ...). Query head h reads key/value head h / (heads / kv_heads)
//   (grouped-query attention, Ainslie et al. 2023; multi-query when kv_heads = 1).
//   bias: empty, or [bias_batch, bias_heads, seq_q, seq_k] (see Shape; size-1 dimensions broadcast);
//   -Infinity masks.
//   causal: query i sees keys j <= i + (seq_k - seq_q) (the queries are the last seq_q positions, as a
//   decoder with a KV cache); the logits of the masked keys are not computed.
//   out: [batch, seq_q, heads, dv]; weights: [batch, heads, seq_q, seq_k], or empty: then the keys are
//   streamed in blocks with a running maximum and sum (online softmax, Milakov & Gimelshein 2018), in
//   O(seq * d) memory (seq_q * seq_k is then not limited).
// Logits are float32 dot products (as in PyTorch and ONNX Runtime): each carries a rounding error of
// about d * 6e-8 * sum_t |q_t k_t|, which cancelling terms can make large against the logit itself.
// Softmax is max-subtracted, so it never overflows: a row whose float32 logits overflow (q k^T * scale
// + bias beyond 3.4e38, e.g. q = k = 1e30) is computed again in double and its maximum subtracted there. Masked keys get exactly
// 0. A row whose every key is masked (causal with seq_k < seq_q, or an all -Infinity bias) has all-zero weights and a zero
// output. q, k, v and scale must be finite; bias may hold -Infinity but not NaN or +Infinity.
Status attention(std::span<const float> q, std::span<const float> k, std::span<const float> v, const Shape& shape,
                 std::span<const float> bias, bool causal, double scale, std::span<float> out, std::span<float> weights);

// In-place softmax of one row of logits over its first `valid` entries; entries from `valid` on are
// set to 0 (the causal mask). Semantics as in attention(), for finite logits or -Infinity.
void softmax_row(std::span<float> row, std::size_t valid);

}  // namespace posenc::attention
