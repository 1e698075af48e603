// Analyses of encodings and tensors: statistics, similarity between positions, the shift matrix.
#pragma once
#include <cstddef>
#include <span>

namespace posenc::analysis {

struct Stats {
  double min, max, mean, std;  // std is the population standard deviation (divides by N, as NumPy)
};

// Computed in double; NaN/Infinity propagate as in IEEE arithmetic. Needs at least one value.
Stats stats(std::span<const float> values);

}  // namespace posenc::analysis
