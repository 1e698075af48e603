// Learned family: learned::Table (every init, hostile sizes and enum values), lookup (ids out of
// range, wrong output sizes), resized (interpolate / tile), token_table and add_positional.
// Checks: tables finite and deterministic; lookup returns scale * the rows; tile copies rows
// j mod rows; interpolation stays within each column's range; x + p is exact.
#include <algorithm>
#include <cmath>

#include "fuzz.hpp"
#include "learned.hpp"

namespace learned = posenc::learned;
using learned::Init;
using learned::Resize;
using learned::Table;

FUZZ_TARGET(learned) {
  fuzz::Input in(data, size);
  const std::size_t rows = in.size(1, 40, false), dim = in.size(1, 24, false);
  const int init_raw = in.rarely(32) ? in.in<int>(-1, 6) : in.in<int>(0, 3);
  const double stdev = in.flag() ? 0.02 : in.number(0.0, 10.0, 8);
  const std::uint64_t seed = in.u64();
  const bool init_ok = init_raw >= 0 && init_raw <= 3;
  const bool sizes_ok = rows >= 1 && dim >= 1 && fuzz::product(rows, dim) <= fuzz::kMaxElements;
  const bool std_ok = stdev >= 0 && stdev <= 1e30;  // whatever the init, as the API documents std's range

  Table made;
  const bool ok = fuzz::accepted([&] { return Table::make(made, rows, dim, static_cast<Init>(init_raw), stdev, seed); });
  const Table* t = &made;
  FUZZ_CHECK_MSG(ok == (sizes_ok && init_ok && std_ok), "init " + std::to_string(init_raw) + " accepted " + std::to_string(ok));
  if (!ok) {
    if (in.flag()) {  // token tables only depend on sizes
      Table tok;
      FUZZ_CHECK(fuzz::accepted([&] { return learned::token_table(tok, rows, dim, seed); }) == sizes_ok);
    }
    return 0;
  }
  FUZZ_CHECK(t->rows() == rows && t->dim() == dim && t->data().size() == rows * dim);
  FUZZ_CHECK(fuzz::all_finite(t->data()));
  {  // deterministic
    Table again;
    fuzz::must_accept([&] { return Table::make(again, rows, dim, static_cast<Init>(init_raw), stdev, seed); },
                      "the same table again");
    FUZZ_CHECK(again.data().size() == t->data().size());
    FUZZ_CHECK(std::equal(again.data().begin(), again.data().end(), t->data().begin()));
  }

  // lookup
  std::vector<std::int32_t> ids(in.in<std::size_t>(0, 12));
  bool ids_ok = true;
  for (auto& id : ids) {
    id = in.rarely(8) ? std::int32_t(in.i64()) : std::int32_t(in.in<std::size_t>(0, rows - 1));
    ids_ok = ids_ok && id >= 0 && std::size_t(id) < rows;
  }
  const float scale = in.flag() ? 1.0f : float(in.real(-8.0, 8.0));
  std::vector<float> out(in.buffer(ids.size() * dim), -7.0f);
  const bool lok = fuzz::accepted([&] { return t->lookup(ids, out, scale); });
  FUZZ_CHECK(lok == (ids_ok && out.size() == ids.size() * dim));
  if (lok)
    for (std::size_t k = 0; k < ids.size(); ++k)
      for (std::size_t c = 0; c < dim; ++c) FUZZ_CHECK(out[k * dim + c] == scale * t->data()[std::size_t(ids[k]) * dim + c]);

  // resized
  const std::size_t new_rows = in.size(1, 100, false);
  const int method_raw = in.rarely(32) ? in.in<int>(-1, 4) : in.in<int>(0, 1);
  Table resized;
  const bool rok = fuzz::accepted([&] { return t->resized(new_rows, static_cast<Resize>(method_raw), resized); });
  const Table* r = &resized;
  FUZZ_CHECK(rok ==
             (new_rows >= 1 && fuzz::product(new_rows, dim) <= fuzz::kMaxElements && (method_raw == 0 || method_raw == 1)));
  if (rok) {
    FUZZ_CHECK(r->rows() == new_rows && r->dim() == dim);
    const auto src = t->data(), dst = r->data();
    std::vector<float> lo(src.begin(), src.begin() + dim), hi = lo;  // each column's range
    for (std::size_t i = 1; i < rows; ++i)
      for (std::size_t c = 0; c < dim; ++c) lo[c] = std::min(lo[c], src[i * dim + c]), hi[c] = std::max(hi[c], src[i * dim + c]);
    for (std::size_t j = 0; j < new_rows; ++j)
      for (std::size_t c = 0; c < dim; ++c) {
        const float v = dst[j * dim + c];
        if (static_cast<Resize>(method_raw) == Resize::tile) {
          FUZZ_CHECK(v == src[(j % rows) * dim + c]);
          continue;
        }
        const float slack = 1e-6f * std::max(std::fabs(lo[c]), std::fabs(hi[c])) + 1e-37f;  // (subnormals round to 0)
        FUZZ_CHECK_MSG(v >= lo[c] - slack && v <= hi[c] + slack,
                       fuzz::str(v) + " not in [" + fuzz::str(lo[c]) + ", " + fuzz::str(hi[c]) + "]");
      }
    if (new_rows == rows && static_cast<Resize>(method_raw) == Resize::interpolate)  // same length: the same rows
      FUZZ_CHECK(std::equal(dst.begin(), dst.end(), src.begin()));
  }

  // add_positional: x [batch, seq, dim] + the first seq rows of the table.
  const std::size_t batch = in.size(0, 4), seq = in.size(0, rows + 1);
  const auto x = in.floats(in.buffer(fuzz::product(batch, fuzz::product(seq, dim))), 10.0f, false);
  std::vector<float> sum(in.buffer(x.size()), -7.0f);
  const auto p = t->data();
  const bool aok = fuzz::accepted([&] { return learned::add_positional(x, batch, seq, dim, p, sum); });
  const std::size_t want = fuzz::product(batch, fuzz::product(seq, dim));
  FUZZ_CHECK_MSG(aok == (x.size() == want && sum.size() == want && seq <= rows),
                 "add_positional accepted " + std::to_string(aok));
  if (aok)
    for (std::size_t i = 0; i < want; ++i) FUZZ_CHECK(sum[i] == x[i] + p[i % (seq * dim)]);
  return 0;
}
