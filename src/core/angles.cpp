#include "angles.hpp"

#include <algorithm>
#include <cmath>

namespace posenc::angles {
namespace {

constexpr std::size_t kBlock = 64;        // rows per anchor block
constexpr std::size_t kResync = 64;       // blocks between exact re-anchoring
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

std::size_t round_up(std::size_t n, std::size_t m) { return (n + m - 1) / m * m; }

}  // namespace

double reduce(double x, double w) {
  double p, e;
  two_prod(x, w, p, e);
  if (!std::isfinite(p)) return std::isnan(p) ? p : 0.0;
  if (std::fabs(p) > 0x1p35) return std::remainder(p, 2 * 3.141592653589793);  // beyond the guarantee
  const double k = std::nearbyint(p * kInvTwoPi);
  // The first two subtractions are exact (Sterbenz); only the last terms round, at ~1e-16.
  return ((((p - k * kC1) - k * kC2) - k * kC3) - k * kC4) + e;
}

void exact_row(double p, std::span<const double> w, double* s, double* c, std::vector<double>& scratch) {
  const std::size_t n = w.size();
  const std::size_t np = round_up(n, simd::doubles);
  scratch.assign(np, 0.0);
  for (std::size_t i = 0; i < n; ++i) scratch[i] = reduce(p, w[i]);
  for (std::size_t i = 0; i < np; i += simd::doubles) {
    auto [sv, cv] = xsimd::sincos(bd::load_unaligned(scratch.data() + i));
    alignas(64) double st[simd::doubles], ct[simd::doubles];
    sv.store_unaligned(st);
    cv.store_unaligned(ct);
    for (std::size_t j = 0; j < simd::doubles && i + j < n; ++j) {
      s[i + j] = st[j];
      c[i + j] = ct[j];
    }
  }
}

bool Positions::consecutive() const {
  if (values.empty()) return true;
  for (std::size_t r = 1; r < values.size(); ++r)
    if (values[r] != values[0] + double(r)) return false;
  return true;
}

RowSource::RowSource(const Positions& positions, std::span<const double> inv_freq, double scale)
    : positions_(positions), w_(inv_freq), scale_(scale), padded_(round_up(std::max<std::size_t>(inv_freq.size(), 1), simd::floats)) {
  const std::size_t n = w_.size();
  sin_.assign(padded_, 0.f);
  cos_.assign(padded_, 0.f);
  anchor_s_.assign(padded_, 0.0);
  anchor_c_.assign(padded_, 0.0);
  blocked_ = positions_.size() > 1 && positions_.consecutive();
  if (!blocked_) return;
  if (!positions_.values.empty()) positions_ = Positions{positions_.values[0], positions_.values.size(), {}};

  // Fine table: sin/cos of t*w for t < B, stepped in double by the exact rotation (sin w, cos w).
  const std::size_t fine_rows = std::min(kBlock, positions_.size());
  fine_s_.assign(fine_rows * padded_, 0.f);
  fine_c_.assign(fine_rows * padded_, 0.f);
  std::vector<double> s1(padded_, 0.0), c1(padded_, 0.0);
  exact_row(1.0, w_, s1.data(), c1.data(), scratch_);
  for (std::size_t i = 0; i < n; ++i) {
    double s = 0.0, c = 1.0;  // t = 0; 63 double rotations drift by ~1e-14 at most
    for (std::size_t t = 0; t < fine_rows; ++t) {
      fine_s_[t * padded_ + i] = float(s);
      fine_c_[t * padded_ + i] = float(c);
      const double ns = s * c1[i] + c * s1[i];
      c = c * c1[i] - s * s1[i];
      s = ns;
    }
  }
  // Anchor step: rotation by B*w.
  step_s_.assign(padded_, 0.0);
  step_c_.assign(padded_, 0.0);
  exact_row(double(kBlock), w_, step_s_.data(), step_c_.data(), scratch_);
  anchor_sf_.assign(padded_, 0.f);
  anchor_cf_.assign(padded_, 0.f);
  anchor_block(0);
}

void RowSource::anchor_block(std::size_t b) {
  const std::size_t n = w_.size();
  if (b % kResync == 0 || b != block_ + 1) {  // exact anchor; otherwise one exact rotation step
    exact_row(positions_.at(b * kBlock), w_, anchor_s_.data(), anchor_c_.data(), scratch_);
  } else {
    for (std::size_t i = 0; i < n; ++i) {
      const double s = anchor_s_[i] * step_c_[i] + anchor_c_[i] * step_s_[i];
      const double c = anchor_c_[i] * step_c_[i] - anchor_s_[i] * step_s_[i];
      anchor_s_[i] = s;
      anchor_c_[i] = c;
    }
  }
  for (std::size_t i = 0; i < n; ++i) {
    anchor_sf_[i] = float(scale_ * anchor_s_[i]);
    anchor_cf_[i] = float(scale_ * anchor_c_[i]);
  }
  block_ = b;
}

void RowSource::produce(std::size_t r) {
  if (!blocked_) {
    const std::size_t n = w_.size();
    exact_row(positions_.at(r), w_, anchor_s_.data(), anchor_c_.data(), scratch_);
    for (std::size_t i = 0; i < n; ++i) {
      sin_[i] = float(scale_ * anchor_s_[i]);
      cos_[i] = float(scale_ * anchor_c_[i]);
    }
    return;
  }
  const std::size_t b = r / kBlock, t = r % kBlock;
  if (b != block_) anchor_block(b);
  const float* fs = fine_s_.data() + t * padded_;
  const float* fc = fine_c_.data() + t * padded_;
  for (std::size_t i = 0; i < padded_; i += simd::floats) {
    const bf sa = bf::load_unaligned(anchor_sf_.data() + i), ca = bf::load_unaligned(anchor_cf_.data() + i);
    const bf sb = bf::load_unaligned(fs + i), cb = bf::load_unaligned(fc + i);
    (sa * cb + ca * sb).store_unaligned(sin_.data() + i);
    (ca * cb - sa * sb).store_unaligned(cos_.data() + i);
  }
}

}  // namespace posenc::angles
