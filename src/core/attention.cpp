#include "attention.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
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
constexpr std::size_t kPanel = 4 * simd::batch<T>::size;  // panel width: output columns per tile
constexpr std::size_t MR = 2;  // output rows per tile: 2 x 4 batches of accumulators (a 4 x 2 tile was ~8% slower in wasm)
constexpr float kInf = std::numeric_limits<float>::infinity();

// The right-hand operand of a product packed into panels of NB = kPanel<T> columns: panel p holds
// columns [p*NB, p*NB + NB) as rows of NB contiguous values (zero padded past the last column), and
// starts at data + p * stride. Packing K or V once per head lets every block of queries (and every
// block of keys) multiply by a slice of it: the columns from c0 (a multiple of NB) are the panels from
// c0 / NB, and the rows from i0 are at data + i0 * NB with the same stride.
template <class T>
struct Panels {
  const T* data;
  std::size_t stride;
  Panels columns_from(std::size_t c0) const { return {data + c0 / kPanel<T> * stride, stride}; }
  Panels rows_from(std::size_t i0) const { return {data + i0 * kPanel<T>, stride}; }
};

template <class T>
std::size_t packed_size(std::size_t kk, std::size_t n) {
  return (n + kPanel<T> - 1) / kPanel<T> * kk * kPanel<T>;
}

// Packs the kk x n operand b (b(i, col), or b(col, i) when transpose) into dst, which holds
// packed_size(kk, n) values.
template <class T>
Panels<T> pack(T* dst, MatrixOf<T> b, bool transpose, std::size_t kk, std::size_t n) {
  constexpr std::size_t NB = kPanel<T>;
  if (n % NB) std::fill(dst + n / NB * kk * NB, dst + packed_size<T>(kk, n), T(0));  // the last panel's padding
  if (kk == 0) return {dst, 0};  // no rows: nothing to read (b.data and dst may be null)
  if (transpose) {               // b(col, i): each row of b once, its values NB apart in the column's panel
    for (std::size_t col = 0; col < n; ++col) {
      T* to = dst + (col / NB) * kk * NB + col % NB;
      const T* from = b.data + col * b.stride;
      for (std::size_t i = 0; i < kk; ++i) to[i * NB] = from[i];
    }
  } else {  // b(i, col): each row of b once, NB contiguous values into each panel
    for (std::size_t i = 0; i < kk; ++i)
      for (std::size_t c0 = 0; c0 < n; c0 += NB) {
        const T* from = b.data + i * b.stride + c0;
        std::copy(from, from + std::min(NB, n - c0), dst + (c0 / NB * kk + i) * NB);
      }
  }
  return {dst, kk * NB};
}

// R x NB tile of out = alpha * a * panel, accumulated in R * NB / BW registers over the kk inner products.
template <class T, std::size_t R>
void tile(const T* a, std::size_t lda, const T* panel, std::size_t kk, T alpha, T* c, std::size_t ldc, std::size_t cols) {
  using B = simd::batch<T>;
  constexpr std::size_t NB = kPanel<T>, BW = B::size, NW = NB / BW;
  B acc[R][NW];
  for (std::size_t r = 0; r < R; ++r)
    for (std::size_t w = 0; w < NW; ++w) acc[r][w] = B(T(0));
  for (std::size_t i = 0; i < kk; ++i) {
    B b[NW];
    for (std::size_t w = 0; w < NW; ++w) b[w] = B::load_unaligned(panel + i * NB + w * BW);
    for (std::size_t r = 0; r < R; ++r) {
      const B ar(a[r * lda + i]);
      for (std::size_t w = 0; w < NW; ++w) acc[r][w] += ar * b[w];
    }
  }
  const B al(alpha);
  for (std::size_t r = 0; r < R; ++r) {
    alignas(64) T tmp[NB];
    T* dst = cols == NB ? c + r * ldc : tmp;
    for (std::size_t w = 0; w < NW; ++w) (acc[r][w] * al).store_unaligned(dst + w * BW);
    if (cols != NB) std::copy(tmp, tmp + cols, c + r * ldc);
  }
}

// x holds a * b * c values.
POSENC_COLD Status check_size(std::span<const float> x, std::size_t a, std::size_t b, std::size_t c, const char* name,
                              const char* formula) {
  std::size_t ab = 0, expected = 0;
  POSENC_TRY(checked_size(ab, a, b, name));
  POSENC_TRY(checked_size(expected, ab, c, name));
  if (x.size() != expected) return fail(name, " holds ", x.size(), " values; expected ", formula, " = ", expected);
  return {};
}

Status check_finite(std::span<const float> x, const char* name) {
  if (ops::all_finite(x)) return {};  // the common case, a SIMD batch at a time
  for (std::size_t i = 0; i < x.size(); ++i)
    if (!std::isfinite(x[i])) return fail(name, "[", i, "] must be finite, got ", x[i]);
  return {};
}

// One query row in double, for logits that overflow float32: logit_j = scale * <q_i, k_j> + bias_j
// is exact enough in double (|q_t k_t| <= 1.2e77), then the max-subtracted softmax into `logits`
// (which holds `valid` doubles). Writes the weights to `row` when given, and the output
// sum_j w_j v_j to `out` when given.
POSENC_COLD void exact_row(const float* qi, const float* k, std::size_t ldk, std::size_t d, std::size_t valid, double scale,
                           const float* bias, double* logits, float* row, const float* v, std::size_t ldv, std::size_t dv,
                           float* out) {
  double mx = -std::numeric_limits<double>::infinity();
  for (std::size_t j = 0; j < valid; ++j) {
    const float* kj = k + j * ldk;
    double dot = 0;
    for (std::size_t t = 0; t < d; ++t) dot += double(qi[t]) * double(kj[t]);
    logits[j] = scale * dot + (bias ? double(bias[j]) : 0.0);
    mx = std::max(mx, logits[j]);
  }
  double sum = 0;
  for (std::size_t j = 0; j < valid; ++j) sum += (logits[j] = std::exp(logits[j] - mx));
  for (std::size_t j = 0; j < valid; ++j) logits[j] /= sum;
  if (row)
    for (std::size_t j = 0; j < valid; ++j) row[j] = float(logits[j]);
  if (out)
    for (std::size_t c = 0; c < dv; ++c) {
      double acc = 0;
      for (std::size_t j = 0; j < valid; ++j) acc += logits[j] * double(v[j * ldv + c]);
      out[c] = float(acc);
    }
}

// out = alpha * a * b for a: m x kk and b: kk x n in panels.
template <class T>
void multiply(MatrixOf<T> a, Panels<T> b, std::size_t n, T alpha, T* out, std::size_t out_stride) {
  constexpr std::size_t NB = kPanel<T>;
  const std::size_t m = a.rows, kk = a.cols;
  for (std::size_t p = 0; p * NB < n; ++p) {
    const T* panel = b.data + p * b.stride;
    const std::size_t c0 = p * NB, cols = std::min(NB, n - c0);
    std::size_t r = 0;
    for (; r + MR <= m; r += MR)
      tile<T, MR>(a.data + r * a.stride, a.stride, panel, kk, alpha, out + r * out_stride + c0, out_stride, cols);
    // an odd last row: the tile computes it twice (row stride 0) and writes it twice to one place
    if (r < m) tile<T, MR>(a.data + r * a.stride, 0, panel, kk, alpha, out + r * out_stride + c0, 0, cols);
  }
}

template <class T>
Status matmul_of(MatrixOf<T> a, MatrixOf<T> b, bool transpose_b, T alpha, T* out, std::size_t out_stride) {
  const std::size_t m = a.rows, kk = a.cols, n = transpose_b ? b.rows : b.cols;
  // invariant: the core's callers (attention, similarity, the lab and the toy) multiply matching shapes
  if ((transpose_b ? b.cols : b.rows) != kk)
    return fail("matmul: inner dimensions differ (", kk, " and ", transpose_b ? b.cols : b.rows, ")");
  if (m == 0 || n == 0) return {};
  Buffer<T> packed;
  POSENC_TRY(packed.allocate(packed_size<T>(kk, n), "the packed matrix"));
  multiply(a, pack(packed.data(), b, transpose_b, kk, n), n, alpha, out, out_stride);
  return {};
}

}  // namespace

Status matmul(Matrix a, Matrix b, bool transpose_b, float alpha, float* out, std::size_t out_stride) {
  return matmul_of(a, b, transpose_b, alpha, out, out_stride);
}

Status matmul(MatrixOf<double> a, MatrixOf<double> b, bool transpose_b, double alpha, double* out, std::size_t out_stride) {
  return matmul_of(a, b, transpose_b, alpha, out, out_stride);
}

namespace {

// max(init, x[0], ..., x[n-1]), a SIMD batch at a time.
float row_max(std::span<const float> x, float init) {
  const std::size_t n = x.size(), nv = n - n % W;
  bf m(init);
  for (std::size_t i = 0; i < nv; i += W) m = xsimd::max(m, bf::load_unaligned(x.data() + i));
  float mx = xsimd::reduce_max(m);
  for (std::size_t i = nv; i < n; ++i) mx = std::max(mx, x[i]);
  return mx;
}

// exp(y) for y <= 0, a SIMD batch at a time: 0 below log(FLT_MIN) (about -87.34, and for -Infinity),
// else within 1.6 ulp (measured over [-87.34, 0]). Cephes' expf, as xsimd computes it, without what a
// softmax never needs (the overflow branch, the generic rounding): y = k ln2 + r with k the integer
// nearest y / ln2 (adding 1.5 * 2^23 rounds it and leaves k in the sum's low bits) and |r| <= ln2 / 2;
// exp(r) from Cephes' polynomial; 2^k built in the exponent bits. About 24 operations instead of 35:
// the exponentials were a sixth of an attention call.
bf exp_nonpositive(bf y) {
  using bi = simd::batch<std::int32_t>;
  const bf magic(12582912.f);  // 1.5 * 2^23
  const bf sum = xsimd::fma(y, xsimd::constants::invlog_2<bf>(), magic);
  const bf k = sum - magic;
  bf r = xsimd::fnma(k, xsimd::constants::log_2hi<bf>(), y);
  r = xsimd::fnma(k, xsimd::constants::log_2lo<bf>(), r);
  // exp(r) = 1 + r + r^2 (c0 + c1 r + ... + c4 r^4): Cephes' coefficients
  bf p = xsimd::fma(bf(1.3997796e-3f), r, bf(8.3955629e-3f));
  p = xsimd::fma(p, r, bf(4.1665401e-2f));
  p = xsimd::fma(p, r, bf(1.6666277e-1f));
  p = xsimd::fma(p, r, bf(0.5f));
  p = xsimd::fma(p, r * r, r) + bf(1.f);
  // 2^k: the sum's bits are those of 1.5 * 2^23 plus k, so (bits + 127) << 23 leaves k + 127 in the exponent
  const bf two_k = xsimd::bitwise_cast<float>((xsimd::bitwise_cast<std::int32_t>(sum) + bi(127)) << 23);
  return xsimd::select(y >= bf(-87.33654f), p * two_k, bf(0.f));
}

// x[i] = exp(x[i] - mx) in place (-Infinity gives 0), returning the sum; mx is finite.
[[gnu::noinline]] float exp_shifted(std::span<float> x, float mx) {
  const std::size_t n = x.size(), nv = n - n % W;
  bf acc(0.f);
  const bf bm(mx);
  for (std::size_t i = 0; i < nv; i += W) {
    const bf e = exp_nonpositive(bf::load_unaligned(x.data() + i) - bm);
    e.store_unaligned(x.data() + i);
    acc += e;
  }
  float sum = xsimd::reduce_add(acc);
  for (std::size_t i = nv; i < n; ++i) sum += (x[i] = std::exp(x[i] - mx));
  return sum;
}

}  // namespace

namespace {

// softmax_row with the maximum of row[0, valid) already known.
void softmax_known_max(std::span<float> row, std::size_t valid, float mx) {
  std::fill(row.begin() + valid, row.end(), 0.f);
  const auto x = row.first(valid);
  if (mx == -kInf) {  // no visible key: zero weights (and so a zero output row)
    std::fill(x.begin(), x.end(), 0.f);
    return;
  }
  // exp(x - max) <= 1, so nothing overflows and the sum is >= 1.
  ops::scale(x, 1.f / exp_shifted(x, mx), x);
}

}  // namespace

void softmax_row(std::span<float> row, std::size_t valid) {
  softmax_known_max(row, valid, row_max(row.first(valid), -kInf));
}

namespace {

constexpr std::size_t kQueryBlock = 64;  // causal: query rows per block (each block computes only its visible keys)
constexpr std::size_t kKeyBlock = 256;   // streaming: keys per block
static_assert(kKeyBlock % kPanel<float> == 0, "a block of keys starts at a panel (Panels::columns_from)");

// One batch entry and head: pointers at its first element, row strides, and where the bias starts.
struct Head {
  const float *q, *k, *v;
  std::size_t ldq, ldk, ldv;
  float* out;
  std::size_t ldo;
  const float* bias;     // [seq_q, seq_k] or nullptr
  Panels<float> kp, vp;  // k^T (d x seq_k) and v (seq_k x dv), packed
};

// Keys query i may see: i + 1 + (seq_k - seq_q) when causal (clamped to [0, seq_k]), else all.
std::size_t visible(std::size_t i, std::size_t sq, std::size_t sk, bool causal) {
  if (!causal) return sk;
  const std::ptrdiff_t n = std::ptrdiff_t(i + 1 + sk) - std::ptrdiff_t(sq);
  return std::size_t(std::clamp<std::ptrdiff_t>(n, 0, std::ptrdiff_t(sk)));
}

// mx = max(init, row[0], ..., row[n-1]) in the same pass as the check that every value is finite
// (x * 0 is 0 unless x is NaN or Infinity).
bool finite_max(const float* row, std::size_t n, float init, float& mx) {
  const std::size_t nv = n - n % W;
  bf m(init), acc(0.f);
  for (std::size_t j = 0; j < nv; j += W) {
    const bf x = bf::load_unaligned(row + j);
    m = xsimd::max(m, x);
    acc += x * bf(0.f);
  }
  mx = xsimd::reduce_max(m);
  float zero = xsimd::reduce_add(acc);
  for (std::size_t j = nv; j < n; ++j) {
    mx = std::max(mx, row[j]);
    zero += row[j] * 0.f;
  }
  return zero == 0.f;
}

// Adds the bias to a row of logits and sets mx = max(init, the row); true when a key that is not
// masked overflowed (+-Infinity: finite q, k and bias give finite exact logits, so an infinite one is
// float32's overflow; or NaN from Infinity - Infinity inside the dot product). A -Infinity bias masks
// its key whatever the logit.
[[gnu::noinline]] bool add_bias(float* row, const float* b, std::size_t n, float init, float& mx) {
  if (b) ops::add({row, n}, {b, n}, {row, n});
  if (finite_max(row, n, init, mx)) return false;  // the common case
  bool overflow = false;
  for (std::size_t j = 0; j < n; ++j)
    if (!std::isfinite(row[j])) {  // +-Infinity or NaN: an overflow, unless the bias masks the key
      if (b && b[j] == -kInf)
        row[j] = -kInf;
      else
        overflow = true;
    }
  if (!overflow) mx = row_max({row, n}, init);
  return overflow;
}

// With weights: [seq_q, seq_k] logits -> softmax in place -> out = weights v. Causal queries go in
// blocks, each computing only the keys its last row sees.
void head_weighted(const Head& x, const Shape& s, bool causal, double scale, float* w, double* exact) {
  const std::size_t sq = s.seq_q, sk = s.seq_k;
  const std::size_t block = causal ? kQueryBlock : sq;
  for (std::size_t i0 = 0; i0 < sq; i0 += block) {
    const std::size_t rows = std::min(block, sq - i0), keys = visible(i0 + rows - 1, sq, sk, causal);
    multiply<float>({x.q + i0 * x.ldq, rows, s.d, x.ldq}, x.kp, keys, float(scale), w + i0 * sk, sk);
    for (std::size_t i = i0; i < i0 + rows; ++i) {
      const std::size_t valid = visible(i, sq, sk, causal);
      float* row = w + i * sk;
      const float* b = x.bias ? x.bias + i * sk : nullptr;
      float mx = -kInf;
      if (add_bias(row, b, valid, -kInf, mx)) {
        std::fill(row + valid, row + sk, 0.f);
        exact_row(x.q + i * x.ldq, x.k, x.ldk, s.d, valid, scale, b, exact, row, nullptr, 0, 0, nullptr);
      } else {
        softmax_known_max({row, sk}, valid, mx);
      }
    }
    if (keys > 0)
      multiply<float>({w + i0 * sk, rows, keys, sk}, x.vp, s.dv, 1.f, x.out + i0 * x.ldo, x.ldo);
    else
      for (std::size_t i = i0; i < i0 + rows; ++i) std::fill(x.out + i * x.ldo, x.out + i * x.ldo + s.dv, 0.f);
  }
}

// Scratch of the streaming path, allocated once per call.
struct Stream {
  Buffer<float> logits, partial, acc, m, l, queries;
  Buffer<std::uint8_t> overflow;
  Status allocate(std::size_t d, std::size_t dv) {
    POSENC_TRY(queries.allocate(kQueryBlock * d, "a block of queries"));
    POSENC_TRY(logits.allocate(kQueryBlock * kKeyBlock, "a block of logits"));
    POSENC_TRY(partial.allocate(kQueryBlock * dv, "a block of outputs"));
    POSENC_TRY(acc.allocate(kQueryBlock * dv, "a block of outputs"));
    POSENC_TRY(m.allocate(kQueryBlock, "the running maxima"));
    POSENC_TRY(l.allocate(kQueryBlock, "the running sums"));
    return overflow.allocate(kQueryBlock, "the overflow flags");
  }
};

// Without weights: for each block of queries, the keys stream through in blocks; each row keeps its
// running maximum m, sum l and output acc, rescaled by exp(m_old - m_new) when the maximum grows.
void head_streaming(const Head& x, const Shape& s, bool causal, double scale, Stream& st, double* exact) {
  const std::size_t sq = s.seq_q, sk = s.seq_k, dv = s.dv;
  for (std::size_t i0 = 0; i0 < sq; i0 += kQueryBlock) {
    const std::size_t rows = std::min(kQueryBlock, sq - i0), keys = visible(i0 + rows - 1, sq, sk, causal);
    std::fill(st.m.begin(), st.m.end(), -kInf);
    std::fill(st.l.begin(), st.l.end(), 0.f);
    std::fill(st.acc.begin(), st.acc.end(), 0.f);
    std::fill(st.overflow.begin(), st.overflow.end(), std::uint8_t{0});
    // The block's queries, contiguous: rows of one head of [seq, heads, d] are heads * d apart, a stride
    // that maps them to the same few cache sets, read again for every block of keys.
    const float* qb = x.q + i0 * x.ldq;
    std::size_t ldqb = x.ldq;
    if (x.ldq != s.d) {
      for (std::size_t r = 0; r < rows; ++r) std::copy(qb + r * x.ldq, qb + r * x.ldq + s.d, st.queries.data() + r * s.d);
      qb = st.queries.data(), ldqb = s.d;
    }
    for (std::size_t j0 = 0; j0 < keys; j0 += kKeyBlock) {
      const std::size_t kn = std::min(kKeyBlock, keys - j0);
      float* logits = st.logits.data();
      multiply<float>({qb, rows, s.d, ldqb}, x.kp.columns_from(j0), kn, float(scale), logits, kn);
      for (std::size_t r = 0; r < rows; ++r) {
        float* row = logits + r * kn;
        const std::size_t i = i0 + r, valid = std::min(kn, visible(i, sq, sk, causal) - std::min(visible(i, sq, sk, causal), j0));
        float mx = st.m[r];
        if (!st.overflow[r] && add_bias(row, x.bias ? x.bias + i * sk + j0 : nullptr, valid, st.m[r], mx)) st.overflow[r] = 1;
        if (st.overflow[r]) {  // the row is computed again in double at the end
          std::fill(row, row + kn, 0.f);
          continue;
        }
        std::fill(row + valid, row + kn, -kInf);
        if (mx == -kInf) {  // nothing visible yet: this block adds nothing
          std::fill(row, row + kn, 0.f);
          continue;
        }
        const float rescale = std::exp(st.m[r] - mx);  // exp(-Infinity) = 0 for the first visible block
        st.l[r] = st.l[r] * rescale + exp_shifted({row, kn}, mx);
        st.m[r] = mx;
        if (rescale != 1.f) ops::scale({st.acc.data() + r * dv, dv}, rescale, {st.acc.data() + r * dv, dv});
      }
      multiply<float>({logits, rows, kn, kn}, x.vp.rows_from(j0), dv, 1.f, st.partial.data(), dv);
      ops::add(st.acc.span().first(rows * dv), st.partial.span().first(rows * dv), st.acc.span().first(rows * dv));
    }
    for (std::size_t r = 0; r < rows; ++r) {
      const std::size_t i = i0 + r;
      float* o = x.out + i * x.ldo;
      if (st.overflow[r]) {
        exact_row(x.q + i * x.ldq, x.k, x.ldk, s.d, visible(i, sq, sk, causal), scale, x.bias ? x.bias + i * sk : nullptr, exact,
                  nullptr, x.v, x.ldv, dv, o);
        continue;
      }
      const float inv = st.l[r] > 0 ? 1.f / st.l[r] : 0.f;  // no visible key: a zero row
      ops::scale({st.acc.data() + r * dv, dv}, inv, {o, dv});
      // The unnormalised sum of exp * v can overflow for v near float32's limit, where the normalised
      // weights of the other path do not: such a row is computed again in double (a convex combination
      // of the v rows, so finite).
      if (!ops::all_finite({o, dv}))
        exact_row(x.q + i * x.ldq, x.k, x.ldk, s.d, visible(i, sq, sk, causal), scale, x.bias ? x.bias + i * sk : nullptr, exact,
                  nullptr, x.v, x.ldv, dv, o);
    }
  }
}

}  // namespace

Status attention(std::span<const float> q, std::span<const float> k, std::span<const float> v, const Shape& shape,
                 std::span<const float> bias, bool causal, double scale, std::span<float> out, std::span<float> weights) {
  const std::size_t sq = shape.seq_q, sk = shape.seq_k, heads = shape.heads, d = shape.d, dv = shape.dv, batch = shape.batch;
  const std::size_t kv_heads = shape.kv_heads ? shape.kv_heads : heads;
  // invariant (next 8): attention.js checks the shapes of q, k and v; validate.js reads scale as a finite number
  POSENC_TRY(require_positive(batch, "batch"));
  POSENC_TRY(require_positive(sq, "seqQ"));
  POSENC_TRY(require_positive(sk, "seqK"));
  POSENC_TRY(require_positive(heads, "heads"));
  POSENC_TRY(require_positive(d, "d"));
  POSENC_TRY(require_positive(dv, "dv"));
  if (heads % kv_heads) return fail("the query heads (", heads, ") must be a multiple of the key/value heads (", kv_heads, ")");
  POSENC_TRY(require_finite(scale, "scale"));
  if (std::fabs(scale) > contract::kFloat32Max)
    return fail("scale must fit in float32 (|scale| <= " POSENC_LIMIT_FLOAT32_MAX "), got ", scale);
  // plane = seq_q * seq_k is allocated only as weights: streaming checks it for overflow alone
  std::size_t plane = 0, bq = 0, bk = 0, bh = 0;
  // invariant (next 16): attention.js checks the shapes and maps axes, allocates the outputs, refuses 2^32 logits (cost.js)
  POSENC_TRY(checked_product(plane, sq, sk, "seqQ * seqK"));
  POSENC_TRY(checked_size(bq, batch, sq, "q"));
  POSENC_TRY(checked_size(bk, batch, sk, "k"));
  POSENC_TRY(checked_size(bh, batch, heads, "the weights"));
  POSENC_TRY(check_size(q, bq, heads, d, "q", "batch * seqQ * heads * d"));
  POSENC_TRY(check_size(k, bk, kv_heads, d, "k", "batch * seqK * kvHeads * d"));
  POSENC_TRY(check_size(v, bk, kv_heads, dv, "v", "batch * seqK * kvHeads * dv"));
  POSENC_TRY(check_size(out, bq, heads, dv, "the output", "batch * seqQ * heads * dv"));
  if (!weights.empty()) POSENC_TRY(check_size(weights, bh, sq, sk, "the weights", "batch * heads * seqQ * seqK"));
  if (shape.axes != Axes::bshd && shape.axes != Axes::bhsd)
    return fail("axes ", static_cast<int>(shape.axes), " is unknown; allowed: ", contract::kAxesList);
  std::size_t bias_batch = shape.bias_batch, bias_heads = shape.bias_heads;
  if (!bias.empty()) {
    if (bias_batch == 0 && bias_heads == 0) {  // [seq_q, seq_k] or [heads, seq_q, seq_k]
      std::size_t per_head = 0;
      POSENC_TRY(checked_product(per_head, heads, plane, "the bias"));
      if (bias.size() != plane && bias.size() != per_head)
        return fail("bias holds ", bias.size(), " values; expected seqQ * seqK = ", plane,
                    " or heads * seqQ * seqK = ", per_head);
      bias_batch = 1, bias_heads = bias.size() == plane ? 1 : heads;
    }
    if ((bias_batch != 1 && bias_batch != batch) || (bias_heads != 1 && bias_heads != heads))
      return fail("the bias's leading dimensions [", bias_batch, ", ", bias_heads, "] must each be 1 or [batch, heads] = [",
                  batch, ", ", heads, "]");
    std::size_t lead = 0, expected = 0;
    POSENC_TRY(checked_product(lead, bias_batch, bias_heads, "the bias"));
    POSENC_TRY(checked_product(expected, lead, plane, "the bias"));
    if (bias.size() != expected) return fail("bias holds ", bias.size(), " values; expected ", expected);
  }
  POSENC_TRY(check_finite(q, "q"));
  POSENC_TRY(check_finite(k, "k"));
  POSENC_TRY(check_finite(v, "v"));
  for (std::size_t i = 0; i < bias.size(); ++i)
    if (std::isnan(bias[i]) || bias[i] == kInf) return fail("bias[", i, "] must be finite or -Infinity, got ", bias[i]);
  Buffer<double> exact;  // one row of logits, for rows that overflow float32
  POSENC_TRY(exact.allocate(sk, "a row of logits"));
  Stream stream;
  if (weights.empty()) POSENC_TRY(stream.allocate(d, dv));
  // K and V packed once per key/value head, for every block of queries and keys that reads them.
  Buffer<float> kpack, vpack;
  POSENC_TRY(kpack.allocate(packed_size<float>(d, sk), "the packed keys"));
  POSENC_TRY(vpack.allocate(packed_size<float>(sk, dv), "the packed values"));
  Panels<float> kp{}, vp{};

  const std::size_t group = heads / kv_heads;
  // Where head h of batch entry b starts and the stride between its rows: [b, s, h, :] or [b, h, s, :].
  const bool heads_first = shape.axes == Axes::bhsd;
  const auto at = [heads_first](auto* base, std::size_t b, std::size_t h, std::size_t hs, std::size_t seq, std::size_t width) {
    return heads_first ? base + ((b * hs + h) * seq) * width : base + (b * seq * hs + h) * width;
  };
  const auto stride = [heads_first](std::size_t hs, std::size_t width) { return heads_first ? width : hs * width; };
  for (std::size_t b = 0; b < batch; ++b)
    for (std::size_t h = 0; h < heads; ++h) {
      const std::size_t kvh = h / group;
      const float* kh = at(k.data(), b, kvh, kv_heads, sk, d);
      const float* vh = at(v.data(), b, kvh, kv_heads, sk, dv);
      if (h % group == 0) {
        kp = pack<float>(kpack.data(), {kh, sk, d, stride(kv_heads, d)}, true, d, sk);
        vp = pack<float>(vpack.data(), {vh, sk, dv, stride(kv_heads, dv)}, false, sk, dv);
      }
      const std::size_t bias_at = ((bias_batch > 1 ? b : 0) * bias_heads + (bias_heads > 1 ? h : 0)) * plane;
      const Head x{at(q.data(), b, h, heads, sq, d),
                   kh,
                   vh,
                   stride(heads, d),
                   stride(kv_heads, d),
                   stride(kv_heads, dv),
                   at(out.data(), b, h, heads, sq, dv),
                   stride(heads, dv),
                   bias.empty() ? nullptr : bias.data() + bias_at,
                   kp,
                   vp};
      if (weights.empty())
        head_streaming(x, shape, causal, scale, stream, exact.data());
      else
        head_weighted(x, shape, causal, scale, weights.data() + (b * heads + h) * plane, exact.data());
    }
  return {};
}

}  // namespace posenc::attention
