#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <span>
#include <vector>

#include "reference.hpp"
#include "rope.hpp"
#include "status_check.hpp"

using posenc::angles::Positions;
using posenc::rope::Frequencies;
using posenc::rope::Layout;
using posenc::rope::Scaling;
using posenc::rope::ScalingType;

namespace {

constexpr long double kPiL = 3.141592653589793238462643383279502884L;

// Deterministic inputs in [-1, 1] (an LCG; only needs to be varied, not random).
std::vector<float> inputs(std::size_t n, std::uint32_t seed) {
  std::vector<float> v(n);
  for (auto& x : v) {
    seed = seed * 1664525u + 1013904223u;
    x = float(double(seed >> 8) / double(1u << 23) - 1.0);
  }
  return v;
}

std::vector<float> rope(const std::vector<float>& x, std::size_t seq, std::size_t heads, std::size_t head_dim, std::size_t rot,
                        const Positions& p, const Frequencies& f, Layout layout) {
  std::vector<float> out(x.size());
  REQUIRE_OK(posenc::rope::apply(x, seq, heads, head_dim, rot, p, f, layout, out));
  return out;
}

Frequencies frequencies(std::size_t dim, double base, const Scaling& scaling) {
  Frequencies f;
  REQUIRE_OK(posenc::rope::frequencies(dim, base, scaling, f));
  return f;
}

Frequencies plain(std::size_t dim, double base = 10000) {
  return frequencies(dim, base, {});
}

// Su et al.'s rotation of one head, in long double with exactly reduced angles (reference.hpp):
// pairs (i, i + rot/2) for the half layout, (2i, 2i + 1) interleaved; other channels unchanged.
std::vector<long double> ref_head(const float* x, std::size_t head_dim, std::size_t rot, double p, double base, long double af,
                                  Layout layout) {
  std::vector<long double> out(x, x + head_dim);
  const std::size_t h = rot / 2;
  for (std::size_t i = 0; i < h; ++i) {
    const long double a = ref::angle(p, ref::inv_freq(i, rot, base));
    const long double c = std::cos(a) * af, s = std::sin(a) * af;
    const std::size_t ia = layout == Layout::half ? i : 2 * i, ib = layout == Layout::half ? i + h : 2 * i + 1;
    out[ia] = x[ia] * c - x[ib] * s;
    out[ib] = x[ib] * c + x[ia] * s;
  }
  return out;
}

// Max |got - reference| over the checked rows (ref::checked_row) and every head.
double max_error(const std::vector<float>& got, const std::vector<float>& x, const std::vector<double>& pos, std::size_t heads,
                 std::size_t head_dim, std::size_t rot, double base, Layout layout, long double af = 1) {
  double worst = 0;
  for (std::size_t r = 0; r < pos.size(); ++r)
    for (std::size_t h = 0; h < heads && ref::checked_row(r, pos.size()); ++h) {
      const std::size_t at = (r * heads + h) * head_dim;
      const auto want = ref_head(x.data() + at, head_dim, rot, pos[r], base, af, layout);
      for (std::size_t j = 0; j < head_dim; ++j) worst = std::max(worst, double(std::fabs(got[at + j] - want[j])));
    }
  return worst;
}

const char* name(Layout l) {
  return l == Layout::half ? "half" : "interleaved";
}

}  // namespace

TEST_CASE("rope is the exact rotation at small, ~1e6 and 2^31-1 positions, both layouts") {
  for (Layout layout : {Layout::half, Layout::interleaved}) {
    for (std::size_t d : {64u, 10u, 128u}) {
      const std::size_t heads = 2;
      SECTION(std::string("consecutive rows ending at 2^31-1, across blocks and re-anchoring: ") + name(layout) +
              " d=" + std::to_string(d)) {
        const double start = 2147483647.0 - 4299;
        std::vector<double> pos(4300);
        for (std::size_t r = 0; r < pos.size(); ++r) pos[r] = start + double(r);
        const auto x = inputs(pos.size() * heads * d, 1);
        const auto got = rope(x, pos.size(), heads, d, d, {start, pos.size(), {}}, plain(d), layout);
        CHECK(max_error(got, x, pos, heads, d, d, 10000, layout) < 1e-6);
      }
      SECTION(std::string("rows from 0 and around 1e6: ") + name(layout) + " d=" + std::to_string(d)) {
        for (double start : {0.0, 1e6 - 50}) {
          std::vector<double> pos(200);
          for (std::size_t r = 0; r < pos.size(); ++r) pos[r] = start + double(r);
          const auto x = inputs(pos.size() * heads * d, 2);
          CHECK(max_error(rope(x, pos.size(), heads, d, d, {start, pos.size(), {}}, plain(d), layout), x, pos, heads, d, d, 10000,
                          layout) < 1e-6);
        }
      }
      SECTION(std::string("explicit scattered and fractional positions: ") + name(layout) + " d=" + std::to_string(d)) {
        const std::vector<double> pos = {0, 1, 17, 1e6, 999999.5, 123456789, 2147483647, 1073741824.5, 2147483000, 3.25};
        const auto x = inputs(pos.size() * heads * d, 3);
        CHECK(max_error(rope(x, pos.size(), heads, d, d, {0, 0, pos}, plain(d), layout), x, pos, heads, d, d, 10000, layout) <
              1e-6);
      }
    }
  }
}

TEST_CASE("rope at position 0 is the identity and at position 1 rotates pair 0 by one radian") {
  const std::vector<float> x = {1, 0, 0, 0, 0, 0, 0, 0};  // half layout: channel 0 pairs with channel 4
  const auto y = rope(x, 1, 1, 8, 8, {1, 1, {}}, plain(8), Layout::half);
  CHECK(y[0] == Approx(std::cos(1.0)).margin(1e-7));
  CHECK(y[4] == Approx(std::sin(1.0)).margin(1e-7));
  CHECK(rope(x, 1, 1, 8, 8, {0, 1, {}}, plain(8), Layout::half) == x);
}

TEST_CASE("half and interleaved are the same rotation up to the channel permutation [0,2,4,..,1,3,5,..]") {
  for (std::size_t rot : {24u, 16u}) {  // full and partial rotary
    const std::size_t seq = 37, heads = 3, hd = 24;
    const auto x = inputs(seq * heads * hd, 4);
    // z = x with each head's first rot channels regrouped: z[c] = x[perm[c]], perm = [0,2,4,..,1,3,5,..]
    std::vector<std::size_t> perm(hd);
    for (std::size_t c = 0; c < hd; ++c) perm[c] = c >= rot ? c : c < rot / 2 ? 2 * c : 2 * (c - rot / 2) + 1;
    std::vector<float> z(x.size());
    for (std::size_t row = 0; row < seq * heads; ++row)
      for (std::size_t c = 0; c < hd; ++c) z[row * hd + c] = x[row * hd + perm[c]];
    const Positions p{999990, seq, {}};
    const auto inter = rope(x, seq, heads, hd, rot, p, plain(rot), Layout::interleaved);
    const auto half = rope(z, seq, heads, hd, rot, p, plain(rot), Layout::half);
    for (std::size_t row = 0; row < seq * heads; ++row)
      for (std::size_t c = 0; c < hd; ++c)
        REQUIRE(half[row * hd + c] == inter[row * hd + perm[c]]);  // same arithmetic: bit-equal
  }
}

TEST_CASE("<R(m) q, R(n) k> depends only on m - n") {
  const std::size_t d = 64;
  const auto q = inputs(d, 5), k = inputs(d, 6);
  for (Layout layout : {Layout::half, Layout::interleaved}) {
    const auto dot = [&](double m, double n) {
      const auto rq = rope(q, 1, 1, d, d, {m, 1, {}}, plain(d), layout);
      const auto rk = rope(k, 1, 1, d, d, {n, 1, {}}, plain(d), layout);
      double s = 0;
      for (std::size_t i = 0; i < d; ++i) s += double(rq[i]) * double(rk[i]);
      return s;
    };
    // The exact value: <q, R(n - m) k>, in long double.
    const auto rk = ref_head(k.data(), d, d, -4, 10000, 1, layout);
    long double want = 0;
    for (std::size_t i = 0; i < d; ++i) want += q[i] * rk[i];
    for (double m : {7.0, 1007.0, 1e6 + 7, 123456789.0, 2147483647.0}) CHECK(dot(m, m - 4) == Approx(double(want)).margin(5e-5));
    CHECK(std::fabs(dot(7, 3) - dot(7, 2)) > 1e-3);  // and it does depend on m - n
  }
}

TEST_CASE("partial rotary leaves the other channels untouched, every head gets the row's angle") {
  const std::size_t seq = 70, heads = 3, hd = 12, rot = 8;
  const auto x = inputs(seq * heads * hd, 7);
  std::vector<double> pos(seq);
  for (std::size_t r = 0; r < seq; ++r) pos[r] = 5000.0 + double(r);
  for (Layout layout : {Layout::half, Layout::interleaved}) {
    const auto y = rope(x, seq, heads, hd, rot, {5000, seq, {}}, plain(rot), layout);
    CHECK(max_error(y, x, pos, heads, hd, rot, 10000, layout) < 1e-6);
    for (std::size_t row = 0; row < seq * heads; ++row)
      for (std::size_t c = rot; c < hd; ++c) REQUIRE(y[row * hd + c] == x[row * hd + c]);
  }
}

TEST_CASE("in place gives the same bits as out of place") {
  for (Layout layout : {Layout::half, Layout::interleaved}) {
    for (std::size_t rot : {20u, 14u, 6u}) {
      const std::size_t seq = 130, heads = 2, hd = 20;
      auto x = inputs(seq * heads * hd, 8);
      const Positions p{42, seq, {}};
      const auto y = rope(x, seq, heads, hd, rot, p, plain(rot), layout);
      REQUIRE_OK(posenc::rope::apply(x, seq, heads, hd, rot, p, plain(rot), layout, x));
      CHECK(x == y);
    }
  }
}

TEST_CASE("an offset equals explicit positions and the matching rows of a longer sequence (KV cache)") {
  const std::size_t d = 32, seq = 50;
  const auto x = inputs(seq * d, 9);
  std::vector<double> pos(seq);
  for (std::size_t r = 0; r < seq; ++r) pos[r] = 100.0 + double(r);
  for (Layout layout : {Layout::half, Layout::interleaved}) {
    const auto a = rope(x, seq, 1, d, d, {100, seq, {}}, plain(d), layout);
    CHECK(a == rope(x, seq, 1, d, d, {0, 0, pos}, plain(d), layout));
    std::vector<float> longer(150 * d, 0.f);
    std::copy(x.begin(), x.end(), longer.begin() + 100 * d);
    const auto b = rope(longer, 150, 1, d, d, {0, 150, {}}, plain(d), layout);
    for (std::size_t i = 0; i < seq * d; ++i) REQUIRE(a[i] == Approx(b[100 * d + i]).margin(1e-6));
  }
}

TEST_CASE("the attention factor multiplies cos and sin") {
  const std::size_t d = 16, seq = 100;
  const auto x = inputs(seq * d, 10);
  std::vector<double> pos(seq);
  for (std::size_t r = 0; r < seq; ++r) pos[r] = 70000.0 + double(r);
  Frequencies f = plain(d);
  f.attention_factor = 1.5;
  for (Layout layout : {Layout::half, Layout::interleaved})
    CHECK(max_error(rope(x, seq, 1, d, d, {70000, seq, {}}, f, layout), x, pos, 1, d, d, 10000, layout, 1.5L) < 1.5e-6);
}

// ---- frequencies: each scaling type against an independent re-derivation of the HF formula ---------

namespace {

using LD = long double;

std::vector<LD> default_inv(std::size_t dim, LD base) {
  std::vector<LD> w(dim / 2);
  for (std::size_t i = 0; i < w.size(); ++i) w[i] = 1 / std::pow(base, LD(2 * i) / LD(dim));  // 1 / base^(2i/dim), as HF
  return w;
}

// HF _compute_yarn_parameters, step by step.
std::vector<LD> yarn_inv(std::size_t dim, LD base, LD factor, LD orig, LD beta_fast, LD beta_slow, bool truncate) {
  const auto find_correction_dim = [&](LD rot) { return (dim * std::log(orig / (rot * 2 * kPiL))) / (2 * std::log(base)); };
  LD low = find_correction_dim(beta_fast), high = find_correction_dim(beta_slow);
  if (truncate) low = std::floor(low), high = std::ceil(high);
  low = std::max(low, LD(0));
  high = std::min(high, LD(dim - 1));
  if (low == high) high += 0.001L;
  std::vector<LD> w(dim / 2);
  for (std::size_t i = 0; i < w.size(); ++i) {
    const LD pos_freq = std::pow(base, LD(2 * i) / dim);
    const LD extrapolation = 1 / pos_freq, interpolation = 1 / (factor * pos_freq);
    const LD linear = (LD(i) - low) / (high - low);
    const LD extrapolation_factor = 1 - std::min(std::max(linear, LD(0)), LD(1));
    w[i] = interpolation * (1 - extrapolation_factor) + extrapolation * extrapolation_factor;
  }
  return w;
}

// Meta's apply_scaling (llama-models, Llama 3.1).
std::vector<LD> llama3_inv(std::size_t dim, LD base, LD scale_factor, LD low_freq_factor, LD high_freq_factor,
                           LD old_context_len) {
  const LD low_freq_wavelen = old_context_len / low_freq_factor, high_freq_wavelen = old_context_len / high_freq_factor;
  std::vector<LD> out;
  for (LD freq : default_inv(dim, base)) {
    const LD wavelen = 2 * kPiL / freq;
    if (wavelen < high_freq_wavelen)
      out.push_back(freq);
    else if (wavelen > low_freq_wavelen)
      out.push_back(freq / scale_factor);
    else {
      const LD smooth = (old_context_len / wavelen - low_freq_factor) / (high_freq_factor - low_freq_factor);
      out.push_back((1 - smooth) * freq / scale_factor + smooth * freq);
    }
  }
  return out;
}

void check_inv(const Frequencies& got, const std::vector<LD>& want) {
  REQUIRE(got.inv_freq.size() == want.size());
  for (std::size_t i = 0; i < want.size(); ++i) {
    INFO("i = " << i);
    CHECK(got.inv_freq[i] == Approx(double(want[i])).epsilon(1e-12));
  }
}

Scaling make(ScalingType type, double factor) {
  Scaling s;
  s.type = type;
  s.factor = factor;
  return s;
}

}  // namespace

TEST_CASE("default and linear frequencies") {
  const auto f = frequencies(64, 10000, {});
  check_inv(f, default_inv(64, 10000));
  CHECK(f.attention_factor == 1.0);
  CHECK(f.inv_freq[0] == 1.0);
  auto want = default_inv(8, 10000);
  for (auto& w : want) w /= 4;
  check_inv(frequencies(8, 10000, make(ScalingType::linear, 4)), want);
}

TEST_CASE("static NTK-aware and dynamic NTK frequencies") {
  check_inv(frequencies(64, 10000, make(ScalingType::ntk, 4)), default_inv(64, 10000 * std::pow(4.0L, 64.0L / 62)));
  Scaling s = make(ScalingType::dynamic, 2);
  s.original_max_positions = 2048;
  s.seq_length = 4096;  // base * (2 * 4096/2048 - 1)^(64/62)
  check_inv(frequencies(64, 10000, s), default_inv(64, 10000 * std::pow(3.0L, 64.0L / 62)));
  s.seq_length = 1000;  // at or below the original length: unchanged
  check_inv(frequencies(64, 10000, s), default_inv(64, 10000));
  s.seq_length = 2048;
  check_inv(frequencies(64, 10000, s), default_inv(64, 10000));
}

TEST_CASE("YaRN frequencies and attention factor") {
  SECTION("Qwen2.5-style: factor 4, original 32768, base 1e6, dim 128, defaults beta 32/1") {
    Scaling s = make(ScalingType::yarn, 4);
    s.original_max_positions = 32768;
    const auto f = frequencies(128, 1e6, s);
    check_inv(f, yarn_inv(128, 1e6, 4, 32768, 32, 1, true));
    CHECK(f.attention_factor == Approx(1.1386294361119891).epsilon(1e-15));  // 0.1 ln 4 + 1
  }
  SECTION("gpt-oss: factor 32, original 4096, base 150000, dim 64, truncate false") {
    Scaling s = make(ScalingType::yarn, 32);
    s.original_max_positions = 4096;
    s.truncate = false;
    const auto f = frequencies(64, 150000, s);
    check_inv(f, yarn_inv(64, 150000, 32, 4096, 32, 1, false));
    CHECK(f.attention_factor == Approx(1.3465735902799727).epsilon(1e-15));  // 0.1 ln 32 + 1
    // truncate matters here: the range [8.09, 17.40] becomes [8, 18]
    s.truncate = true;
    check_inv(frequencies(64, 150000, s), yarn_inv(64, 150000, 32, 4096, 32, 1, true));
    CHECK(frequencies(64, 150000, s).inv_freq[9] != f.inv_freq[9]);
  }
  SECTION("high and low ends: fastest frequency kept, slowest divided by factor") {
    Scaling s = make(ScalingType::yarn, 8);
    s.original_max_positions = 4096;
    s.beta_fast = 16;
    s.beta_slow = 2;
    const auto f = frequencies(32, 10000, s);
    check_inv(f, yarn_inv(32, 10000, 8, 4096, 16, 2, true));
    CHECK(f.inv_freq[0] == 1.0);
    CHECK(f.inv_freq[15] == Approx(std::pow(10000.0, -30.0 / 32) / 8).epsilon(1e-14));
  }
  SECTION("the correction range is clamped to dim - 1, not dim/2 - 1 (original length > 2 pi base)") {
    Scaling s = make(ScalingType::yarn, 16);
    s.original_max_positions = 131072;  // high = ceil(32 ln(131072 / 2pi) / (2 ln 10000)) = 18 > 15
    check_inv(frequencies(32, 10000, s), yarn_inv(32, 10000, 16, 131072, 32, 1, true));
    s.truncate = false;
    check_inv(frequencies(32, 10000, s), yarn_inv(32, 10000, 16, 131072, 32, 1, false));
  }
  SECTION("DeepSeek-V3 mscale / mscale_all_dim ratio, explicit override, factor 1, factor < 1 refused") {
    Scaling s = make(ScalingType::yarn, 40);
    s.original_max_positions = 4096;
    s.mscale = 1;
    s.mscale_all_dim = 1;
    CHECK(frequencies(64, 10000, s).attention_factor == 1.0);
    s.mscale = 0.707;
    CHECK(frequencies(64, 10000, s).attention_factor == Approx((0.1 * 0.707 * std::log(40.0) + 1) / (0.1 * std::log(40.0) + 1)));
    s.mscale_all_dim = 0;  // HF: `if mscale and mscale_all_dim` -> plain 0.1 ln(factor) + 1
    CHECK(frequencies(64, 10000, s).attention_factor == Approx(0.1 * std::log(40.0) + 1));
    s.attention_factor = 0.5;
    CHECK(frequencies(64, 10000, s).attention_factor == 0.5);
    Scaling one = make(ScalingType::yarn, 1);
    one.original_max_positions = 4096;
    CHECK(frequencies(64, 10000, one).attention_factor == 1.0);
    Frequencies f;
    Scaling half = make(ScalingType::yarn, 0.5);  // transformers requires factor >= 1
    half.original_max_positions = 4096;
    CHECK_RANGE_WITH(posenc::rope::frequencies(64, 10000, half, f), Catch::Contains("scaling.factor"));
  }
}

TEST_CASE("Llama 3.1 frequencies (factor 8, low 1, high 4, original 8192, base 500000, dim 128)") {
  Scaling s = make(ScalingType::llama3, 8);
  s.low_freq_factor = 1;
  s.high_freq_factor = 4;
  s.original_max_positions = 8192;
  const auto f = frequencies(128, 500000, s);
  check_inv(f, llama3_inv(128, 500000, 8, 1, 4, 8192));
  CHECK(f.attention_factor == 1.0);
  // Wavelengths below 2048 (i <= 28) unchanged, above 8192 (i >= 35) divided by 8, i = 29..34 smoothed.
  const auto base = default_inv(128, 500000);
  for (std::size_t i = 0; i <= 28; ++i) CHECK(f.inv_freq[i] == Approx(double(base[i])).epsilon(1e-14));
  for (std::size_t i = 35; i < 64; ++i) CHECK(f.inv_freq[i] == Approx(double(base[i] / 8)).epsilon(1e-14));
  for (std::size_t i = 29; i <= 34; ++i) {
    CHECK(f.inv_freq[i] < double(base[i]));
    CHECK(f.inv_freq[i] > double(base[i] / 8));
  }
}

TEST_CASE("Llama 3.1 rule with lowFreqFactor = highFreqFactor (Llama 4 Scout): no band, kept or divided") {
  Scaling s = make(ScalingType::llama3, 16);
  s.low_freq_factor = s.high_freq_factor = 1;
  s.original_max_positions = 8192;
  const auto f = frequencies(128, 500000, s);
  const auto base = default_inv(128, 500000);
  for (std::size_t i = 0; i < 64; ++i) {
    const long double wavelen = 2 * kPiL / base[i];
    CHECK(f.inv_freq[i] == Approx(double(wavelen > 8192 ? base[i] / 16 : base[i])).epsilon(1e-14));
  }
}

TEST_CASE("LongRoPE: short and long mscales set the attention factor of each set of factors") {
  Scaling s = make(ScalingType::longrope, 32);
  s.original_max_positions = 4096;
  const std::vector<double> ones = {1, 1, 1, 1};
  s.short_factor = s.long_factor = ones;
  s.short_mscale = 1.1;
  s.long_mscale = 1.25;
  CHECK(frequencies(8, 10000, s).attention_factor == 1.1);
  s.seq_length = 5000;
  CHECK(frequencies(8, 10000, s).attention_factor == 1.25);
  s.long_mscale = -1;
  Frequencies f;
  CHECK_RANGE_WITH(posenc::rope::frequencies(8, 10000, s, f), Catch::Contains("longMscale"));
}

TEST_CASE("the cos/sin cache is factor * cos and sin of the exact angles, in every form") {
  Scaling s = make(ScalingType::linear, 2);
  s.attention_factor = 1.5;
  const auto f = frequencies(16, 10000, s);
  const Positions p{4000, 5, {}};
  const auto w = default_inv(16, 10000);
  std::vector<float> c(5 * 8), sn(5 * 8), ce(5 * 16), se(5 * 16), ci(5 * 16), si(5 * 16);
  REQUIRE_OK(posenc::rope::cache(p, f, false, Layout::half, c, sn));
  REQUIRE_OK(posenc::rope::cache(p, f, true, Layout::half, ce, se));
  REQUIRE_OK(posenc::rope::cache(p, f, true, Layout::interleaved, ci, si));
  for (std::size_t r = 0; r < 5; ++r)
    for (std::size_t i = 0; i < 8; ++i) {
      const long double a = (4000.0L + r) * (w[i] / 2);
      CHECK(std::fabs(c[r * 8 + i] - 1.5L * std::cos(a)) < 5e-7L);
      CHECK(std::fabs(sn[r * 8 + i] - 1.5L * std::sin(a)) < 5e-7L);
      CHECK(ce[r * 16 + i] == c[r * 8 + i]);
      CHECK(ce[r * 16 + 8 + i] == c[r * 8 + i]);
      CHECK(si[r * 16 + 2 * i] == sn[r * 8 + i]);
      CHECK(si[r * 16 + 2 * i + 1] == sn[r * 8 + i]);
    }
  std::vector<float> small(3);
  CHECK_RANGE(posenc::rope::cache(p, f, false, Layout::half, small, small));
}

TEST_CASE("LongRoPE frequencies: short or long factors by seqLength, attention factor") {
  Scaling s = make(ScalingType::longrope, 32);  // Phi-3-mini-128k: 131072 / 4096
  s.original_max_positions = 4096;
  const std::vector<double> short_factor = {1.0, 1.1, 1.5, 2.0}, long_factor = {1.2, 3.0, 9.5, 40.0};
  s.short_factor = short_factor;
  s.long_factor = long_factor;
  const auto check_with = [&](std::span<const double> ext) {
    const auto f = frequencies(8, 10000, s);
    auto want = default_inv(8, 10000);
    for (std::size_t i = 0; i < 4; ++i) want[i] /= ext[i];
    check_inv(f, want);
    CHECK(f.attention_factor == Approx(std::sqrt(17.0 / 12.0)).epsilon(1e-15));  // sqrt(1 + ln 32 / ln 4096)
  };
  check_with(s.short_factor);  // seqLength not given
  s.seq_length = 4096;
  check_with(s.short_factor);
  s.seq_length = 4097;
  check_with(s.long_factor);
  s.factor = 1;
  CHECK(frequencies(8, 10000, s).attention_factor == 1.0);
}

TEST_CASE("scaled frequencies drive the kernel: a YaRN rotation matches the formula with its invFreq and factor") {
  Scaling s = make(ScalingType::yarn, 4);
  s.original_max_positions = 64;
  const auto f = frequencies(16, 10000, s);
  const std::size_t seq = 90;
  const auto x = inputs(seq * 16, 11);
  for (Layout layout : {Layout::half, Layout::interleaved}) {
    const auto y = rope(x, seq, 1, 16, 16, {1000, seq, {}}, f, layout);
    for (std::size_t r = 0; r < seq; ++r)
      for (std::size_t i = 0; i < 8; ++i) {
        const long double a = ref::angle(1000.0 + double(r), f.inv_freq[i]);
        const long double c = std::cos(a) * f.attention_factor, sn = std::sin(a) * f.attention_factor;
        const std::size_t ia = layout == Layout::half ? i : 2 * i, ib = layout == Layout::half ? i + 8 : 2 * i + 1;
        const float* xr = x.data() + r * 16;
        REQUIRE(y[r * 16 + ia] == Approx(double(xr[ia] * c - xr[ib] * sn)).margin(1.2e-6));
        REQUIRE(y[r * 16 + ib] == Approx(double(xr[ib] * c + xr[ia] * sn)).margin(1.2e-6));
      }
  }
}

TEST_CASE("rope rejects bad arguments with a range failure naming the argument") {
  using Catch::Contains;
  // frequencies() as a Status, its output discarded
  const auto frequencies = [](std::size_t dim, double base, const Scaling& scaling) {
    Frequencies f;
    return posenc::rope::frequencies(dim, base, scaling, f);
  };
  CHECK_RANGE_WITH(frequencies(7, 10000, {}), Contains("dim") && Contains("7"));
  CHECK_RANGE(frequencies(0, 10000, {}));
  CHECK_RANGE_WITH(frequencies(8, -1, {}), Contains("base"));
  CHECK_RANGE(frequencies(8, NAN, {}));
  CHECK_RANGE_WITH(frequencies(8, 10000, make(static_cast<ScalingType>(99), 2)), Contains("unknown"));
  for (double bad : {0.0, -2.0, double(NAN), double(INFINITY)})
    CHECK_RANGE_WITH(frequencies(8, 10000, make(ScalingType::linear, bad)), Contains("factor"));
  CHECK_RANGE_WITH(frequencies(8, 10000, make(ScalingType::yarn, 4)), Contains("originalMaxPositions"));
  CHECK_RANGE_WITH(frequencies(8, 10000, make(ScalingType::llama3, 8)), Contains("originalMaxPositions"));
  CHECK_RANGE_WITH(frequencies(8, 10000, make(ScalingType::longrope, 8)), Contains("originalMaxPositions"));
  CHECK_RANGE_WITH(frequencies(2, 10000, make(ScalingType::ntk, 2)), Contains("dim"));
  Scaling dyn = make(ScalingType::dynamic, 2);
  CHECK_RANGE_WITH(frequencies(8, 10000, dyn), Contains("originalMaxPositions"));
  dyn.original_max_positions = 2048;
  CHECK_RANGE_WITH(frequencies(8, 10000, dyn), Contains("seqLength"));
  Scaling l3 = make(ScalingType::llama3, 8);
  l3.original_max_positions = 8192;
  l3.low_freq_factor = 4;
  l3.high_freq_factor = 2;
  CHECK_RANGE_WITH(frequencies(8, 10000, l3), Contains("highFreqFactor"));
  Scaling lr = make(ScalingType::longrope, 8);
  lr.original_max_positions = 4096;
  const std::vector<double> ones4 = {1, 1, 1, 1}, ones3 = {1, 1, 1}, negative = {1, 1, -1, 1};
  lr.short_factor = ones4;
  lr.long_factor = ones3;
  CHECK_RANGE_WITH(frequencies(8, 10000, lr), Contains("longFactor"));
  lr.long_factor = negative;
  CHECK_RANGE_WITH(frequencies(8, 10000, lr), Contains("longFactor[2]"));
  Scaling y = make(ScalingType::yarn, 4);
  y.original_max_positions = 4096;
  y.beta_fast = 0.5;
  CHECK_RANGE_WITH(frequencies(8, 10000, y), Contains("betaFast"));
  y.beta_fast = 32;
  y.attention_factor = -1;
  CHECK_RANGE_WITH(frequencies(8, 10000, y), Contains("attentionFactor"));

  using posenc::rope::apply;
  std::vector<float> x(2 * 8), out(2 * 8);
  const Positions p{0, 2, {}};
  CHECK_RANGE_WITH(apply(x, 2, 1, 8, 7, p, plain(8), Layout::half, out), Contains("rotaryDim") && Contains("got 7"));
  CHECK_RANGE_WITH(apply(x, 2, 1, 8, 10, p, plain(10), Layout::half, out), Contains("rotaryDim"));
  CHECK_RANGE_WITH(apply(x, 2, 1, 8, 0, p, plain(8), Layout::half, out), Contains("rotaryDim"));
  CHECK_RANGE_WITH(apply(x, 2, 1, 8, 8, p, plain(6), Layout::half, out), Contains("invFreq"));
  CHECK_RANGE_WITH(apply(x, 3, 1, 8, 8, {0, 3, {}}, plain(8), Layout::half, out), Contains("x holds"));
  CHECK_RANGE_WITH(apply(x, 2, 1, 8, 8, {0, 3, {}}, plain(8), Layout::half, out), Contains("positions"));
  CHECK_RANGE_WITH(apply(x, 2, 1, 8, 8, {INFINITY, 2, {}}, plain(8), Layout::half, out), Contains("offset"));
  const std::vector<double> nan_pos = {0, NAN};
  CHECK_RANGE_WITH(apply(x, 2, 1, 8, 8, {0, 0, nan_pos}, plain(8), Layout::half, out), Contains("positions[1]"));
  CHECK_RANGE_WITH(apply(x, 2, 1, 8, 8, p, plain(8), static_cast<Layout>(5), out), Contains("layout"));
  CHECK_RANGE_WITH(apply(x, 2, 0, 8, 8, p, plain(8), Layout::half, out), Contains("heads"));
  std::vector<float> small(4);
  CHECK_RANGE(apply(x, 2, 1, 8, 8, p, plain(8), Layout::half, small));
  Frequencies huge = plain(8);
  huge.attention_factor = 1e39;
  CHECK_RANGE_WITH(apply(x, 2, 1, 8, 8, p, huge, Layout::half, out), Contains("attentionFactor"));
  Frequencies nan_freq = plain(8);
  nan_freq.inv_freq[2] = NAN;
  CHECK_RANGE_WITH(apply(x, 2, 1, 8, 8, p, nan_freq, Layout::half, out), Contains("invFreq[2]"));
}

// ---- values near float32's limit: rotated in double, never NaN or Infinity ---------------------------

TEST_CASE("rope near float32's max: finite results within float rounding of the exact rotation") {
  const float m = std::numeric_limits<float>::max();
  for (Layout layout : {Layout::half, Layout::interleaved}) {
    SECTION(std::string("pairs of norm up to 3.39e38 at many positions, mixed with ordinary rows: ") + name(layout)) {
      // |a|, |b| <= 2.4e38: every rotation stays below 2.4e38 * sqrt(2) = 3.394e38 < 3.4028e38.
      const std::size_t seq = 150, heads = 2, hd = 12, rot = 8;
      auto x = inputs(seq * heads * hd, 21);
      for (std::size_t r = 0; r < seq; r += 2)  // even rows huge (the double path), odd rows ordinary (SIMD)
        for (std::size_t c = 0; c < heads * hd; ++c) x[r * heads * hd + c] *= 2.4e38f;
      for (double start : {0.0, 1e6, 2147483647.0 - 149}) {
        std::vector<double> pos(seq);
        for (std::size_t r = 0; r < seq; ++r) pos[r] = start + double(r);
        const auto y = rope(x, seq, heads, hd, rot, {start, seq, {}}, plain(rot), layout);
        for (float v : y) REQUIRE(std::isfinite(v));
        double huge_err = 0, small_err = 0;
        for (std::size_t r = 0; r < seq; ++r)
          for (std::size_t h = 0; h < heads; ++h) {
            const std::size_t at = (r * heads + h) * hd;
            const auto want = ref_head(x.data() + at, hd, rot, pos[r], 10000, 1, layout);
            for (std::size_t j = 0; j < hd; ++j) {
              const double e = double(std::fabs(y[at + j] - want[j]));
              if (r % 2 == 0)
                huge_err = std::max(huge_err, e / 2.4e38);
              else
                small_err = std::max(small_err, e);
            }
            for (std::size_t j = rot; j < hd; ++j) REQUIRE(y[at + j] == x[at + j]);  // pass-through, bit for bit
          }
        INFO("start " << start);
        CHECK(huge_err < 1e-6);
        CHECK(small_err < 1e-6);
      }
    }
    SECTION(std::string("float32's max and its partner 0 rotate to (max cos, max sin): ") + name(layout)) {
      const std::vector<float> x =
          layout == Layout::half ? std::vector<float>{m, -m, 0.f, 0.f} : std::vector<float>{m, 0.f, -m, 0.f};
      const std::vector<double> pos = {0, 1, 2, 3, 1e6, 2147483647};
      std::vector<float> xs;
      for (std::size_t r = 0; r < pos.size(); ++r) xs.insert(xs.end(), x.begin(), x.end());
      const auto y = rope(xs, pos.size(), 1, 4, 4, {0, 0, pos}, plain(4), layout);
      for (float v : y) REQUIRE(std::isfinite(v));
      CHECK(std::equal(x.begin(), x.end(), y.begin()));  // position 0: the identity
      CHECK(max_error(y, xs, pos, 1, 4, 4, 10000, layout) / m < 1e-6);
    }
  }
  SECTION("rows in place, with an attention factor: huge rows rotate in double, scaled") {
    const std::size_t seq = 70, d = 16;
    auto x = inputs(seq * d, 22);
    for (auto& v : x) v *= 1e38f;  // |x| <= 1e38; times 3: <= 3e38 per value, pairs may not exceed the limit...
    for (std::size_t i = 1; i < x.size(); i += 2) x[i] = 0.f;  // ...so every interleaved pair is (a, 0): norm 3|a|
    Frequencies f = plain(d);
    f.attention_factor = 3;
    std::vector<double> pos(seq);
    for (std::size_t r = 0; r < seq; ++r) pos[r] = 500.0 + double(r);
    auto y = x;
    REQUIRE_OK(posenc::rope::apply(y, seq, 1, d, d, {500, seq, {}}, f, Layout::interleaved, y));
    for (float v : y) REQUIRE(std::isfinite(v));
    CHECK(max_error(y, x, pos, 1, d, d, 10000, Layout::interleaved, 3.0L) / 3e38 < 1e-6);
  }
}

TEST_CASE("rope: a pair whose rotation is beyond float32 is a range failure, not Infinity") {
  using Catch::Contains;
  // (2.5e38, 2.5e38) has norm 3.54e38 > 3.4028e38: at position 1 (angle 1 rad) the second value is
  // 2.5e38 (cos 1 + sin 1) = 3.45e38; at position 0 it is unchanged.
  const std::vector<float> x = {2.5e38f, 2.5e38f};
  std::vector<float> out(2);
  CHECK_OK(posenc::rope::apply(x, 1, 1, 2, 2, {0, 1, {}}, plain(2), Layout::interleaved, out));
  CHECK(out == x);
  CHECK_RANGE_WITH(posenc::rope::apply(x, 1, 1, 2, 2, {1, 1, {}}, plain(2), Layout::interleaved, out),
                   Contains("beyond float32") && Contains("row 0"));
  CHECK_RANGE_WITH(posenc::rope::apply(x, 1, 1, 2, 2, {1, 1, {}}, plain(2), Layout::half, out), Contains("beyond float32"));
  // the failing row is named; the rows before it are ordinary
  std::vector<float> rows(5 * 4, 0.5f), out5(rows.size());
  rows[3 * 4 + 0] = rows[3 * 4 + 2] = 2.5e38f;  // row 3, half layout pair (0, 2)
  CHECK_RANGE_WITH(posenc::rope::apply(rows, 5, 1, 4, 4, {1, 5, {}}, plain(4), Layout::half, out5),
                   Contains("row 3") && Contains("head 0"));
  // an attention factor can take a pair beyond float32 too: 1e38 * 3 * (cos 1 + sin 1) = 4.1e38
  Frequencies f = plain(2);
  f.attention_factor = 3;
  CHECK_RANGE(posenc::rope::apply(std::vector<float>{1e38f, 1e38f}, 1, 1, 2, 2, {1, 1, {}}, f, Layout::interleaved, out));
  CHECK_OK(posenc::rope::apply(std::vector<float>{1e38f, 0.f}, 1, 1, 2, 2, {1, 1, {}}, f, Layout::interleaved, out));
  CHECK(out[0] == Approx(3e38 * std::cos(1.0)).epsilon(1e-6));
  CHECK(out[1] == Approx(3e38 * std::sin(1.0)).epsilon(1e-6));
}

TEST_CASE("rope: a negative attention factor rotates and scales like a positive one") {
  const std::size_t seq = 40, d = 8;
  const auto x = inputs(seq * d, 23);
  std::vector<double> pos(seq);
  for (std::size_t r = 0; r < seq; ++r) pos[r] = 300.0 + double(r);
  Frequencies f = plain(d);
  f.attention_factor = -2;
  for (Layout layout : {Layout::half, Layout::interleaved})
    CHECK(max_error(rope(x, seq, 1, d, d, {300, seq, {}}, f, layout), x, pos, 1, d, d, 10000, layout, -2.0L) < 2e-6);
}

// apply() bounds the rows it rotates in float by float32's max / (2 max(1, |factor|)): a negative factor
// counts by its size ((1e20, 1e20) times -1e30 is a range failure, as with +1e30, not NaN / -Infinity).
TEST_CASE("rope: a large negative attention factor never gives NaN or Infinity") {
  const std::vector<float> x = {1e20f, 1e20f};
  std::vector<float> out(2);
  Frequencies f = plain(2);
  f.attention_factor = 1e30;
  CHECK_RANGE_WITH(posenc::rope::apply(x, 1, 1, 2, 2, {1, 1, {}}, f, Layout::interleaved, out),
                   Catch::Contains("beyond float32"));
  f.attention_factor = -1e30;
  CHECK_RANGE_WITH(posenc::rope::apply(x, 1, 1, 2, 2, {1, 1, {}}, f, Layout::interleaved, out),
                   Catch::Contains("beyond float32"));
}
