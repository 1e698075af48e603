#include "angles.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

namespace posenc::angles {
namespace {

constexpr std::size_t kResync = 64;  // blocks between exact re-anchoring
constexpr double kInvTwoPi = 0.15915494309189535;
constexpr double kTwoPi = 6.283185307179586;
// 2*pi = C1 + C2 + C3 + C4 (to 2e-35); C1..C3 have at most 20 significant bits, so k*C1, k*C2 and
// k*C3 are exact for |k| < 2^33, i.e. for angles up to ~5.4e10 rad.
constexpr double kC1 = 0x1.921fc00000000p+2;
constexpr double kC2 = -0x1.5777a00000000p-19;
constexpr double kC3 = -0x1.73dcc00000000p-41;
constexpr double kC4 = 0x1.898cc51701b84p-62;
constexpr double kCodyWaiteMax = 0x1p35;  // |angle| up to which Cody-Waite is exact (k < 2^33)
constexpr double kSplitMax = 0x1p996;     // |factor| up to which the Veltkamp split cannot overflow

// The bits of 1/(2*pi) after the binary point, 32 per word, most significant first:
// floor(2^1280 / (2*pi)), by Machin's formula in integer arithmetic (and checked against mpmath).
// Reducing m * 2^e (m < 2^53) reads bits e + 1 ... e + 128, and a finite double has e <= 971.
constexpr std::uint32_t kInvTwoPiBits[40] = {
    0x28be60db, 0x9391054a, 0x7f09d5f4, 0x7d4d3770, 0x36d8a566, 0x4f10e410, 0x7f9458ea, 0xf7aef158, 0x6dc91b8e, 0x909374b8,
    0x01924bba, 0x82746487, 0x3f877ac7, 0x2c4a69cf, 0xba208d7d, 0x4baed121, 0x3a671c09, 0xad17df90, 0x4e64758e, 0x60d4ce7d,
    0x272117e2, 0xef7e4a0e, 0xc7fe25ff, 0xf7816603, 0xfbcbc462, 0xd6829b47, 0xdb4d9fb3, 0xc9f2c26d, 0xd3d18fd9, 0xa797fa8b,
    0x5d49eeb1, 0xfaf97c5e, 0xcf41ce7d, 0xe294a4ba, 0x9afed7ec, 0x47e35742, 0x1580cc11, 0xbf1edaea, 0xfc33ef08, 0x26bd0d87};

// Veltkamp split and Dekker's exact product: a*b == p + e exactly (needs -ffp-contract=off, and
// |a|, |b| <= kSplitMax so that the split cannot overflow).
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

// (p + e) mod 2*pi for |p| <= kCodyWaiteMax: the first two subtractions are exact (Sterbenz), only
// the last terms round, at ~1e-16.
inline double cody_waite(double p, double e) {
  const double k = std::nearbyint(p * kInvTwoPi);
  return ((((p - k * kC1) - k * kC2) - k * kC3) - k * kC4) + e;
}

// Bits k ... k + 31 of 1/(2*pi), bit k weighing 2^-k (bits k <= 0 are zero: 1/(2*pi) < 1).
std::uint32_t inv_two_pi_bits(int k) {
  const int pos = k - 1;                                   // into the table's bit stream; may be < 0
  const int i = pos >= 0 ? pos / 32 : -((31 - pos) / 32);  // floor(pos / 32)
  const int shift = pos - 32 * i;                          // 0 .. 31
  const auto word = [](int j) -> std::uint64_t { return j >= 0 && j < 40 ? kInvTwoPiBits[j] : 0; };
  return std::uint32_t(word(i) << shift | word(i + 1) >> (32 - shift));
}

// v / (2*pi) modulo 1, as a fraction of 2^64 read as signed (a turn in [-1/2, 1/2)), for any finite
// v, to within 2^-64 (Payne and Hanek's reduction, here with integers: cf. fdlibm's
// __kernel_rem_pio2). With |v| = m 2^e, m < 2^53 an integer, |v| / (2*pi) = m * sum_k b_k 2^(e-k)
// over the bits b_k of 1/(2*pi): the bits k <= e add integers (0 mod 1), so only the 128 bits
// after them matter; the ones beyond add less than m 2^-128 < 2^-75.
std::uint64_t turns(double v) {
  int ex = 0;
  const double f = std::frexp(std::fabs(v), &ex);  // |v| = f 2^ex, f in [0.5, 1)
  const auto m = std::uint64_t(std::ldexp(f, 53));
  const int e = ex - 53;
  const std::uint64_t mlo = m & 0xffffffffu, mhi = m >> 32;
  // m * F modulo 2^128, F = the 128 bits b_(e+1) ... b_(e+128); column j holds digit j (base 2^32),
  // least significant first. The product's fraction (units of 2^-128) is that remainder.
  std::uint64_t col[4] = {};
  for (int q = 0; q < 4; ++q) {
    const std::uint64_t fq = inv_two_pi_bits(e + 1 + 32 * q);  // digit 3 - q of F
    const int j = 3 - q;
    const std::uint64_t lo = fq * mlo, hi = fq * mhi;  // < 2^64 and < 2^53
    col[j] += lo & 0xffffffffu;
    if (j + 1 < 4) col[j + 1] += (lo >> 32) + (hi & 0xffffffffu);
    if (j + 2 < 4) col[j + 2] += hi >> 32;
  }
  for (int j = 0; j < 3; ++j) {
    col[j + 1] += col[j] >> 32;
    col[j] &= 0xffffffffu;
  }
  const std::uint64_t t = (col[3] << 32) + col[2];  // the top 64 bits of the fraction (mod 2^64)
  return v < 0 ? 0 - t : t;
}

// A turn (a fraction of 2^64 read as signed) in radians, in [-pi, pi]: ~3e-16 rounding.
double radians(std::uint64_t t) {
  const auto s = std::int64_t(t);  // modular conversion (C++20)
  return (double(s >> 11) * 0x1p-53 + double(s & 0x7ff) * 0x1p-64) * kTwoPi;
}

// x*w mod 2*pi when the fast path does not apply: a factor beyond kSplitMax (the product is then
// taken between the factors' mantissas, exactly, and scaled back by a power of two) or an angle
// beyond kCodyWaiteMax (Payne-Hanek for both parts of the exact product). NaN if x*w overflows.
POSENC_COLD double reduce_large(double x, double w) {
  int ex = 0, ew = 0;
  const double fx = std::frexp(x, &ex), fw = std::frexp(w, &ew);
  double p, e;
  two_prod(fx, fw, p, e);
  p = std::ldexp(p, ex + ew);  // exact, but for a product in the subnormals (an angle ~0 anyway)
  e = std::ldexp(e, ex + ew);
  if (!std::isfinite(p)) return std::numeric_limits<double>::quiet_NaN();
  if (std::fabs(p) <= kCodyWaiteMax) return cody_waite(p, e);
  return radians(turns(p) + turns(e));  // unsigned: the sum wraps around modulo one turn
}

using bd = simd::batch<double>;
using bf = simd::batch<float>;

std::size_t round_up(std::size_t n, std::size_t m) {
  return (n + m - 1) / m * m;
}

// (a + b) is exact in double (Knuth's two-sum error is zero).
bool exact_sum(double a, double b) {
  const double s = a + b, bb = s - a;
  return (a - (s - bb)) + (b - bb) == 0;
}

// reduce(), inlined where rows are reduced: the fast path is a few multiply-adds.
inline double reduce_inline(double x, double w) {
  if (std::fabs(x) <= kSplitMax && std::fabs(w) <= kSplitMax) {
    double p, e;
    two_prod(x, w, p, e);
    if (std::fabs(p) <= kCodyWaiteMax) return cody_waite(p, e);
  }
  return reduce_large(x, w);
}

}  // namespace

double reduce(double x, double w) {
  return reduce_inline(x, w);
}

namespace {

// s[i], c[i] = sin, cos of reduce(p, w[i]); scratch holds round_up(w.size(), simd::doubles) doubles.
void exact_row_into(double p, std::span<const double> w, double* s, double* c, double* scratch) noexcept {
  const std::size_t n = w.size();
  const std::size_t np = round_up(n, simd::doubles);
  for (std::size_t i = 0; i < np; ++i) scratch[i] = i < n ? reduce_inline(p, w[i]) : 0.0;
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
  const std::size_t n = size();
  if (n == 0) return true;
  // p0 + (n - 1) exact and both ends within 2^53: then every p0 + r between them is a double too
  // (they are multiples of p0's lowest bit, or integers, no larger than the ends).
  const double p0 = at(0), last = p0 + double(n - 1);
  if (!(std::fabs(p0) <= 0x1p53 && std::fabs(last) <= 0x1p53 && exact_sum(p0, double(n - 1)))) return false;
  for (std::size_t r = 1; r < values.size(); ++r)
    if (values[r] != p0 + double(r)) return false;
  return true;
}

POSENC_COLD double Positions::largest() const {
  if (values.empty()) return count ? std::max(std::fabs(offset), std::fabs(at(count - 1))) : 0.0;
  double m = 0;
  for (double v : values) m = std::max(m, std::fabs(v));
  return m;
}

POSENC_COLD Status check_angles(const Positions& positions, std::span<const double> inv_freq) {
  std::size_t i_max = 0;
  for (std::size_t i = 1; i < inv_freq.size(); ++i)
    if (std::fabs(inv_freq[i]) > std::fabs(inv_freq[i_max])) i_max = i;
  if (inv_freq.empty() || std::isfinite(positions.largest() * inv_freq[i_max])) return {};
  // The first row, and its first frequency, whose angle overflows (|p| * |w| is monotonic).
  for (std::size_t r = 0; r < positions.size(); ++r) {
    const double p = positions.at(r);
    if (std::isfinite(p * inv_freq[i_max])) continue;
    std::size_t i = 0;
    while (std::isfinite(p * inv_freq[i])) ++i;
    return fail(
        "the angle of position ", p, " at frequency ", inv_freq[i], " (index ", i,
        ") is beyond double's range (|position * frequency| must be below 1.8e308); use smaller positions or a larger base");
  }
  return {};  // not reached: some row overflows
}

Status RowSource::init(const Positions& positions, std::span<const double> inv_freq, double scale) {
  POSENC_TRY(check_angles(positions, inv_freq));
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
