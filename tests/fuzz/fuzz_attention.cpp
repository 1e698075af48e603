// Attention family: matmul (against a double reference), softmax_row and attention with biases,
// -Infinity masks, the causal mask and extreme magnitudes. Accepted calls give weights in [0, 1]
// whose rows sum to 1 (all zero exactly when every key is masked), masked keys exactly 0, and
// finite outputs; never a NaN, however large the (finite) inputs. Rows whose logits overflow
// float32 are computed in double: a key whose exact logit is far below the row's largest gets
// weight 0 (overflowed logits are not all equal).
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "attention.hpp"
#include "fuzz.hpp"

namespace att = posenc::attention;

namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

void check_matmul(fuzz::Input& in) {
  const std::size_t m = in.in<std::size_t>(0, 13), kk = in.in<std::size_t>(0, 13), n = in.in<std::size_t>(0, 19);
  const bool transpose = in.flag();
  const auto a = in.floats(m * kk, 4.0f, false), b = in.floats(kk * n, 4.0f, false);
  const float alpha = float(in.real(-2.0, 2.0));
  std::vector<float> out(m * n, -7.0f);
  fuzz::must_accept(
      [&] {
        return att::matmul({a.data(), m, kk, kk}, {b.data(), transpose ? n : kk, transpose ? kk : n, transpose ? kk : n},
                           transpose, alpha, out.data(), n);
      },
      "matmul");
  for (std::size_t r = 0; r < m; ++r)
    for (std::size_t c = 0; c < n; ++c) {
      double want = 0, mag = 0;
      for (std::size_t i = 0; i < kk; ++i) {
        const double bv = transpose ? b[c * kk + i] : b[i * n + c];
        want += double(a[r * kk + i]) * bv;
        mag += std::fabs(double(a[r * kk + i]) * bv);
      }
      want *= alpha;
      FUZZ_CHECK_MSG(std::fabs(out[r * n + c] - want) <= 1e-5 * std::fabs(alpha) * mag + 1e-30,
                     fuzz::str(out[r * n + c]) + " vs " + fuzz::str(want));
    }
}

}  // namespace

FUZZ_TARGET(attention) {
  fuzz::Input in(data, size);
  if (in.rarely(4)) {
    check_matmul(in);
    return 0;
  }
  const std::size_t sq = in.size(1, 12), sk = in.size(1, 12), heads = in.size(1, 3), d = in.size(1, 12), dv = in.size(1, 9);
  // Magnitudes: ordinary, large (logits overflow float32), or tiny.
  const float mag = in.flag() ? 3.0f : (in.flag() ? float(in.real(1e15, 3e38)) : 1e-30f);
  const auto q = in.floats(in.buffer(fuzz::product(sq, fuzz::product(heads, d))), mag);
  const auto k = in.floats(in.buffer(fuzz::product(sk, fuzz::product(heads, d))), mag);
  const auto v = in.floats(in.buffer(fuzz::product(sk, fuzz::product(heads, dv))), in.flag() ? 3.0f : mag);
  const std::size_t plane = fuzz::product(sq, sk);
  std::vector<float> bias;
  const int bias_kind = in.in<int>(0, 2);  // none, [q, k], [heads, q, k]
  if (bias_kind) {
    bias = in.floats(in.buffer(bias_kind == 1 ? plane : fuzz::product(heads, plane)), float(in.number(0.0, 50.0)));
    for (auto& b : bias)
      if (in.rarely(4)) b = -kInf;
    if (!bias.empty() && in.rarely(32)) bias[0] = in.flag() ? kInf : std::numeric_limits<float>::quiet_NaN();
  }
  const bool causal = in.flag();
  const double scale = in.flag() ? 1.0 / std::sqrt(double(d ? d : 1)) : in.number(-4.0, 4.0, 6);
  std::vector<float> out(in.buffer(fuzz::product(sq, fuzz::product(heads, dv))), -7.0f);
  // weights: usually [heads, q, k]; sometimes none (the streamed, online-softmax path)
  std::vector<float> weights(in.rarely(6) ? 0 : in.buffer(fuzz::product(heads, plane)), -7.0f);
  const att::Shape shape{sq, sk, heads, d, dv};

  const bool ok = fuzz::accepted([&] { return att::attention(q, k, v, shape, bias, causal, scale, out, weights); });
  if (!ok) return 0;
  // Whatever was accepted: sizes right, inputs finite.
  FUZZ_CHECK(q.size() == sq * heads * d && k.size() == sk * heads * d && v.size() == sk * heads * dv);
  FUZZ_CHECK(fuzz::all_finite(q) && fuzz::all_finite(k) && fuzz::all_finite(v) && std::isfinite(scale));
  FUZZ_CHECK(out.size() == sq * heads * dv && (weights.empty() || weights.size() == heads * plane));
  const bool have_weights = !weights.empty();
  FUZZ_CHECK(std::fabs(scale) <= 3.4028234663852886e38);
  float vmax = 0;
  for (float x : v) vmax = std::max(vmax, std::fabs(x));
  std::vector<long double> logit(sk), slack(sk);
  for (std::size_t h = 0; h < heads; ++h)
    for (std::size_t i = 0; i < sq; ++i) {
      for (std::size_t c = 0; c < dv; ++c) {
        const float o = out[(i * heads + h) * dv + c];
        FUZZ_CHECK(std::isfinite(o) || vmax > 1e37f);
        FUZZ_CHECK_MSG(std::fabs(o) <= vmax * (1 + 1e-5f),
                       fuzz::str(o) + " beyond max |v| " + fuzz::str(vmax) + (have_weights ? "" : " (streamed)"));
      }
      if (!have_weights) continue;
      double sum = 0;
      const std::ptrdiff_t visible = std::ptrdiff_t(i + 1 + sk) - std::ptrdiff_t(sq);
      const float* b = bias.empty() ? nullptr : bias.data() + (bias.size() == plane ? 0 : h * plane) + i * sk;
      bool any_visible = false, overflows = false;
      long double top = -INFINITY, top_slack = 0;
      for (std::size_t j = 0; j < sk; ++j) {
        const float w = weights[(h * sq + i) * sk + j];
        FUZZ_CHECK_MSG(w >= 0 && w <= 1, "weight " + fuzz::str(w));  // false for NaN too
        const bool masked = (causal && std::ptrdiff_t(j) >= visible) || (b && b[j] == -kInf);
        if (masked) FUZZ_CHECK(w == 0);
        sum += w;
        logit[j] = -INFINITY;
        if (masked) continue;
        any_visible = true;
        // the exact logit (products of floats are exact in long double) and how far double may be off
        long double dot = 0, mag = 0;
        for (std::size_t c = 0; c < d; ++c) {
          const long double p = (long double)q[(i * heads + h) * d + c] * (long double)k[(j * heads + h) * d + c];
          dot += p;
          mag += std::fabs(p);
        }
        logit[j] = (long double)scale * dot + (b ? (long double)b[j] : 0.0L);
        slack[j] = 1e-13L * std::fabs((long double)scale) * mag + 1e-13L;
        if (logit[j] > 1.01L * 3.4028234663852886e38L) overflows = true;  // +Infinity in float32: the double path
        if (logit[j] > top) top = logit[j], top_slack = slack[j];
      }
      if (any_visible)  // (overflows to -Infinity are not masks)
        FUZZ_CHECK_MSG(std::fabs(sum - 1) <= 1e-5,
                       "row sum " + fuzz::str(sum) + " with a visible key (top logit " + fuzz::str(double(top)) + ")");
      else
        FUZZ_CHECK(sum == 0);
      if (overflows)  // exp(-120) is below float32's smallest subnormal: such keys get exactly 0
        for (std::size_t j = 0; j < sk; ++j)
          if (top - logit[j] > top_slack + slack[j] + 120)
            FUZZ_CHECK_MSG(weights[(h * sq + i) * sk + j] == 0,
                           "key " + std::to_string(j) + " logit " + fuzz::str(double(logit[j])) + " vs top " +
                               fuzz::str(double(top)) + " has weight " + fuzz::str(weights[(h * sq + i) * sk + j]));
    }
  if (!have_weights) return 0;
  // Streamed without weights (online softmax): the same outputs, to float rounding.
  std::vector<float> streamed(out.size(), -7.0f);
  fuzz::must_accept([&] { return att::attention(q, k, v, shape, bias, causal, scale, streamed, {}); },
                    "attention without weights");
  for (std::size_t i = 0; i < out.size(); ++i)
    FUZZ_CHECK_MSG(std::fabs(double(streamed[i]) - out[i]) <= 1e-5 * vmax + 1e-30 || (!std::isfinite(out[i]) && vmax > 1e37f),
                   "streamed " + fuzz::str(streamed[i]) + " vs " + fuzz::str(out[i]));
  return 0;
}
