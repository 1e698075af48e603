#include "analysis.hpp"

#include <algorithm>
#include <cmath>

#include "errors.hpp"

namespace posenc::analysis {

Stats stats(std::span<const float> values) {
  if (values.empty()) fail("stats needs at least one value");
  double lo = values[0], hi = values[0], sum = 0.0;
  for (float v : values) {
    lo = std::min<double>(lo, v);
    hi = std::max<double>(hi, v);
    sum += v;
  }
  const double mean = sum / double(values.size());
  double sq = 0.0;  // two-pass variance: no cancellation
  for (float v : values) sq += (v - mean) * (v - mean);
  return {lo, hi, mean, std::sqrt(sq / double(values.size()))};
}

}  // namespace posenc::analysis
