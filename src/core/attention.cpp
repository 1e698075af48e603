#include "attention.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "errors.hpp"
#include "ops.hpp"
#include "simd.hpp"

namespace posenc::attention {
namespace {

using bf = simd::batch<float>;
constexpr std::size_t W = simd::floats;
constexpr std::size_t NB = 2 * W;  // panel width: output columns per tile
constexpr std::size_t MR = 4;      // output rows per tile
constexpr float kInf = std::numeric_limits<float>::infinity();

// Packs the kk x n right-hand operand into ceil(n / NB) panels; panel p holds columns
// [p*NB, p*NB + NB) as kk rows of NB contiguous floats, zero padded past column n.
std::vector<float> pack(Matrix b, bool transpose, std::size_t kk, std::size_t n) {
  std::vector<float> packed((n + NB - 1) / NB * kk * NB, 0.f);
  auto at = [&](std::size_t i, std::size_t col) -> float& { return packed[((col / NB) * kk + i) * NB + col % NB]; };
  if (transpose) {  // b(col, i): read each row of b once
    for (std::size_t col = 0; col < n; ++col)
      for (std::size_t i = 0; i < kk; ++i) at(i, col) = b.data[col * b.stride + i];
  } else {
    for (std::size_t i = 0; i < kk; ++i)
      for (std::size_t col = 0; col < n; ++col) at(i, col) = b.data[i * b.stride + col];
  }
  return packed;
}

// R x NB tile of out = alpha * a * panel, accumulated in 2R registers over the kk inner products.
template <std::size_t R>
void tile(const float* a, std::size_t lda, const float* panel, std::size_t kk, float alpha, float* c, std::size_t ldc,
          std::size_t cols) {
  bf lo[R], hi[R];
  for (std::size_t r = 0; r < R; ++r) lo[r] = hi[r] = bf(0.f);
  for (std::size_t i = 0; i < kk; ++i) {
    const bf b0 = bf::load_unaligned(panel + i * NB), b1 = bf::load_unaligned(panel + i * NB + W);
    for (std::size_t r = 0; r < R; ++r) {
      const bf ar(a[r * lda + i]);
      lo[r] += ar * b0;
      hi[r] += ar * b1;
    }
  }
  const bf al(alpha);
  for (std::size_t r = 0; r < R; ++r) {
    alignas(64) float tmp[NB];
    float* dst = cols == NB ? c + r * ldc : tmp;
    (lo[r] * al).store_unaligned(dst);
    (hi[r] * al).store_unaligned(dst + W);
    if (cols != NB) std::copy(tmp, tmp + cols, c + r * ldc);
  }
}

void check_size(std::span<const float> x, std::size_t expected, const char* name, const char* formula) {
  if (x.size() != expected) fail(name, " holds ", x.size(), " values; expected ", formula, " = ", expected);
}

void check_finite(std::span<const float> x, const char* name) {
  for (std::size_t i = 0; i < x.size(); ++i)
    if (!std::isfinite(x[i])) fail(name, "[", i, "] must be finite, got ", x[i]);
}

}  // namespace

void matmul(Matrix a, Matrix b, bool transpose_b, float alpha, float* out, std::size_t out_stride) {
  const std::size_t m = a.rows, kk = a.cols, n = transpose_b ? b.rows : b.cols;
  if ((transpose_b ? b.cols : b.rows) != kk)
    fail("matmul: inner dimensions differ (", kk, " and ", transpose_b ? b.cols : b.rows, ")");
  if (m == 0 || n == 0) return;
  const std::vector<float> packed = pack(b, transpose_b, kk, n);
  for (std::size_t p = 0; p * NB < n; ++p) {
    const float* panel = packed.data() + p * kk * NB;
    const std::size_t c0 = p * NB, cols = std::min(NB, n - c0);
    std::size_t r = 0;
    for (; r + MR <= m; r += MR)
      tile<MR>(a.data + r * a.stride, a.stride, panel, kk, alpha, out + r * out_stride + c0, out_stride, cols);
    for (; r < m; ++r) tile<1>(a.data + r * a.stride, a.stride, panel, kk, alpha, out + r * out_stride + c0, out_stride, cols);
  }
}

void softmax_row(std::span<float> row, std::size_t valid) {
  std::fill(row.begin() + valid, row.end(), 0.f);
  const auto x = row.first(valid);
  const std::size_t n = x.size(), nv = n - n % W;
  float mx = -kInf;
  {
    bf m(-kInf);
    for (std::size_t i = 0; i < nv; i += W) m = xsimd::max(m, bf::load_unaligned(x.data() + i));
    mx = xsimd::reduce_max(m);
    for (std::size_t i = nv; i < n; ++i) mx = std::max(mx, x[i]);
  }
  if (mx == -kInf) {  // no visible key: zero weights (and so a zero output row)
    std::fill(x.begin(), x.end(), 0.f);
    return;
  }
  if (mx == kInf) {  // overflowed logits: the softmax limit shares the weight among them
    const auto hits = std::count(x.begin(), x.end(), kInf);
    for (float& e : x) e = e == kInf ? 1.f / float(hits) : 0.f;
    return;
  }
  // exp(x - max) <= 1, so nothing overflows and the sum is >= 1.
  bf acc(0.f);
  const bf bm(mx);
  for (std::size_t i = 0; i < nv; i += W) {
    const bf e = xsimd::exp(bf::load_unaligned(x.data() + i) - bm);
    e.store_unaligned(x.data() + i);
    acc += e;
  }
  float sum = xsimd::reduce_add(acc);
  for (std::size_t i = nv; i < n; ++i) sum += (x[i] = std::exp(x[i] - mx));
  ops::scale(x, 1.f / sum, x);
}

void attention(std::span<const float> q, std::span<const float> k, std::span<const float> v, const Shape& shape,
               std::span<const float> bias, bool causal, double scale, std::span<float> out, std::span<float> weights) {
  const auto [sq, sk, heads, d, dv] = shape;
  require_positive(sq, "seqQ");
  require_positive(sk, "seqK");
  require_positive(heads, "heads");
  require_positive(d, "d");
  require_positive(dv, "dv");
  require_finite(scale, "scale");
  if (std::fabs(scale) > double(std::numeric_limits<float>::max()))
    fail("scale must fit in float32 (|scale| <= 3.4028234664e38), got ", scale);
  const std::size_t plane = checked_size(sq, sk, "the weights");
  check_size(q, checked_size(checked_size(sq, heads, "q"), d, "q"), "q", "seqQ * heads * d");
  check_size(k, checked_size(checked_size(sk, heads, "k"), d, "k"), "k", "seqK * heads * d");
  check_size(v, checked_size(checked_size(sk, heads, "v"), dv, "v"), "v", "seqK * heads * dv");
  check_size(out, checked_size(checked_size(sq, heads, "the output"), dv, "the output"), "out", "seqQ * heads * dv");
  check_size(weights, checked_size(heads, plane, "the weights"), "weights", "heads * seqQ * seqK");
  if (!bias.empty() && bias.size() != plane && bias.size() != heads * plane)
    fail("bias holds ", bias.size(), " values; expected seqQ * seqK = ", plane, " or heads * seqQ * seqK = ", heads * plane);
  check_finite(q, "q");
  check_finite(k, "k");
  check_finite(v, "v");
  for (std::size_t i = 0; i < bias.size(); ++i)
    if (std::isnan(bias[i]) || bias[i] == kInf) fail("bias[", i, "] must be finite or -Infinity, got ", bias[i]);

  const std::size_t ld = heads * d, ldv = heads * dv;
  for (std::size_t h = 0; h < heads; ++h) {
    float* w = weights.data() + h * plane;
    // logits = scale * q_h k_h^T
    matmul({q.data() + h * d, sq, d, ld}, {k.data() + h * d, sk, d, ld}, true, float(scale), w, sk);
    const float* b = bias.empty() ? nullptr : bias.data() + (bias.size() == plane ? 0 : h * plane);
    for (std::size_t i = 0; i < sq; ++i) {
      const auto row = std::span<float>(w + i * sk, sk);
      if (b) ops::add(row, std::span<const float>(b + i * sk, sk), row);
      // causal: keys j <= i + (sk - sq), i.e. the first i + 1 + sk - sq of them (clamped to [0, sk])
      const std::ptrdiff_t visible = std::ptrdiff_t(i + 1 + sk) - std::ptrdiff_t(sq);
      const std::size_t valid = causal ? std::size_t(std::clamp<std::ptrdiff_t>(visible, 0, std::ptrdiff_t(sk))) : sk;
      // Finite q, k can still overflow float32 in q k^T * scale: Infinity - Infinity inside the dot
      // product, or an infinite logit plus a -Infinity bias, is NaN. A -Infinity bias masks its key
      // whatever the logit; any other NaN logit is refused rather than spread over the row.
      for (std::size_t j = 0; j < valid; ++j)
        if (std::isnan(row[j])) {
          if (b && b[i * sk + j] == -kInf)
            row[j] = -kInf;
          else
            fail("the logit of query ", i, " and key ", j, " (head ", h,
                 ") overflows float32: q k^T * scale is not a number; scale q, k or scale down");
        }
      softmax_row(row, valid);
    }
    // out_h = weights_h v_h
    matmul({w, sq, sk, sk}, {v.data() + h * dv, sk, dv, ldv}, false, 1.f, out.data() + h * dv, ldv);
  }
}

}  // namespace posenc::attention
