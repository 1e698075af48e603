#include "angles.hpp"

#include <algorithm>
#include <cmath>

namespace posenc::angles {
namespace {

constexpr std::size_t kResync = 64;  // blocks between exact re-anchoring
constexpr double kInvTwoPi = 0.15915494309189535;
// 2*pi = C1 + C2 + C3 + C4 (to 2e-35); C1..C3 have at most 20 significant bits, so k*C1, k*C2 and
// k*C3 are exact for |k| < 2^33, i.e. for angles up to ~5.4e10 rad.
constexpr double kC1 = 0x1.921fc00000000p+2;
constexpr double kC2 = -0x1.5777a00000000p-19;
constexpr double kC3 = -0x1.73dcc00000000p-41;
constexpr double kC4 = 0x1.898cc51701b84p-62;

// Veltkamp split and Dekker's exact product: a*b == p + e exactly (needs -ffp-contract=off).
inline void split(double a, double& hi, double& lo) {
  const double c = 134217729.0 * a;  // 2^27 + 1
  hi = c - (c - a);
  lo = a - hi;
}
inline void two_prod(double a, double b, double& p, double& e) {
  p = a * b;
  double ah, al, bh, bl;
  split(a, ah, al);
  split(b, bh, bl);
  e = ((ah * bh - p) + ah * bl + al * bh) + al * bl;
}

using bd = simd::batch<double>;
using bf = simd::batch<float>;

std::size_t round_up(std::size_t n, std::size_t m) {
  return (n + m - 1) / m * m;
}

}  // namespace

double reduce(double x, double w) {
  double p, e;
  two_prod(x, w, p, e);
  if (!std::isfinite(p)) return std::isnan(p) ? p : 0.0;
  if (!std::isfinite(e)) e = 0.0;  // the split overflows for a factor beyond ~1e299: far outside the guarantee
  if (std::fabs(p) > 0x1p35) return std::remainder(p, 2 * 3.141592653589793);  // beyond the guarantee
  const double k = std::nearbyint(p * kInvTwoPi);
  // The first two subtractions are exact (Sterbenz); only the last terms round, at ~1e-16.
  return ((((p - k * kC1) - k * kC2) - k * kC3) - k * kC4) + e;
}

namespace {

// s[i], c[i] = sin, cos of reduce(p, w[i]); scratch holds round_up(w.size(), simd::doubles) doubles.
void exact_row_into(double p, std::span<const double> w, double* s, double* c, double* scratch) noexcept {
  const std::size_t n = w.size();
  const std::size_t np = round_up(n, simd::doubles);
  for (std::size_t i = 0; i < np; ++i) scratch[i] = i < n ? reduce(p, w[i]) : 0.0;
  for (std::size_t i = 0; i < np; i += simd::doubles) {
    auto [sv, cv] = xsimd::sincos(bd::load_unaligned(scratch + i));
    alignas(64) double st[simd::doubles], ct[simd::doubles];
    sv.store_unaligned(st);
    cv.store_unaligned(ct);
    for (std::size_t j = 0; j < simd::doubles && i + j < n; ++j) {
      s[i + j] = st[j];
      c[i + j] = ct[j];
    }
  }
}

}  // namespace

std::size_t exact_row_scratch(std::size_t n) {
  return round_up(n, simd::doubles);
}

void exact_row(double p, std::span<const double> w, double* s, double* c, double* scratch) noexcept {
  exact_row_into(p, w, s, c, scratch);
}

bool Positions::consecutive() const {
  if (values.empty()) return true;
  for (std::size_t r = 1; r < values.size(); ++r)
    if (values[r] != values[0] + double(r)) return false;
  return true;
}

Status RowSource::init(const Positions& positions, std::span<const double> inv_freq, double scale) {
  positions_ = positions;
  w_ = inv_freq;
  scale_ = scale;
  padded_ = round_up(std::max<std::size_t>(inv_freq.size(), 1), simd::floats);
  block_ = 0;
  const std::size_t n = w_.size(), P = padded_;  // P is a multiple of simd::doubles too: scratch fits
  blocked_ = positions_.size() > 1 && positions_.consecutive();
  if (blocked_ && !positions_.values.empty()) positions_ = Positions{positions_.values[0], positions_.values.size(), {}};
  const std::size_t fine_rows = blocked_ ? std::min(kBlock, positions_.size()) : 1;
  POSENC_TRY(doubles_.allocate(9 * P, "the sin/cos tables"));  // anchor s/c, step s/c, scratch, and below s1, c1, s, c
  POSENC_TRY(floats_.allocate((2 + 2 * fine_rows) * P, "the sin/cos tables"));
  double* d = doubles_.data();
  anchor_s_ = d, anchor_c_ = d + P, step_s_ = d + 2 * P, step_c_ = d + 3 * P, scratch_ = d + 4 * P;
  float* f = floats_.data();
  anchor_sf_ = f, anchor_cf_ = f + P, fine_s_ = f + 2 * P, fine_c_ = f + (2 + fine_rows) * P;
  if (!blocked_) {  // each row exact; the offset is the identity rotation (sin 0, cos 1)
    std::fill(fine_c_, fine_c_ + P, 1.f);
    return {};
  }

  // Fine table: sin/cos of t*w for t < B, stepped in double by the exact rotation (sin w, cos w);
  // row t is written whole, and the steps of all frequencies are independent (they vectorise).
  double *s1 = d + 5 * P, *c1 = d + 6 * P, *s = d + 7 * P, *c = d + 8 * P;
  exact_row_into(1.0, w_, s1, c1, scratch_);
  std::fill(c, c + n, 1.0);  // t = 0; 63 double rotations drift by ~1e-14 at most
  for (std::size_t t = 0; t < fine_rows; ++t) {
    float* fs = fine_s_ + t * P;
    float* fc = fine_c_ + t * P;
    for (std::size_t i = 0; i < n; ++i) {
      fs[i] = float(s[i]);
      fc[i] = float(c[i]);
      const double ns = s[i] * c1[i] + c[i] * s1[i];
      c[i] = c[i] * c1[i] - s[i] * s1[i];
      s[i] = ns;
    }
  }
  // Anchor step: rotation by B*w (needed from the second block on).
  if (positions_.size() > kBlock) exact_row_into(double(kBlock), w_, step_s_, step_c_, scratch_);
  anchor_block(0);
  return {};
}

void RowSource::round_anchor() noexcept {
  for (std::size_t i = 0; i < w_.size(); ++i) {
    anchor_sf_[i] = float(scale_ * anchor_s_[i]);
    anchor_cf_[i] = float(scale_ * anchor_c_[i]);
  }
}

void RowSource::exact_anchor(double p) noexcept {
  exact_row_into(p, w_, anchor_s_, anchor_c_, scratch_);
  round_anchor();
}

void RowSource::anchor_block(std::size_t b) noexcept {
  const std::size_t n = w_.size();
  if (b % kResync == 0 || b != block_ + 1) {  // exact anchor; otherwise one exact rotation step
    exact_row_into(positions_.at(b * kBlock), w_, anchor_s_, anchor_c_, scratch_);
  } else {
    for (std::size_t i = 0; i < n; ++i) {
      const double s = anchor_s_[i] * step_c_[i] + anchor_c_[i] * step_s_[i];
      const double c = anchor_c_[i] * step_c_[i] - anchor_s_[i] * step_s_[i];
      anchor_s_[i] = s;
      anchor_c_[i] = c;
    }
  }
  round_anchor();
  block_ = b;
}

}  // namespace posenc::angles
