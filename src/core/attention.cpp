#include "attention.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include "buffer.hpp"
#include "ops.hpp"
#include "simd.hpp"
#include "status.hpp"

namespace posenc::attention {
namespace {

using bf = simd::batch<float>;
constexpr std::size_t W = simd::floats;
template <class T>
constexpr std::size_t kPanel = 2 * simd::batch<T>::size;  // panel width: output columns per tile
constexpr std::size_t MR = 4;                             // output rows per tile
constexpr float kInf = std::numeric_limits<float>::infinity();

// Packs the kk x n right-hand operand into ceil(n / NB) panels; panel p holds columns
// [p*NB, p*NB + NB) as kk rows of NB contiguous floats, zero padded past column n.
template <class T>
Status pack(Buffer<T>& packed, MatrixOf<T> b, bool transpose, std::size_t kk, std::size_t n) {
  constexpr std::size_t NB = kPanel<T>;
  POSENC_TRY(packed.allocate((n + NB - 1) / NB * kk * NB, "the packed matrix"));
  auto at = [&](std::size_t i, std::size_t col) -> T& { return packed[((col / NB) * kk + i) * NB + col % NB]; };
  if (transpose) {  // b(col, i): read each row of b once
    for (std::size_t col = 0; col < n; ++col)
      for (std::size_t i = 0; i < kk; ++i) at(i, col) = b.data[col * b.stride + i];
  } else {
    for (std::size_t i = 0; i < kk; ++i)
      for (std::size_t col = 0; col < n; ++col) at(i, col) = b.data[i * b.stride + col];
  }
  return {};
}

// R x NB tile of out = alpha * a * panel, accumulated in 2R registers over the kk inner products.
template <class T, std::size_t R>
void tile(const T* a, std::size_t lda, const T* panel, std::size_t kk, T alpha, T* c, std::size_t ldc, std::size_t cols) {
  using B = simd::batch<T>;
  constexpr std::size_t NB = kPanel<T>, BW = B::size;
  B lo[R], hi[R];
  for (std::size_t r = 0; r < R; ++r) lo[r] = hi[r] = B(T(0));
  for (std::size_t i = 0; i < kk; ++i) {
    const B b0 = B::load_unaligned(panel + i * NB), b1 = B::load_unaligned(panel + i * NB + BW);
    for (std::size_t r = 0; r < R; ++r) {
      const B ar(a[r * lda + i]);
      lo[r] += ar * b0;
      hi[r] += ar * b1;
    }
  }
  const B al(alpha);
  for (std::size_t r = 0; r < R; ++r) {
    alignas(64) T tmp[NB];
    T* dst = cols == NB ? c + r * ldc : tmp;
    (lo[r] * al).store_unaligned(dst);
    (hi[r] * al).store_unaligned(dst + BW);
    if (cols != NB) std::copy(tmp, tmp + cols, c + r * ldc);
  }
}

// x holds a * b * c values.
Status check_size(std::span<const float> x, std::size_t a, std::size_t b, std::size_t c, const char* name, const char* formula) {
  std::size_t ab = 0, expected = 0;
  POSENC_TRY(checked_size(ab, a, b, name));
  POSENC_TRY(checked_size(expected, ab, c, name));
  if (x.size() != expected) return fail(name, " holds ", x.size(), " values; expected ", formula, " = ", expected);
  return {};
}

Status check_finite(std::span<const float> x, const char* name) {
  for (std::size_t i = 0; i < x.size(); ++i)
    if (!std::isfinite(x[i])) return fail(name, "[", i, "] must be finite, got ", x[i]);
  return {};
}

// One row of weights in double, for logits that overflow float32: logit_j = scale * <q_i, k_j> +
// bias_j is exact enough in double (|q_t k_t| <= 1.2e77), then the max-subtracted softmax.
void exact_softmax_row(const float* qi, const float* k, std::size_t ld, std::size_t d, std::size_t valid, double scale,
                       const float* bias, float* row, double* logits) {
  double mx = -std::numeric_limits<double>::infinity();
  for (std::size_t j = 0; j < valid; ++j) {
    const float* kj = k + j * ld;
    double dot = 0;
    for (std::size_t t = 0; t < d; ++t) dot += double(qi[t]) * double(kj[t]);
    logits[j] = scale * dot + (bias ? double(bias[j]) : 0.0);
    mx = std::max(mx, logits[j]);
  }
  double sum = 0;
  for (std::size_t j = 0; j < valid; ++j) sum += (logits[j] = std::exp(logits[j] - mx));
  for (std::size_t j = 0; j < valid; ++j) row[j] = float(logits[j] / sum);
}

template <class T>
Status matmul_of(MatrixOf<T> a, MatrixOf<T> b, bool transpose_b, T alpha, T* out, std::size_t out_stride) {
  constexpr std::size_t NB = kPanel<T>;
  const std::size_t m = a.rows, kk = a.cols, n = transpose_b ? b.rows : b.cols;
  if ((transpose_b ? b.cols : b.rows) != kk)
    return fail("matmul: inner dimensions differ (", kk, " and ", transpose_b ? b.cols : b.rows, ")");
  if (m == 0 || n == 0) return {};
  Buffer<T> packed;
  POSENC_TRY(pack(packed, b, transpose_b, kk, n));
  for (std::size_t p = 0; p * NB < n; ++p) {
    const T* panel = packed.data() + p * kk * NB;
    const std::size_t c0 = p * NB, cols = std::min(NB, n - c0);
    std::size_t r = 0;
    for (; r + MR <= m; r += MR)
      tile<T, MR>(a.data + r * a.stride, a.stride, panel, kk, alpha, out + r * out_stride + c0, out_stride, cols);
    for (; r < m; ++r) tile<T, 1>(a.data + r * a.stride, a.stride, panel, kk, alpha, out + r * out_stride + c0, out_stride, cols);
  }
  return {};
}

}  // namespace

Status matmul(Matrix a, Matrix b, bool transpose_b, float alpha, float* out, std::size_t out_stride) {
  return matmul_of(a, b, transpose_b, alpha, out, out_stride);
}

Status matmul(MatrixOf<double> a, MatrixOf<double> b, bool transpose_b, double alpha, double* out, std::size_t out_stride) {
  return matmul_of(a, b, transpose_b, alpha, out, out_stride);
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

Status attention(std::span<const float> q, std::span<const float> k, std::span<const float> v, const Shape& shape,
                 std::span<const float> bias, bool causal, double scale, std::span<float> out, std::span<float> weights) {
  const auto [sq, sk, heads, d, dv] = shape;
  POSENC_TRY(require_positive(sq, "seqQ"));
  POSENC_TRY(require_positive(sk, "seqK"));
  POSENC_TRY(require_positive(heads, "heads"));
  POSENC_TRY(require_positive(d, "d"));
  POSENC_TRY(require_positive(dv, "dv"));
  POSENC_TRY(require_finite(scale, "scale"));
  if (std::fabs(scale) > double(std::numeric_limits<float>::max()))
    return fail("scale must fit in float32 (|scale| <= 3.4028234664e38), got ", scale);
  std::size_t plane = 0;
  POSENC_TRY(checked_size(plane, sq, sk, "the weights"));
  POSENC_TRY(check_size(q, sq, heads, d, "q", "seqQ * heads * d"));
  POSENC_TRY(check_size(k, sk, heads, d, "k", "seqK * heads * d"));
  POSENC_TRY(check_size(v, sk, heads, dv, "v", "seqK * heads * dv"));
  POSENC_TRY(check_size(out, sq, heads, dv, "the output", "seqQ * heads * dv"));
  POSENC_TRY(check_size(weights, heads, sq, sk, "the weights", "heads * seqQ * seqK"));
  if (!bias.empty() && bias.size() != plane && bias.size() != heads * plane)
    return fail("bias holds ", bias.size(), " values; expected seqQ * seqK = ", plane,
                " or heads * seqQ * seqK = ", heads * plane);
  POSENC_TRY(check_finite(q, "q"));
  POSENC_TRY(check_finite(k, "k"));
  POSENC_TRY(check_finite(v, "v"));
  for (std::size_t i = 0; i < bias.size(); ++i)
    if (std::isnan(bias[i]) || bias[i] == kInf) return fail("bias[", i, "] must be finite or -Infinity, got ", bias[i]);
  Buffer<double> exact;  // one row of logits, for rows that overflow float32
  POSENC_TRY(exact.allocate(sk, "a row of logits"));

  const std::size_t ld = heads * d, ldv = heads * dv;
  for (std::size_t h = 0; h < heads; ++h) {
    float* w = weights.data() + h * plane;
    // logits = scale * q_h k_h^T
    POSENC_TRY(matmul({q.data() + h * d, sq, d, ld}, {k.data() + h * d, sk, d, ld}, true, float(scale), w, sk));
    const float* b = bias.empty() ? nullptr : bias.data() + (bias.size() == plane ? 0 : h * plane);
    for (std::size_t i = 0; i < sq; ++i) {
      const auto row = std::span<float>(w + i * sk, sk);
      if (b) ops::add(row, std::span<const float>(b + i * sk, sk), row);
      // causal: keys j <= i + (sk - sq), i.e. the first i + 1 + sk - sq of them (clamped to [0, sk])
      const std::ptrdiff_t visible = std::ptrdiff_t(i + 1 + sk) - std::ptrdiff_t(sq);
      const std::size_t valid = causal ? std::size_t(std::clamp<std::ptrdiff_t>(visible, 0, std::ptrdiff_t(sk))) : sk;
      // Finite q, k can still overflow float32 in q k^T * scale (+Infinity, or NaN from Infinity -
      // Infinity inside the dot product). A -Infinity bias masks its key whatever the logit.
      bool overflow = false;
      for (std::size_t j = 0; j < valid; ++j)
        if (!(row[j] < kInf) && !(b && b[i * sk + j] == -kInf))
          overflow = true;
        else if (std::isnan(row[j]))
          row[j] = -kInf;  // NaN + -Infinity bias: masked
      if (overflow) {
        std::fill(row.begin() + valid, row.end(), 0.f);
        exact_softmax_row(q.data() + i * ld + h * d, k.data() + h * d, ld, d, valid, scale, b ? b + i * sk : nullptr, row.data(),
                          exact.data());
      } else {
        softmax_row(row, valid);
      }
    }
    // out_h = weights_h v_h
    POSENC_TRY(matmul({w, sq, sk, sk}, {v.data() + h * dv, sk, dv, ldv}, false, 1.f, out.data() + h * dv, ldv));
  }
  return {};
}

}  // namespace posenc::attention
