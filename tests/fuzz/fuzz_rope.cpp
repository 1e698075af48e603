// RoPE family: rope::frequencies for every scaling type (Hugging Face parameters, hostile ones
// included) and rope::apply. Accepted frequencies are finite and >= 0 with a finite positive
// attention factor; a rotation of finite input is finite (values near float32's limit included),
// keeps every pair's norm (times the attention factor), leaves the channels past rotaryDim alone,
// gives the same result in place, and is within 1e-6 of the exact rotation for |x| <= 1 at
// |p| < 2^31 (README). It is refused (a range failure) exactly when a rotated value is beyond float32.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "fuzz.hpp"
#include "reference.hpp"
#include "rope.hpp"

using posenc::angles::Positions;
using posenc::rope::Frequencies;
using posenc::rope::Layout;
using posenc::rope::Scaling;
using posenc::rope::ScalingType;

namespace {

std::vector<double> factor_list(fuzz::Input& in, std::size_t half) {
  const std::size_t n = in.rarely(8) || half > 4096 ? in.in<std::size_t>(0, std::min<std::size_t>(half, 4096) + 2) : half;
  std::vector<double> v(n);
  for (auto& x : v) x = in.number(0.5, 64.0);
  return v;
}

// The longrope factor lists live in `lists` (Scaling holds spans).
Scaling scaling(fuzz::Input& in, std::size_t dim, std::vector<double> (&lists)[2]) {
  Scaling s;
  const int type = in.rarely(32) ? in.in<int>(-1, 9) : in.in<int>(0, 6);
  s.type = static_cast<ScalingType>(type);
  if (in.flag()) s.factor = in.number(0.25, 64.0);
  if (in.flag()) s.original_max_positions = in.number(1.0, 1e6);
  if (in.rarely(4)) s.beta_fast = in.number(0.5, 64.0);
  if (in.rarely(4)) s.beta_slow = in.number(0.5, 8.0);
  if (in.rarely(4)) s.low_freq_factor = in.number(0.5, 4.0);
  if (in.rarely(4)) s.high_freq_factor = in.number(1.0, 16.0);
  if (in.rarely(4)) s.truncate = in.flag();
  if (in.flag()) s.seq_length = in.number(0.0, 1e6);
  if (in.rarely(6)) s.attention_factor = in.number(0.1, 4.0);
  if (in.rarely(6)) {
    s.mscale = in.number(0.0, 2.0);
    s.mscale_all_dim = in.number(0.0, 2.0);
  }
  if (type == int(ScalingType::longrope) || in.rarely(16)) {
    lists[0] = factor_list(in, dim / 2);
    lists[1] = factor_list(in, dim / 2);
    s.short_factor = lists[0];
    s.long_factor = lists[1];
  }
  return s;
}

void check_frequencies(const Frequencies& f, std::size_t dim) {
  FUZZ_CHECK(f.inv_freq.size() == dim / 2);
  for (double w : f.inv_freq) FUZZ_CHECK_MSG(w >= 0 && w <= 3.4028234663852886e38, fuzz::str(w));  // float32-finite
  FUZZ_CHECK_MSG(f.attention_factor > 0 && f.attention_factor <= 3.4028234663852886e38, fuzz::str(f.attention_factor));
}

}  // namespace

FUZZ_TARGET(rope) {
  fuzz::Input in(data, size);
  const std::size_t seq = in.size(0, 70), heads = in.size(1, 4), head_dim = in.size(1, 20);
  std::size_t rot = in.rarely(16) ? in.size(0, 24)
                                  : 2 * in.in<std::size_t>(1, std::max<std::size_t>(1, std::min<std::size_t>(head_dim, 64) / 2));
  const double base = in.flag() ? in.number(2.0, 1e6) : in.number(1e-3, 1e9, 8);
  std::vector<double> lists[2];
  const Scaling s = scaling(in, rot, lists);

  // frequencies(): accepted ones are sane; the unscaled form with a valid dim and base always is.
  Frequencies f;
  const bool have = fuzz::accepted([&] { return posenc::rope::frequencies(rot, base, s, f); });
  if (have) check_frequencies(f, rot);
  if (rot >= 2 && rot % 2 == 0 && rot <= 1024 && base >= 1e-38 && base <= 1e300) {  // every w < 1/base fits float32
    Frequencies plain;
    fuzz::must_accept([&] { return posenc::rope::frequencies(rot, base, Scaling{}, plain); }, "unscaled frequencies");
    check_frequencies(plain, rot);
  }
  if (!have || in.rarely(8)) {  // a hand-made (possibly broken) frequency set
    const std::size_t n = in.rarely(8) || rot > 4096 ? in.in<std::size_t>(0, 16) : rot / 2;
    fuzz::must_accept([&] { return f.inv_freq.allocate(n, "hand-made frequencies"); }, "a small allocation");
    for (auto& w : f.inv_freq) w = in.number(0.0, 1.0);
    f.attention_factor = in.number(0.5, 2.0);
  }

  // apply(): positions consecutive from an offset, or explicit.
  std::vector<double> values;
  Positions pos{in.position(-3e9, 3e9), seq, {}};
  if (in.flag() && seq > 0 && seq < 4096) {
    for (std::size_t r = 0; r < seq; ++r) values.push_back(in.position(-2147483647.0, 2147483647.0));
    if (in.rarely(16)) values.push_back(1.0);  // one too many
    pos = Positions{0, values.size(), values};
  }
  const auto layout_raw = in.rarely(32) ? in.in<int>(-1, 3) : in.in<int>(0, 1);
  const auto layout = static_cast<Layout>(layout_raw);
  const std::size_t total = fuzz::product(seq, fuzz::product(heads, head_dim));
  const float magnitude = in.flag() ? 1.0f : float(in.number(0.0, 1e3));
  const auto x = in.floats(in.buffer(total), magnitude);
  std::vector<float> out(in.buffer(x.size()), -7.0f);

  const bool ok = fuzz::accepted([&] { return posenc::rope::apply(x, seq, heads, head_dim, rot, pos, f, layout, out); });
  bool finite_pos = std::isfinite(pos.offset);
  for (double p : values) finite_pos = finite_pos && std::isfinite(p);
  const bool freqs_ok = f.inv_freq.size() == rot / 2 && fuzz::all_finite(f.inv_freq.span()) &&
                        std::fabs(f.attention_factor) <= 3.4028234663852886e38;
  const bool valid = seq <= 4096 && heads >= 1 && head_dim >= 1 && fuzz::product(heads, head_dim) <= fuzz::kMaxElements &&
                     rot >= 2 && rot % 2 == 0 && rot <= head_dim && (layout_raw == 0 || layout_raw == 1) && x.size() == total &&
                     out.size() == total && pos.size() == seq && finite_pos && freqs_ok;
  if (!valid) {
    FUZZ_CHECK_MSG(!ok, "invalid arguments were accepted");
    return 0;
  }
  // An angle p * w beyond double's range has no sine: refused, with a message saying so.
  bool angles_finite = true;
  for (std::size_t r = 0; r < seq; ++r)
    for (double w : f.inv_freq) angles_finite = angles_finite && std::isfinite(pos.at(r) * w);
  if (!angles_finite) {
    FUZZ_CHECK_MSG(!ok && fuzz::message().find("beyond double's range") != std::string::npos, fuzz::message());
    return 0;
  }
  const std::size_t half = rot / 2;
  const double af = f.attention_factor;
  constexpr long double kMax = 3.4028234663852886e38L;

  // Whether a rotated value is beyond float32: from the exact rotation where reference.hpp's angles
  // are exact (|w| <= 1, |p| < 2^31), else only the bound |value| <= |af| * norm of the pair.
  bool must_pass = true, must_fail = false;
  for (std::size_t r = 0; r < seq; ++r) {
    const double p = pos.at(r);
    for (std::size_t h = 0; h < heads; ++h)
      for (std::size_t i = 0; i < half; ++i) {
        const std::size_t at = (r * heads + h) * head_dim;
        const std::size_t ia = at + (layout == Layout::half ? i : 2 * i),
                          ib = at + (layout == Layout::half ? i + half : 2 * i + 1);
        const long double a = x[ia], b = x[ib];
        if (!std::isfinite(a) || !std::isfinite(b)) continue;  // no contract for non-finite input
        const long double norm = std::sqrt(a * a + b * b) * std::fabs((long double)af);
        const long double slack = 1e-6L * norm;  // the float sin/cos the kernel multiplies by
        if (std::fabs(f.inv_freq[i]) <= 1.0 && std::fabs(p) < 2147483648.0) {
          const long double ang = ref::angle(p, f.inv_freq[i]), c = std::cos(ang) * af, sn = std::sin(ang) * af;
          const long double big = std::max(std::fabs(a * c - b * sn), std::fabs(b * c + a * sn));
          must_fail = must_fail || big > kMax + slack;
          must_pass = must_pass && big < kMax - slack;
        } else {
          must_pass = must_pass && norm < kMax - slack;
        }
      }
  }
  if (must_pass) FUZZ_CHECK_MSG(ok, "a valid rotation was refused: " + fuzz::message());
  if (must_fail) FUZZ_CHECK_MSG(!ok, "a rotation beyond float32 was accepted");
  if (!ok) {
    FUZZ_CHECK_MSG(fuzz::message().find("beyond float32") != std::string::npos, fuzz::message());
    return 0;
  }

  // In place gives the same bits.
  std::vector<float> inplace = x;
  fuzz::must_accept([&] { return posenc::rope::apply(inplace, seq, heads, head_dim, rot, pos, f, layout, inplace); },
                    "in-place rotation");
  FUZZ_CHECK(out.empty() || std::memcmp(inplace.data(), out.data(), out.size() * sizeof(float)) == 0);  // bits: NaN != NaN

  if (!fuzz::all_finite(x)) return 0;
  FUZZ_CHECK(fuzz::all_finite(out));  // finite input never gives NaN or Infinity
  float xmax = 0;
  for (float v : x) xmax = std::max(xmax, std::fabs(v));
  bool exact_domain = xmax <= 1.0f;
  for (double w : f.inv_freq) exact_domain = exact_domain && std::fabs(w) <= 1.0;
  for (std::size_t r = 0; r < seq; ++r) {
    const double p = pos.at(r);
    const bool check_exact = exact_domain && std::fabs(p) < 2147483648.0;
    for (std::size_t h = 0; h < heads; ++h) {
      const std::size_t at = (r * heads + h) * head_dim;
      for (std::size_t c = rot; c < head_dim; ++c) FUZZ_CHECK(out[at + c] == x[at + c]);
      for (std::size_t i = 0; i < half; ++i) {
        const std::size_t ia = at + (layout == Layout::half ? i : 2 * i),
                          ib = at + (layout == Layout::half ? i + half : 2 * i + 1);
        // Norms: |af| |(a, b)| to float rounding of the sin/cos (absolute 2^-150 when they are
        // subnormal, for a tiny attention factor) and of the outputs.
        const double nin = std::sqrt(double(x[ia]) * x[ia] + double(x[ib]) * x[ib]);
        const double nout = std::sqrt(double(out[ia]) * out[ia] + double(out[ib]) * out[ib]);
        FUZZ_CHECK_MSG(std::fabs(nout - std::fabs(af) * nin) <= 5e-6 * std::fabs(af) * nin + 2e-45 * nin + 2e-45,
                       fuzz::str(nout) + " vs " + fuzz::str(std::fabs(af) * nin));
        if (!check_exact) continue;
        const long double a = ref::angle(p, f.inv_freq[i]);
        const long double c = std::cos(a) * af, sn = std::sin(a) * af;
        const double wa = double(x[ia] * c - x[ib] * sn), wb = double(x[ib] * c + x[ia] * sn);
        const double tol = 1e-6 * std::max(1.0, std::fabs(af));
        FUZZ_CHECK_MSG(std::fabs(out[ia] - wa) <= tol && std::fabs(out[ib] - wb) <= tol,
                       "p " + fuzz::str(p) + " w " + fuzz::str(f.inv_freq[i]) + " got " + fuzz::str(out[ia]) + "," +
                           fuzz::str(out[ib]) + " want " + fuzz::str(wa) + "," + fuzz::str(wb));
      }
    }
  }
  return 0;
}
