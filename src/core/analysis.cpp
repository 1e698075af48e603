#include "analysis.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include "angles.hpp"
#include "attention.hpp"
#include "buffer.hpp"
#include "simd.hpp"
#include "sinusoidal.hpp"
#include "status.hpp"

namespace posenc::analysis {
namespace {

using bd = simd::batch<double>;
constexpr std::size_t W = simd::doubles;
constexpr std::size_t K = 4, R = K * W;  // nearest distances: a panel of K SIMD batches of rows

// Operand blocks of the pairwise analyses hold about this many bytes of doubles: they stay in cache,
// and the memory besides the caller's output is O(block) whatever the shape.
constexpr std::size_t kBlockBytes = std::size_t{1} << 17;

POSENC_COLD Status check_table(std::span<const float> t, std::size_t rows, std::size_t dim, std::size_t min_rows) {
  if (rows < min_rows) return fail("t must have at least ", min_rows, " row", min_rows > 1 ? "s" : "", ", got ", rows);
  POSENC_TRY(require_positive(dim, "dim"));
  std::size_t n = 0;
  POSENC_TRY(checked_size(n, rows, dim, "t"));  // invariant: validate.js tensor() refuses a tensor past LIMITS.maxElements
  // invariant: the wrapper passes the tensor's own size
  if (t.size() != n) return fail("t holds ", t.size(), " values; expected rows * dim = ", n);
  for (std::size_t i = 0; i < t.size(); ++i)
    if (!std::isfinite(t[i])) return fail("t[", i, "] must be finite, got ", t[i]);
  return {};
}

// Columns [c0, c0 + nc) of rows [r0, r0 + n) of t [.., dim] as an n x nc block of doubles, each row
// times scale[r] when scale is given.
void widen_block(const float* t, std::size_t dim, std::size_t r0, std::size_t n, std::size_t c0, std::size_t nc,
                 const double* scale, double* out) {
  for (std::size_t r = 0; r < n; ++r) {
    const float* x = t + (r0 + r) * dim + c0;
    const double f = scale ? scale[r0 + r] : 1.0;
    for (std::size_t c = 0; c < nc; ++c) out[r * nc + c] = f * double(x[c]);
  }
}

// The failure for a row of dot products v (row i, columns j0 ..) of which one is beyond float32.
POSENC_COLD Status beyond_float32(const double* v, std::size_t n, std::size_t i, std::size_t j0) {
  std::size_t c = 0;
  while (c + 1 < n && std::fabs(v[c]) <= contract::kFloat32Max) ++c;
  return fail("the dot product of rows ", i, " and ", j0 + c, " of t is ", v[c],
              ", beyond float32; use metric 'cosine' or scale t down");
}

// One block of the similarity matrix: rows [i0, i0 + ni) against rows [j0, j0 + nj), the double
// products of chunks of at most C dimensions (attention::matmul) summed in `dots`, then rounded
// into out (cosine: clamped to [-1, 1]; dot: refused beyond float32). a holds rows i0.. widened when
// the dimensions are one chunk (the caller widens them once for every j0), else ni * C doubles; b
// nj * C doubles, dots and part ni * nj.
struct SimilarityBlocks {
  const float* t;
  std::size_t rows, dim, C;
  const double* scale;  // 1/|t_r| for cosine, else nullptr
  double *a, *b, *dots, *part;
};
Status similarity_block(const SimilarityBlocks& s, std::size_t i0, std::size_t ni, std::size_t j0, std::size_t nj, float* out) {
  for (std::size_t c0 = 0; c0 < s.dim; c0 += s.C) {
    const std::size_t nc = std::min(s.C, s.dim - c0);
    if (s.C < s.dim) widen_block(s.t, s.dim, i0, ni, c0, nc, s.scale, s.a);
    widen_block(s.t, s.dim, j0, nj, c0, nc, s.scale, s.b);
    double* target = c0 == 0 ? s.dots : s.part;
    POSENC_TRY(attention::matmul(attention::MatrixOf<double>{s.a, ni, nc, nc}, attention::MatrixOf<double>{s.b, nj, nc, nc}, true,
                                 1.0, target, nj));
    if (c0 > 0)
      for (std::size_t k = 0; k < ni * nj; ++k) s.dots[k] += s.part[k];
  }
  // One pass, no early exit (the loops vectorise); a failure is reported after the row.
  for (std::size_t r = 0; r < ni; ++r) {
    const double* v = s.dots + r * nj;
    float* o = out + (i0 + r) * s.rows + j0;
    if (s.scale) {
      for (std::size_t c = 0; c < nj; ++c) o[c] = float(std::clamp(v[c], -1.0, 1.0));
      continue;
    }
    bool beyond = false;
    for (std::size_t c = 0; c < nj; ++c) {
      beyond = beyond || !(std::fabs(v[c]) <= contract::kFloat32Max);
      o[c] = float(v[c]);
    }
    if (beyond) return beyond_float32(v, nj, i0 + r, j0);
  }
  return {};
}

// Nearest distances, the block kernel: the R rows of a panel (transposed: value c of row r at
// panel[c * R + r]) against the m rows of t at x. Keeps each panel row's smallest squared distance
// in its lane of `lanes`, and lowers best[j] to row j's smallest squared distance to the panel.
// Differences are taken directly and squared in double, W pairs per SIMD batch and K = 4 batches
// per row of x (written out: accumulators in registers whatever the optimisation level), so a small
// dim pays no per-pair overhead.
void nearest_block(const double* panel, std::size_t dim, const float* x, std::size_t m, double* best, bd* lanes) {
  static_assert(K == 4);
  bd l0 = lanes[0], l1 = lanes[1], l2 = lanes[2], l3 = lanes[3];
  for (std::size_t j = 0; j < m; ++j, x += dim) {
    bd a0(0.0), a1(0.0), a2(0.0), a3(0.0);
    const double* p = panel;
    for (std::size_t c = 0; c < dim; ++c, p += R) {
      const bd xc = bd(double(x[c]));
      const bd e0 = bd::load_unaligned(p) - xc, e1 = bd::load_unaligned(p + W) - xc;
      const bd e2 = bd::load_unaligned(p + 2 * W) - xc, e3 = bd::load_unaligned(p + 3 * W) - xc;
      a0 += e0 * e0;
      a1 += e1 * e1;
      a2 += e2 * e2;
      a3 += e3 * e3;
    }
    l0 = xsimd::min(l0, a0);
    l1 = xsimd::min(l1, a1);
    l2 = xsimd::min(l2, a2);
    l3 = xsimd::min(l3, a3);
    best[j] = std::min(best[j], xsimd::reduce_min(xsimd::min(xsimd::min(a0, a1), xsimd::min(a2, a3))));
  }
  lanes[0] = l0, lanes[1] = l1, lanes[2] = l2, lanes[3] = l3;
}

// Rows [i0, i0 + R) of t (fewer at the end) against each other and every later row: best[r] becomes
// the smallest squared distance of row r to any row after i0. panel holds R * dim doubles.
void nearest_panel(const float* t, std::size_t rows, std::size_t dim, std::size_t i0, double* panel, double* best) {
  const std::size_t n = std::min(R, rows - i0);
  // Transposed; lanes past the last row repeat it (their distances are its own: best[j] is unchanged).
  for (std::size_t r = 0; r < R; ++r)
    for (std::size_t c = 0; c < dim; ++c) panel[c * R + r] = t[(i0 + std::min(r, n - 1)) * dim + c];
  for (std::size_t a = 0; a < n; ++a)
    for (std::size_t b = a + 1; b < n; ++b) {
      double d2 = 0;
      for (std::size_t c = 0; c < dim; ++c) {
        const double e = panel[c * R + a] - panel[c * R + b];
        d2 += e * e;
      }
      best[i0 + a] = std::min(best[i0 + a], d2);
      best[i0 + b] = std::min(best[i0 + b], d2);
    }
  bd lanes[K];
  for (auto& l : lanes) l = bd(std::numeric_limits<double>::infinity());
  nearest_block(panel, dim, t + (i0 + n) * dim, rows - i0 - n, best + i0 + n, lanes);
  alignas(64) double lane_values[R];
  for (std::size_t q = 0; q < K; ++q) lanes[q].store_aligned(lane_values + q * W);
  for (std::size_t r = 0; r < n; ++r) best[i0 + r] = std::min(best[i0 + r], lane_values[r]);
}

// Rows of many dimensions (a panel of them would not stay in cache): a pair at a time, SIMD over the
// dimensions, sum_c (t_i[c] - t_j[c])^2 in double, the rows widened a chunk at a time.
void nearest_pairs(const float* t, std::size_t rows, std::size_t dim, double* best) {
  constexpr std::size_t kChunk = 512;
  alignas(64) double a[kChunk], b[kChunk];
  for (std::size_t i = 0; i < rows; ++i)
    for (std::size_t j = i + 1; j < rows; ++j) {
      bd acc(0.0);
      double d2 = 0;
      for (std::size_t c0 = 0; c0 < dim; c0 += kChunk) {
        const std::size_t n = std::min(kChunk, dim - c0), nv = n - n % W;
        widen_block(t, dim, i, 1, c0, n, nullptr, a);
        widen_block(t, dim, j, 1, c0, n, nullptr, b);
        for (std::size_t c = 0; c < nv; c += W) {
          const bd e = bd::load_aligned(a + c) - bd::load_aligned(b + c);
          acc += e * e;
        }
        for (std::size_t c = nv; c < n; ++c) d2 += (a[c] - b[c]) * (a[c] - b[c]);
      }
      d2 += xsimd::reduce_add(acc);
      best[i] = std::min(best[i], d2);
      best[j] = std::min(best[j], d2);
    }
}

}  // namespace

Status stats(std::span<const float> values, Stats& out) {
  if (values.empty()) return fail("t must hold at least one value");
  double lo = values[0], hi = values[0], sum = 0.0;
  bool nan = false;  // NaN anywhere makes every statistic NaN, in any order (as NumPy's min and max)
  for (float v : values) {
    lo = std::min<double>(lo, v);
    hi = std::max<double>(hi, v);
    sum += v;
    nan = nan || v != v;
  }
  if (nan) {
    const double q = std::numeric_limits<double>::quiet_NaN();
    out = {q, q, q, q};
    return {};
  }
  const double mean = sum / double(values.size());
  double sq = 0.0;  // two-pass variance: no cancellation
  for (float v : values) sq += (v - mean) * (v - mean);
  out = {lo, hi, mean, std::sqrt(sq / double(values.size()))};
  return {};
}

POSENC_COLD Status similarity(std::span<const float> t, std::size_t rows, std::size_t dim, Metric metric, std::span<float> out) {
  // invariant: validate.js maps the option's names to these indices
  if (metric != Metric::dot && metric != Metric::cosine)
    return fail("metric ", int(metric), " is unknown; allowed: ", contract::kMetricList);
  POSENC_TRY(check_table(t, rows, dim, 1));
  std::size_t n = 0;
  // invariant: the wrapper refuses this size (validate.js size()) before allocating the output
  POSENC_TRY(checked_size(n, rows, rows, "the similarity matrix"));
  // invariant: the wrapper allocates the output at this size
  if (out.size() != n) return fail("the output holds ", out.size(), " values; expected rows * rows = ", n);
  // Cosine: the rows are normalised in double as they are widened (1/|t_r|, 0 for a zero row).
  Buffer<double> inverse_norm;
  if (metric == Metric::cosine) {
    POSENC_TRY(inverse_norm.allocate(rows, "the row norms"));
    for (std::size_t r = 0; r < rows; ++r) {
      double sq = 0;
      for (std::size_t c = 0; c < dim; ++c) sq += double(t[r * dim + c]) * double(t[r * dim + c]);
      inverse_norm[r] = sq > 0 ? 1 / std::sqrt(sq) : 0.0;
    }
  }
  // Blocks of Bi x Bj outputs (256 x 64) over chunks of C dimensions (512, longer for few rows): a
  // widened block of rows is reused for every block of columns, matmul packs each block of columns
  // once per 256 rows, and memory besides out stays ~1.5 MiB.
  const std::size_t Bi = std::min<std::size_t>(rows, 256), Bj = std::min<std::size_t>(rows, 64);
  const std::size_t C = std::min(dim, std::max<std::size_t>(512, 32768 / Bi));
  Buffer<double> a, b, dots, part;
  POSENC_TRY(a.allocate(Bi * C, "a block of t in double"));
  POSENC_TRY(b.allocate(Bj * C, "a block of t in double"));
  POSENC_TRY(dots.allocate(Bi * Bj, "a block of the similarity matrix"));
  if (C < dim) POSENC_TRY(part.allocate(Bi * Bj, "a block of the similarity matrix"));
  const double* scale = metric == Metric::cosine ? inverse_norm.data() : nullptr;
  const SimilarityBlocks s{t.data(), rows, dim, C, scale, a.data(), b.data(), dots.data(), part.data()};
  for (std::size_t i0 = 0; i0 < rows; i0 += Bi) {
    const std::size_t ni = std::min(Bi, rows - i0);
    if (C == dim) widen_block(t.data(), dim, i0, ni, 0, dim, scale, a.data());
    for (std::size_t j0 = 0; j0 < rows; j0 += Bj)
      POSENC_TRY(similarity_block(s, i0, ni, j0, std::min(Bj, rows - j0), out.data()));
  }
  return {};
}

POSENC_COLD Status shift_matrix(std::size_t d_model, double base, double k, std::span<float> out) {
  POSENC_TRY(sinusoidal::check_args(d_model, base));
  if (d_model % 2) return fail("dModel must be even for the shift matrix (an odd last column has no cos partner), got ", d_model);
  POSENC_TRY(require_finite(k, "k"));  // invariant: validate.js reads only finite numbers
  std::size_t total = 0;
  // invariant: shiftMatrix's dModel is at most LIMITS.maxShiftDModel
  POSENC_TRY(checked_size(total, d_model, d_model, "the shift matrix"));
  // invariant: the wrapper allocates the output at this size
  if (out.size() != total) return fail("the output holds ", out.size(), " values; expected dModel * dModel = ", total);
  const std::size_t n = d_model / 2;
  Buffer<double> w, rows;
  POSENC_TRY(sinusoidal::inv_frequencies(d_model, base, n, w));
  for (std::size_t i = 0; i < n; ++i)  // an angle beyond double's range has no defined sine
    if (!std::isfinite(k * w[i]))
      return fail("the angle of k = ", k, " at frequency ", w[i], " (index ", i, ", base ", base,
                  ") is beyond double's range (|k * frequency| must be below 1.8e308); use a smaller k or a larger base");
  POSENC_TRY(rows.allocate(2 * n + angles::exact_row_scratch(n), "the sin/cos row"));
  double *s = rows.data(), *c = s + n;
  angles::exact_row(k, w, s, c, c + n);
  std::fill(out.begin(), out.end(), 0.f);
  for (std::size_t i = 0; i < n; ++i) {
    float* r0 = out.data() + (2 * i) * d_model + 2 * i;  // row of sin((p+k) w_i)
    float* r1 = r0 + d_model;                            // row of cos((p+k) w_i)
    r0[0] = float(c[i]);
    r0[1] = float(s[i]);
    r1[0] = float(-s[i]);
    r1[1] = float(c[i]);
  }
  return {};
}

POSENC_COLD Status nearest_distances(std::span<const float> t, std::size_t rows, std::size_t dim, std::span<float> out) {
  POSENC_TRY(check_table(t, rows, dim, 2));
  // invariant: the wrapper allocates the output at this size
  if (out.size() != rows) return fail("the output holds ", out.size(), " values; expected rows = ", rows);
  // Each pair once. best: each row's smallest squared distance so far.
  Buffer<double> best, panel;
  POSENC_TRY(best.assign(rows, std::numeric_limits<double>::infinity(), "the distances"));
  if (dim <= kBlockBytes / (sizeof(double) * R)) {
    POSENC_TRY(panel.allocate(R * dim, "a block of t in double"));
    for (std::size_t i0 = 0; i0 < rows; i0 += R) nearest_panel(t.data(), rows, dim, i0, panel.data(), best.data());
  } else {
    nearest_pairs(t.data(), rows, dim, best.data());
  }
  // |a - b| <= 2 * 3.4e38 for float32 rows of one dimension; more dimensions can exceed float32.
  for (std::size_t i = 0; i < rows; ++i) {
    const double d = std::sqrt(best[i]);
    if (!(d <= contract::kFloat32Max))
      return fail("the distance from row ", i, " of t to its nearest row is ", d, ", beyond float32; scale t down");
    out[i] = float(d);
  }
  return {};
}

}  // namespace posenc::analysis
