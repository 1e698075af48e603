// Attention family: matmul (against a double reference), softmax_row and attention with biases,
// -Infinity masks, the causal mask and extreme magnitudes. Accepted calls give weights in [0, 1]
// whose rows sum to 1 (or are all zero when every key is masked), masked keys exactly 0, and
// finite outputs; never a NaN, however large the (finite) inputs.
#include <cmath>
#include <limits>

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
        att::matmul({a.data(), m, kk, kk}, {b.data(), transpose ? n : kk, transpose ? kk : n, transpose ? kk : n}, transpose,
                    alpha, out.data(), n);
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

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
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
  std::vector<float> weights(in.buffer(fuzz::product(heads, plane)), -7.0f);

  const bool ok = fuzz::accepted([&] { att::attention(q, k, v, {sq, sk, heads, d, dv}, bias, causal, scale, out, weights); });
  if (!ok) return 0;
  // Whatever was accepted: sizes right, inputs finite.
  FUZZ_CHECK(q.size() == sq * heads * d && k.size() == sk * heads * d && v.size() == sk * heads * dv);
  FUZZ_CHECK(fuzz::all_finite(q) && fuzz::all_finite(k) && fuzz::all_finite(v) && std::isfinite(scale));
  FUZZ_CHECK(out.size() == sq * heads * dv && weights.size() == heads * plane);
  float vmax = 0;
  for (float x : v) vmax = std::max(vmax, std::fabs(x));
  for (std::size_t h = 0; h < heads; ++h)
    for (std::size_t i = 0; i < sq; ++i) {
      double sum = 0;
      const std::ptrdiff_t visible = std::ptrdiff_t(i + 1 + sk) - std::ptrdiff_t(sq);
      for (std::size_t j = 0; j < sk; ++j) {
        const float w = weights[(h * sq + i) * sk + j];
        FUZZ_CHECK_MSG(w >= 0 && w <= 1, "weight " + fuzz::str(w));  // false for NaN too
        const bool masked_by_bias = !bias.empty() && bias[(bias.size() == plane ? 0 : h * plane) + i * sk + j] == -kInf;
        if ((causal && std::ptrdiff_t(j) >= visible) || masked_by_bias) FUZZ_CHECK(w == 0);
        sum += w;
      }
      FUZZ_CHECK_MSG(sum == 0 || std::fabs(sum - 1) <= 1e-5, "row sum " + fuzz::str(sum));
      for (std::size_t c = 0; c < dv; ++c) {
        const float o = out[(i * heads + h) * dv + c];
        FUZZ_CHECK(std::isfinite(o) || vmax > 1e37f);
        FUZZ_CHECK(std::fabs(o) <= vmax * (1 + 1e-5f));
      }
    }
  return 0;
}
