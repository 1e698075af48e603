// The permutation lab and the attention score's four terms, on short token lists of arbitrary bytes, with
// given (valid or not) or default permutations, every encoding and hostile dModel values.
// Checks: outputs finite, attention rows sum to 1, the permutation used is a permutation (never the
// identity by default for a sentence that can change), equivariance error ~0 without an encoding,
// and the four score terms sum to the total.
#include <algorithm>
#include <cmath>
#include <string_view>

#include "fuzz.hpp"
#include "lab.hpp"

namespace lab = posenc::lab;

namespace {

bool is_permutation(const std::vector<std::int32_t>& p) {
  std::vector<bool> seen(p.size(), false);
  for (std::int32_t v : p) {
    if (v < 0 || std::size_t(v) >= p.size() || seen[std::size_t(v)]) return false;
    seen[std::size_t(v)] = true;
  }
  return true;
}

void check_rows(const std::vector<float>& w, std::size_t rows, std::size_t cols) {
  FUZZ_CHECK(w.size() == rows * cols);
  for (std::size_t r = 0; r < rows; ++r) {
    double sum = 0;
    for (std::size_t c = 0; c < cols; ++c) {
      FUZZ_CHECK(w[r * cols + c] >= 0 && w[r * cols + c] <= 1);
      sum += w[r * cols + c];
    }
    FUZZ_CHECK_MSG(std::fabs(sum - 1) <= 1e-5, fuzz::str(sum));
  }
}

}  // namespace

FUZZ_TARGET(lab) {
  fuzz::Input in(data, size);
  std::vector<std::string> tokens(in.in<std::size_t>(in.rarely(16) ? 0 : 1, 7));
  const std::size_t vocabulary = in.in<std::size_t>(1, 4);  // few distinct words: repeats are common
  std::vector<std::string> words;
  for (std::size_t i = 0; i < vocabulary; ++i) words.push_back(in.word(6));
  for (auto& t : tokens) t = words[in.in<std::size_t>(0, vocabulary - 1)];
  constexpr int kEncodings = posenc::contract::kLabEncodingCount;
  const int encoding_raw = in.rarely(16) ? in.in<int>(-2, kEncodings + 2) : in.in<int>(0, kEncodings - 1);
  const auto encoding = static_cast<lab::Encoding>(encoding_raw);
  const std::size_t d = in.rarely(16) ? in.size(0, 40) : 2 * in.in<std::size_t>(2, 12);
  const std::uint64_t seed = in.flag() ? in.u64() : in.in<std::uint64_t>(0, 3);
  const std::size_t length = tokens.size();

  std::vector<std::int32_t> perm;
  if (in.flag() && length > 0) {
    perm.assign(length, -1);
    lab::default_permutation(in.u64(), perm);
    FUZZ_CHECK(perm.size() == length && is_permutation(perm));
    if (length > 1) FUZZ_CHECK(!std::is_sorted(perm.begin(), perm.end()));
    if (in.rarely(6)) {  // break it
      if (in.flag())
        perm[in.in<std::size_t>(0, length - 1)] = std::int32_t(in.in<int>(-3, int(length) + 3));
      else
        perm.resize(in.in<std::size_t>(0, length + 2), 0);
    }
  }
  const bool args_ok = length >= 1 && encoding_raw >= 0 && encoding_raw < kEncodings && d >= 4 && d % 2 == 0 &&
                       d <= posenc::contract::kMaxLabDModel;
  const bool perm_ok = perm.empty() || (perm.size() == length && is_permutation(perm));

  // Output buffers: the right sizes (sometimes off by one), or small ones when dModel is hostile.
  const std::size_t heads = lab::kHeads, plane = fuzz::product(heads, fuzz::product(length, length));
  const std::size_t rows = fuzz::product(length, d);
  std::vector<std::int32_t> used(in.rarely(16) ? in.in<std::size_t>(0, length + 1) : length, -1);
  std::vector<float> output(in.buffer(rows), NAN), permuted_output(in.buffer(rows), NAN);
  std::vector<float> weights(in.buffer(plane), NAN), permuted_weights(in.buffer(plane), NAN);
  const bool sizes_ok = used.size() == length && output.size() == rows && permuted_output.size() == rows &&
                        weights.size() == plane && permuted_weights.size() == plane;
  std::vector<std::string_view> views(tokens.begin(), tokens.end());

  lab::Metrics metrics{-1, -1};
  const bool ok = fuzz::accepted([&] {
    return lab::permutation_lab(views, perm, encoding, d, seed, {used, output, permuted_output, weights, permuted_weights},
                                metrics);
  });
  FUZZ_CHECK_MSG(ok == (args_ok && perm_ok && sizes_ok), "accepted " + std::to_string(ok) + ": " + fuzz::message());
  if (ok) {
    FUZZ_CHECK(is_permutation(used));
    if (!perm.empty())
      FUZZ_CHECK(used == perm);
    else if (length > 1) {  // the default shuffle changes the sentence (or at least the order)
      bool changed = false;
      for (std::size_t i = 0; i < length; ++i) changed = changed || used[i] != std::int32_t(i);
      FUZZ_CHECK(changed);
    }
    FUZZ_CHECK(fuzz::all_finite(output) && fuzz::all_finite(permuted_output));
    check_rows(weights, heads * length, length);
    check_rows(permuted_weights, heads * length, length);
    FUZZ_CHECK(std::isfinite(metrics.equivariance_error) && metrics.equivariance_error >= 0);
    FUZZ_CHECK(std::isfinite(metrics.pooled_difference) && metrics.pooled_difference >= 0);
    if (encoding == lab::Encoding::none)
      FUZZ_CHECK_MSG(metrics.equivariance_error <= 1e-4, fuzz::str(metrics.equivariance_error));
  }

  const bool additive = encoding == lab::Encoding::sinusoidal || encoding == lab::Encoding::learned;
  const std::size_t n = fuzz::product(length, length);
  std::vector<float> terms[5];
  bool terms_ok = true;
  for (auto& t : terms) {
    t.assign(in.buffer(n), NAN);
    terms_ok = terms_ok && t.size() == n;
  }
  const bool sok = fuzz::accepted([&] {
    return lab::score_terms(views, encoding, d, seed, {terms[0], terms[1], terms[2], terms[3], terms[4]});
  });
  FUZZ_CHECK_MSG(sok == (args_ok && additive && terms_ok), "accepted " + std::to_string(sok) + ": " + fuzz::message());
  if (sok) {
    for (const auto& t : terms) FUZZ_CHECK(fuzz::all_finite(t));
    for (std::size_t i = 0; i < n; ++i) {
      const double parts[] = {terms[0][i], terms[1][i], terms[2][i], terms[3][i]};
      double sum = 0, mag = 0;
      for (double p : parts) sum += p, mag += std::fabs(p);
      FUZZ_CHECK_MSG(std::fabs(sum - terms[4][i]) <= 1e-4 * (mag + 1), fuzz::str(sum) + " vs " + fuzz::str(terms[4][i]));
    }
  }
  return 0;
}
