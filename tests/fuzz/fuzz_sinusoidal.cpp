// Sinusoidal family: sinusoidal::table (consecutive and explicit positions, both layouts),
// wavelengths, and the shared angle kernel. Valid calls must succeed and be within 1e-6 of the
// exact value (reference.hpp) at every position with |p| < 2^31 when base >= 1 (the README's bound).
#include <cmath>

#include "fuzz.hpp"
#include "reference.hpp"
#include "sinusoidal.hpp"

using posenc::angles::Positions;
using posenc::sinusoidal::Layout;

namespace {

bool valid_base(double base) {
  return base >= posenc::sinusoidal::kMinBase && base <= posenc::sinusoidal::kMaxBase;
}

void check_table(const std::vector<float>& out, const Positions& pos, std::size_t d, double base, Layout layout) {
  FUZZ_CHECK(fuzz::all_finite(out));
  const std::size_t h = d / 2, n = posenc::sinusoidal::frequency_count(d, layout);
  for (std::size_t r = 0; r < pos.size(); ++r) {
    const double p = pos.at(r);
    for (std::size_t j = 0; j < d; ++j) {
      const float v = out[r * d + j];
      FUZZ_CHECK_MSG(std::fabs(v) <= 1.000001f, "|value| > 1: " + fuzz::str(v));  // angle addition in float: 1 + an ulp
      // Column j holds sin or cos of frequency i (or the zero pad of an odd split table).
      std::size_t i;
      bool is_sin;
      if (layout == Layout::interleaved) {
        i = j / 2;
        is_sin = j % 2 == 0;
      } else {
        if (j == 2 * h) {
          FUZZ_CHECK(v == 0.0f);
          continue;
        }
        i = j < h ? j : j - h;
        is_sin = j < h;
      }
      FUZZ_CHECK(i < n);
      if (!(base >= 1 && std::fabs(p) < 2147483648.0)) continue;  // the accuracy contract's domain
      const long double a = ref::angle(p, ref::inv_freq(i, d, base));
      const double want = double(is_sin ? std::sin(a) : std::cos(a));
      FUZZ_CHECK_MSG(std::fabs(double(v) - want) <= 1e-6,
                     "row " + std::to_string(r) + " col " + std::to_string(j) + " p " + fuzz::str(p) + " base " +
                         fuzz::str(base) + " d " + std::to_string(d) + " got " + fuzz::str(v) + " want " + fuzz::str(want));
    }
  }
}

}  // namespace

FUZZ_TARGET(sinusoidal) {
  fuzz::Input in(data, size);
  const std::size_t d = in.size(1, 80);
  const double base = in.flag() ? in.number(1.0, 1e6) : in.number(1e-3, 1e12, 8);
  const int layout_raw = in.rarely(32) ? in.in<int>(-2, 5) : in.in<int>(0, 1);
  const auto layout = static_cast<Layout>(layout_raw);

  std::vector<double> values;
  Positions pos;
  if (in.flag()) {  // consecutive rows from an offset: crosses the 64-row blocks and re-anchoring
    const std::size_t rows = in.size(0, 300);
    const double offset = in.flag() ? in.position(-3e9, 3e9) : in.position(2147483647.0 - 300, 2147483647.0);
    pos = Positions{offset, rows, {}};
  } else {  // explicit positions: sometimes consecutive on purpose, fractional, huge or not finite
    const std::size_t n = in.in<std::size_t>(1, 48);
    const double start = in.position(-1e6, 2147483647.0);
    const bool consecutive = in.flag();
    for (std::size_t r = 0; r < n; ++r)
      values.push_back(consecutive ? start + double(r) : in.position(-2147483647.0, 2147483647.0));
    pos = Positions{0, values.size(), values};
  }

  const std::size_t want = fuzz::product(pos.size(), d);
  std::vector<float> out(in.buffer(want), -7.0f);
  const bool ok = fuzz::accepted([&] { return posenc::sinusoidal::table(pos, d, base, layout, out); });

  bool finite_positions = std::isfinite(pos.offset);
  for (double p : values) finite_positions = finite_positions && std::isfinite(p);
  // An angle position * w_i beyond double's range has no sine: refused (the split layout of an odd
  // dModel leaves the last frequency out).
  bool finite_angles = true;
  if (finite_positions && valid_base(base) && (layout_raw == 0 || layout_raw == 1) && pos.size() > 0 && out.size() == want)
    for (std::size_t i = 0; i < posenc::sinusoidal::frequency_count(d, layout); ++i)
      finite_angles = finite_angles && std::isfinite(pos.largest() * ref::inv_freq(i, d, base));
  const bool valid = d >= 1 && valid_base(base) && (layout_raw == 0 || layout_raw == 1) && finite_positions && finite_angles &&
                     out.size() == want;
  if (valid) FUZZ_CHECK_MSG(ok, "a valid table was refused: " + fuzz::message());
  if (ok) {
    FUZZ_CHECK(valid);  // anything else must have been refused
    check_table(out, pos, d, base, layout);
  }

  // Wavelengths 2*pi*base^(2i/d): finite, positive, non-decreasing for base >= 1.
  std::vector<double> wl(in.buffer((d + 1) / 2));
  if (fuzz::accepted([&] { return posenc::sinusoidal::wavelengths(d, base, wl); })) {
    FUZZ_CHECK(d >= 1 && valid_base(base) && wl.size() == (d + 1) / 2);
    FUZZ_CHECK(fuzz::all_finite(wl));
    for (std::size_t i = 0; i < wl.size(); ++i) {
      FUZZ_CHECK(wl[i] > 0);
      if (i && base >= 1) FUZZ_CHECK(wl[i] >= wl[i - 1]);
    }
  } else {
    FUZZ_CHECK(!(d >= 1 && valid_base(base) && wl.size() == (d + 1) / 2 && d <= fuzz::kMaxElements));
  }
  return 0;
}
