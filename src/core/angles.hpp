// Sines and cosines of position x frequency angles, the kernel shared by every encoding that
// rotates: the sinusoidal table (Vaswani et al. 2017), RoPE (Su et al. 2021) and the shift matrix.
//
// Accuracy is part of the contract: outputs are float32, but every angle position * frequency is
// taken exactly (a two-product) and reduced modulo 2*pi exactly (Cody-Waite below 2^35, Payne-Hanek
// above), so a value at any finite position is within ~3e-7 of the exact result; an angle beyond
// double's range is an error, not a value. Plain float32 code such as `sin(position * div_term)` is
// off by ~4.5e-2 at position 1e6.
//
// Speed: for consecutive positions p0, p0+1, ... the rows are produced by angle addition from two
// tables, never by a running recurrence in float (whose error grows with the row count):
//     sin(A_b + t*w) = sin(A_b) cos(t*w) + cos(A_b) sin(t*w),   cos likewise,
// where A_b = (p0 + b*B)*w is the angle at the start of block b (B = 64 rows) and t*w, 0 <= t < B,
// is a per-call table. Both tables are kept in double precision (stepped by exact rotations and
// re-anchored from an exact reduction every 64 blocks) and rounded once to float, so each output
// is one float multiply-add of correctly rounded inputs: 4 multiplies and 2 adds per (sin, cos)
// pair in SIMD, with a worst-case error of about 3e-7 whatever the row count.
// Arbitrary (non-consecutive, fractional) positions take the direct path: reduce in double, then
// a vectorised double-precision sincos.
#pragma once
#include <cstddef>
#include <span>
#include <utility>
#include "buffer.hpp"
#include "simd.hpp"

namespace posenc::angles {

// x*w reduced modulo 2*pi to [-pi, pi], within ~5e-16 of the exact product x*w (both doubles) reduced
// exactly, for any finite x and w: angles up to 2^35 by Cody-Waite, larger ones by a Payne-Hanek
// reduction of both parts of the exact product. NaN when x*w overflows double (check_angles).
double reduce(double x, double w);

// Positions of the rows: `offset + r` (rounded to double, as JavaScript computes it) for r in
// [0, count), or the explicit values given.
struct Positions {
  double offset = 0;
  std::size_t count = 0;
  std::span<const double> values{};  // when non-empty, overrides offset/count

  std::size_t size() const { return values.empty() ? count : values.size(); }
  double at(std::size_t r) const { return values.empty() ? offset + double(r) : values[r]; }
  // True when the rows are exactly p0, p0+1, ... (explicit positions that happen to be consecutive
  // too; each p0 + r a double, with no rounding).
  bool consecutive() const;
  // The largest |position|.
  double largest() const;
};

// Fails (a range error naming the position and the frequency) when some angle position * frequency
// overflows double: such an angle has no defined sine. RowSource::init checks it.
Status check_angles(const Positions& positions, std::span<const double> inv_freq);

// Streams rows of sin/cos: calls row(r, Row) for every r in order, where Row yields, a SIMD batch at
// a time, scale*sin(p_r * inv_freq[i]) and scale*cos(p_r * inv_freq[i]) as floats. The batches are
// computed where they are used (in registers, no per-row buffer), so a caller fuses the sin/cos
// production with its own work on the row: one pass over the output, no intermediate stores.
class RowSource {
 public:
  using batch = simd::batch<float>;

  // One row's sines and cosines by angle addition between the row's block anchor A and its offset B
  // in the block: sin(A + B) = sin A cos B + cos A sin B, cos(A + B) = cos A cos B - sin A sin B.
  // (Rows that are not consecutive positions have A exact and B = 0: sin B = 0, cos B = 1.)
  class Row {
   public:
    // (sin, cos) for frequencies [i, i + simd::floats); i is a multiple of simd::floats below
    // width(). Lanes from inv_freq.size() on are 0.
    std::pair<batch, batch> at(std::size_t i) const {
      const batch sa = batch::load_unaligned(anchor_sin_ + i), ca = batch::load_unaligned(anchor_cos_ + i);
      const batch sb = batch::load_unaligned(offset_sin_ + i), cb = batch::load_unaligned(offset_cos_ + i);
      return {sa * cb + ca * sb, ca * cb - sa * sb};
    }

   private:
    friend class RowSource;
    Row(const float* as, const float* ac, const float* bs, const float* bc)
        : anchor_sin_(as), anchor_cos_(ac), offset_sin_(bs), offset_cos_(bc) {}
    const float *anchor_sin_, *anchor_cos_, *offset_sin_, *offset_cos_;
  };

  RowSource() = default;
  // Sets up the source (allocates its tables): fails when memory runs out, or when an angle
  // overflows double (check_angles).
  Status init(const Positions& positions, std::span<const double> inv_freq, double scale = 1.0);
  RowSource(const RowSource&) = delete;  // holds pointers into its own buffers
  RowSource& operator=(const RowSource&) = delete;
  std::size_t rows() const { return positions_.size(); }
  std::size_t width() const { return padded_; }  // inv_freq.size() rounded up to the SIMD width

  // Rows [r0, r1) in order. Consecutive ranges continue from each other's anchors, so producing the
  // rows in several calls costs what one call over all of them does.
  template <class Fn>
  void for_range(std::size_t r0, std::size_t r1, Fn&& row) {
    for (std::size_t r = r0; r < r1; ++r) row(r, prepare(r));
  }
  template <class Fn>
  void for_each(Fn&& row) {
    for_range(0, rows(), row);
  }

 private:
  static constexpr std::size_t kBlock = 64;  // rows per anchor block

  // Row r: (re)computes the anchor when r starts a block (or, unblocked, the exact row).
  Row prepare(std::size_t r) noexcept {
    if (!blocked_) {
      exact_anchor(positions_.at(r));
      return {anchor_sf_, anchor_cf_, fine_s_, fine_c_};
    }
    const std::size_t b = r / kBlock, t = r % kBlock;
    if (b != block_) anchor_block(b);
    return {anchor_sf_, anchor_cf_, fine_s_ + t * padded_, fine_c_ + t * padded_};
  }
  // Never allocate (every buffer is sized by init()), so they cannot fail: the rows are produced
  // without a Status to check.
  void anchor_block(std::size_t b) noexcept;
  void exact_anchor(double p) noexcept;
  void round_anchor() noexcept;

  Positions positions_;
  std::span<const double> w_;
  double scale_ = 1.0;
  std::size_t padded_ = 0;
  bool blocked_ = false;
  std::size_t block_ = 0;  // current block in the blocked path
  // Every buffer lives in one of two allocations (small tables are dominated by setup): padded_
  // values each, fine_s_ and fine_c_ one row of padded_ per row of the block.
  Buffer<double> doubles_;
  Buffer<float> floats_;
  double *anchor_s_ = nullptr, *anchor_c_ = nullptr, *step_s_ = nullptr, *step_c_ = nullptr, *scratch_ = nullptr;
  float *anchor_sf_ = nullptr, *anchor_cf_ = nullptr, *fine_s_ = nullptr, *fine_c_ = nullptr;
};

// Exact row (double): s[i], c[i] = sin, cos of reduce(p, w[i]); scratch holds
// exact_row_scratch(w.size()) doubles.
std::size_t exact_row_scratch(std::size_t n);
void exact_row(double p, std::span<const double> w, double* s, double* c, double* scratch) noexcept;

}  // namespace posenc::angles
